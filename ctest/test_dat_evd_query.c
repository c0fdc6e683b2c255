/* dat_evd_query(3DAT): every return value. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_evd_query() function provides to the Consumer
 * parameters of the Event Dispatcher, including the state of the EVD
 * (enabled/disabled)": IA, queue length (at least what was asked), state,
 * CNO and flags as created, and the state as it changes. */
static void test_evd_query_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_FLAGS flags = DAT_EVD_SOFTWARE_FLAG | DAT_EVD_DTO_FLAG;
	DAT_EVD_HANDLE evd = make_evd(ia, 13, cno, flags);
	DAT_EVD_PARAM p;
	memset(&p, 0, sizeof p);
	check_ok(dat_evd_query(evd, DAT_EVD_FIELD_ALL, &p));
	assert_ptr_equal(p.ia_handle, ia);
	assert_true(p.evd_qlen >= 13);
	assert_int_equal(p.evd_state, DAT_EVD_STATE_ENABLED | DAT_EVD_STATE_WAITABLE);
	assert_ptr_equal(p.cno_handle, cno);
	assert_int_equal(p.evd_flags, flags);
	check_ok(dat_evd_disable(evd));
	check_ok(dat_evd_set_unwaitable(evd));
	check_ok(dat_evd_query(evd, DAT_EVD_FIELD_EVD_STATE, &p));
	assert_int_equal(p.evd_state, DAT_EVD_STATE_DISABLED | DAT_EVD_STATE_UNWAITABLE);
	/* "The Provider returns values for evd_param_mask requested
	 * parameters." */
	memset(&p, 0, sizeof p);
	check_ok(dat_evd_query(evd, DAT_EVD_FIELD_EVD_QLEN, &p));
	assert_true(p.evd_qlen >= 13);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_PARAMETER: "The evd_param_mask parameter is invalid": a bit
 * outside DAT_EVD_FIELD_ALL (argument 2); a NULL evd_param (argument 3). */
static void test_evd_query_invalid_parameter(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_PARAM p;
	check_ret(dat_evd_query(evd, (DAT_EVD_PARAM_MASK)(DAT_EVD_FIELD_ALL + 1), &p), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG2);
	check_ret(dat_evd_query(evd, DAT_EVD_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "The evd_handle parameter is invalid": NULL, freed,
 * another type (DAT_NO_SUBTYPE); nothing is written. */
static void test_evd_query_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_PARAM p;
	check_ok(dat_evd_free(evd));
	memset(&p, 0xA5, sizeof p);
	check_ret(dat_evd_query(DAT_HANDLE_NULL, DAT_EVD_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_query(evd, DAT_EVD_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_query(ia, DAT_EVD_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	assert_int_equal(((unsigned char *)&p)[0], 0xA5);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evd_query_success),
		cmocka_unit_test(test_evd_query_invalid_parameter),
		cmocka_unit_test(test_evd_query_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_evd_query", tests, NULL, NULL);
}
