/* dat_get_handle_type(3DAT): every return value. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_get_handle_type() function allows the Consumer to
 * discover the type of a DAT Object using its handle." USAGE: "Consumers
 * can use this operation to determine the type of Object being returned.
 * This is needed for calling an appropriate query or any other operation
 * on the Object handle": every type of the page, and for each the
 * matching query succeeds. */
static void test_get_handle_type_success(void **state)
{
	(void)state;
	struct all_objs o;
	all_objs_open(&o);
	for (int i = 0; i < 10; i++) {
		DAT_HANDLE_TYPE t = (DAT_HANDLE_TYPE)-1;
		check_ok(dat_get_handle_type(o.h[i], &t));
		assert_int_equal(t, o.t[i]);
		DAT_RETURN r = DAT_INTERNAL_ERROR;
		switch (t) {
		case DAT_HANDLE_TYPE_IA: r = dat_ia_query(o.h[i], NULL, 0, NULL, 0, NULL); break;
		case DAT_HANDLE_TYPE_EP: { DAT_EP_PARAM p; r = dat_ep_query(o.h[i], DAT_EP_FIELD_EP_STATE, &p); break; }
		case DAT_HANDLE_TYPE_EVD: { DAT_EVD_PARAM p; r = dat_evd_query(o.h[i], DAT_EVD_FIELD_ALL, &p); break; }
		case DAT_HANDLE_TYPE_CR: { DAT_CR_PARAM p; r = dat_cr_query(o.h[i], DAT_CR_FIELD_ALL, &p); break; }
		case DAT_HANDLE_TYPE_RSP: { DAT_RSP_PARAM p; r = dat_rsp_query(o.h[i], DAT_RSP_FIELD_ALL, &p); break; }
		case DAT_HANDLE_TYPE_PSP: { DAT_PSP_PARAM p; r = dat_psp_query(o.h[i], DAT_PSP_FIELD_ALL, &p); break; }
		case DAT_HANDLE_TYPE_PZ: { DAT_PZ_PARAM p; r = dat_pz_query(o.h[i], DAT_PZ_FIELD_ALL, &p); break; }
		case DAT_HANDLE_TYPE_LMR: { DAT_LMR_PARAM p; r = dat_lmr_query(o.h[i], DAT_LMR_FIELD_ALL, &p); break; }
		case DAT_HANDLE_TYPE_RMR: { DAT_RMR_PARAM p; r = dat_rmr_query(o.h[i], DAT_RMR_FIELD_ALL, &p); break; }
		case DAT_HANDLE_TYPE_CNO: { DAT_CNO_PARAM p; r = dat_cno_query(o.h[i], DAT_CNO_FIELD_ALL, &p); break; }
		default: fail_msg("unexpected type %d", (int)t);
		}
		if (r != DAT_SUCCESS)
			fail_msg("query of a handle of type %d: %s", (int)t, ret_name(r));
	}
	all_objs_close(&o);
}

/* DAT_INVALID_HANDLE: "The dat_handle parameter is invalid": NULL, a
 * freed object of every type, a pointer that was never a handle, the EVD
 * sentinels of dat_ia_open; handle_type is left alone. */
static void test_get_handle_type_invalid_handle(void **state)
{
	(void)state;
	struct all_objs o;
	all_objs_open(&o);
	DAT_HANDLE dead[10];
	memcpy(dead, o.h, sizeof dead);
	all_objs_close(&o);
	int local;
	DAT_HANDLE other[] = {DAT_HANDLE_NULL, &local, DAT_EVD_ASYNC_EXISTS, DAT_EVD_OUT_OF_SCOPE};
	DAT_HANDLE_TYPE t = (DAT_HANDLE_TYPE)77;
	for (int i = 0; i < 10; i++)
		check_type(dat_get_handle_type(dead[i], &t), DAT_INVALID_HANDLE);
	for (size_t i = 0; i < sizeof other / sizeof other[0]; i++)
		check_type(dat_get_handle_type(other[i], &t), DAT_INVALID_HANDLE);
	assert_int_equal(t, 77);
}

/* No place for the type: a parameter error (argument 2). */
static void test_get_handle_type_null_output(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	check_ret(dat_get_handle_type(ia, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_handle_type_success),
		cmocka_unit_test(test_get_handle_type_invalid_handle),
		cmocka_unit_test(test_get_handle_type_null_output),
	};
	return cmocka_run_group_tests_name("dat_get_handle_type", tests, NULL, NULL);
}
