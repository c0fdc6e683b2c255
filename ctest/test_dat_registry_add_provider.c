/* dat_registry_add_provider(3DAT): every return value. */
#define _GNU_SOURCE
#include "pages.h"
#include <dat/dat_registry.h>

static DAT_PROVIDER fake = {.device_name = "ctest-fake"};

static DAT_PROVIDER_INFO info_named(const char *name)
{
	DAT_PROVIDER_INFO i;
	memset(&i, 0, sizeof i);
	snprintf(i.ia_name, sizeof i.ia_name, "%s", name);
	i.dapl_version_major = 1;
	i.dapl_version_minor = 2;
	i.is_thread_safe = DAT_TRUE;
	return i;
}

/* Whether name is listed by dat_registry_list_providers. */
static int listed(const char *name)
{
	DAT_COUNT n = 0, m = 0;
	dat_registry_list_providers(0, &n, NULL);
	DAT_PROVIDER_INFO *infos = calloc((size_t)n + 1, sizeof *infos), **p = calloc((size_t)n + 1, sizeof *p);
	assert_non_null(infos);
	assert_non_null(p);
	for (DAT_COUNT i = 0; i <= n; i++)
		p[i] = &infos[i];
	check_ok(dat_registry_list_providers(n + 1, &m, p));
	int found = 0;
	for (DAT_COUNT i = 0; i < m; i++)
		found |= strcmp(infos[i].ia_name, name) == 0;
	free(p);
	free(infos);
	return found;
}

/* DAT_SUCCESS: "The Provider declares itself with the Dynamic Registry.
 * Note that the caller can choose to register itself multiple times, for
 * example once for each port." One provider under two IA names: both are
 * listed, with the attributes given. */
static void test_registry_add_provider_success(void **state)
{
	(void)state;
	DAT_PROVIDER_INFO p0 = info_named("ctest-add-port0"), p1 = info_named("ctest-add-port1");
	p1.is_thread_safe = DAT_FALSE;
	assert_false(listed(p0.ia_name));
	check_ok(dat_registry_add_provider(&fake, &p0));
	check_ok(dat_registry_add_provider(&fake, &p1));
	assert_true(listed(p0.ia_name));
	assert_true(listed(p1.ia_name));
	check_ok(dat_registry_remove_provider(&fake, &p0));
	check_ok(dat_registry_remove_provider(&fake, &p1));
}

/* DAT_PROVIDER_ALREADY_REGISTERED: "The same IA Name cannot be added
 * multiple times. An attempt to register the same IA Name again results
 * in an error with the return value DAT_PROVIDER_ALREADY_REGISTERED",
 * from another provider or with other attributes too. */
static void test_registry_add_provider_already_registered(void **state)
{
	(void)state;
	static DAT_PROVIDER other = {.device_name = "ctest-other"};
	DAT_PROVIDER_INFO i = info_named("ctest-add-dup"), j = i;
	j.is_thread_safe = DAT_FALSE;
	check_ok(dat_registry_add_provider(&fake, &i));
	check_ret(dat_registry_add_provider(&fake, &i), DAT_PROVIDER_ALREADY_REGISTERED, DAT_NO_SUBTYPE);
	check_ret(dat_registry_add_provider(&other, &j), DAT_PROVIDER_ALREADY_REGISTERED, DAT_NO_SUBTYPE);
	check_ok(dat_registry_remove_provider(&fake, &i));
	check_ok(dat_registry_add_provider(&other, &j)); /* free again after removal */
	check_ok(dat_registry_remove_provider(&other, &j));
}

/* DAT_INSUFFICIENT_RESOURCES: "The maximum number of Providers was already
 * registered." Adding names until the registry is full, the next add
 * fails; removing one makes room. */
static void test_registry_add_provider_insufficient_resources(void **state)
{
	(void)state;
	enum { LIMIT = 100000 };
	DAT_PROVIDER_INFO i;
	int n = 0;
	char name[64];
	for (;; n++) {
		if (n == LIMIT)
			fail_msg("registered %d providers without reaching a maximum", n);
		snprintf(name, sizeof name, "ctest-fill-%d", n);
		i = info_named(name);
		DAT_RETURN r = dat_registry_add_provider(&fake, &i);
		if (r != DAT_SUCCESS) {
			check_type(r, DAT_INSUFFICIENT_RESOURCES);
			break;
		}
	}
	assert_true(n > 0);
	assert_false(listed(name));
	snprintf(name, sizeof name, "ctest-fill-%d", 0);
	DAT_PROVIDER_INFO first = info_named(name);
	check_ok(dat_registry_remove_provider(&fake, &first));
	check_ok(dat_registry_add_provider(&fake, &i));
	for (int k = 1; k <= n; k++) {
		snprintf(name, sizeof name, "ctest-fill-%d", k);
		DAT_PROVIDER_INFO x = info_named(name);
		check_ok(dat_registry_remove_provider(&fake, &x));
	}
}

/* DAT_INVALID_PARAMETER: "Invalid parameter": no provider (argument 1), no
 * provider_info or an empty IA name (argument 2); nothing is added. */
static void test_registry_add_provider_invalid_parameter(void **state)
{
	(void)state;
	DAT_PROVIDER_INFO i = info_named("ctest-add-null"), empty = info_named("");
	check_ret(dat_registry_add_provider(NULL, &i), DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	check_ret(dat_registry_add_provider(&fake, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_registry_add_provider(&fake, &empty), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	assert_false(listed(i.ia_name));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry_add_provider_success),
		cmocka_unit_test(test_registry_add_provider_already_registered),
		cmocka_unit_test(test_registry_add_provider_insufficient_resources),
		cmocka_unit_test(test_registry_add_provider_invalid_parameter),
	};
	return cmocka_run_group_tests_name("dat_registry_add_provider", tests, NULL, NULL);
}
