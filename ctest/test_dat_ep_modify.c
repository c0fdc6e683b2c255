/* dat_ep_modify(3DAT): which parameters change, and when. */
#include "conn.h"

static DAT_EP_PARAM query(DAT_EP_HANDLE ep)
{
	DAT_EP_PARAM p;
	check_ok(dat_ep_query(ep, DAT_EP_FIELD_ALL, &p));
	return p;
}

/* "The ep_param_mask parameter allows Consumers to specify which
 * parameters to modify. Providers modify values for ep_param_mask requested
 * parameters only." The other fields of the passed structure are garbage
 * and must be ignored. */
static void success_mask_only(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_EP_PARAM before = query(e.ep), in;
	memset(&in, 0xee, sizeof in);
	in.ep_attr.max_message_size = 1000;
	in.ep_attr.max_recv_dtos = 2;
	check_ok(dat_ep_modify(e.ep, DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE | DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS, &in));
	DAT_EP_PARAM after = query(e.ep);
	assert_int_equal(after.ep_attr.max_message_size, 1000);
	assert_int_equal(after.ep_attr.max_recv_dtos, 2);
	before.ep_attr.max_message_size = 1000;
	before.ep_attr.max_recv_dtos = 2;
	assert_memory_equal(&after.ep_attr, &before.ep_attr, sizeof before.ep_attr);
	assert_ptr_equal(after.pz_handle, e.pz);
	assert_int_equal(after.ep_state, DAT_EP_STATE_UNCONNECTED);
	end_close(&e);
}

/* Each modifiable attribute "Can be modified when in Unconnected,
 * Reserved, Passive Connection Pending, and Tentative Connection Pending
 * states": modify in Unconnected, Reserved and Passive Connection Pending;
 * the new values govern the connection. */
static void success_states(void **state)
{
	(void)state;
	struct pair x;
	struct mem ma, mp;
	pair_open(&x, NULL);
	DAT_EP_PARAM in = query(x.a.ep);
	in.ep_attr.max_message_size = 16;
	in.ep_attr.request_completion_flags = DAT_COMPLETION_UNSIGNALLED_FLAG;
	check_ok(dat_ep_modify(x.a.ep, DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE | DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS,
			       &in));
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(x.p.ia, 0x3051F1, x.p.ep, x.p.cr, &rsp));
	in = query(x.p.ep);
	in.ep_attr.max_request_dtos = 4;
	check_ok(dat_ep_modify(x.p.ep, DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS, &in)); /* reserved */
	check_ok(connect_ep(x.a.ep, 0x3051F1, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_PASSIVE_CONNECTION_PENDING);
	in.ep_attr.max_recv_iov = 2;
	check_ok(dat_ep_modify(x.p.ep, DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV, &in)); /* passive pending */
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, DAT_HANDLE_NULL, 0, NULL));
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	expect_ev(x.p.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	DAT_EP_PARAM p = query(x.p.ep);
	assert_int_equal(p.ep_attr.max_request_dtos, 4);
	assert_int_equal(p.ep_attr.max_recv_iov, 2);
	/* The modified receive IOV depth and completion flags apply. The
	 * modified maximum message size is the one the EP reports; as in the
	 * references it does not limit posts (issue 13: only the IA's maximum
	 * does, and programs leave it 0), so a 17-byte send goes through. */
	mem_reg(&ma, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&mp, x.p.ia, x.p.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET big = iov_at(&ma, 0, 17), ok = iov_at(&ma, 0, 16), rp = iov_at(&mp, 0, 64);
	DAT_LMR_TRIPLET three[3] = {rp, rp, rp};
	assert_int_equal(query(x.a.ep).ep_attr.max_message_size, 16);
	check_type(dat_ep_post_recv(x.p.ep, 3, three, cookie(2), DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_PARAMETER);
	check_ok(dat_ep_post_recv(x.p.ep, 1, &rp, cookie(3), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_recv(x.p.ep, 1, &rp, cookie(5), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(x.a.ep, 1, &big, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(x.a.ep, 1, &ok, cookie(4), DAT_COMPLETION_UNSIGNALLED_FLAG));
	assert_int_equal(expect_dto(x.p.recv, x.p.ep, 3, DAT_DTO_SUCCESS), 17);
	assert_int_equal(expect_dto(x.p.recv, x.p.ep, 5, DAT_DTO_SUCCESS), 16);
	mem_free(&ma, 0);
	mem_free(&mp, 0);
	pair_close(&x);
}

/* "In DTO Event Dispatcher", "Out DTO Event Dispatcher", "Connection Event
 * Dispatcher": "Can be modified when in Unconnected, Reserved, Passive
 * Connection Pending, and Tentative Connection Pending states." An EP made
 * with no EVDs ("not interested in connection events for now") gets them
 * later; events then go to the new EVDs, and the old ones are free. */
static void success_evds(void **state)
{
	(void)state;
	struct pair x;
	struct mem ma, mp;
	pair_open(&x, NULL);
	DAT_EVD_HANDLE old_conn = x.a.conn;
	check_ok(dat_ep_free(x.a.ep));
	check_ok(dat_ep_create(x.a.ia, x.a.pz, DAT_HANDLE_NULL, x.a.req, old_conn, NULL, &x.a.ep));
	DAT_EVD_HANDLE recv2 = make_evd(x.a.ia, DAT_EVD_DTO_FLAG), conn2 = make_evd(x.a.ia, DAT_EVD_CONNECTION_FLAG);
	DAT_EP_PARAM in;
	memset(&in, 0, sizeof in);
	in.recv_evd_handle = recv2;
	in.connect_evd_handle = conn2;
	check_ok(dat_ep_modify(x.a.ep, DAT_EP_FIELD_RECV_EVD_HANDLE | DAT_EP_FIELD_CONNECT_EVD_HANDLE, &in));
	DAT_EP_PARAM p = query(x.a.ep);
	assert_ptr_equal(p.recv_evd_handle, recv2);
	assert_ptr_equal(p.request_evd_handle, x.a.req);
	assert_ptr_equal(p.connect_evd_handle, conn2);
	check_ok(dat_evd_free(old_conn)); /* no longer used */
	check_type(dat_evd_free(conn2), DAT_INVALID_STATE);
	x.a.conn = conn2;
	x.a.recv = recv2;
	pair_connect(&x);
	mem_reg(&ma, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&mp, x.p.ia, x.p.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET r = iov_at(&ma, 0, 64), s = iov_at(&mp, 0, 8);
	check_ok(dat_ep_post_recv(x.a.ep, 1, &r, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(x.p.ep, 1, &s, cookie(2), DAT_COMPLETION_SUPPRESS_FLAG));
	expect_dto(recv2, x.a.ep, 1, DAT_DTO_SUCCESS);
	mem_free(&ma, 0);
	mem_free(&mp, 0);
	pair_close(&x);
}

/* "Protection Zone ... Can be modified when in Quiescent, Unconnected, and
 * Tentative Connection Pending states." After the change the EP uses the
 * new PZ's memory and refuses the old one's. */
static void success_pz(void **state)
{
	(void)state;
	struct pair x;
	struct mem m1, m2, mp;
	pair_open(&x, NULL);
	DAT_PZ_HANDLE pz2;
	check_ok(dat_pz_create(x.a.ia, &pz2));
	mem_reg(&m1, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&m2, x.a.ia, pz2, 64, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&mp, x.p.ia, x.p.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_EP_PARAM in;
	memset(&in, 0, sizeof in);
	in.pz_handle = pz2;
	check_ok(dat_ep_modify(x.a.ep, DAT_EP_FIELD_PZ_HANDLE, &in));
	assert_ptr_equal(query(x.a.ep).pz_handle, pz2);
	/* The EP no longer holds its old PZ. */
	DAT_PZ_HANDLE pz3;
	DAT_EP_HANDLE ep3;
	check_ok(dat_pz_create(x.a.ia, &pz3));
	check_ok(dat_ep_create(x.a.ia, pz3, x.a.recv, x.a.req, x.a.conn, NULL, &ep3));
	check_type(dat_pz_free(pz3), DAT_INVALID_STATE);
	check_ok(dat_ep_modify(ep3, DAT_EP_FIELD_PZ_HANDLE, &in));
	check_ok(dat_pz_free(pz3));
	pair_connect(&x);
	DAT_LMR_TRIPLET s1 = iov_at(&m1, 0, 8), s2 = iov_at(&m2, 0, 8), r = iov_at(&mp, 0, 64);
	memcpy(m2.buf, "pz2", 4);
	check_type(dat_ep_post_send(x.a.ep, 1, &s1, cookie(1), DAT_COMPLETION_DEFAULT_FLAG), DAT_PROTECTION_VIOLATION);
	check_ok(dat_ep_post_recv(x.p.ep, 1, &r, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(x.a.ep, 1, &s2, cookie(3), DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(x.p.recv, x.p.ep, 2, DAT_DTO_SUCCESS);
	assert_string_equal((char *)mp.buf, "pz2");
	mem_free(&m1, 0);
	mem_free(&m2, 0);
	mem_free(&mp, 0);
	pair_close(&x);
}

/* "Maximum Request DTO specifies the maximum number of outstanding
 * Consumer-submitted send and RDMA DTOs and RMR Binds that a Consumer
 * expects at any time at the Endpoint": raised or lowered by
 * dat_ep_modify, the new value is the limit. */
static void success_queue_sizes(void **state)
{
	(void)state;
	struct pair x;
	struct mem m;
	DAT_EP_ATTR a = provider_defaults();
	a.max_request_dtos = 2;
	pair_open(&x, &a);
	DAT_EP_PARAM in = query(x.a.ep);
	in.ep_attr.max_request_dtos = 5;
	check_ok(dat_ep_modify(x.a.ep, DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS, &in));
	pair_connect(&x);
	mem_reg(&m, x.a.ia, x.a.pz, 64 * 1024, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET big = iov_at(&m, 0, 64 * 1024); /* waits for the peer */
	for (int i = 0; i < 5; i++)
		check_ok(dat_ep_post_send(x.a.ep, 1, &big, cookie(i), DAT_COMPLETION_DEFAULT_FLAG));
	check_type(dat_ep_post_send(x.a.ep, 1, &big, cookie(5), DAT_COMPLETION_DEFAULT_FLAG),
		   DAT_INSUFFICIENT_RESOURCES);
	/* Lowered below what is posted: receives the EP holds stay within it. */
	DAT_EP_HANDLE ep;
	check_ok(dat_ep_create(x.a.ia, x.a.pz, x.a.recv, x.a.req, x.a.conn, NULL, &ep));
	DAT_LMR_TRIPLET r = iov_at(&m, 0, 64);
	for (int i = 0; i < 3; i++)
		check_ok(dat_ep_post_recv(ep, 1, &r, cookie(i), DAT_COMPLETION_DEFAULT_FLAG));
	in = query(ep);
	in.ep_attr.max_recv_dtos = 2;
	check_type(dat_ep_modify(ep, DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS, &in), DAT_INVALID_PARAMETER);
	in.ep_attr.max_recv_dtos = 3;
	check_ok(dat_ep_modify(ep, DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS, &in));
	check_type(dat_ep_post_recv(ep, 1, &r, cookie(3), DAT_COMPLETION_DEFAULT_FLAG), DAT_INSUFFICIENT_RESOURCES);
	mem_free(&m, 0);
	pair_close(&x);
}

/* "The ep_param_mask parameter is invalid, or one of the requested
 * Endpoint parameters or attributes was invalid, not supported, or cannot
 * be modified." The IA, state, addresses and port qualifiers "Cannot be
 * modified." */
static void invalid_parameter(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_EP_PARAM in = query(e.ep);
	DAT_IA_ATTR ia = ia_attr(e.ia);
	check_ret(dat_ep_modify(e.ep, DAT_EP_FIELD_ALL + 1, &in), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	DAT_EP_PARAM_MASK fixed[] = {DAT_EP_FIELD_IA_HANDLE, DAT_EP_FIELD_EP_STATE, DAT_EP_FIELD_LOCAL_IA_ADDRESS_PTR,
				     DAT_EP_FIELD_LOCAL_PORT_QUAL, DAT_EP_FIELD_REMOTE_IA_ADDRESS_PTR,
				     DAT_EP_FIELD_REMOTE_PORT_QUAL};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		check_type(dat_ep_modify(e.ep, fixed[i], &in), DAT_INVALID_PARAMETER);
	in.ep_attr.max_request_dtos = ia.max_dto_per_ep + 1;
	check_ret(dat_ep_modify(e.ep, DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS, &in), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	in = query(e.ep);
	in.ep_attr.recv_completion_flags = 0x400;
	check_ret(dat_ep_modify(e.ep, DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS, &in), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG3);
	in = query(e.ep);
	in.ep_attr.qos = DAT_QOS_PREMIUM; /* not supported */
	check_type(dat_ep_modify(e.ep, DAT_EP_FIELD_EP_ATTR_QOS, &in), DAT_INVALID_PARAMETER);
	check_ret(dat_ep_modify(e.ep, DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE, NULL), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG3);
	/* Handles that are not a PZ, or not an EVD of the right kind. */
	in = query(e.ep);
	in.pz_handle = e.recv;
	check_type(dat_ep_modify(e.ep, DAT_EP_FIELD_PZ_HANDLE, &in), DAT_INVALID_PARAMETER);
	in = query(e.ep);
	in.recv_evd_handle = e.cr;
	check_type(dat_ep_modify(e.ep, DAT_EP_FIELD_RECV_EVD_HANDLE, &in), DAT_INVALID_PARAMETER);
	in = query(e.ep);
	in.connect_evd_handle = e.req;
	check_type(dat_ep_modify(e.ep, DAT_EP_FIELD_CONNECT_EVD_HANDLE, &in), DAT_INVALID_PARAMETER);
	in = query(e.ep);
	check_type(dat_ep_modify(e.ep, DAT_EP_FIELD_SRQ_HANDLE, &in), DAT_INVALID_PARAMETER);
	assert_ptr_equal(query(e.ep).recv_evd_handle, e.recv);
	assert_ptr_equal(query(e.ep).pz_handle, e.pz);
	/* Nothing changed. */
	DAT_EP_PARAM p = query(e.ep);
	assert_int_equal(p.ep_attr.qos, DAT_QOS_BEST_EFFORT);
	assert_true(p.ep_attr.max_request_dtos <= ia.max_dto_per_ep);
	end_close(&e);
}

/* "The Endpoint was not in the state that allows one of the parameters or
 * attributes to be modified": attributes "can be changed only prior to a
 * request for a connection for an Active side or accepting a Connection
 * Request for a Passive side"; Recv Completion Flags "before posting of
 * any Recvs". */
static void invalid_state(void **state)
{
	(void)state;
	struct pair x;
	struct mem m;
	pair_open(&x, NULL);
	DAT_EP_PARAM in = query(x.a.ep);
	in.ep_attr.max_message_size = 100;
	check_ok(connect_ep(x.a.ep, x.q, CONN_TMO, NULL));
	check_ret(dat_ep_modify(x.a.ep, DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE, &in), DAT_INVALID_STATE,
		  DAT_INVALID_STATE_EP_ACTCONNPENDING);
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, x.p.ep, 0, NULL));
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	expect_ev(x.p.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	check_ret(dat_ep_modify(x.a.ep, DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE, &in), DAT_INVALID_STATE,
		  DAT_INVALID_STATE_EP_CONNECTED);
	check_ret(dat_ep_modify(x.p.ep, DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE, &in), DAT_INVALID_STATE,
		  DAT_INVALID_STATE_EP_CONNECTED);
	assert_int_not_equal(query(x.a.ep).ep_attr.max_message_size, 100);
	/* EVDs are fixed once connected; the PZ once not quiescent. */
	in = query(x.a.ep);
	in.recv_evd_handle = x.a.req;
	check_ret(dat_ep_modify(x.a.ep, DAT_EP_FIELD_RECV_EVD_HANDLE, &in), DAT_INVALID_STATE,
		  DAT_INVALID_STATE_EP_CONNECTED);
	DAT_EP_HANDLE rep;
	DAT_RSP_HANDLE rsp;
	DAT_PZ_HANDLE pz2;
	check_ok(dat_pz_create(x.p.ia, &pz2));
	check_ok(dat_ep_create(x.p.ia, x.p.pz, x.p.recv, x.p.req, x.p.conn, NULL, &rep));
	check_ok(dat_rsp_create(x.p.ia, 0x3051F2, rep, x.p.cr, &rsp));
	in = query(rep);
	in.pz_handle = pz2;
	check_ret(dat_ep_modify(rep, DAT_EP_FIELD_PZ_HANDLE, &in), DAT_INVALID_STATE, DAT_INVALID_STATE_EP_RESERVED);
	in.recv_evd_handle = x.p.req;
	check_ok(dat_ep_modify(rep, DAT_EP_FIELD_RECV_EVD_HANDLE, &in)); /* EVDs may change while reserved */
	/* An unconnected EP with a posted receive keeps its recv flags. */
	DAT_EP_HANDLE ep;
	check_ok(dat_ep_create(x.a.ia, x.a.pz, x.a.recv, x.a.req, x.a.conn, NULL, &ep));
	mem_reg(&m, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET iov = iov_at(&m, 0, 64);
	check_ok(dat_ep_post_recv(ep, 1, &iov, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	in = query(ep);
	in.ep_attr.recv_completion_flags = DAT_COMPLETION_SOLICITED_WAIT_FLAG;
	check_type(dat_ep_modify(ep, DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS, &in), DAT_INVALID_STATE);
	mem_free(&m, 0);
	pair_close(&x);
}

/* "The ep_handle parameter is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_EP_PARAM in = query(e.ep);
	check_ret(dat_ep_modify(e.pz, DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE, &in), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_modify(DAT_HANDLE_NULL, DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE, &in), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_modify(dead_ep(), DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE, &in), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EP);
	end_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_mask_only),
		cmocka_unit_test(success_states),
		cmocka_unit_test(success_evds),
		cmocka_unit_test(success_pz),
		cmocka_unit_test(success_queue_sizes),
		cmocka_unit_test(invalid_parameter),
		cmocka_unit_test(invalid_state),
		cmocka_unit_test(invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_ep_modify", tests, NULL, NULL);
}
