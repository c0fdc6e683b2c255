/* dat_ep_get_status(3DAT): the state and the idleness of both queues. */
#include "conn.h"

#define BIG (64 * 1024)

static void status(DAT_EP_HANDLE ep, DAT_EP_STATE *st, DAT_BOOLEAN *recv_idle, DAT_BOOLEAN *req_idle)
{
	check_ok(dat_ep_get_status(ep, st, recv_idle, req_idle));
}

/* "The ep_state parameter returns the value of the current state of the
 * Endpoint ep_handle", through unconnected, reserved, passive pending,
 * active pending, connected and disconnected. */
static void success_states(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_EP_STATE st;
	status(x.a.ep, &st, NULL, NULL);
	assert_int_equal(st, DAT_EP_STATE_UNCONNECTED);
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(x.p.ia, 0x57A7E, x.p.ep, x.p.cr, &rsp));
	status(x.p.ep, &st, NULL, NULL);
	assert_int_equal(st, DAT_EP_STATE_RESERVED);
	check_ok(connect_ep(x.a.ep, 0x57A7E, CONN_TMO, NULL));
	status(x.a.ep, &st, NULL, NULL);
	assert_int_equal(st, DAT_EP_STATE_ACTIVE_CONNECTION_PENDING);
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	status(x.p.ep, &st, NULL, NULL);
	assert_int_equal(st, DAT_EP_STATE_PASSIVE_CONNECTION_PENDING);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, DAT_HANDLE_NULL, 0, NULL));
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	expect_ev(x.p.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	status(x.a.ep, &st, NULL, NULL);
	assert_int_equal(st, DAT_EP_STATE_CONNECTED);
	status(x.p.ep, &st, NULL, NULL);
	assert_int_equal(st, DAT_EP_STATE_CONNECTED);
	pair_disconnect(&x);
	status(x.a.ep, &st, NULL, NULL);
	assert_int_equal(st, DAT_EP_STATE_DISCONNECTED);
	pair_close(&x);
}

/* "A recv_idle value of DAT_TRUE specifies that there are no outstanding or
 * in-progress Receive DTOs at the Endpoint, and DAT_FALSE otherwise." */
static void recv_idle(void **state)
{
	(void)state;
	struct pair x;
	struct mem mp, ma;
	pair_up(&x, NULL);
	mem_reg(&mp, x.p.ia, x.p.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&ma, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_EP_STATE st;
	DAT_BOOLEAN ri = DAT_FALSE, qi = DAT_FALSE;
	status(x.p.ep, &st, &ri, &qi);
	assert_int_equal(ri, DAT_TRUE);
	assert_int_equal(qi, DAT_TRUE);
	DAT_LMR_TRIPLET rp = iov_at(&mp, 0, 64), sa = iov_at(&ma, 0, 8);
	check_ok(dat_ep_post_recv(x.p.ep, 1, &rp, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	status(x.p.ep, &st, &ri, &qi);
	assert_int_equal(ri, DAT_FALSE);
	assert_int_equal(qi, DAT_TRUE);
	check_ok(dat_ep_post_send(x.a.ep, 1, &sa, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(x.p.recv, x.p.ep, 1, DAT_DTO_SUCCESS);
	status(x.p.ep, &st, &ri, &qi);
	assert_int_equal(ri, DAT_TRUE);
	mem_free(&mp, 0);
	mem_free(&ma, 0);
	pair_close(&x);
}

/* "A request_idle value of DAT_TRUE specifies that there are no
 * outstanding or in-progress Send, RDMA Read, and RDMA Write DTOs, and RMR
 * Binds at the Endpoint, and DAT_FALSE otherwise." A large send stays
 * outstanding until the peer takes it. */
static void request_idle(void **state)
{
	(void)state;
	struct pair x;
	struct mem mp, ma;
	pair_up(&x, NULL);
	mem_reg(&mp, x.p.ia, x.p.pz, BIG, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&ma, x.a.ia, x.a.pz, BIG, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET rp = iov_at(&mp, 0, BIG), sa = iov_at(&ma, 0, BIG);
	DAT_EP_STATE st;
	DAT_BOOLEAN ri, qi = DAT_FALSE;
	status(x.a.ep, &st, &ri, &qi);
	assert_int_equal(qi, DAT_TRUE);
	check_ok(dat_ep_post_send(x.a.ep, 1, &sa, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	status(x.a.ep, &st, &ri, &qi);
	assert_int_equal(qi, DAT_FALSE);
	check_ok(dat_ep_post_recv(x.p.ep, 1, &rp, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(x.p.recv, x.p.ep, 2, DAT_DTO_SUCCESS);
	expect_dto(x.a.req, x.a.ep, 1, DAT_DTO_SUCCESS);
	status(x.a.ep, &st, &ri, &qi);
	assert_int_equal(qi, DAT_TRUE);
	mem_free(&mp, 0);
	mem_free(&ma, 0);
	pair_close(&x);
}

/* "The ep_handle parameter is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_EP_STATE st;
	check_ret(dat_ep_get_status(e.pz, &st, NULL, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_get_status(DAT_HANDLE_NULL, &st, NULL, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_get_status(dead_ep(), &st, NULL, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	end_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_states),
		cmocka_unit_test(recv_idle),
		cmocka_unit_test(request_idle),
		cmocka_unit_test(invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_ep_get_status", tests, NULL, NULL);
}
