/* dat_rsp_free(3DAT): release a reserved qualifier and its EP. */
#include "conn.h"

#define Q 0x45500000000000BBull

/* "For the Reserved Service Point, the Consumer-provided Endpoint reverts
 * to Consumer control." "Any incoming Connection Requests for the
 * Connection Qualifier on the destroyed Service Point was listening on are
 * automatically rejected by the Provider with the return analogous to the
 * no listening Service Point." "Use of the handle of the destroyed Service
 * Point in any consequent operation fails." */
static void success_releases(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(x.p.ia, Q, x.p.ep, x.p.cr, &rsp));
	check_ok(dat_rsp_free(rsp));
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_UNCONNECTED);
	DAT_RSP_PARAM p;
	check_ret(dat_rsp_query(rsp, DAT_RSP_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RSP);
	check_ok(connect_ep(x.a.ep, Q, CONN_TMO, NULL));
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_NON_PEER_REJECTED);
	expect_empty(x.p.cr);
	/* The EP is the consumer's again: it can be freed. */
	check_ok(dat_ep_free(x.p.ep));
	pair_close(&x);
}

/* "This operation has no effect on previously generated Connection Request
 * Event and Connection Request." "Consumers shall be aware that due to a
 * race condition, this Reserved Service Point might have generated a
 * Connection Request Event and passed the associated Endpoint to a Consumer
 * in it": that request can still be accepted on that EP. */
static void pending_request_survives(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(x.p.ia, Q, x.p.ep, x.p.cr, &rsp));
	check_ok(connect_ep(x.a.ep, Q, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_rsp_free(rsp));
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_PASSIVE_CONNECTION_PENDING);
	DAT_CR_PARAM crp;
	check_ok(dat_cr_query(ev.event_data.cr_arrival_event_data.cr_handle, DAT_CR_FIELD_ALL, &crp));
	assert_ptr_equal(crp.local_ep_handle, x.p.ep);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, DAT_HANDLE_NULL, 0, NULL));
	expect_ev(x.p.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	pair_close(&x);
}

/* "The rsp_handle parameter is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(x.p.ia, Q, x.p.ep, x.p.cr, &rsp));
	check_ok(dat_rsp_free(rsp));
	check_ret(dat_rsp_free(rsp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RSP);
	check_ret(dat_rsp_free(x.psp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RSP);
	check_ret(dat_rsp_free(DAT_HANDLE_NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RSP);
	pair_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_releases),
		cmocka_unit_test(pending_request_survives),
		cmocka_unit_test(invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_rsp_free", tests, NULL, NULL);
}
