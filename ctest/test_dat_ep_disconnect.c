/* dat_ep_disconnect(3DAT): return values, graceful and abrupt semantics,
 * flushes and the allowed states. */
#include "conn.h"

/* Larger than the provider's inline size: such a send stays outstanding
 * until the peer posts a receive and makes progress. */
#define BIG (64 * 1024)

/* "The successful completion of the disconnect is reported to the Consumer
 * through a DAT_CONNECTION_EVENT_DISCONNECTED event on connect_evd_handle of
 * the Endpoint. The Endpoint is automatically transitioned into a
 * DAT_EP_STATE_DISCONNECTED state upon successful asynchronous completion."
 * Both flags, either side. */
static void success_both_sides(void **state)
{
	(void)state;
	DAT_CLOSE_FLAGS flags[] = {DAT_CLOSE_ABRUPT_FLAG, DAT_CLOSE_GRACEFUL_FLAG};
	for (int i = 0; i < 2; i++) {
		struct pair x;
		pair_up(&x, NULL);
		struct end *by = i ? &x.p : &x.a, *peer = i ? &x.a : &x.p;
		check_ok(dat_ep_disconnect(by->ep, flags[i]));
		DAT_EVENT ev = expect_ev(by->conn, DAT_CONNECTION_EVENT_DISCONNECTED);
		assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, by->ep);
		assert_int_equal(ep_state(by->ep), DAT_EP_STATE_DISCONNECTED);
		expect_ev(peer->conn, DAT_CONNECTION_EVENT_DISCONNECTED);
		assert_int_equal(ep_state(peer->ep), DAT_EP_STATE_DISCONNECTED);
		pair_close(&x);
	}
}

/* "For abrupt disconnect, all outstanding DTOs and RMR Binds are completed
 * unsuccessfully": posted receives and sends the peer never took are
 * flushed, on both sides. "If an in-progress DTO is completed
 * unsuccessfully, all follow on in-progress DTOs in the same direction also
 * must be completed unsuccessfully. This order is presented to the Consumer
 * through a DTO completion Event Stream": the two sends, in post order. */
static void abrupt_flushes(void **state)
{
	(void)state;
	struct pair x;
	struct mem ma, mp;
	pair_up(&x, NULL);
	mem_reg(&ma, x.a.ia, x.a.pz, BIG, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&mp, x.p.ia, x.p.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET small = iov_at(&ma, 0, 64), big = iov_at(&ma, 0, BIG), pr = iov_at(&mp, 0, 64);
	for (int i = 0; i < 3; i++)
		check_ok(dat_ep_post_recv(x.a.ep, 1, &small, cookie(10 + i), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_recv(x.p.ep, 1, &pr, cookie(20), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(x.a.ep, 1, &big, cookie(30), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(x.a.ep, 1, &big, cookie(31), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_disconnect(x.a.ep, DAT_CLOSE_ABRUPT_FLAG));
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_DISCONNECTED);
	for (int i = 0; i < 3; i++)
		expect_dto(x.a.recv, x.a.ep, 10 + i, DAT_DTO_ERR_FLUSHED);
	/* The first send may have reached the peer before the disconnect (a
	 * TCP peer takes a message without any call of its program); its
	 * receive is too small, so it completed with the peer's error, and is
	 * not outstanding any more. Either way it ends unsuccessfully, before
	 * the second, which is flushed. */
	DAT_EVENT ev = expect_ev(x.a.req, DAT_DTO_COMPLETION_EVENT);
	DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
	assert_ptr_equal(d.ep_handle, x.a.ep);
	assert_int_equal(d.user_cookie.as_64, 30);
	if (d.status != DAT_DTO_ERR_FLUSHED && d.status != DAT_DTO_ERR_REMOTE_RESPONDER)
		fail_msg("send 30: status %d, want DAT_DTO_ERR_FLUSHED or DAT_DTO_ERR_REMOTE_RESPONDER", d.status);
	expect_dto(x.a.req, x.a.ep, 31, DAT_DTO_ERR_FLUSHED);
	expect_ev(x.p.conn, DAT_CONNECTION_EVENT_DISCONNECTED);
	/* The peer's receive cannot have been matched by the flushed send
	 * except with an error; it ends unsuccessfully too. */
	ev = expect_ev(x.p.recv, DAT_DTO_COMPLETION_EVENT);
	assert_int_equal(ev.event_data.dto_completion_event_data.user_cookie.as_64, 20);
	assert_int_not_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	mem_free(&ma, 0);
	mem_free(&mp, 0);
	pair_close(&x);
}

/* "For graceful disconnect, all outstanding and in-progress request DTOs and
 * RMR Binds must try to be completed successfully first, before disconnect
 * proceeds. During that time, the local Endpoint is in a
 * DAT_EP_DISCONNECT_PENDING state." "No new Send, RDMA Read, and RDMA Write
 * DTOs, or RMR Binds can be posted to the Endpoint when the local Endpoint
 * is in the DAT_EP_DISCONNECT_PENDING state." */
static void graceful_completes_first(void **state)
{
	(void)state;
	struct pair x;
	struct mem ma, mp;
	pair_up(&x, NULL);
	mem_reg(&ma, x.a.ia, x.a.pz, BIG, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&mp, x.p.ia, x.p.pz, BIG, DAT_MEM_PRIV_ALL_FLAG);
	memset(ma.buf, 0x5a, BIG);
	DAT_LMR_TRIPLET big = iov_at(&ma, 0, BIG), pr = iov_at(&mp, 0, BIG);
	DAT_RMR_TRIPLET rr = rmr_at(&mp, 0, 8);
	check_ok(dat_ep_post_send(x.a.ep, 1, &big, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_disconnect(x.a.ep, DAT_CLOSE_GRACEFUL_FLAG));
	assert_int_equal(ep_state(x.a.ep), DAT_EP_STATE_DISCONNECT_PENDING);
	check_ret(dat_ep_post_send(x.a.ep, 1, &big, cookie(2), DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_STATE,
		  DAT_INVALID_STATE_EP_DISCPENDING);
	check_ret(dat_ep_post_rdma_write(x.a.ep, 1, &big, cookie(3), &rr, DAT_COMPLETION_DEFAULT_FLAG),
		  DAT_INVALID_STATE, DAT_INVALID_STATE_EP_DISCPENDING);
	check_ret(dat_ep_post_rdma_read(x.a.ep, 1, &big, cookie(4), &rr, DAT_COMPLETION_DEFAULT_FLAG),
		  DAT_INVALID_STATE, DAT_INVALID_STATE_EP_DISCPENDING);
	/* The peer takes the message: the send completes successfully, then
	 * the disconnect proceeds. */
	check_ok(dat_ep_post_recv(x.p.ep, 1, &pr, cookie(5), DAT_COMPLETION_DEFAULT_FLAG));
	assert_int_equal(expect_dto(x.p.recv, x.p.ep, 5, DAT_DTO_SUCCESS), BIG);
	assert_int_equal(mp.buf[BIG - 1], 0x5a);
	assert_int_equal(expect_dto(x.a.req, x.a.ep, 1, DAT_DTO_SUCCESS), BIG);
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_DISCONNECTED);
	assert_int_equal(ep_state(x.a.ep), DAT_EP_STATE_DISCONNECTED);
	expect_ev(x.p.conn, DAT_CONNECTION_EVENT_DISCONNECTED);
	mem_free(&ma, 0);
	mem_free(&mp, 0);
	pair_close(&x);
}

/* "If the same EVD is used for connect_evd_handle and any recv_evd_handle
 * and request_evd_handle, all successful Completion events of in-progress
 * DTOs precede the Disconnect Completion event." */
static void same_evd_order(void **state)
{
	(void)state;
	struct pair x;
	struct mem ma, mp;
	pair_open(&x, NULL);
	/* The active EP reports everything on one EVD. */
	DAT_EVD_HANDLE all = make_evd(x.a.ia, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG);
	check_ok(dat_ep_free(x.a.ep));
	check_ok(dat_ep_create(x.a.ia, x.a.pz, all, all, all, NULL, &x.a.ep));
	x.a.conn = x.a.req = x.a.recv = all;
	pair_connect(&x);
	mem_reg(&ma, x.a.ia, x.a.pz, BIG, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&mp, x.p.ia, x.p.pz, BIG, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET big = iov_at(&ma, 0, BIG), small = iov_at(&ma, 0, 64), pr = iov_at(&mp, 0, BIG);
	check_ok(dat_ep_post_send(x.a.ep, 1, &small, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(x.a.ep, 1, &big, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_disconnect(x.a.ep, DAT_CLOSE_GRACEFUL_FLAG));
	check_ok(dat_ep_post_recv(x.p.ep, 1, &pr, cookie(3), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_recv(x.p.ep, 1, &pr, cookie(4), DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(x.p.recv, x.p.ep, 3, DAT_DTO_SUCCESS);
	expect_dto(x.p.recv, x.p.ep, 4, DAT_DTO_SUCCESS);
	expect_dto(all, x.a.ep, 1, DAT_DTO_SUCCESS);
	expect_dto(all, x.a.ep, 2, DAT_DTO_SUCCESS);
	expect_ev(all, DAT_CONNECTION_EVENT_DISCONNECTED);
	mem_free(&ma, 0);
	mem_free(&mp, 0);
	pair_close(&x);
}

/* "The Consumer can call abrupt dat_ep_disconnect() when the local Endpoint
 * is in the DAT_EP_DISCONNECT_PENDING state. This causes the Endpoint to
 * transition into DAT_EP_STATE_DISCONNECTED without waiting for outstanding
 * and in-progress request DTOs and RMR Binds to successfully complete. The
 * graceful dat_ep_disconnect() call when the local Endpoint is in the
 * DAT_EP_DISCONNECT_PENDING state has no effect." */
static void abrupt_ends_pending(void **state)
{
	(void)state;
	struct pair x;
	struct mem ma;
	pair_up(&x, NULL);
	mem_reg(&ma, x.a.ia, x.a.pz, BIG, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET big = iov_at(&ma, 0, BIG);
	check_ok(dat_ep_post_send(x.a.ep, 1, &big, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_disconnect(x.a.ep, DAT_CLOSE_GRACEFUL_FLAG));
	assert_int_equal(ep_state(x.a.ep), DAT_EP_STATE_DISCONNECT_PENDING);
	check_ok(dat_ep_disconnect(x.a.ep, DAT_CLOSE_GRACEFUL_FLAG));
	assert_int_equal(ep_state(x.a.ep), DAT_EP_STATE_DISCONNECT_PENDING);
	expect_empty(x.a.conn);
	expect_empty(x.a.req);
	check_ok(dat_ep_disconnect(x.a.ep, DAT_CLOSE_ABRUPT_FLAG));
	expect_dto(x.a.req, x.a.ep, 1, DAT_DTO_ERR_FLUSHED);
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_DISCONNECTED);
	assert_int_equal(ep_state(x.a.ep), DAT_EP_STATE_DISCONNECTED);
	expect_ev(x.p.conn, DAT_CONNECTION_EVENT_DISCONNECTED);
	mem_free(&ma, 0);
	pair_close(&x);
}

/* "Disconnecting an unconnected Disconnected Endpoint is no-op." */
static void disconnected_noop(void **state)
{
	(void)state;
	struct pair x;
	pair_up(&x, NULL);
	pair_disconnect(&x);
	check_ok(dat_ep_disconnect(x.a.ep, DAT_CLOSE_ABRUPT_FLAG));
	check_ok(dat_ep_disconnect(x.p.ep, DAT_CLOSE_GRACEFUL_FLAG));
	assert_int_equal(ep_state(x.a.ep), DAT_EP_STATE_DISCONNECTED);
	expect_empty(x.a.conn);
	expect_empty(x.p.conn);
	pair_close(&x);
}

/* "Disconnecting an Endpoint in DAT_EP_STATE_UNCONNECTED,
 * DAT_EP_STATE_RESERVED, DAT_EP_STATE_PASSIVE_CONNECTION_PENDING, and
 * DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING is disallowed." */
static void invalid_state(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	check_ret(dat_ep_disconnect(x.p.ep, DAT_CLOSE_ABRUPT_FLAG), DAT_INVALID_STATE, DAT_INVALID_STATE_EP_UNCONNECTED);
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(x.p.ia, 0x5B0001, x.p.ep, x.p.cr, &rsp));
	check_ret(dat_ep_disconnect(x.p.ep, DAT_CLOSE_GRACEFUL_FLAG), DAT_INVALID_STATE, DAT_INVALID_STATE_EP_RESERVED);
	check_ok(connect_ep(x.a.ep, 0x5B0001, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_PASSIVE_CONNECTION_PENDING);
	check_ret(dat_ep_disconnect(x.p.ep, DAT_CLOSE_ABRUPT_FLAG), DAT_INVALID_STATE,
		  DAT_INVALID_STATE_EP_PASSCONNPENDING);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_PASSIVE_CONNECTION_PENDING);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, DAT_HANDLE_NULL, 0, NULL));
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	expect_ev(x.p.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	pair_close(&x);
}

/* "Both abrupt and graceful disconnect of the Endpoint during connection
 * establishment, DAT_EP_STATE_ACTIVE_CONNECTION_PENDING and
 * DAT_EP_STATE_COMPLETION_PENDING, "aborts" the connection establishment and
 * transitions the local Endpoint into DAT_EP_STATE_DISCONNECTED. That causes
 * preposted Recv DTOs to be flushed to recv_evd_handle." */
static void abort_establishment(void **state)
{
	(void)state;
	DAT_CLOSE_FLAGS flags[] = {DAT_CLOSE_ABRUPT_FLAG, DAT_CLOSE_GRACEFUL_FLAG};
	for (int i = 0; i < 2; i++) {
		struct pair x;
		struct mem ma, mp;
		pair_open(&x, NULL);
		mem_reg(&ma, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
		mem_reg(&mp, x.p.ia, x.p.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
		DAT_LMR_TRIPLET ra = iov_at(&ma, 0, 64), rp = iov_at(&mp, 0, 64);
		/* Active side, while the request is pending. */
		check_ok(dat_ep_post_recv(x.a.ep, 1, &ra, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
		check_ok(connect_ep(x.a.ep, x.q, CONN_TMO, NULL));
		DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
		assert_int_equal(ep_state(x.a.ep), DAT_EP_STATE_ACTIVE_CONNECTION_PENDING);
		check_ok(dat_ep_disconnect(x.a.ep, flags[i]));
		expect_ev(x.a.conn, DAT_CONNECTION_EVENT_DISCONNECTED);
		assert_int_equal(ep_state(x.a.ep), DAT_EP_STATE_DISCONNECTED);
		expect_dto(x.a.recv, x.a.ep, 1, DAT_DTO_ERR_FLUSHED);
		expect_empty(x.a.conn);
		check_ok(dat_cr_reject(ev.event_data.cr_arrival_event_data.cr_handle));
		/* Passive side, right after the accept (completion pending,
		 * or already connected if the confirmation was quick). */
		check_ok(dat_ep_reset(x.a.ep));
		check_ok(dat_ep_post_recv(x.p.ep, 1, &rp, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
		check_ok(connect_ep(x.a.ep, x.q, CONN_TMO, NULL));
		ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
		check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, x.p.ep, 0, NULL));
		check_ok(dat_ep_disconnect(x.p.ep, flags[i]));
		ev = wait_ev(x.p.conn);
		if (ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED)
			ev = wait_ev(x.p.conn);
		assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_DISCONNECTED);
		assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_DISCONNECTED);
		expect_dto(x.p.recv, x.p.ep, 2, DAT_DTO_ERR_FLUSHED);
		mem_free(&ma, 0);
		mem_free(&mp, 0);
		pair_close(&x);
	}
}

/* "The disconnect_flags parameter is invalid." */
static void invalid_parameter(void **state)
{
	(void)state;
	struct pair x;
	pair_up(&x, NULL);
	check_ret(dat_ep_disconnect(x.a.ep, (DAT_CLOSE_FLAGS)7), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	assert_int_equal(ep_state(x.a.ep), DAT_EP_STATE_CONNECTED);
	pair_close(&x);
}

/* "The ep_handle parameter is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	check_ret(dat_ep_disconnect(e.conn, DAT_CLOSE_ABRUPT_FLAG), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_disconnect(DAT_HANDLE_NULL, DAT_CLOSE_ABRUPT_FLAG), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_disconnect(dead_ep(), DAT_CLOSE_ABRUPT_FLAG), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	end_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_both_sides),
		cmocka_unit_test(abrupt_flushes),
		cmocka_unit_test(graceful_completes_first),
		cmocka_unit_test(same_evd_order),
		cmocka_unit_test(abrupt_ends_pending),
		cmocka_unit_test(disconnected_noop),
		cmocka_unit_test(invalid_state),
		cmocka_unit_test(abort_establishment),
		cmocka_unit_test(invalid_parameter),
		cmocka_unit_test(invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_ep_disconnect", tests, NULL, NULL);
}
