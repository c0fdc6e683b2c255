/* dat_registry_remove_provider(3DAT): the provokable return values. */
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

static DAT_COUNT registry_size(void)
{
	DAT_COUNT n = -1;
	dat_registry_list_providers(0, &n, NULL);
	return n;
}

/* DAT_SUCCESS: "The Provider removes itself from the Dynamic Registry. ...
 * Removal of the registration only prevents new sessions": the name is no
 * longer listed and can be registered again. */
static void test_registry_remove_provider_success(void **state)
{
	(void)state;
	DAT_PROVIDER_INFO i = info_named("ctest-remove");
	DAT_COUNT before = registry_size();
	check_ok(dat_registry_add_provider(&fake, &i));
	assert_int_equal(registry_size(), before + 1);
	check_ok(dat_registry_remove_provider(&fake, &i));
	assert_int_equal(registry_size(), before);
	check_ok(dat_registry_add_provider(&fake, &i));
	check_ok(dat_registry_remove_provider(&fake, &i));
}

/* DAT_INVALID_PARAMETER: "Invalid parameter. The Provider was not found":
 * a name never added, one already removed, a name registered by another
 * provider (argument 1); NULL provider or info (arguments 1 and 2). */
static void test_registry_remove_provider_invalid_parameter(void **state)
{
	(void)state;
	static DAT_PROVIDER other = {.device_name = "ctest-other"};
	DAT_PROVIDER_INFO i = info_named("ctest-remove-twice"), never = info_named("ctest-never-added");
	check_ret(dat_registry_remove_provider(&fake, &never), DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	check_ok(dat_registry_add_provider(&fake, &i));
	check_ret(dat_registry_remove_provider(&other, &i), DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	check_ret(dat_registry_remove_provider(NULL, &i), DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	check_ret(dat_registry_remove_provider(&fake, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ok(dat_registry_remove_provider(&fake, &i));
	check_ret(dat_registry_remove_provider(&fake, &i), DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry_remove_provider_success),
		cmocka_unit_test(test_registry_remove_provider_invalid_parameter),
	};
	return cmocka_run_group_tests_name("dat_registry_remove_provider", tests, NULL, NULL);
}
