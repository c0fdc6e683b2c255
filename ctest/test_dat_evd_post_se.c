/* dat_evd_post_se(3DAT): every return value. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_evd_post_se() function posts Software events to
 * the Event Dispatcher event queue." The pointer is "opaque to a
 * Provider": any value, NULL included, comes back unchanged; the
 * structure it points at is never touched ("Allocation and release of the
 * memory referenced by the event pointer in a software event are the
 * Consumer's responsibility"). */
static void test_evd_post_se_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 8, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	char *mem = malloc(16);
	assert_non_null(mem);
	strcpy(mem, "consumer's");
	uintptr_t vals[] = {0, 1, (uintptr_t)mem, UINTPTR_MAX};
	for (size_t i = 0; i < 4; i++)
		post_se(evd, vals[i]);
	for (size_t i = 0; i < 4; i++)
		dequeue_se(evd, vals[i]);
	assert_string_equal(mem, "consumer's");
	free(mem);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_QUEUE_FULL: "If the event queue is full, the operation is completed
 * unsuccessfully and returns DAT_QUEUE_FULL. The event is not queued. The
 * queue overflow condition does takes place and, therefore, the
 * asynchronous Event Dispatcher is not effected." */
static void test_evd_post_se_queue_full(void **state)
{
	(void)state;
	DAT_EVD_HANDLE async;
	DAT_IA_HANDLE ia = open_ia(&async);
	DAT_EVD_HANDLE evd = make_evd(ia, 3, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_COUNT qlen = evd_qlen(evd);
	for (DAT_COUNT i = 0; i < qlen; i++)
		post_se(evd, (uintptr_t)i + 1);
	DAT_EVENT ev = software_event(999);
	check_ret(dat_evd_post_se(evd, &ev), DAT_QUEUE_FULL, DAT_NO_SUBTYPE);
	for (DAT_COUNT i = 0; i < qlen; i++)
		dequeue_se(evd, (uintptr_t)i + 1);
	expect_empty(evd);
	expect_empty(async);
	/* Room again after dequeuing. */
	post_se(evd, 5);
	dequeue_se(evd, 5);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_PARAMETER: "The event parameter is invalid": NULL, or not a
 * software event ("The first element in the event provides the type of
 * the event (DAT_EVENT_TYPE_SOFTWARE)"); both argument 2. */
static void test_evd_post_se_invalid_parameter(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVENT ev = software_event(1);
	check_ret(dat_evd_post_se(evd, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	ev.event_number = DAT_DTO_COMPLETION_EVENT;
	check_ret(dat_evd_post_se(evd, &ev), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	ev.event_number = DAT_CONNECTION_EVENT_ESTABLISHED;
	check_ret(dat_evd_post_se(evd, &ev), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	expect_empty(evd);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "The evd_handle parameter is invalid" (DAT_NO_SUBTYPE). */
static void test_evd_post_se_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVENT ev = software_event(1);
	check_ok(dat_evd_free(evd));
	check_ret(dat_evd_post_se(DAT_HANDLE_NULL, &ev), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_post_se(evd, &ev), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_post_se(ia, &ev), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evd_post_se_success),
		cmocka_unit_test(test_evd_post_se_queue_full),
		cmocka_unit_test(test_evd_post_se_invalid_parameter),
		cmocka_unit_test(test_evd_post_se_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_evd_post_se", tests, NULL, NULL);
}
