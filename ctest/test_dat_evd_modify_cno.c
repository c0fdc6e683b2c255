/* dat_evd_modify_cno(3DAT): every return value. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_evd_modify_cno() function changes the associated
 * CNO for the Event Dispatcher." "Upon completion of the
 * dat_evd_modify_cno() operation, the passed IN new CNO is used for
 * notification": the new CNO is triggered, the old one is not. */
static void test_evd_modify_cno_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE a, b;
	DAT_EVD_HANDLE got;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &a));
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &b));
	DAT_EVD_HANDLE evd = make_evd(ia, 4, a, DAT_EVD_SOFTWARE_FLAG);
	check_ok(dat_evd_modify_cno(evd, b));
	DAT_EVD_PARAM p;
	check_ok(dat_evd_query(evd, DAT_EVD_FIELD_CNO, &p));
	assert_ptr_equal(p.cno_handle, b);
	post_se(evd, 1);
	check_ok(dat_cno_wait(b, TMO_US, &got));
	assert_ptr_equal(got, evd);
	check_ret(dat_cno_wait(a, 0, &got), DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	/* The old CNO is no longer in use by the EVD. */
	check_ok(dat_cno_free(a));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "A Consumer can specify the value of DAT_HANDLE_NULL for cno_handle to
 * associate not CNO with the Event Dispatcher instance." "If this function
 * is used to disassociate a CNO from the EVD ... the events causing that
 * unblocking are present on the EVD upon return from the
 * dat_evd_modify_cno() call and can be dequeued at that time." */
static void test_evd_modify_cno_null(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE a;
	DAT_EVD_HANDLE got;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &a));
	DAT_EVD_HANDLE evd = make_evd(ia, 4, a, DAT_EVD_SOFTWARE_FLAG);
	post_se(evd, 7);
	check_ok(dat_evd_modify_cno(evd, DAT_HANDLE_NULL));
	DAT_EVD_PARAM p;
	check_ok(dat_evd_query(evd, DAT_EVD_FIELD_CNO, &p));
	assert_null(p.cno_handle);
	dequeue_se(evd, 7);
	post_se(evd, 8);
	check_ret(dat_cno_wait(a, 0, &got), DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	dequeue_se(evd, 8);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "The Consumer can disable EVD before a dat_evd_modify_cno() call and
 * enable it afterwards. This ensures that any notifications from the EVD
 * are delivered to the new CNO only." */
static void test_evd_modify_cno_disable_around(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE a, b;
	DAT_EVD_HANDLE got;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &a));
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &b));
	DAT_EVD_HANDLE evd = make_evd(ia, 8, a, DAT_EVD_SOFTWARE_FLAG);
	check_ok(dat_evd_disable(evd));
	post_se(evd, 1);
	check_ok(dat_evd_modify_cno(evd, b));
	check_ok(dat_evd_enable(evd));
	post_se(evd, 2);
	check_ok(dat_cno_wait(b, TMO_US, &got));
	assert_ptr_equal(got, evd);
	check_ret(dat_cno_wait(a, 0, &got), DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	dequeue_se(evd, 1);
	dequeue_se(evd, 2);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "Invalid DAT handle": a bad EVD (DAT_NO_SUBTYPE) or
 * a bad CNO (DAT_INVALID_HANDLE_CNO); the association is unchanged. */
static void test_evd_modify_cno_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno, gone;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &gone));
	check_ok(dat_cno_free(gone));
	DAT_EVD_HANDLE evd = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE dead = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	check_ok(dat_evd_free(dead));
	check_ret(dat_evd_modify_cno(DAT_HANDLE_NULL, cno), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_modify_cno(dead, cno), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_modify_cno(cno, cno), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_modify_cno(evd, gone), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	check_ret(dat_evd_modify_cno(evd, ia), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	DAT_EVD_PARAM p;
	check_ok(dat_evd_query(evd, DAT_EVD_FIELD_CNO, &p));
	assert_ptr_equal(p.cno_handle, cno);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evd_modify_cno_success),
		cmocka_unit_test(test_evd_modify_cno_null),
		cmocka_unit_test(test_evd_modify_cno_disable_around),
		cmocka_unit_test(test_evd_modify_cno_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_evd_modify_cno", tests, NULL, NULL);
}
