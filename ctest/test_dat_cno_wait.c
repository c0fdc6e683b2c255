/* dat_cno_wait(3DAT): every return value; what notifies a CNO and what
 * does not; waiters released when the EVDs or the IA go away. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_cno_wait() function allows the Consumer to wait for
 * notification events from a set of Event Dispatchers all from the same
 * Interface Adapter. The Consumer blocks until notified": a thread blocked
 * on the CNO returns the EVD a software event was posted to. */
static void test_cno_wait_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_HANDLE a = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE b = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	struct blocked w;
	blocked_start(&w, blocked_cno_main, cno, 20 * 1000000, 0);
	wait_until_sleeping(&w);
	post_se(b, 1);
	blocked_join(&w, 10);
	check_ok(w.ret);
	assert_ptr_equal(w.evd_out, b);
	dequeue_se(b, 1);
	expect_empty(a);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "The returned evd_handle is only a hint. ... other Event Dispatchers
 * feeding this CNO might have been notified. The Consumer is responsible
 * for ensuring that all EVDs feeding this CNO are polled": two EVDs
 * notify; two waits return both, in some order, and a third finds none. */
static void test_cno_wait_several_evds(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_HANDLE a = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE b = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	post_se(a, 1);
	post_se(b, 2);
	DAT_EVD_HANDLE x = DAT_HANDLE_NULL, y = DAT_HANDLE_NULL;
	check_ok(dat_cno_wait(cno, TMO_US, &x));
	check_ok(dat_cno_wait(cno, TMO_US, &y));
	assert_true((x == a && y == b) || (x == b && y == a));
	check_ret(dat_cno_wait(cno, 0, &x), DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	dequeue_se(a, 1);
	dequeue_se(b, 2);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "An Event Dispatcher that is disabled or in the "Waited" state does not
 * deliver notifications. A uDAPL Consumer waiting directly upon an Event
 * Dispatcher preempts the CNO." */
static void test_cno_wait_disabled_or_waited_evd(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	DAT_EVD_HANDLE got;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_HANDLE evd = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	check_ok(dat_evd_disable(evd));
	post_se(evd, 1);
	check_ret(dat_cno_wait(cno, 0, &got), DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	dequeue_se(evd, 1);
	check_ok(dat_evd_enable(evd));

	struct blocked w;
	blocked_start(&w, blocked_evd_main, evd, 20 * 1000000, 1);
	wait_until_sleeping(&w);
	post_se(evd, 2);
	blocked_join(&w, 10);
	check_ok(w.ret);
	assert_int_equal((uintptr_t)w.ev.event_data.software_event_data.pointer, 2);
	check_ret(dat_cno_wait(cno, 0, &got), DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_QUEUE_EMPTY: "The operation timed out without a notification." "On a
 * timeout, evd_handle is explicitly set to a null handle." */
static void test_cno_wait_queue_empty(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_HANDLE evd = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG), got = evd;
	check_ret(dat_cno_wait(cno, 0, &got), DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	assert_null(got);
	got = evd;
	long t0 = now_ns();
	check_ret(dat_cno_wait(cno, 20000, &got), DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	assert_true(now_ns() - t0 >= 20000000L - 1000000L); /* it did wait */
	assert_null(got);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "All the waiters on the CNO, including the OS Wait Proxy Agent if it is
 * associated with the CNO, are unblocked with the NULL handle returns for
 * an unblocking EVD evd_handle when the IA instance is destroyed or when
 * all EVDs the CNO is associated with are freed." */
static void test_cno_wait_evds_freed(void **state)
{
	(void)state;
	struct agent_log log;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, test_agent(&log), &cno));
	DAT_EVD_HANDLE a = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE b = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	struct blocked w;
	blocked_start(&w, blocked_cno_main, cno, 20 * 1000000, 0);
	wait_until_sleeping(&w);
	check_ok(dat_evd_free(a));
	check_ok(dat_evd_free(b));
	blocked_join(&w, 10);
	check_ok(w.ret);
	assert_null(w.evd_out);
	agent_wait_calls(&log, 1);
	assert_null(log.evd);
	check_ok(dat_cno_free(cno));

	/* The IA instance destroyed. */
	check_ok(dat_cno_create(ia, test_agent(&log), &cno));
	make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	blocked_start(&w, blocked_cno_main, cno, 20 * 1000000, 0);
	wait_until_sleeping(&w);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	blocked_join(&w, 10);
	check_ok(w.ret);
	assert_null(w.evd_out);
	agent_wait_calls(&log, 1);
	assert_null(log.evd);
}

/* DAT_INVALID_HANDLE: "The cno_handle parameter is invalid": NULL, freed,
 * another type (DAT_INVALID_HANDLE_CNO). */
static void test_cno_wait_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	DAT_EVD_HANDLE got;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ok(dat_cno_free(cno));
	check_ret(dat_cno_wait(DAT_HANDLE_NULL, 0, &got), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	check_ret(dat_cno_wait(cno, 0, &got), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	check_ret(dat_cno_wait(ia, 0, &got), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* DAT_INVALID_PARAMETER: no place for the EVD handle (argument 3). */
static void test_cno_wait_invalid_parameter(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ret(dat_cno_wait(cno, 0, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INTERRUPTED_CALL: "The operation was interrupted by a signal": a
 * signal handler (installed without SA_RESTART) runs on the thread
 * sleeping in dat_cno_wait, which returns at once instead of after its
 * 20 s timeout; the CNO is still usable. */
static void test_cno_wait_interrupted_call(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_HANDLE evd = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	install_sigusr1();
	struct blocked w;
	blocked_start(&w, blocked_cno_main, cno, 20 * 1000000, 0);
	interrupt_until_returned(&w);
	check_ret(w.ret, DAT_INTERRUPTED_CALL, DAT_SUB_INTERRUPTED);
	assert_true(signals_seen > 0);
	post_se(evd, 1);
	DAT_EVD_HANDLE got;
	check_ok(dat_cno_wait(cno, TMO_US, &got));
	assert_ptr_equal(got, evd);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cno_wait_success),
		cmocka_unit_test(test_cno_wait_several_evds),
		cmocka_unit_test(test_cno_wait_disabled_or_waited_evd),
		cmocka_unit_test(test_cno_wait_queue_empty),
		cmocka_unit_test(test_cno_wait_evds_freed),
		cmocka_unit_test(test_cno_wait_invalid_handle),
		cmocka_unit_test(test_cno_wait_invalid_parameter),
		cmocka_unit_test(test_cno_wait_interrupted_call),
	};
	return cmocka_run_group_tests_name("dat_cno_wait", tests, NULL, NULL);
}
