/* dat_registry_list_providers(3DAT): every return value. The process runs
 * with the repository's dat.conf (DAT_OVERRIDE, set by make); the missing
 * registry is checked in a child started with DAT_OVERRIDE naming no
 * file. */
#define _GNU_SOURCE
#include "pages.h"
#include <dat/dat_registry.h>

/* The registry size, from a call with no room. */
static DAT_COUNT registry_size(void)
{
	DAT_COUNT n = -1;
	check_ret(dat_registry_list_providers(0, &n, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	assert_true(n >= 0);
	return n;
}

static DAT_PROVIDER_INFO **pointers(DAT_PROVIDER_INFO *infos, DAT_COUNT n)
{
	DAT_PROVIDER_INFO **p = calloc((size_t)n + 1, sizeof *p);
	assert_non_null(p);
	for (DAT_COUNT i = 0; i < n; i++)
		p[i] = &infos[i];
	return p;
}

/* DAT_SUCCESS: "If the operation is successful, the returned value is
 * DAT_SUCCESS and number_entries indicates the number of entries filled by
 * the registry in dat_provider_list." "The information provided is the
 * Interface Adapter name, the uDAPL/kDAPL API version supported, and
 * whether the provided version is thread-safe": godat-shm is there as a
 * thread-safe 1.2 provider. USAGE: "DAT_NAME_MAX_LENGTH includes the null
 * character for string termination." "This operation has no effect on
 * the Registry itself": a second call lists the same. */
static void test_registry_list_providers_success(void **state)
{
	(void)state;
	DAT_COUNT n = registry_size(), m = -1;
	assert_true(n > 0);
	DAT_PROVIDER_INFO *a = calloc((size_t)n + 2, sizeof *a), *b = calloc((size_t)n + 2, sizeof *b);
	assert_non_null(a);
	assert_non_null(b);
	DAT_PROVIDER_INFO **pa = pointers(a, n + 2), **pb = pointers(b, n + 2);
	check_ok(dat_registry_list_providers(n + 2, &m, pa)); /* more room than needed */
	assert_int_equal(m, n);
	int found = 0;
	for (DAT_COUNT i = 0; i < m; i++) {
		assert_true(a[i].ia_name[0] != 0);
		assert_non_null(memchr(a[i].ia_name, 0, DAT_NAME_MAX_LENGTH));
		if (strcmp(a[i].ia_name, TEST_IA) == 0) {
			found = 1;
			assert_int_equal(a[i].dapl_version_major, 1);
			assert_int_equal(a[i].dapl_version_minor, 2);
			assert_int_equal(a[i].is_thread_safe, DAT_TRUE);
		}
	}
	assert_true(found);
	check_ok(dat_registry_list_providers(n, &m, pb)); /* exactly enough */
	assert_int_equal(m, n);
	assert_memory_equal(a, b, (size_t)n * sizeof *a);
	free(pa);
	free(pb);
	free(a);
	free(b);
}

/* DAT_INVALID_PARAMETER: "dat_provider_list is too small or NULL." "If the
 * operation is not successful, then number_entries returns the number of
 * entries in the registry. Consumers can use this return to allocate
 * dat_provider_list large enough": one slot short, a NULL list, a NULL
 * pointer inside the list, a negative max_to_return (argument 3 in each
 * case); and no place for the count (argument 2). */
static void test_registry_list_providers_invalid_parameter(void **state)
{
	(void)state;
	DAT_COUNT n = registry_size(), m;
	DAT_PROVIDER_INFO *infos = calloc((size_t)n, sizeof *infos);
	assert_non_null(infos);
	DAT_PROVIDER_INFO **p = pointers(infos, n);
	m = -1;
	check_ret(dat_registry_list_providers(n - 1, &m, p), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	assert_int_equal(m, n);
	m = -1;
	check_ret(dat_registry_list_providers(n, &m, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	assert_int_equal(m, n);
	m = -1;
	check_ret(dat_registry_list_providers(-1, &m, p), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	assert_int_equal(m, n);
	p[n - 1] = NULL;
	m = -1;
	check_ret(dat_registry_list_providers(n, &m, p), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	assert_int_equal(m, n);
	check_ret(dat_registry_list_providers(n, NULL, p), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	free(p);
	free(infos);
}

/* The child: DAT_OVERRIDE names a file that does not exist. */
static int no_registry_child(void)
{
	DAT_COUNT n = -1;
	DAT_PROVIDER_INFO info, *list[1] = {&info};
	DAT_RETURN r = dat_registry_list_providers(1, &n, list);
	if (r != (DAT_RETURN)(DAT_CLASS_ERROR | DAT_INTERNAL_ERROR) || n != 0) {
		fprintf(stderr, "no-registry child: list_providers: 0x%08x n=%d, want DAT_INTERNAL_ERROR n=0\n",
			(unsigned)r, (int)n);
		return 1;
	}
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	r = dat_ia_open(TEST_IA, 8, &async, &ia);
	if (DAT_GET_TYPE(r) != DAT_PROVIDER_NOT_FOUND) {
		fprintf(stderr, "no-registry child: dat_ia_open: 0x%08x, want DAT_PROVIDER_NOT_FOUND\n", (unsigned)r);
		return 1;
	}
	return 0;
}

/* DAT_INTERNAL_ERROR: "Internal error. The DAT static registry is
 * missing." In a child whose DAT_OVERRIDE names no file: the call fails
 * and reports no entries. */
static void test_registry_list_providers_internal_error(void **state)
{
	(void)state;
	const char *const drop[] = {"DAT_OVERRIDE", NULL};
	char *const add[] = {"DAT_OVERRIDE=/nonexistent/godat-ctest/dat.conf", NULL};
	char **env = make_env(drop, add);
	assert_int_equal(run_self("no-registry", env), 0);
	free(env);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "no-registry") == 0)
		return no_registry_child();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry_list_providers_success),
		cmocka_unit_test(test_registry_list_providers_invalid_parameter),
		cmocka_unit_test(test_registry_list_providers_internal_error),
	};
	return cmocka_run_group_tests_name("dat_registry_list_providers", tests, NULL, NULL);
}
