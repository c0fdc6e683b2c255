/* dat_cno_free(3DAT): every return value and the USAGE recipe for
 * unblocking a waiter. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_cno_free() function destroys a specified instance
 * of the CNO." The handle is dead afterwards. */
static void test_cno_free_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ok(dat_cno_free(cno));
	DAT_CNO_PARAM p;
	check_ret(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* DAT_INVALID_HANDLE: "The cno_handle() parameter is invalid": NULL, a
 * freed CNO, an EVD (DAT_INVALID_HANDLE_CNO). */
static void test_cno_free_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ok(dat_cno_free(cno));
	check_ret(dat_cno_free(DAT_HANDLE_NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	check_ret(dat_cno_free(cno), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	check_ret(dat_cno_free(evd), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_STATE: "CNO is in use by an EVD instance or there is a
 * thread blocked on it" (DAT_INVALID_STATE_CNO_IN_USE); "A CNO cannot be
 * deleted while it is referenced by an Event Dispatcher or while a thread
 * is blocked on it." */
static void test_cno_free_invalid_state(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_HANDLE evd = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	check_ret(dat_cno_free(cno), DAT_INVALID_STATE, DAT_INVALID_STATE_CNO_IN_USE);
	check_ok(dat_evd_modify_cno(evd, DAT_HANDLE_NULL));

	struct blocked w;
	blocked_start(&w, blocked_cno_main, cno, 500000, 0); /* bounded: 0.5 s */
	wait_until_sleeping(&w);
	check_ret(dat_cno_free(cno), DAT_INVALID_STATE, DAT_INVALID_STATE_CNO_IN_USE);
	blocked_join(&w, 10);
	check_ret(w.ret, DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	check_ok(dat_cno_free(cno));
	check_ok(dat_evd_free(evd));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* USAGE: "If there is a thread blocked in dat_cno_wait(3DAT), the Consumer
 * can do the following steps to unblock the waiter: Create a temporary
 * EVD that accepts software events. ... For a CNO with the waiter, attach
 * that EVD to the CNO and post the software event on the EVD. This
 * unblocks the CNO. ... Destroy the temporary EVD after all CNOs are
 * destroyed and the EVD is no longer needed." */
static void test_cno_free_unblock_recipe(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_HANDLE tmp = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	struct blocked w;
	blocked_start(&w, blocked_cno_main, cno, 20 * 1000000, 0);
	wait_until_sleeping(&w);
	check_ok(dat_evd_modify_cno(tmp, cno));
	post_se(tmp, 0xDEAD);
	blocked_join(&w, 10);
	check_ok(w.ret);
	assert_ptr_equal(w.evd_out, tmp);
	check_ok(dat_evd_modify_cno(tmp, DAT_HANDLE_NULL));
	check_ok(dat_cno_free(cno));
	check_ok(dat_evd_free(tmp));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cno_free_success),
		cmocka_unit_test(test_cno_free_invalid_handle),
		cmocka_unit_test(test_cno_free_invalid_state),
		cmocka_unit_test(test_cno_free_unblock_recipe),
	};
	return cmocka_run_group_tests_name("dat_cno_free", tests, NULL, NULL);
}
