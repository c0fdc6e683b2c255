/* dat_provider_fini(3DAT): the page returns nothing; its contract is what
 * a provider's fini does with the registry, checked with a provider the
 * program implements itself (provider_impl.h). */
#define _GNU_SOURCE
#include "provider_impl.h"

/* "The Provider can use this method to undo any initialization it
 * performed when dat_provider_init(3DAT) was called for the same IA name.
 * The Provider's implementation of this method should call
 * dat_registry_remove_provider(3DAT) to unregister its IA Name": the
 * entry is gone and the name can be initialized again ("it is not called
 * more than once without an intervening call to dat_provider_init()"). */
static void test_provider_fini_unregisters(void **state)
{
	(void)state;
	test_provider_setup();
	DAT_PROVIDER_INFO info = provider_info_named("ctest-provider-fini");
	DAT_COUNT before = registry_count();
	for (int round = 0; round < 2; round++) {
		dat_provider_init(&info, "");
		check_ok(init_result);
		assert_int_equal(count_listed(info.ia_name), 1);
		dat_provider_fini(&info);
		check_ok(fini_result);
		assert_int_equal(count_listed(info.ia_name), 0);
		assert_int_equal(registry_count(), before);
	}
	assert_int_equal(fini_calls, 2);
	/* A second fini without an init has nothing to remove. */
	dat_provider_fini(&info);
	check_type(fini_result, DAT_INVALID_PARAMETER);
}

/* "This method can be called for a given IA name at any time after all
 * open instances of that IA are closed": opening and closing IAs of other
 * names in between does not disturb the registration, and fini after they
 * are closed succeeds. */
static void test_provider_fini_after_ias_closed(void **state)
{
	(void)state;
	test_provider_setup();
	DAT_PROVIDER_INFO info = provider_info_named("ctest-provider-fini-2");
	dat_provider_init(&info, "");
	check_ok(init_result);
	DAT_IA_HANDLE ia = open_ia(NULL);
	assert_int_equal(count_listed(info.ia_name), 1);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
	dat_provider_fini(&info);
	check_ok(fini_result);
	assert_int_equal(count_listed(info.ia_name), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_provider_fini_unregisters),
		cmocka_unit_test(test_provider_fini_after_ias_closed),
	};
	return cmocka_run_group_tests_name("dat_provider_fini", tests, NULL, NULL);
}
