/* dat_evd_enable(3DAT): every return value; enabling concerns the CNO, not
 * direct waiters. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_evd_enable() function enables the Event Dispatcher
 * so that the arrival of an event can trigger the associated CNO." "If
 * the Event Dispatcher is already enabled, this operation is no-op." */
static void test_evd_enable_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	DAT_EVD_HANDLE got = DAT_HANDLE_NULL;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_HANDLE evd = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	assert_true(evd_state(evd) & DAT_EVD_STATE_ENABLED); /* created enabled */
	check_ok(dat_evd_enable(evd));
	check_ok(dat_evd_disable(evd));
	check_ok(dat_evd_enable(evd));
	DAT_EVD_STATE st = evd_state(evd);
	assert_true(st & DAT_EVD_STATE_ENABLED);
	assert_false(st & DAT_EVD_STATE_DISABLED);
	post_se(evd, 1);
	check_ok(dat_cno_wait(cno, TMO_US, &got));
	assert_ptr_equal(got, evd);
	dequeue_se(evd, 1);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "The enabling and disabling EVD has no effect on direct waiters on the
 * EVD. However, direct waiters effectively take ownership of the EVD, so
 * that the specified CNO is not triggered even if is enabled." A waiter on
 * a disabled EVD gets its event; on an enabled one the CNO stays quiet
 * while a waiter owns the EVD. */
static void test_evd_enable_direct_waiters(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	DAT_EVD_HANDLE got;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_HANDLE evd = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	for (int enabled = 0; enabled < 2; enabled++) {
		check_ok(enabled ? dat_evd_enable(evd) : dat_evd_disable(evd));
		struct blocked w;
		blocked_start(&w, blocked_evd_main, evd, 20 * 1000000, 1);
		wait_until_sleeping(&w);
		post_se(evd, 10 + enabled);
		blocked_join(&w, 10);
		check_ok(w.ret);
		assert_int_equal((uintptr_t)w.ev.event_data.software_event_data.pointer, 10 + enabled);
		check_ret(dat_cno_wait(cno, 0, &got), DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	}
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "The evd_handle parameter is invalid" (DAT_NO_SUBTYPE). */
static void test_evd_enable_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	check_ok(dat_evd_free(evd));
	check_ret(dat_evd_enable(DAT_HANDLE_NULL), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_enable(evd), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_enable(ia), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evd_enable_success),
		cmocka_unit_test(test_evd_enable_direct_waiters),
		cmocka_unit_test(test_evd_enable_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_evd_enable", tests, NULL, NULL);
}
