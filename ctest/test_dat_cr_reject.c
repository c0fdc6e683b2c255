/* dat_cr_reject(3DAT): refusing a connection request. */
#include "conn.h"

/* "The dat_cr_reject() function rejects a Connection Request from the
 * Active remote side requesting Endpoint." "The operation is synchronous.
 * This operation also destroys the Connection Request instance. Use of the
 * handle of the destroyed Connection Request in any consequent operation
 * fails." The active side sees DAT_CONNECTION_EVENT_PEER_REJECTED. */
static void success_rejected(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	check_ok(connect_ep(x.a.ep, x.q, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	check_ok(dat_cr_reject(cr));
	DAT_CR_PARAM p;
	check_ret(dat_cr_query(cr, DAT_CR_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	check_ret(dat_cr_accept(cr, x.p.ep, 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	ev = expect_ev(x.a.conn, DAT_CONNECTION_EVENT_PEER_REJECTED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, x.a.ep);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_UNCONNECTED);
	pair_close(&x);
}

/* "The local Endpoint that the Consumer provided for Reserved Service Point
 * reverts to Consumer control, and the Consumer is free to use in any way
 * it wants." */
static void rsp_ep_reverts(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(x.p.ia, 0x4E7EC7, x.p.ep, x.p.cr, &rsp));
	check_ok(connect_ep(x.a.ep, 0x4E7EC7, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_PASSIVE_CONNECTION_PENDING);
	check_ok(dat_cr_reject(ev.event_data.cr_arrival_event_data.cr_handle));
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_PEER_REJECTED);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_UNCONNECTED);
	/* Used as the active side of a new connection. */
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	check_ok(dat_psp_create_any(x.a.ia, &q, x.a.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	check_ok(dat_ep_reset(x.a.ep));
	check_ok(connect_ep(x.p.ep, q, CONN_TMO, NULL));
	ev = expect_ev(x.a.cr, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, x.a.ep, 0, NULL));
	expect_ev(x.p.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	pair_close(&x);
}

/* "The cr_handle parameter is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	check_ret(dat_cr_reject(x.p.ep), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	check_ret(dat_cr_reject(DAT_HANDLE_NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	check_ok(connect_ep(x.a.ep, x.q, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_cr_reject(ev.event_data.cr_arrival_event_data.cr_handle));
	check_ret(dat_cr_reject(ev.event_data.cr_arrival_event_data.cr_handle), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_CR);
	pair_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_rejected),
		cmocka_unit_test(rsp_ep_reverts),
		cmocka_unit_test(invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_cr_reject", tests, NULL, NULL);
}
