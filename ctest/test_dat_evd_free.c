/* dat_evd_free(3DAT): every return value. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_evd_free() function destroys a specified instance
 * of the Event Dispatcher. All events on the queue of the specified Event
 * Dispatcher are lost." "Use of the handle of the destroyed Event
 * Dispatcher in any consequent operation fails." */
static void test_evd_free_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	post_se(evd, 1);
	post_se(evd, 2);
	check_ok(dat_evd_free(evd));
	DAT_EVENT ev;
	DAT_COUNT n;
	check_type(dat_evd_dequeue(evd, &ev), DAT_INVALID_HANDLE);
	check_type(dat_evd_wait(evd, 0, 1, &ev, &n), DAT_INVALID_HANDLE);
	ev = software_event(3);
	check_type(dat_evd_post_se(evd, &ev), DAT_INVALID_HANDLE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* DAT_INVALID_STATE: "There are Event Streams associated with the Event
 * Dispatcher feeding it" (DAT_INVALID_STATE_EVD_IN_USE): an endpoint's
 * DTO and connection streams, a PSP's connection requests. Once those
 * objects are freed the EVD is too ("Consumers are advised to destroy all
 * Objects that originate Event Streams that feed an instance of the Event
 * Dispatcher before destroying it"). */
static void test_evd_free_invalid_state(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_EVD_HANDLE dto = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG);
	DAT_EVD_HANDLE conn = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG);
	DAT_EVD_HANDLE cr = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG);
	DAT_EP_HANDLE ep;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	check_ok(dat_ep_create(ia, pz, dto, dto, conn, NULL, &ep));
	check_ok(dat_psp_create_any(ia, &q, cr, DAT_PSP_CONSUMER_FLAG, &psp));
	check_ret(dat_evd_free(dto), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_IN_USE);
	check_ret(dat_evd_free(conn), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_IN_USE);
	check_ret(dat_evd_free(cr), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_IN_USE);
	check_ok(dat_ep_free(ep));
	check_ok(dat_psp_free(psp));
	check_ok(dat_evd_free(dto));
	check_ok(dat_evd_free(conn));
	check_ok(dat_evd_free(cr));
	check_ok(dat_pz_free(pz));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* USAGE: "An exception to this rule is Event Dispatchers of an IA. Freeing
 * an IA automatically destroys all Objects associated with it directly
 * and indirectly, including Event Dispatchers": an abrupt close takes EVDs
 * that still have streams feeding them. The IA's own async EVD stays
 * while the IA is open. */
static void test_evd_free_ia_evds(void **state)
{
	(void)state;
	DAT_EVD_HANDLE async;
	DAT_IA_HANDLE ia = open_ia(&async);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG);
	DAT_EP_HANDLE ep;
	check_ok(dat_ep_create(ia, pz, evd, evd, evd, NULL, &ep));
	check_ret(dat_evd_free(async), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_IN_USE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	DAT_HANDLE_TYPE t;
	check_type(dat_get_handle_type(evd, &t), DAT_INVALID_HANDLE);
	check_type(dat_get_handle_type(async, &t), DAT_INVALID_HANDLE);
}

/* DAT_INVALID_HANDLE: "The evd_handle parameter is invalid": NULL, freed,
 * another type (DAT_NO_SUBTYPE). */
static void test_evd_free_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	check_ok(dat_evd_free(evd));
	check_ret(dat_evd_free(DAT_HANDLE_NULL), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_free(evd), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_free(ia), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evd_free_success),
		cmocka_unit_test(test_evd_free_invalid_state),
		cmocka_unit_test(test_evd_free_ia_evds),
		cmocka_unit_test(test_evd_free_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_evd_free", tests, NULL, NULL);
}
