/* dat_cr_handoff(3DAT): pass a request to another service point. */
#include "conn.h"

#define Q2 0x4A4D0FF000000002ull

/* "The dat_cr_handoff() function hands off the Connection Request to
 * another Service Point specified by the Connection Qualifier handoff."
 * "The operation is synchronous. This operation also destroys the
 * Connection Request instance. Use of the handle of the destroyed
 * Connection Request in any consequent operation fails." */
static void success_handed_off(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_EVD_HANDLE cr2 = make_evd(x.p.ia, DAT_EVD_CR_FLAG);
	DAT_PSP_HANDLE psp2;
	check_ok(dat_psp_create(x.p.ia, Q2, cr2, DAT_PSP_CONSUMER_FLAG, &psp2));
	check_ok(connect_ep(x.a.ep, x.q, CONN_TMO, "handed"));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	check_ok(dat_cr_handoff(cr, Q2));
	DAT_CR_PARAM crp;
	check_ret(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	check_ret(dat_cr_accept(cr, x.p.ep, 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	/* It arrives at the other service point, as a new request. */
	ev = expect_ev(cr2, DAT_CONNECTION_REQUEST_EVENT);
	assert_ptr_equal(ev.event_data.cr_arrival_event_data.sp_handle.psp_handle, psp2);
	assert_int_equal(ev.event_data.cr_arrival_event_data.conn_qual, Q2);
	DAT_CR_HANDLE h = ev.event_data.cr_arrival_event_data.cr_handle;
	check_ok(dat_cr_query(h, DAT_CR_FIELD_ALL, &crp));
	assert_string_equal((char *)crp.private_data, "handed");
	expect_empty(x.p.cr);
	check_ok(dat_cr_accept(h, x.p.ep, 0, NULL));
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	expect_ev(x.p.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	pair_close(&x);
}

/* "The cr_handle parameter is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	check_ret(dat_cr_handoff(x.psp, x.q), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	check_ret(dat_cr_handoff(DAT_HANDLE_NULL, x.q), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	check_ok(connect_ep(x.a.ep, x.q, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	check_ok(dat_cr_reject(cr));
	check_ret(dat_cr_handoff(cr, x.q), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	pair_close(&x);
}

/* "The handoff parameter is invalid": no service point of this IA listens
 * on it (another IA's does not count: "another Connection Qualifier on the
 * same IA"). The request stays pending. */
static void invalid_parameter(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_PSP_HANDLE other;
	check_ok(dat_psp_create(x.a.ia, Q2, x.a.cr, DAT_PSP_CONSUMER_FLAG, &other));
	check_ok(connect_ep(x.a.ep, x.q, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	check_ret(dat_cr_handoff(cr, 0x4A4D0FF0DEADull), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_cr_handoff(cr, Q2), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ok(dat_cr_accept(cr, x.p.ep, 0, NULL));
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	pair_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_handed_off),
		cmocka_unit_test(invalid_handle),
		cmocka_unit_test(invalid_parameter),
	};
	return cmocka_run_group_tests_name("dat_cr_handoff", tests, NULL, NULL);
}
