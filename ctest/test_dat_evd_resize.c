/* dat_evd_resize(3DAT): every provokable return value. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_evd_resize() function modifies the size of the
 * event queue of Event Dispatcher." "Resizing of Event Dispatcher event
 * queue should not cause any incoming or current events on the event
 * queue to be lost." Growing makes room for more software events;
 * shrinking to the number queued keeps them all, in order. USAGE: "This
 * operation is useful when the potential number of events that could be
 * placed on the event queue changes dynamically." */
static void test_evd_resize_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 2, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	post_se(evd, 1);
	post_se(evd, 2);
	DAT_EVENT ev = software_event(3);
	check_ret(dat_evd_post_se(evd, &ev), DAT_QUEUE_FULL, DAT_NO_SUBTYPE);
	check_ok(dat_evd_resize(evd, 40));
	assert_true(evd_qlen(evd) >= 40);
	for (uintptr_t i = 3; i <= 40; i++)
		post_se(evd, i);
	check_ret(dat_evd_post_se(evd, &ev), DAT_QUEUE_FULL, DAT_NO_SUBTYPE);
	for (uintptr_t i = 1; i <= 37; i++)
		dequeue_se(evd, i);
	check_ok(dat_evd_resize(evd, 3)); /* exactly the three still queued */
	assert_int_equal(evd_qlen(evd), 3);
	for (uintptr_t i = 38; i <= 40; i++)
		dequeue_se(evd, i);
	expect_empty(evd);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_PARAMETER: "The evd_min_qlen parameter is invalid": zero,
 * negative, or above the IA's max_evd_qlen (argument 2). */
static void test_evd_resize_invalid_parameter(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_IA_ATTR a;
	check_ok(dat_ia_query(ia, NULL, DAT_IA_FIELD_IA_MAX_EVD_QLEN, &a, 0, NULL));
	check_ret(dat_evd_resize(evd, 0), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_evd_resize(evd, -5), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_evd_resize(evd, a.max_evd_qlen + 1), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	assert_int_equal(evd_qlen(evd), 4);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_STATE: "The number of entries on the event queue of the
 * Event Dispatcher exceeds the requested event queue length"; "the
 * operation can return DAT_INVALID_STATE and not change an instance of
 * Event Dispatcher": length and events as before. */
static void test_evd_resize_invalid_state(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 8, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	for (uintptr_t i = 1; i <= 5; i++)
		post_se(evd, i);
	check_ret(dat_evd_resize(evd, 4), DAT_INVALID_STATE, DAT_NO_SUBTYPE);
	assert_int_equal(evd_qlen(evd), 8);
	for (uintptr_t i = 1; i <= 5; i++)
		dequeue_se(evd, i);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "The evd_handle parameter is invalid" (DAT_NO_SUBTYPE). */
static void test_evd_resize_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	check_ok(dat_evd_free(evd));
	check_ret(dat_evd_resize(DAT_HANDLE_NULL, 8), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_resize(evd, 8), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_resize(ia, 8), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evd_resize_success),
		cmocka_unit_test(test_evd_resize_invalid_parameter),
		cmocka_unit_test(test_evd_resize_invalid_state),
		cmocka_unit_test(test_evd_resize_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_evd_resize", tests, NULL, NULL);
}
