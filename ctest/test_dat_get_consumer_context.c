/* dat_get_consumer_context(3DAT): every return value. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_get_consumer_context() function gets the Consumer
 * context from the specified dat_handle. The dat_handle can be one of the
 * following handle types: DAT_IA_HANDLE, DAT_EP_HANDLE, DAT_EVD_HANDLE,
 * DAT_CR_HANDLE, DAT_RSP_HANDLE, DAT_PSP_HANDLE, DAT_PZ_HANDLE,
 * DAT_LMR_HANDLE, DAT_RMR_HANDLE, or DAT_CNO_HANDLE." Each returns the
 * context set on it (and no context, zero, before any was set); contexts
 * of different objects are independent. */
static void test_get_consumer_context_success(void **state)
{
	(void)state;
	struct all_objs o;
	all_objs_open(&o);
	for (int i = 0; i < 10; i++) {
		DAT_CONTEXT c;
		c.as_64 = 0xFFFF;
		check_ok(dat_get_consumer_context(o.h[i], &c));
		assert_int_equal(c.as_64, 0);
	}
	for (int i = 0; i < 10; i++) {
		DAT_CONTEXT c = {.as_ptr = &o.h[i]};
		check_ok(dat_set_consumer_context(o.h[i], c));
	}
	for (int i = 0; i < 10; i++) {
		DAT_CONTEXT c = {.as_64 = 0};
		check_ok(dat_get_consumer_context(o.h[i], &c));
		assert_ptr_equal(c.as_ptr, &o.h[i]);
	}
	all_objs_close(&o);
}

/* DAT_INVALID_HANDLE: "The dat_handle parameter is invalid": NULL, freed
 * objects of every type, a pointer that is not a handle; the output is
 * left alone. */
static void test_get_consumer_context_invalid_handle(void **state)
{
	(void)state;
	struct all_objs o;
	all_objs_open(&o);
	DAT_HANDLE dead[10];
	memcpy(dead, o.h, sizeof dead);
	all_objs_close(&o);
	DAT_CONTEXT c = {.as_64 = 0x1234};
	int local;
	check_type(dat_get_consumer_context(DAT_HANDLE_NULL, &c), DAT_INVALID_HANDLE);
	check_type(dat_get_consumer_context(&local, &c), DAT_INVALID_HANDLE);
	for (int i = 0; i < 10; i++)
		check_type(dat_get_consumer_context(dead[i], &c), DAT_INVALID_HANDLE);
	assert_int_equal(c.as_64, 0x1234);
}

/* No place for the context: a parameter error (argument 2). */
static void test_get_consumer_context_null_output(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	check_ret(dat_get_consumer_context(ia, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_consumer_context_success),
		cmocka_unit_test(test_get_consumer_context_invalid_handle),
		cmocka_unit_test(test_get_consumer_context_null_output),
	};
	return cmocka_run_group_tests_name("dat_get_consumer_context", tests, NULL, NULL);
}
