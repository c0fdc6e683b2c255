/* dat_ep_reset(3DAT): back from Disconnected to Unconnected. */
#include "conn.h"

/* "The dat_ep_reset() function transitions the local Endpoint from a
 * Disconnected to an Unconnected state." The EP can then connect again. */
static void success_reuse(void **state)
{
	(void)state;
	struct pair x;
	pair_up(&x, NULL);
	pair_disconnect(&x);
	check_ok(dat_ep_reset(x.a.ep));
	check_ok(dat_ep_reset(x.p.ep));
	assert_int_equal(ep_state(x.a.ep), DAT_EP_STATE_UNCONNECTED);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_UNCONNECTED);
	pair_connect(&x);
	assert_int_equal(ep_state(x.a.ep), DAT_EP_STATE_CONNECTED);
	pair_close(&x);
}

/* "The dat_ep_reset() function is valid for both Disconnected and
 * Unconnected states. For Unconnected state, the operation is no-op because
 * the Endpoint is already in an Unconnected state. For an Unconnected
 * state, the preposted Recvs are not affected by the call." */
static void unconnected_noop(void **state)
{
	(void)state;
	struct pair x;
	struct mem ma, mp;
	pair_open(&x, NULL);
	mem_reg(&mp, x.p.ia, x.p.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&ma, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET rp = iov_at(&mp, 0, 64), sa = iov_at(&ma, 0, 5);
	check_ok(dat_ep_post_recv(x.p.ep, 1, &rp, cookie(7), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_reset(x.p.ep));
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_UNCONNECTED);
	expect_empty(x.p.recv);
	DAT_BOOLEAN ri = DAT_TRUE;
	check_ok(dat_ep_get_status(x.p.ep, NULL, &ri, NULL));
	assert_int_equal(ri, DAT_FALSE);
	pair_connect(&x);
	memcpy(ma.buf, "kept", 5);
	check_ok(dat_ep_post_send(x.a.ep, 1, &sa, cookie(8), DAT_COMPLETION_DEFAULT_FLAG));
	assert_int_equal(expect_dto(x.p.recv, x.p.ep, 7, DAT_DTO_SUCCESS), 5);
	assert_string_equal((char *)mp.buf, "kept");
	mem_free(&ma, 0);
	mem_free(&mp, 0);
	pair_close(&x);
}

/* "Endpoint is not in the valid state for reset." */
static void invalid_state(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	check_ok(connect_ep(x.a.ep, x.q, CONN_TMO, NULL));
	check_ret(dat_ep_reset(x.a.ep), DAT_INVALID_STATE, DAT_INVALID_STATE_EP_ACTCONNPENDING);
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, x.p.ep, 0, NULL));
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	expect_ev(x.p.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	check_ret(dat_ep_reset(x.a.ep), DAT_INVALID_STATE, DAT_INVALID_STATE_EP_CONNECTED);
	check_ret(dat_ep_reset(x.p.ep), DAT_INVALID_STATE, DAT_INVALID_STATE_EP_CONNECTED);
	assert_int_equal(ep_state(x.a.ep), DAT_EP_STATE_CONNECTED);
	DAT_EP_HANDLE ep;
	DAT_RSP_HANDLE rsp;
	check_ok(dat_ep_create(x.p.ia, x.p.pz, x.p.recv, x.p.req, x.p.conn, NULL, &ep));
	check_ok(dat_rsp_create(x.p.ia, 0x465E7, ep, x.p.cr, &rsp));
	check_ret(dat_ep_reset(ep), DAT_INVALID_STATE, DAT_INVALID_STATE_EP_RESERVED);
	pair_close(&x);
}

/* "ep_handle is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	check_ret(dat_ep_reset(e.ia), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_reset(DAT_HANDLE_NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_reset(dead_ep()), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	end_close(&e);
}

/* "If the Consumer wants to ensure that all Completions are dequeued, the
 * Consumer can post DTO or RMR operations as a "marker" that are flushed to
 * recv_evd_handle or request_evd_handle. Now, when the Consumer dequeues
 * the completion of the "marker" from the EVD, it is guaranteed that all
 * previously posted DTO and RMR completions for the Endpoint were dequeued
 * for that EVD." */
static void usage_marker(void **state)
{
	(void)state;
	struct pair x;
	struct mem m;
	pair_up(&x, NULL);
	mem_reg(&m, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET iov = iov_at(&m, 0, 64);
	for (int i = 0; i < 5; i++)
		check_ok(dat_ep_post_recv(x.a.ep, 1, &iov, cookie(i), DAT_COMPLETION_DEFAULT_FLAG));
	pair_disconnect(&x);
	check_ok(dat_ep_post_recv(x.a.ep, 1, &iov, cookie(99), DAT_COMPLETION_DEFAULT_FLAG));
	uint64_t seen = 0;
	for (;;) {
		DAT_EVENT ev = expect_ev(x.a.recv, DAT_DTO_COMPLETION_EVENT);
		uint64_t c = ev.event_data.dto_completion_event_data.user_cookie.as_64;
		assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_ERR_FLUSHED);
		if (c == 99)
			break;
		seen |= 1u << c;
	}
	assert_int_equal(seen, 0x1f); /* every earlier receive came first */
	expect_empty(x.a.recv);
	check_ok(dat_ep_reset(x.a.ep));
	expect_empty(x.a.recv);
	mem_free(&m, 0);
	pair_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_reuse),
		cmocka_unit_test(unconnected_noop),
		cmocka_unit_test(invalid_state),
		cmocka_unit_test(invalid_handle),
		cmocka_unit_test(usage_marker),
	};
	return cmocka_run_group_tests_name("dat_ep_reset", tests, NULL, NULL);
}
