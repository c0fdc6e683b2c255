/* dat_evd_wait(3DAT): every return value; thresholds, timeouts, nmore,
 * exclusive ownership, and waits ended by an unwaitable EVD, a freed EVD,
 * a closed IA or a signal. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_evd_wait() function removes the first event from
 * the Event Dispatcher event queue and fills the Consumer-allocated event
 * structure with event data." "The returned value of nmore indicates the
 * number of events left on the Event Dispatcher queue after the
 * dat_evd_wait() returns." */
static void test_evd_wait_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 8, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	post_se(evd, 1);
	post_se(evd, 2);
	DAT_EVENT ev;
	DAT_COUNT n = -1;
	check_ok(dat_evd_wait(evd, 0, 1, &ev, &n));
	assert_int_equal(ev.event_number, DAT_SOFTWARE_EVENT);
	assert_ptr_equal(ev.evd_handle, evd);
	assert_int_equal((uintptr_t)ev.event_data.software_event_data.pointer, 1);
	assert_int_equal(n, 1);
	check_ok(dat_evd_wait(evd, DAT_TIMEOUT_INFINITE, 1, &ev, &n));
	assert_int_equal((uintptr_t)ev.event_data.software_event_data.pointer, 2);
	assert_int_equal(n, 0);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "The value of DAT_TIMEOUT_INFINITE indicates that the Consumer waits
 * indefinitely for an event arrival": a thread blocked without bound gets
 * the event posted later by another. */
static void test_evd_wait_infinite(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 8, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	struct blocked w;
	blocked_start(&w, blocked_evd_main, evd, DAT_TIMEOUT_INFINITE, 1);
	wait_until_sleeping(&w);
	post_se(evd, 42);
	blocked_join(&w, 10);
	check_ok(w.ret);
	assert_int_equal((uintptr_t)w.ev.event_data.software_event_data.pointer, 42);
	assert_int_equal(w.nmore, 0);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "The threshold allows the Consumer to wait for a requested number of
 * event arrivals prior to waking the Consumer." "If the operation return
 * value is DAT_SUCCESS, the nmore value is at least the value of
 * (threshold -1)." A waiter with threshold 3 sleeps through two events and
 * wakes on the third. */
static void test_evd_wait_threshold(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 8, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	struct blocked w;
	blocked_start(&w, blocked_evd_main, evd, 20 * 1000000, 3);
	wait_until_sleeping(&w);
	post_se(evd, 1);
	post_se(evd, 2);
	usleep(50000);
	assert_int_equal(w.nmore, -1); /* still blocked */
	post_se(evd, 3);
	blocked_join(&w, 10);
	check_ok(w.ret);
	assert_int_equal((uintptr_t)w.ev.event_data.software_event_data.pointer, 1);
	assert_true(w.nmore >= 2);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_TIMEOUT_EXPIRED: "When timeout value is reached and the number of
 * events on the EVD queue is below the threshold value, the operation
 * fails and returns DAT_TIMEOUT_EXPIRED. In this case, no event is
 * dequeued from the EVD ... However, an nmore value is returned that
 * specifies the snapshot of the number of the events on the EVD queue". */
static void test_evd_wait_timeout_expired(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 8, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVENT ev;
	DAT_COUNT n = -1;
	check_ret(dat_evd_wait(evd, 0, 1, &ev, &n), DAT_TIMEOUT_EXPIRED, DAT_NO_SUBTYPE);
	assert_int_equal(n, 0);
	post_se(evd, 1);
	post_se(evd, 2);
	n = -1;
	long t0 = now_ns();
	check_ret(dat_evd_wait(evd, 20000, 3, &ev, &n), DAT_TIMEOUT_EXPIRED, DAT_NO_SUBTYPE);
	assert_true(now_ns() - t0 >= 19000000L); /* it did wait */
	assert_int_equal(n, 2);
	dequeue_se(evd, 1);
	dequeue_se(evd, 2);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_PARAMETER: "The timeout or threshold parameter is invalid.
 * For example, threshold is larger than the EVD's evd_min_qlen." "If a
 * non-positive value is specified for threshold, the operation fails and
 * returns DAT_INVALID_PARAMETER." Threshold is argument 3; a NULL event
 * or nmore is argument 4 or 5. Nothing is dequeued. */
static void test_evd_wait_invalid_parameter(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVENT ev;
	DAT_COUNT n;
	post_se(evd, 1);
	DAT_COUNT qlen = evd_qlen(evd);
	check_ret(dat_evd_wait(evd, 0, 0, &ev, &n), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ret(dat_evd_wait(evd, 0, -1, &ev, &n), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ret(dat_evd_wait(evd, 0, qlen + 1, &ev, &n), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ret(dat_evd_wait(evd, 0, 1, NULL, &n), DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	check_ret(dat_evd_wait(evd, 0, 1, &ev, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	dequeue_se(evd, 1);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "The evd_handle parameter is invalid" (DAT_NO_SUBTYPE). */
static void test_evd_wait_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVENT ev;
	DAT_COUNT n;
	check_ok(dat_evd_free(evd));
	check_ret(dat_evd_wait(DAT_HANDLE_NULL, 0, 1, &ev, &n), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_wait(evd, 0, 1, &ev, &n), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_wait(ia, 0, 1, &ev, &n), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* DAT_ABORT: "The operation was aborted because IA was closed or EVD was
 * destroyed": a blocked waiter when its EVD is freed, and when its IA is
 * closed. */
static void test_evd_wait_abort(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	struct blocked w;
	blocked_start(&w, blocked_evd_main, evd, 20 * 1000000, 1);
	wait_until_sleeping(&w);
	check_ok(dat_evd_free(evd));
	blocked_join(&w, 10);
	check_ret(w.ret, DAT_ABORT, DAT_NO_SUBTYPE);

	evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	blocked_start(&w, blocked_evd_main, evd, 20 * 1000000, 1);
	wait_until_sleeping(&w);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	blocked_join(&w, 10);
	check_ret(w.ret, DAT_ABORT, DAT_NO_SUBTYPE);
}

/* DAT_INVALID_STATE: "There is already a waiter on the EVD, or the EVD is
 * in an unwaitable state." "A Consumer that blocks performing a
 * dat_evd_wait() on an Event Dispatcher effectively takes exclusive
 * ownership of that Event Dispatcher. Any other dequeue operation
 * (dat_evd_wait() or dat_evd_dequeue(3DAT)) on the Event Dispatcher is
 * rejected with a DAT_INVALID_STATE error code." "If this function is
 * called on an EVD in an unwaitable state ... the function returns with
 * DAT_INVALID_STATE." */
static void test_evd_wait_invalid_state(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVENT ev;
	DAT_COUNT n;
	struct blocked w;
	blocked_start(&w, blocked_evd_main, evd, 20 * 1000000, 1);
	wait_until_sleeping(&w);
	check_ret(dat_evd_wait(evd, 0, 1, &ev, &n), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_WAITER);
	check_ret(dat_evd_dequeue(evd, &ev), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_WAITER);
	post_se(evd, 1);
	blocked_join(&w, 10);
	check_ok(w.ret);
	check_ok(dat_evd_set_unwaitable(evd));
	check_ret(dat_evd_wait(evd, 0, 1, &ev, &n), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_UNWAITABLE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "If EVD is used by an Endpoint for a DTO completion stream that is
 * configured for a Consumer-controlled event Notification
 * (DAT_COMPLETION_UNSIGNALLED_FLAG or DAT_COMPLETION_SOLICITED_WAIT_FLAG
 * for Receive Completion Type for Receives; DAT_COMPLETION_UNSIGNALLED_FLAG
 * for Request Completion Type for Send, RDMA Read, RDMA Write and RMR
 * Bind), the threshold value must be 1. An attempt to specify some other
 * value for threshold for this case results in DAT_INVALID_STATE." */
static void test_evd_wait_threshold_with_notification_control(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_EVD_HANDLE conn = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG);
	DAT_EP_HANDLE probe;
	DAT_EP_PARAM epp;
	DAT_EVENT ev;
	DAT_COUNT n;
	DAT_EVD_HANDLE plain = make_evd(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG);
	check_ok(dat_ep_create(ia, pz, plain, plain, conn, NULL, &probe));
	check_ok(dat_ep_query(probe, DAT_EP_FIELD_ALL, &epp));
	check_ret(dat_evd_wait(plain, 0, 2, &ev, &n), DAT_TIMEOUT_EXPIRED, DAT_NO_SUBTYPE);
	check_ok(dat_ep_free(probe));
	struct {
		DAT_COMPLETION_FLAGS recv, req;
		int recv_side;
	} cfg[] = {
		{DAT_COMPLETION_SOLICITED_WAIT_FLAG, DAT_COMPLETION_DEFAULT_FLAG, 1},
		{DAT_COMPLETION_UNSIGNALLED_FLAG, DAT_COMPLETION_DEFAULT_FLAG, 1},
		{DAT_COMPLETION_DEFAULT_FLAG, DAT_COMPLETION_UNSIGNALLED_FLAG, 0},
	};
	for (size_t i = 0; i < 3; i++) {
		DAT_EVD_HANDLE recv = make_evd(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG);
		DAT_EVD_HANDLE req = make_evd(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG);
		DAT_EP_ATTR attr = epp.ep_attr;
		attr.recv_completion_flags = cfg[i].recv;
		attr.request_completion_flags = cfg[i].req;
		DAT_EP_HANDLE ep;
		check_ok(dat_ep_create(ia, pz, recv, req, conn, &attr, &ep));
		DAT_EVD_HANDLE controlled = cfg[i].recv_side ? recv : req, other = cfg[i].recv_side ? req : recv;
		check_ret(dat_evd_wait(controlled, 0, 2, &ev, &n), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_CONFIG_NOTIFY);
		check_ret(dat_evd_wait(controlled, 0, 1, &ev, &n), DAT_TIMEOUT_EXPIRED, DAT_NO_SUBTYPE);
		check_ret(dat_evd_wait(other, 0, 2, &ev, &n), DAT_TIMEOUT_EXPIRED, DAT_NO_SUBTYPE);
		check_ok(dat_ep_free(ep));
		/* Without the endpoint the EVD takes any threshold again. */
		check_ret(dat_evd_wait(controlled, 0, 2, &ev, &n), DAT_TIMEOUT_EXPIRED, DAT_NO_SUBTYPE);
		check_ok(dat_evd_free(recv));
		check_ok(dat_evd_free(req));
	}
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "The CNO associated with the evd_handle() is not triggered upon event
 * arrival if there is a Consumer blocked on dat_evd_wait() on this Event
 * Dispatcher." */
static void test_evd_wait_cno_not_triggered(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	DAT_EVD_HANDLE got;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_HANDLE evd = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	struct blocked w;
	blocked_start(&w, blocked_evd_main, evd, 20 * 1000000, 1);
	wait_until_sleeping(&w);
	post_se(evd, 9);
	blocked_join(&w, 10);
	check_ok(w.ret);
	check_ret(dat_cno_wait(cno, 0, &got), DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INTERRUPTED_CALL: "The operation was interrupted by a signal." A
 * handler for SIGUSR1 (no SA_RESTART) runs on the thread blocked in a
 * 20 s wait with one of its three threshold events queued; the wait
 * returns at once, nmore still defined (1), nothing dequeued. */
static void test_evd_wait_interrupted_call(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	install_sigusr1();
	post_se(evd, 1);
	struct blocked w;
	blocked_start(&w, blocked_evd_main, evd, 20 * 1000000, 3);
	interrupt_until_returned(&w);
	check_ret(w.ret, DAT_INTERRUPTED_CALL, DAT_SUB_INTERRUPTED);
	assert_int_equal(w.nmore, 1);
	assert_true(signals_seen > 0);
	dequeue_se(evd, 1);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evd_wait_success),
		cmocka_unit_test(test_evd_wait_infinite),
		cmocka_unit_test(test_evd_wait_threshold),
		cmocka_unit_test(test_evd_wait_timeout_expired),
		cmocka_unit_test(test_evd_wait_invalid_parameter),
		cmocka_unit_test(test_evd_wait_invalid_handle),
		cmocka_unit_test(test_evd_wait_abort),
		cmocka_unit_test(test_evd_wait_invalid_state),
		cmocka_unit_test(test_evd_wait_threshold_with_notification_control),
		cmocka_unit_test(test_evd_wait_cno_not_triggered),
		cmocka_unit_test(test_evd_wait_interrupted_call),
	};
	return cmocka_run_group_tests_name("dat_evd_wait", tests, NULL, NULL);
}
