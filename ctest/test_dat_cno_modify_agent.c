/* dat_cno_modify_agent(3DAT): every return value; the agent gets every
 * trigger in addition to the CNO's own delivery. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_cno_modify_agent() function modifies the OS Wait
 * Proxy Agent associated with a CNO. If non-null, any trigger received by
 * the CNO is also passed to the OS Wait Proxy Agent. This is in addition
 * to any local delivery through the CNO." */
static void test_cno_modify_agent_success(void **state)
{
	(void)state;
	struct agent_log log;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_HANDLE evd = make_evd(ia, 8, cno, DAT_EVD_SOFTWARE_FLAG);
	check_ok(dat_cno_modify_agent(cno, test_agent(&log)));
	DAT_CNO_PARAM p;
	check_ok(dat_cno_query(cno, DAT_CNO_FIELD_AGENT, &p));
	assert_ptr_equal(p.agent.instance_data, &log);
	assert_true(p.agent.proxy_agent_func == agent_record);
	post_se(evd, 3);
	agent_wait_calls(&log, 1);
	assert_ptr_equal(log.evd, evd);
	DAT_EVD_HANDLE got = DAT_HANDLE_NULL;
	check_ok(dat_cno_wait(cno, TMO_US, &got));
	assert_ptr_equal(got, evd);
	dequeue_se(evd, 3);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "The Consumer can pass the value of DAT_OS_WAIT_PROXY_AGENT_NULL to
 * disassociate the current Proxy agent from the CNO": it is not called on
 * the next trigger. */
static void test_cno_modify_agent_null_disassociates(void **state)
{
	(void)state;
	struct agent_log log;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, test_agent(&log), &cno));
	DAT_EVD_HANDLE evd = make_evd(ia, 8, cno, DAT_EVD_SOFTWARE_FLAG);
	check_ok(dat_cno_modify_agent(cno, DAT_OS_WAIT_PROXY_AGENT_NULL));
	DAT_CNO_PARAM p;
	check_ok(dat_cno_query(cno, DAT_CNO_FIELD_AGENT, &p));
	assert_null(p.agent.proxy_agent_func);
	post_se(evd, 4);
	DAT_EVD_HANDLE got;
	check_ok(dat_cno_wait(cno, TMO_US, &got));
	usleep(20000);
	assert_int_equal(__atomic_load_n(&log.calls, __ATOMIC_SEQ_CST), 0);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "The cno_handle parameter is invalid": NULL, freed,
 * another type (DAT_INVALID_HANDLE_CNO). */
static void test_cno_modify_agent_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ok(dat_cno_free(cno));
	check_ret(dat_cno_modify_agent(DAT_HANDLE_NULL, DAT_OS_WAIT_PROXY_AGENT_NULL), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_CNO);
	check_ret(dat_cno_modify_agent(cno, DAT_OS_WAIT_PROXY_AGENT_NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	check_ret(dat_cno_modify_agent(ia, DAT_OS_WAIT_PROXY_AGENT_NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* DAT_INVALID_PARAMETER: "the agent parameter is invalid": instance data
 * with no function to invoke (argument 2); the old agent stays. */
static void test_cno_modify_agent_invalid_parameter(void **state)
{
	(void)state;
	static int data;
	struct agent_log log;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, test_agent(&log), &cno));
	DAT_OS_WAIT_PROXY_AGENT bad = {.instance_data = &data, .proxy_agent_func = NULL};
	check_ret(dat_cno_modify_agent(cno, bad), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	DAT_CNO_PARAM p;
	check_ok(dat_cno_query(cno, DAT_CNO_FIELD_AGENT, &p));
	assert_ptr_equal(p.agent.instance_data, &log);
	check_ok(dat_cno_free(cno));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cno_modify_agent_success),
		cmocka_unit_test(test_cno_modify_agent_null_disassociates),
		cmocka_unit_test(test_cno_modify_agent_invalid_handle),
		cmocka_unit_test(test_cno_modify_agent_invalid_parameter),
	};
	return cmocka_run_group_tests_name("dat_cno_modify_agent", tests, NULL, NULL);
}
