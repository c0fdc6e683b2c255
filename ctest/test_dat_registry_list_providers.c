/* dat_registry_list_providers(3DAT): every return value. The process runs
 * with the repository's dat.conf (DAT_OVERRIDE, set by make); the missing
 * registry, and a registry larger than the caller's list, are checked in
 * children started with DAT_OVERRIDE naming their own file.
 *
 * The page says a list too small for the registry is DAT_INVALID_PARAMETER;
 * every reference fills the list instead and succeeds (issue 13), and
 * godat follows the references: only max_to_return = 0 is refused, with
 * argument 1 named, as the references name it. */
#define _GNU_SOURCE
#include "pages.h"
#include <dat/dat_registry.h>

/* The registry size, from a call with no room (the references' way of
 * asking, refused naming max_to_return). */
static DAT_COUNT registry_size(void)
{
	DAT_COUNT n = -1;
	check_ret(dat_registry_list_providers(0, &n, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
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
 * dat_provider_list large enough": no room at all (argument 1, as in the
 * references, with or without a list), a NULL list, a NULL pointer among
 * the entries to fill, a negative max_to_return (argument 3); and no place
 * for the count (argument 2). A list shorter than the registry is not an
 * error (see test_registry_list_providers_fewer_slots). */
static void test_registry_list_providers_invalid_parameter(void **state)
{
	(void)state;
	DAT_COUNT n = registry_size(), m;
	DAT_PROVIDER_INFO *infos = calloc((size_t)n, sizeof *infos);
	assert_non_null(infos);
	DAT_PROVIDER_INFO **p = pointers(infos, n);
	m = -1;
	check_ret(dat_registry_list_providers(0, &m, p), DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
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
	/* The NULL slot is past the entries asked for: not looked at. */
	m = -1;
	check_ok(dat_registry_list_providers(n - 1, &m, p));
	assert_int_equal(m, n - 1);
	check_ret(dat_registry_list_providers(n, NULL, p), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	free(p);
	free(infos);
}

/* A registry of 12 IAs, alternately shared memory and TCP: more than the 8
 * slots the program below offers. */
#define MANY 12
#define SLOTS 8

static void many_name(char *buf, size_t len, int i)
{
	snprintf(buf, len, "compat-%s-%d", i % 2 ? "tcp" : "shm", i);
}

/* The child: the program pattern of an MPI library that lists at most 8
 * providers, then opens what it found. It must get the first 8 entries of
 * its dat.conf, DAT_SUCCESS and entries_returned = 8, and each listed IA
 * (over shared memory and over TCP) must open. */
static int fewer_slots_child(void)
{
	DAT_PROVIDER_INFO info[SLOTS + 1], *list[SLOTS + 1];
	memset(info, 0x5a, sizeof info);
	for (int i = 0; i <= SLOTS; i++)
		list[i] = &info[i];
	DAT_COUNT n = -1;
	DAT_RETURN r = dat_registry_list_providers(SLOTS, &n, list);
	if (r != DAT_SUCCESS || n != SLOTS) {
		fprintf(stderr, "fewer-slots child: list_providers(%d): 0x%08x n=%d, want DAT_SUCCESS n=%d\n", SLOTS,
			(unsigned)r, (int)n, SLOTS);
		return 1;
	}
	/* The slot past max_to_return is untouched. */
	unsigned char pad[sizeof info[SLOTS]];
	memset(pad, 0x5a, sizeof pad);
	if (memcmp(&info[SLOTS], pad, sizeof pad) != 0) {
		fprintf(stderr, "fewer-slots child: wrote past max_to_return\n");
		return 1;
	}
	for (int i = 0; i < SLOTS; i++) {
		char want[DAT_NAME_MAX_LENGTH];
		many_name(want, sizeof want, i);
		if (strcmp(info[i].ia_name, want) != 0 || info[i].dapl_version_major != 1 ||
		    info[i].dapl_version_minor != 2) {
			fprintf(stderr, "fewer-slots child: entry %d is %s %u.%u, want %s 1.2\n", i, info[i].ia_name,
				(unsigned)info[i].dapl_version_major, (unsigned)info[i].dapl_version_minor, want);
			return 1;
		}
		DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
		DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
		r = dat_ia_open(info[i].ia_name, 8, &async, &ia);
		if (r == DAT_SUCCESS)
			r = dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG);
		if (r != DAT_SUCCESS) {
			fprintf(stderr, "fewer-slots child: open/close %s: 0x%08x\n", info[i].ia_name, (unsigned)r);
			return 1;
		}
	}
	return 0;
}

/* DAT_SUCCESS with fewer slots than entries, as every reference does (the
 * page calls it DAT_INVALID_PARAMETER): in a child whose dat.conf has 12
 * entries and which offers 8 slots. */
static void test_registry_list_providers_fewer_slots(void **state)
{
	(void)state;
	char path[] = "/tmp/godat-ctest-datconf-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "# %d entries, more than the %d slots the child offers\n", MANY, SLOTS);
	for (int i = 0; i < MANY; i++) {
		char name[DAT_NAME_MAX_LENGTH];
		many_name(name, sizeof name, i);
		fprintf(f, "%s u1.2 threadsafe default libdat.so.1 godat.1.0 \"transport=%s\" \"\"\n", name,
			i % 2 ? "tcp" : "shm");
	}
	assert_int_equal(fclose(f), 0);
	char var[sizeof path + 16];
	snprintf(var, sizeof var, "DAT_OVERRIDE=%s", path);
	const char *const drop[] = {"DAT_OVERRIDE", NULL};
	char *const add[] = {var, NULL};
	char **env = make_env(drop, add);
	int st = run_self("fewer-slots", env);
	free(env);
	unlink(path);
	assert_int_equal(st, 0);
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
	if (argc > 1 && strcmp(argv[1], "fewer-slots") == 0)
		return fewer_slots_child();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry_list_providers_success),
		cmocka_unit_test(test_registry_list_providers_invalid_parameter),
		cmocka_unit_test(test_registry_list_providers_fewer_slots),
		cmocka_unit_test(test_registry_list_providers_internal_error),
	};
	return cmocka_run_group_tests_name("dat_registry_list_providers", tests, NULL, NULL);
}
