/* dat_ep_query(3DAT): parameters of unconnected and connected EPs. */
#include "conn.h"
#include "rdma.h"

static struct sockaddr_in sin_of(DAT_IA_ADDRESS_PTR p)
{
	struct sockaddr_in sa;
	assert_non_null(p);
	memcpy(&sa, p, sizeof sa);
	assert_int_equal(sa.sin_family, AF_INET);
	return sa;
}

/* "The dat_ep_query() function provides the Consumer parameters, including
 * attributes and status, of the Endpoint." */
static void success_unconnected(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_EP_PARAM p;
	check_ok(dat_ep_query(e.ep, DAT_EP_FIELD_ALL, &p));
	assert_ptr_equal(p.ia_handle, e.ia);
	assert_int_equal(p.ep_state, DAT_EP_STATE_UNCONNECTED);
	assert_ptr_equal(p.pz_handle, e.pz);
	assert_ptr_equal(p.recv_evd_handle, e.recv);
	assert_ptr_equal(p.request_evd_handle, e.req);
	assert_ptr_equal(p.connect_evd_handle, e.conn);
	assert_null(p.srq_handle);
	/* The local address is the IA's. */
	DAT_IA_ATTR ia = ia_attr(e.ia);
	struct sockaddr_in l = sin_of(p.local_ia_address_ptr), i = sin_of(ia.ia_address_ptr);
	assert_int_equal(l.sin_addr.s_addr, i.sin_addr.s_addr);
	end_close(&e);
}

/* "Specifically, the values for remote_ia_address and remote_port_qual are
 * valid only for Endpoints in the ... DAT_EP_STATE_CONNECTED states. The
 * values of local_port_qual is valid only for Endpoints in the ...
 * DAT_EP_STATE_CONNECTED states". The active side's remote port is the
 * qualifier it connected to; the passive side's is the active EP's port. */
static void success_connected(void **state)
{
	(void)state;
	struct pair x;
	pair_up(&x, NULL);
	DAT_EP_PARAM a, p;
	check_ok(dat_ep_query(x.a.ep, DAT_EP_FIELD_ALL, &a));
	check_ok(dat_ep_query(x.p.ep, DAT_EP_FIELD_ALL, &p));
	assert_int_equal(a.ep_state, DAT_EP_STATE_CONNECTED);
	assert_int_equal(p.ep_state, DAT_EP_STATE_CONNECTED);
	/* The active side's peer is the address it connected to; the
	 * passive side's the requester's IA address. */
	assert_int_equal(sin_of(a.remote_ia_address_ptr).sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	assert_int_equal(sin_of(p.remote_ia_address_ptr).sin_addr.s_addr, conn_addr(x.a.ia));
	assert_int_equal(a.remote_port_qual, x.q);
	assert_int_not_equal(a.local_port_qual, 0);
	assert_int_equal(p.remote_port_qual, a.local_port_qual);
	pair_close(&x);
}

/* "The Provider returns values for ep_param_mask requested parameters." */
static void success_mask(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_EP_PARAM p;
	memset(&p, 0xff, sizeof p);
	check_ok(dat_ep_query(e.ep, DAT_EP_FIELD_EP_STATE | DAT_EP_FIELD_PZ_HANDLE, &p));
	assert_int_equal(p.ep_state, DAT_EP_STATE_UNCONNECTED);
	assert_ptr_equal(p.pz_handle, e.pz);
	check_ok(dat_ep_query(e.ep, DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS, &p));
	assert_int_equal(p.ep_attr.max_recv_dtos, ep_attr_of(&e).max_recv_dtos);
	end_close(&e);
}

/* "The ep_param_mask parameter is invalid." */
static void invalid_parameter(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_EP_PARAM p;
	check_ret(dat_ep_query(e.ep, DAT_EP_FIELD_ALL + 1, &p), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_ep_query(e.ep, ~(DAT_EP_PARAM_MASK)0, &p), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_ep_query(e.ep, DAT_EP_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	end_close(&e);
}

/* "The ep_handle parameter is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_EP_PARAM p;
	check_ret(dat_ep_query(e.recv, DAT_EP_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_query(DAT_HANDLE_NULL, DAT_EP_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_query(dead_ep(), DAT_EP_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	end_close(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_unconnected),
		cmocka_unit_test(success_connected),
		cmocka_unit_test(success_mask),
		cmocka_unit_test(invalid_parameter),
		cmocka_unit_test(invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_ep_query", tests, NULL, NULL);
}
