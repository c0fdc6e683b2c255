/* dat_provider_init(3DAT): the page returns nothing; its contract is what
 * a provider's init does with the registry, checked here with a provider
 * the program implements and loads itself (provider_impl.h). */
#define _GNU_SOURCE
#include "provider_impl.h"
#include <dlfcn.h>

/* "The Provider's implementation of this method must call
 * dat_registry_add_provider(3DAT), using the IA name in the
 * provider_info.ia_name field, to register itself with the Dynamic
 * Registry. The implementation must not register other IA names at this
 * time." After init, exactly one entry more, under that name, with the
 * version and thread safety of provider_info. */
static void test_provider_init_registers_the_ia_name(void **state)
{
	(void)state;
	test_provider_setup();
	DAT_PROVIDER_INFO info = provider_info_named("ctest-provider-init");
	DAT_COUNT before = registry_count();
	dat_provider_init(&info, "transport=shm");
	check_ok(init_result);
	assert_int_equal(init_calls, 1);
	assert_string_equal(init_instance, "transport=shm");
	assert_int_equal(registry_count(), before + 1);
	assert_int_equal(count_listed(info.ia_name), 1);
	dat_provider_fini(&info);
	check_ok(fini_result);
}

/* "If this method fails, it should ensure that it does not leave its entry
 * in the Dynamic Registry": an init for a name that is already registered
 * fails (DAT_PROVIDER_ALREADY_REGISTERED) and adds nothing. */
static void test_provider_init_failure_leaves_no_entry(void **state)
{
	(void)state;
	test_provider_setup();
	DAT_PROVIDER_INFO info = provider_info_named("ctest-provider-twice");
	dat_provider_init(&info, "");
	check_ok(init_result);
	DAT_COUNT before = registry_count();
	dat_provider_init(&info, "");
	check_type(init_result, DAT_PROVIDER_ALREADY_REGISTERED);
	assert_int_equal(registry_count(), before);
	assert_int_equal(count_listed(info.ia_name), 1);
	dat_provider_fini(&info);
	check_ok(fini_result);
}

/* The entry point belongs to providers, not to the DAT library
 * (dat_registry.h: "Prototypes for providers to define"): libdat itself
 * defines neither dat_provider_init nor dat_provider_fini, so a program
 * hosting a provider, like this one, gets no clash. */
static void test_provider_init_not_in_libdat(void **state)
{
	(void)state;
	void *lib = dlopen("libdat.so.1", RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(lib);
	assert_null(dlsym(lib, DAT_PROVIDER_INIT_FUNC_STR));
	assert_null(dlsym(lib, DAT_PROVIDER_FINI_FUNC_STR));
	assert_non_null(dlsym(lib, "dat_registry_add_provider"));
	dlclose(lib);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_provider_init_registers_the_ia_name),
		cmocka_unit_test(test_provider_init_failure_leaves_no_entry),
		cmocka_unit_test(test_provider_init_not_in_libdat),
	};
	return cmocka_run_group_tests_name("dat_provider_init", tests, NULL, NULL);
}
