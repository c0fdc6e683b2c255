/* dat_evd_set_unwaitable(3DAT): every return value; waiters now and later
 * get DAT_INVALID_STATE; the CNO and dequeue are unaffected. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "In this state, calls to dat_evd_wait(3DAT) return
 * synchronously with a DAT_INVALID_STATE error ... The actual state of the
 * Event Dispatcher is accessible through dat_evd_query(3DAT) and is
 * DAT_EVD_UNWAITABLE after the return of this operation." */
static void test_evd_set_unwaitable_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVENT ev;
	DAT_COUNT n;
	check_ok(dat_evd_set_unwaitable(evd));
	DAT_EVD_STATE st = evd_state(evd);
	assert_true(st & DAT_EVD_STATE_UNWAITABLE);
	assert_false(st & DAT_EVD_STATE_WAITABLE);
	/* Synchronously: even with an event queued and a long timeout. */
	post_se(evd, 1);
	long t0 = now_ns();
	check_ret(dat_evd_wait(evd, 10 * 1000000, 1, &ev, &n), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_UNWAITABLE);
	assert_true(now_ns() - t0 < 5000000000L);
	check_ok(dat_evd_set_unwaitable(evd)); /* again: still fine */
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "threads already blocked in dat_evd_wait() are awakened and return with
 * a DAT_INVALID_STATE error without any further action by the Consumer." */
static void test_evd_set_unwaitable_wakes_waiter(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	struct blocked w;
	blocked_start(&w, blocked_evd_main, evd, 20 * 1000000, 1);
	wait_until_sleeping(&w);
	check_ok(dat_evd_set_unwaitable(evd));
	blocked_join(&w, 10);
	check_ret(w.ret, DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_UNWAITABLE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "This call does not affect a CNO associated with this EVD at all. Events
 * arriving on the EVD after it is set unwaitable still trigger the CNO (if
 * appropriate), and can be retrieved with dat_evd_dequeue(3DAT)." */
static void test_evd_set_unwaitable_cno_and_dequeue(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_HANDLE evd = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG), got = DAT_HANDLE_NULL;
	check_ok(dat_evd_set_unwaitable(evd));
	post_se(evd, 3);
	check_ok(dat_cno_wait(cno, TMO_US, &got));
	assert_ptr_equal(got, evd);
	dequeue_se(evd, 3);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "The evd_handle parameter is invalid" (no EVD
 * subtype: DAT_NO_SUBTYPE). */
static void test_evd_set_unwaitable_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	check_ok(dat_evd_free(evd));
	check_ret(dat_evd_set_unwaitable(DAT_HANDLE_NULL), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_set_unwaitable(evd), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_set_unwaitable(ia), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evd_set_unwaitable_success),
		cmocka_unit_test(test_evd_set_unwaitable_wakes_waiter),
		cmocka_unit_test(test_evd_set_unwaitable_cno_and_dequeue),
		cmocka_unit_test(test_evd_set_unwaitable_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_evd_set_unwaitable", tests, NULL, NULL);
}
