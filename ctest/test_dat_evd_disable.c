/* dat_evd_disable(3DAT): every return value. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_evd_disable() function disables the Event
 * Dispatcher so that the arrival of an event does not affect the
 * associated CNO." "If the Event Dispatcher is already disabled, this
 * operation is no-op." The event is still queued. */
static void test_evd_disable_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	DAT_EVD_HANDLE got;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_HANDLE evd = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	check_ok(dat_evd_disable(evd));
	DAT_EVD_STATE st = evd_state(evd);
	assert_true(st & DAT_EVD_STATE_DISABLED);
	assert_false(st & DAT_EVD_STATE_ENABLED);
	check_ok(dat_evd_disable(evd));
	assert_true(evd_state(evd) & DAT_EVD_STATE_DISABLED);
	post_se(evd, 1);
	check_ret(dat_cno_wait(cno, 10000, &got), DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	dequeue_se(evd, 1);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "The evd_handle parameter is invalid" (DAT_NO_SUBTYPE). */
static void test_evd_disable_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	check_ok(dat_evd_free(evd));
	check_ret(dat_evd_disable(DAT_HANDLE_NULL), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_disable(evd), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_disable(ia), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evd_disable_success),
		cmocka_unit_test(test_evd_disable_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_evd_disable", tests, NULL, NULL);
}
