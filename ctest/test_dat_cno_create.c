/* dat_cno_create(3DAT): every return value and the OS Wait Proxy Agent. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_cno_create() function creates a CNO instance. Upon
 * creation, there are no Event Dispatchers feeding it." "Upon creation,
 * the CNO is not associated with any EVDs, has no waiters and has, at
 * most, one OS Wait Proxy Agent." "The value of
 * DAT_OS_WAIT_PROXY_AGENT_NULL specifies that no OS Wait Proxy Agent is
 * associated with the created CNO." A wait finds nothing, and the CNO can
 * be freed at once (it would refuse with an EVD or a waiter). */
static void test_cno_create_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE evd = (DAT_EVD_HANDLE)(uintptr_t)1;
	DAT_HANDLE_TYPE t;
	DAT_CNO_PARAM p;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	assert_non_null(cno);
	check_ok(dat_get_handle_type(cno, &t));
	assert_int_equal(t, DAT_HANDLE_TYPE_CNO);
	check_ok(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &p));
	assert_ptr_equal(p.ia_handle, ia);
	assert_null(p.agent.instance_data);
	assert_null(p.agent.proxy_agent_func);
	check_ret(dat_cno_wait(cno, 0, &evd), DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	assert_null(evd);
	check_ok(dat_cno_free(cno));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* "The agent parameter specifies the proxy agent, which is OS-dependent
 * and which is invoked when the CNO is triggered. After it is invoked, it
 * is no longer associated with the CNO." The agent runs once, with its
 * instance data and the triggering EVD, and is then gone from the CNO. */
static void test_cno_create_agent_invoked_once(void **state)
{
	(void)state;
	struct agent_log log;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, test_agent(&log), &cno));
	DAT_CNO_PARAM p;
	check_ok(dat_cno_query(cno, DAT_CNO_FIELD_AGENT, &p));
	assert_ptr_equal(p.agent.instance_data, &log);
	DAT_EVD_HANDLE evd = make_evd(ia, 8, cno, DAT_EVD_SOFTWARE_FLAG);
	assert_int_equal(log.calls, 0);
	post_se(evd, 1);
	agent_wait_calls(&log, 1);
	assert_ptr_equal(log.instance, &log);
	assert_ptr_equal(log.evd, evd);
	check_ok(dat_cno_query(cno, DAT_CNO_FIELD_AGENT, &p));
	assert_null(p.agent.proxy_agent_func);
	/* A later trigger does not call it again; the CNO itself still
	 * delivers. */
	DAT_EVD_HANDLE got = DAT_HANDLE_NULL;
	check_ok(dat_cno_wait(cno, TMO_US, &got));
	dequeue_se(evd, 1);
	post_se(evd, 2);
	check_ok(dat_cno_wait(cno, TMO_US, &got));
	assert_ptr_equal(got, evd);
	usleep(20000);
	assert_int_equal(__atomic_load_n(&log.calls, __ATOMIC_SEQ_CST), 1);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INSUFFICIENT_RESOURCES: "The operation failed due to resource
 * limitations": with every handle of the library in use no CNO can be
 * created (DAT_RESOURCE_MEMORY). */
static void test_cno_create_insufficient_resources(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE *pzs;
	DAT_CNO_HANDLE cno = DAT_HANDLE_NULL;
	size_t n = exhaust_handles(ia, &pzs);
	check_ret(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno), DAT_INSUFFICIENT_RESOURCES,
		  DAT_RESOURCE_MEMORY);
	assert_null(cno);
	release_pzs(pzs, n);
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "The ia_handle parameter is invalid": NULL, closed,
 * another type (DAT_INVALID_HANDLE_IA). */
static void test_cno_create_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL), closed = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_CNO_HANDLE cno = (DAT_CNO_HANDLE)(uintptr_t)0x88;
	check_ok(dat_ia_close(closed, DAT_CLOSE_GRACEFUL_FLAG));
	check_ret(dat_cno_create(DAT_HANDLE_NULL, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_IA);
	check_ret(dat_cno_create(closed, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	check_ret(dat_cno_create(pz, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	assert_int_equal((uintptr_t)cno, 0x88);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_PARAMETER: "the agent parameter is invalid": instance data
 * with no function to call (argument 2); no place for the handle
 * (argument 3). */
static void test_cno_create_invalid_parameter(void **state)
{
	(void)state;
	static int data;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno = DAT_HANDLE_NULL;
	DAT_OS_WAIT_PROXY_AGENT bad = {.instance_data = &data, .proxy_agent_func = NULL};
	check_ret(dat_cno_create(ia, bad, &cno), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	assert_null(cno);
	check_ret(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cno_create_success),
		cmocka_unit_test(test_cno_create_agent_invoked_once),
		cmocka_unit_test(test_cno_create_insufficient_resources),
		cmocka_unit_test(test_cno_create_invalid_handle),
		cmocka_unit_test(test_cno_create_invalid_parameter),
	};
	return cmocka_run_group_tests_name("dat_cno_create", tests, NULL, NULL);
}
