/* dat_ep_post_recv(3DAT): return values, scatter order, length errors,
 * solicited wait, and receives posted in every state. */
#include <limits.h>
#include "conn.h"

/* "The local_iov segments are filled in the I/O Vector order until the
 * whole message is received. This ensures that all the "front" segments of
 * the local_iov I/O Vector are completely filled, only one segment is
 * partially filled, if needed, and all segments that follow it are not
 * filled at all." "The user_cookie is returned to the Consumer in the
 * Completion event for the posted Receive." */
static void success_scatter(void **state)
{
	(void)state;
	struct pair x;
	struct mem ma, mp;
	pair_up(&x, NULL);
	mem_reg(&ma, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&mp, x.p.ia, x.p.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	memset(mp.buf, '.', 64);
	memcpy(ma.buf, "0123456789AB", 12);
	/* three 8-byte segments, out of address order */
	DAT_LMR_TRIPLET r[3] = {iov_at(&mp, 32, 8), iov_at(&mp, 0, 8), iov_at(&mp, 16, 8)};
	DAT_LMR_TRIPLET s = iov_at(&ma, 0, 12);
	check_ok(dat_ep_post_recv(x.p.ep, 3, r, cookie(0xABCDEF0123ull), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(x.a.ep, 1, &s, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	assert_int_equal(expect_dto(x.p.recv, x.p.ep, 0xABCDEF0123ull, DAT_DTO_SUCCESS), 12);
	assert_memory_equal(mp.buf + 32, "01234567", 8);
	assert_memory_equal(mp.buf + 0, "89AB....", 8);
	assert_memory_equal(mp.buf + 16, "........", 8);
	mem_free(&ma, 0);
	mem_free(&mp, 0);
	pair_close(&x);
}

/* "num_segments: ... Can be 0 for receiving a 0 size message." "local_iov:
 * ... Can be NULL for receiving a 0 size message." */
static void zero_size(void **state)
{
	(void)state;
	struct pair x;
	pair_up(&x, NULL);
	check_ok(dat_ep_post_recv(x.p.ep, 0, NULL, cookie(5), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(x.a.ep, 0, NULL, cookie(6), DAT_COMPLETION_DEFAULT_FLAG));
	assert_int_equal(expect_dto(x.p.recv, x.p.ep, 5, DAT_DTO_SUCCESS), 0);
	pair_close(&x);
}

/* "If the size of an incoming message is larger than the size of the
 * local_iov, the reported status of the posted Receive DTO in the
 * corresponding Completion DTO event is DAT_DTO_LENGTH_ERROR." Small
 * (inline) and large messages. */
static void length_error(void **state)
{
	(void)state;
	struct pair x;
	struct mem ma, mp;
	const DAT_VLEN big = 64 * 1024;
	pair_up(&x, NULL);
	mem_reg(&ma, x.a.ia, x.a.pz, big, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&mp, x.p.ia, x.p.pz, big, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET r = iov_at(&mp, 0, 16), s1 = iov_at(&ma, 0, 17), s2 = iov_at(&ma, 0, big);
	check_ok(dat_ep_post_recv(x.p.ep, 1, &r, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(x.a.ep, 1, &s1, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(x.p.recv, x.p.ep, 1, DAT_DTO_LENGTH_ERROR);
	check_ok(dat_ep_post_recv(x.p.ep, 1, &r, cookie(3), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(x.a.ep, 1, &s2, cookie(4), DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(x.p.recv, x.p.ep, 3, DAT_DTO_LENGTH_ERROR);
	mem_free(&ma, 0);
	mem_free(&mp, 0);
	pair_close(&x);
}

/* "The operation is valid for all states of the Endpoint. The actual data
 * transfer does not take place until the Endpoint is in the
 * DAT_EP_STATE_CONNECTED state": receives posted while unconnected,
 * reserved and pending are used once connected. */
static void any_state(void **state)
{
	(void)state;
	struct pair x;
	struct mem ma, mp;
	pair_open(&x, NULL);
	mem_reg(&ma, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&mp, x.p.ia, x.p.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET r = iov_at(&mp, 0, 8), ra = iov_at(&ma, 8, 8), s = iov_at(&ma, 0, 8);
	check_ok(dat_ep_post_recv(x.p.ep, 1, &r, cookie(1), DAT_COMPLETION_DEFAULT_FLAG)); /* unconnected */
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(x.p.ia, 0x2EC7, x.p.ep, x.p.cr, &rsp));
	check_ok(dat_ep_post_recv(x.p.ep, 1, &r, cookie(2), DAT_COMPLETION_DEFAULT_FLAG)); /* reserved */
	check_ok(connect_ep(x.a.ep, 0x2EC7, CONN_TMO, NULL));
	check_ok(dat_ep_post_recv(x.a.ep, 1, &ra, cookie(3), DAT_COMPLETION_DEFAULT_FLAG)); /* active pending */
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_ep_post_recv(x.p.ep, 1, &r, cookie(4), DAT_COMPLETION_DEFAULT_FLAG)); /* passive pending */
	expect_empty(x.p.recv);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, DAT_HANDLE_NULL, 0, NULL));
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	expect_ev(x.p.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	for (int i = 0; i < 3; i++)
		check_ok(dat_ep_post_send(x.a.ep, 1, &s, cookie(10 + i), DAT_COMPLETION_SUPPRESS_FLAG));
	check_ok(dat_ep_post_send(x.p.ep, 1, &r, cookie(20), DAT_COMPLETION_SUPPRESS_FLAG));
	expect_dto(x.p.recv, x.p.ep, 1, DAT_DTO_SUCCESS);
	expect_dto(x.p.recv, x.p.ep, 2, DAT_DTO_SUCCESS);
	expect_dto(x.p.recv, x.p.ep, 4, DAT_DTO_SUCCESS);
	expect_dto(x.a.recv, x.a.ep, 3, DAT_DTO_SUCCESS);
	mem_free(&ma, 0);
	mem_free(&mp, 0);
	pair_close(&x);
}

/* "The operation on the Endpoint in DAT_EP_STATE_DISCONNECTED is allowed.
 * If the operation returns successfully, the posted Recv is immediately
 * flushed to recv_evd_handle." */
static void disconnected_flush(void **state)
{
	(void)state;
	struct pair x;
	struct mem m;
	pair_up(&x, NULL);
	mem_reg(&m, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	pair_disconnect(&x);
	DAT_LMR_TRIPLET r = iov_at(&m, 0, 64);
	check_ok(dat_ep_post_recv(x.a.ep, 1, &r, cookie(77), DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(x.a.recv, x.a.ep, 77, DAT_DTO_ERR_FLUSHED);
	DAT_BOOLEAN idle = DAT_FALSE;
	check_ok(dat_ep_get_status(x.a.ep, NULL, &idle, NULL));
	assert_int_equal(idle, DAT_TRUE);
	mem_free(&m, 0);
	pair_close(&x);
}

/* "The completion of the posted Receive is reported to the Consumer
 * asynchronously through a DTO Completion event based on the configuration
 * of the connection for Solicited Wait and the specified completion_flags
 * value for the matching Send." With DAT_COMPLETION_SOLICITED_WAIT_FLAG in
 * the receiver's recv_completion_flags, an unsolicited message does not
 * wake dat_evd_wait; a solicited one does, and both are delivered in
 * order. */
static void solicited_wait(void **state)
{
	(void)state;
	struct pair x;
	struct mem ma, mp;
	DAT_EP_ATTR a = provider_defaults();
	a.recv_completion_flags = DAT_COMPLETION_SOLICITED_WAIT_FLAG;
	pair_up(&x, &a);
	mem_reg(&ma, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&mp, x.p.ia, x.p.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET r = iov_at(&mp, 0, 64), s = iov_at(&ma, 0, 8);
	check_ok(dat_ep_post_recv(x.p.ep, 1, &r, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_recv(x.p.ep, 1, &r, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(x.a.ep, 1, &s, cookie(3), DAT_COMPLETION_DEFAULT_FLAG));
	DAT_EVENT ev;
	DAT_COUNT n;
	check_type(dat_evd_wait(x.p.recv, 100000, 1, &ev, &n), DAT_TIMEOUT_EXPIRED);
	check_ok(dat_ep_post_send(x.a.ep, 1, &s, cookie(4), DAT_COMPLETION_SOLICITED_WAIT_FLAG));
	expect_dto(x.p.recv, x.p.ep, 1, DAT_DTO_SUCCESS);
	expect_dto(x.p.recv, x.p.ep, 2, DAT_DTO_SUCCESS);
	mem_free(&ma, 0);
	mem_free(&mp, 0);
	pair_close(&x);
}

/* "The value of DAT_COMPLETION _UNSIGNALLED_FLAG is only valid if the
 * Endpoint Recv Completion Flags DAT_COMPLETION_UNSIGNALLED_FLAG.
 * Otherwise, DAT_INVALID_PARAMETER is returned." */
static void unsignalled_flag(void **state)
{
	(void)state;
	struct end e;
	struct mem m;
	end_open(&e, NULL);
	mem_reg(&m, e.ia, e.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET r = iov_at(&m, 0, 64);
	check_ret(dat_ep_post_recv(e.ep, 1, &r, cookie(1), DAT_COMPLETION_UNSIGNALLED_FLAG), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG5);
	DAT_EP_ATTR a = ep_attr_of(&e);
	a.recv_completion_flags = DAT_COMPLETION_UNSIGNALLED_FLAG;
	DAT_EP_HANDLE ep;
	check_ok(dat_ep_create(e.ia, e.pz, e.recv, e.req, e.conn, &a, &ep));
	check_ok(dat_ep_post_recv(ep, 1, &r, cookie(2), DAT_COMPLETION_UNSIGNALLED_FLAG));
	mem_free(&m, 0);
	end_close(&e);
}

/* More receives outstanding than max_recv_dtos. */
static void insufficient_resources(void **state)
{
	(void)state;
	struct end e;
	struct mem m;
	end_open(&e, NULL);
	mem_reg(&m, e.ia, e.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_EP_ATTR a = ep_attr_of(&e);
	a.max_recv_dtos = 2;
	DAT_EP_HANDLE ep;
	check_ok(dat_ep_create(e.ia, e.pz, e.recv, e.req, e.conn, &a, &ep));
	DAT_LMR_TRIPLET r = iov_at(&m, 0, 64);
	check_ok(dat_ep_post_recv(ep, 1, &r, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_recv(ep, 1, &r, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
	check_type(dat_ep_post_recv(ep, 1, &r, cookie(3), DAT_COMPLETION_DEFAULT_FLAG), DAT_INSUFFICIENT_RESOURCES);
	mem_free(&m, 0);
	end_close(&e);
}

/* "Invalid parameter. For example, one of the IOV segments pointed to a
 * memory outside its LMR." */
static void invalid_parameter(void **state)
{
	(void)state;
	struct end e;
	struct mem m;
	end_open(&e, NULL);
	mem_reg(&m, e.ia, e.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET out = iov_at(&m, 32, 64), ok = iov_at(&m, 0, 8);
	check_ret(dat_ep_post_recv(e.ep, 1, &out, cookie(1), DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG3);
	check_ret(dat_ep_post_recv(e.ep, -2, &ok, cookie(1), DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG2);
	DAT_EP_ATTR a = ep_attr_of(&e);
	DAT_LMR_TRIPLET *many = calloc((size_t)a.max_recv_iov + 1, sizeof *many);
	assert_non_null(many);
	for (DAT_COUNT i = 0; i <= a.max_recv_iov; i++)
		many[i] = ok;
	check_ret(dat_ep_post_recv(e.ep, a.max_recv_iov + 1, many, cookie(1), DAT_COMPLETION_DEFAULT_FLAG),
		  DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	free(many);
	/* A count far past a short array is refused before the array is
	 * read (issue 15). */
	check_ret(dat_ep_post_recv(e.ep, INT_MAX, &ok, cookie(1), DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG2);
	check_ret(dat_ep_post_recv(e.ep, 1, &ok, cookie(1), (DAT_COMPLETION_FLAGS)0x80), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG5);
	DAT_BOOLEAN idle = DAT_FALSE;
	check_ok(dat_ep_get_status(e.ep, NULL, &idle, NULL));
	assert_int_equal(idle, DAT_TRUE); /* nothing was posted */
	mem_free(&m, 0);
	end_close(&e);
}

/* "The ep_handle parameter is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	check_ret(dat_ep_post_recv(e.recv, 0, NULL, cookie(1), DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_post_recv(DAT_HANDLE_NULL, 0, NULL, cookie(1), DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_post_recv(dead_ep(), 0, NULL, cookie(1), DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EP);
	end_close(&e);
}

/* "Protection Zone mismatch between an LMR of one of the local_iov segments
 * and the local Endpoint." */
static void protection_violation(void **state)
{
	(void)state;
	struct end e;
	struct mem m;
	end_open(&e, NULL);
	DAT_PZ_HANDLE pz2;
	check_ok(dat_pz_create(e.ia, &pz2));
	mem_reg(&m, e.ia, pz2, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET r = iov_at(&m, 0, 64);
	check_type(dat_ep_post_recv(e.ep, 1, &r, cookie(1), DAT_COMPLETION_DEFAULT_FLAG), DAT_PROTECTION_VIOLATION);
	mem_free(&m, 0);
	end_close(&e);
}

/* "One of the LMRs used in local_iov was either invalid or did not have the
 * local read privileges": a receive writes its buffer, so an LMR without
 * local write, or a freed LMR, is refused. */
static void privileges_violation(void **state)
{
	(void)state;
	struct end e;
	struct mem ro, gone;
	end_open(&e, NULL);
	mem_reg(&ro, e.ia, e.pz, 64, DAT_MEM_PRIV_LOCAL_READ_FLAG);
	DAT_LMR_TRIPLET r = iov_at(&ro, 0, 64);
	check_type(dat_ep_post_recv(e.ep, 1, &r, cookie(1), DAT_COMPLETION_DEFAULT_FLAG), DAT_PRIVILEGES_VIOLATION);
	mem_reg(&gone, e.ia, e.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	r = iov_at(&gone, 0, 64);
	mem_free(&gone, 1);
	check_type(dat_ep_post_recv(e.ep, 1, &r, cookie(2), DAT_COMPLETION_DEFAULT_FLAG), DAT_PRIVILEGES_VIOLATION);
	mem_free(&ro, 0);
	end_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_scatter),
		cmocka_unit_test(zero_size),
		cmocka_unit_test(length_error),
		cmocka_unit_test(any_state),
		cmocka_unit_test(disconnected_flush),
		cmocka_unit_test(solicited_wait),
		cmocka_unit_test(unsignalled_flag),
		cmocka_unit_test(insufficient_resources),
		cmocka_unit_test(invalid_parameter),
		cmocka_unit_test(invalid_handle),
		cmocka_unit_test(protection_violation),
		cmocka_unit_test(privileges_violation),
	};
	return cmocka_run_group_tests_name("dat_ep_post_recv", tests, NULL, NULL);
}
