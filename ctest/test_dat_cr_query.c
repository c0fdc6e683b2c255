/* dat_cr_query(3DAT): what a connection request says about its sender. */
#include "conn.h"
#include "rdma.h"

/* USAGE: "The Consumer uses dat_cr_query() to get information about
 * requesting a remote Endpoint as well as a local Endpoint if it was
 * allocated by the Provider for the arrived Connection Request. ... For the
 * remote Endpoint, dat_cr_query() provides remote_ia_address and
 * remote_port_qual. It also provides remote peer private_data and its
 * size." A PSP request has no local EP. */
static void success_remote(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	check_ok(connect_ep(x.a.ep, x.q, CONN_TMO, "who-am-i"));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	DAT_CR_PARAM p;
	memset(&p, 0xee, sizeof p);
	check_ok(dat_cr_query(ev.event_data.cr_arrival_event_data.cr_handle, DAT_CR_FIELD_ALL, &p));
	struct sockaddr_in sa;
	assert_non_null(p.remote_ia_address_ptr);
	memcpy(&sa, p.remote_ia_address_ptr, sizeof sa);
	assert_int_equal(sa.sin_family, AF_INET);
	assert_int_equal(sa.sin_addr.s_addr, conn_addr(x.a.ia));
	DAT_EP_PARAM ap;
	check_ok(dat_ep_query(x.a.ep, DAT_EP_FIELD_ALL, &ap));
	assert_int_equal(p.remote_port_qual, ap.local_port_qual);
	assert_int_equal(p.private_data_size, 9);
	assert_string_equal((char *)p.private_data, "who-am-i");
	assert_null(p.local_ep_handle);
	pair_close(&x);
}

/* The request of a reserved service point names its EP. */
static void success_rsp_ep(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(x.p.ia, 0xC9A, x.p.ep, x.p.cr, &rsp));
	check_ok(connect_ep(x.a.ep, 0xC9A, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	DAT_CR_PARAM p;
	check_ok(dat_cr_query(ev.event_data.cr_arrival_event_data.cr_handle, DAT_CR_FIELD_LOCAL_EP_HANDLE, &p));
	assert_ptr_equal(p.local_ep_handle, x.p.ep);
	check_ok(dat_cr_query(ev.event_data.cr_arrival_event_data.cr_handle, DAT_CR_FIELD_PRIVATE_DATA_SIZE, &p));
	assert_int_equal(p.private_data_size, 0);
	pair_close(&x);
}

/* "The cr_handle handle is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_CR_PARAM p;
	check_ret(dat_cr_query(x.psp, DAT_CR_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	check_ret(dat_cr_query(DAT_HANDLE_NULL, DAT_CR_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	check_ok(connect_ep(x.a.ep, x.q, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_cr_reject(ev.event_data.cr_arrival_event_data.cr_handle));
	check_ret(dat_cr_query(ev.event_data.cr_arrival_event_data.cr_handle, DAT_CR_FIELD_ALL, &p), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_CR);
	pair_close(&x);
}

/* "The cr_param_mask parameter is invalid." */
static void invalid_parameter(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	check_ok(connect_ep(x.a.ep, x.q, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	DAT_CR_PARAM p;
	check_ret(dat_cr_query(cr, (DAT_CR_PARAM_MASK)0x20, &p), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_cr_query(cr, DAT_CR_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	pair_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_remote),
		cmocka_unit_test(success_rsp_ep),
		cmocka_unit_test(invalid_handle),
		cmocka_unit_test(invalid_parameter),
	};
	return cmocka_run_group_tests_name("dat_cr_query", tests, NULL, NULL);
}
