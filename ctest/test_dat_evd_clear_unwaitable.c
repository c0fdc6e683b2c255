/* dat_evd_clear_unwaitable(3DAT): every return value. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_evd_clear_unwaitable() transitions the Event
 * Dispatcher into a waitable state. In this state, calls to
 * dat_evd_wait(3DAT) are permitted on the EVD. The actual state of the
 * Event Dispatcher is accessible through dat_evd_query(3DAT) and is
 * DAT_EVD_WAITABLE after the return of this operation." It is also fine
 * on an EVD that is already waitable. */
static void test_evd_clear_unwaitable_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVENT ev;
	DAT_COUNT n;
	check_ok(dat_evd_clear_unwaitable(evd));
	assert_true(evd_state(evd) & DAT_EVD_STATE_WAITABLE);
	check_ok(dat_evd_set_unwaitable(evd));
	post_se(evd, 1);
	check_ret(dat_evd_wait(evd, 0, 1, &ev, &n), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_UNWAITABLE);
	check_ok(dat_evd_clear_unwaitable(evd));
	DAT_EVD_STATE st = evd_state(evd);
	assert_true(st & DAT_EVD_STATE_WAITABLE);
	assert_false(st & DAT_EVD_STATE_UNWAITABLE);
	check_ok(dat_evd_wait(evd, TMO_US, 1, &ev, &n));
	assert_int_equal((uintptr_t)ev.event_data.software_event_data.pointer, 1);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "This call does not affect a CNO associated with this EVD at all. Events
 * arriving on the EVD after it is set waitable still trigger the CNO (if
 * appropriate), and can be retrieved with dat_evd_dequeue(3DAT)." */
static void test_evd_clear_unwaitable_cno_unaffected(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_HANDLE evd = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG), got = DAT_HANDLE_NULL;
	check_ok(dat_evd_set_unwaitable(evd));
	check_ok(dat_evd_clear_unwaitable(evd));
	DAT_EVD_PARAM p;
	check_ok(dat_evd_query(evd, DAT_EVD_FIELD_CNO, &p));
	assert_ptr_equal(p.cno_handle, cno);
	post_se(evd, 2);
	check_ok(dat_cno_wait(cno, TMO_US, &got));
	assert_ptr_equal(got, evd);
	dequeue_se(evd, 2);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "The evd_handle parameter is invalid": NULL, freed,
 * another type. EVD handles have no subtype of their own in DAT 1.2
 * (those name an EVD's role), so the subtype is DAT_NO_SUBTYPE. */
static void test_evd_clear_unwaitable_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	check_ok(dat_evd_free(evd));
	check_ret(dat_evd_clear_unwaitable(DAT_HANDLE_NULL), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_clear_unwaitable(evd), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_clear_unwaitable(ia), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evd_clear_unwaitable_success),
		cmocka_unit_test(test_evd_clear_unwaitable_cno_unaffected),
		cmocka_unit_test(test_evd_clear_unwaitable_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_evd_clear_unwaitable", tests, NULL, NULL);
}
