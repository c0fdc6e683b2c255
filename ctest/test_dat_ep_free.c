/* dat_ep_free(3DAT): states in which an EP can be destroyed, and what its
 * destruction does to connections and event streams. */
#include "conn.h"

/* "The dat_ep_free() function destroys an instance of the Endpoint." "Use
 * of the handle of the destroyed Endpoint in any subsequent operation
 * except for the dat_ep_free() fails." */
static void success_destroys(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	check_ok(dat_ep_free(e.ep));
	DAT_EP_STATE st;
	DAT_EP_PARAM p;
	DAT_HANDLE_TYPE t;
	check_ret(dat_ep_get_status(e.ep, &st, NULL, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_query(e.ep, DAT_EP_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(connect_ep(e.ep, 1, CONN_TMO, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_type(dat_get_handle_type(e.ep, &t), DAT_INVALID_HANDLE);
	end_close(&e);
}

/* "The ep_handle parameter is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	check_ok(dat_ep_free(e.ep));
	check_ret(dat_ep_free(e.ep), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_free(e.pz), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_free(DAT_HANDLE_NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	end_close(&e);
}

/* "The Endpoint can be destroyed in any Endpoint state except Reserved,
 * Passive Connection Pending, and Tentative Connection Pending." "If the
 * Endpoint is in the Reserved state, the Consumer shall first destroy the
 * associated Reserved Service Point that transitions the Endpoint into the
 * Unconnected state where the Endpoint can be destroyed. If the Endpoint is
 * in the Passive Connection Pending state, the Consumer shall first reject
 * the associated Connection Request that transitions the Endpoint into the
 * Unconnected state where the Endpoint can be destroyed." */
static void invalid_state(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(x.p.ia, 0xF46E01, x.p.ep, x.p.cr, &rsp));
	check_ret(dat_ep_free(x.p.ep), DAT_INVALID_STATE, DAT_INVALID_STATE_EP_RESERVED);
	check_ok(dat_rsp_free(rsp));
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_UNCONNECTED);
	check_ok(dat_ep_free(x.p.ep));

	DAT_EP_HANDLE ep;
	check_ok(dat_ep_create(x.p.ia, x.p.pz, x.p.recv, x.p.req, x.p.conn, NULL, &ep));
	check_ok(dat_rsp_create(x.p.ia, 0xF46E02, ep, x.p.cr, &rsp));
	check_ok(connect_ep(x.a.ep, 0xF46E02, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	assert_int_equal(ep_state(ep), DAT_EP_STATE_PASSIVE_CONNECTION_PENDING);
	check_ret(dat_ep_free(ep), DAT_INVALID_STATE, DAT_INVALID_STATE_EP_PASSCONNPENDING);
	check_ok(dat_cr_reject(ev.event_data.cr_arrival_event_data.cr_handle));
	assert_int_equal(ep_state(ep), DAT_EP_STATE_UNCONNECTED);
	check_ok(dat_ep_free(ep));
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_PEER_REJECTED);
	pair_close(&x);
}

/* Any other state: unconnected, active pending, connected, disconnected. */
static void any_other_state(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_EP_HANDLE ep;
	check_ok(dat_ep_create(x.a.ia, x.a.pz, x.a.recv, x.a.req, x.a.conn, NULL, &ep));
	check_ok(dat_ep_free(ep)); /* unconnected */
	pair_connect(&x);
	check_ok(dat_ep_free(x.a.ep)); /* connected */
	expect_ev(x.p.conn, DAT_CONNECTION_EVENT_DISCONNECTED);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_DISCONNECTED);
	check_ok(dat_ep_free(x.p.ep)); /* disconnected */
	pair_close(&x);
}

/* "The destruction of the Endpoint during connection setup aborts
 * connection establishment": the passive side cannot complete its accept. */
static void aborts_establishment(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	check_ok(connect_ep(x.a.ep, x.q, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	assert_int_equal(ep_state(x.a.ep), DAT_EP_STATE_ACTIVE_CONNECTION_PENDING);
	check_ok(dat_ep_free(x.a.ep));
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, x.p.ep, 0, NULL));
	ev = expect_ev(x.p.conn, DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, x.p.ep);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_DISCONNECTED);
	expect_empty(x.a.conn);
	pair_close(&x);
}

/* "The freeing of an Endpoint also destroys an Event Stream for each of
 * the associated Event Dispatchers": the EVDs are no longer in use. */
static void destroys_event_streams(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	check_type(dat_evd_free(e.recv), DAT_INVALID_STATE);
	check_type(dat_evd_free(e.req), DAT_INVALID_STATE);
	check_type(dat_evd_free(e.conn), DAT_INVALID_STATE);
	check_ok(dat_ep_free(e.ep));
	check_ok(dat_evd_free(e.recv));
	check_ok(dat_evd_free(e.req));
	check_ok(dat_evd_free(e.conn));
	end_close(&e);
}

/* "The destruction of the Endpoint can also cause the destruction of DTOs
 * and RMRs posted to the Endpoint and not dequeued yet. ... The Consumer
 * must be ready for all completions that are not dequeued yet either still
 * being on the Endpoint recv_evd_handle and request_evd_handle or not being
 * there." Whatever is left, every event still on the EVD is a well-formed
 * completion, and the EVD can be waited on and freed afterwards. */
static void posted_dtos(void **state)
{
	(void)state;
	struct pair x;
	struct mem m;
	pair_up(&x, NULL);
	mem_reg(&m, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET iov = iov_at(&m, 0, 64);
	for (int i = 0; i < 4; i++)
		check_ok(dat_ep_post_recv(x.a.ep, 1, &iov, cookie(i), DAT_COMPLETION_DEFAULT_FLAG));
	DAT_EP_HANDLE ep = x.a.ep;
	check_ok(dat_ep_free(ep));
	DAT_EVENT ev;
	int n = 0;
	while (dat_evd_dequeue(x.a.recv, &ev) == DAT_SUCCESS) {
		assert_int_equal(ev.event_number, DAT_DTO_COMPLETION_EVENT);
		assert_int_not_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
		n++;
	}
	assert_true(n <= 4);
	DAT_COUNT nmore;
	check_type(dat_evd_wait(x.a.recv, 1000, 1, &ev, &nmore), DAT_TIMEOUT_EXPIRED);
	check_ok(dat_evd_free(x.a.recv));
	expect_ev(x.p.conn, DAT_CONNECTION_EVENT_DISCONNECTED);
	mem_free(&m, 0);
	pair_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_destroys),
		cmocka_unit_test(invalid_handle),
		cmocka_unit_test(invalid_state),
		cmocka_unit_test(any_other_state),
		cmocka_unit_test(aborts_establishment),
		cmocka_unit_test(destroys_event_streams),
		cmocka_unit_test(posted_dtos),
	};
	return cmocka_run_group_tests_name("dat_ep_free", tests, NULL, NULL);
}
