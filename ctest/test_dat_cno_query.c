/* dat_cno_query(3DAT): every return value. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_cno_query() function provides the Consumer
 * parameters of the CNO": its IA and its agent. "A value of
 * DAT_OS_WAIT_PROXY_AGENT_NULL in cno_param indicates that there are no
 * Proxy Agent associated with the CNO." */
static void test_cno_query_success(void **state)
{
	(void)state;
	struct agent_log log;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE none, with;
	DAT_CNO_PARAM p;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &none));
	check_ok(dat_cno_create(ia, test_agent(&log), &with));
	memset(&p, 0xA5, sizeof p);
	check_ok(dat_cno_query(none, DAT_CNO_FIELD_ALL, &p));
	assert_ptr_equal(p.ia_handle, ia);
	assert_null(p.agent.instance_data);
	assert_null(p.agent.proxy_agent_func);
	check_ok(dat_cno_query(with, DAT_CNO_FIELD_ALL, &p));
	assert_ptr_equal(p.ia_handle, ia);
	assert_ptr_equal(p.agent.instance_data, &log);
	assert_true(p.agent.proxy_agent_func == agent_record);
	memset(&p, 0, sizeof p);
	check_ok(dat_cno_query(with, DAT_CNO_FIELD_IA_HANDLE, &p));
	assert_ptr_equal(p.ia_handle, ia);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_PARAMETER: "The cno_param_mask parameter is invalid": a bit
 * outside DAT_CNO_FIELD_ALL (argument 2); a NULL cno_param (argument 3). */
static void test_cno_query_invalid_parameter(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	DAT_CNO_PARAM p;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ret(dat_cno_query(cno, (DAT_CNO_PARAM_MASK)(DAT_CNO_FIELD_ALL + 1), &p), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG2);
	check_ret(dat_cno_query(cno, DAT_CNO_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "The cno_handle parameter is invalid": NULL, freed,
 * another type (DAT_INVALID_HANDLE_CNO); nothing is written. */
static void test_cno_query_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	DAT_CNO_PARAM p;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ok(dat_cno_free(cno));
	memset(&p, 0xA5, sizeof p);
	check_ret(dat_cno_query(DAT_HANDLE_NULL, DAT_CNO_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	check_ret(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	check_ret(dat_cno_query(ia, DAT_CNO_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	assert_int_equal(((unsigned char *)&p)[0], 0xA5);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cno_query_success),
		cmocka_unit_test(test_cno_query_invalid_parameter),
		cmocka_unit_test(test_cno_query_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_cno_query", tests, NULL, NULL);
}
