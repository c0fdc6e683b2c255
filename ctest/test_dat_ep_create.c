/* dat_ep_create(3DAT): return values and the behaviour of DESCRIPTION. */
#include "conn.h"

/* "The Endpoint is created in the Unconnected state." */
static void success_unconnected(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_HANDLE_TYPE t;
	check_ok(dat_get_handle_type(e.ep, &t));
	assert_int_equal(t, DAT_HANDLE_TYPE_EP);
	assert_int_equal(ep_state(e.ep), DAT_EP_STATE_UNCONNECTED);
	DAT_EP_PARAM p;
	check_ok(dat_ep_query(e.ep, DAT_EP_FIELD_ALL, &p));
	assert_ptr_equal(p.ia_handle, e.ia);
	assert_ptr_equal(p.pz_handle, e.pz);
	assert_ptr_equal(p.recv_evd_handle, e.recv);
	assert_ptr_equal(p.request_evd_handle, e.req);
	assert_ptr_equal(p.connect_evd_handle, e.conn);
	end_close(&e);
}

/* "If the Consumer specifies NULL, the Provider fills it with its default
 * Endpoint attributes." The defaults are usable values within the IA's
 * limits, so the EP can post and connect without dat_ep_modify. */
static void null_attributes_defaults(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_EP_ATTR a = ep_attr_of(&e);
	DAT_IA_ATTR ia = ia_attr(e.ia);
	assert_int_equal(a.service_type, DAT_SERVICE_TYPE_RC);
	assert_true(a.max_message_size > 0 && a.max_message_size <= ia.max_message_size);
	assert_true(a.max_rdma_size > 0 && a.max_rdma_size <= ia.max_rdma_size);
	assert_true(a.max_recv_dtos > 0 && a.max_recv_dtos <= ia.max_dto_per_ep);
	assert_true(a.max_request_dtos > 0 && a.max_request_dtos <= ia.max_dto_per_ep);
	assert_true(a.max_recv_iov > 0 && a.max_recv_iov <= ia.max_iov_segments_per_dto);
	assert_true(a.max_request_iov > 0 && a.max_request_iov <= ia.max_iov_segments_per_dto);
	assert_true(a.max_rdma_read_in >= 0 && a.max_rdma_read_in <= ia.max_rdma_read_per_ep_in);
	assert_true(a.max_rdma_read_out >= 0 && a.max_rdma_read_out <= ia.max_rdma_read_per_ep_out);
	end_close(&e);
}

/* "The ep_attributes parameter specifies the initial attributes of the
 * created Endpoint." */
static void attributes_honoured(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_EP_ATTR a = ep_attr_of(&e);
	a.max_message_size = 4096;
	a.max_rdma_size = 8192;
	a.max_recv_dtos = 3;
	a.max_request_dtos = 5;
	a.max_recv_iov = 2;
	a.max_request_iov = 4;
	a.max_rdma_read_in = 1;
	a.max_rdma_read_out = 2;
	a.request_completion_flags = DAT_COMPLETION_UNSIGNALLED_FLAG;
	DAT_EP_HANDLE ep;
	check_ok(dat_ep_create(e.ia, e.pz, e.recv, e.req, e.conn, &a, &ep));
	DAT_EP_PARAM p;
	check_ok(dat_ep_query(ep, DAT_EP_FIELD_ALL, &p));
	assert_int_equal(p.ep_attr.max_message_size, 4096);
	assert_int_equal(p.ep_attr.max_rdma_size, 8192);
	assert_int_equal(p.ep_attr.max_recv_dtos, 3);
	assert_int_equal(p.ep_attr.max_request_dtos, 5);
	assert_int_equal(p.ep_attr.max_recv_iov, 2);
	assert_int_equal(p.ep_attr.max_request_iov, 4);
	assert_int_equal(p.ep_attr.max_rdma_read_in, 1);
	assert_int_equal(p.ep_attr.max_rdma_read_out, 2);
	assert_int_equal(p.ep_attr.request_completion_flags, DAT_COMPLETION_UNSIGNALLED_FLAG);
	check_ok(dat_ep_free(ep));
	end_close(&e);
}

/* The IA's EP limit (max_eps) is reachable: one EP more is refused. */
static void insufficient_resources(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_IA_ATTR ia = ia_attr(e.ia);
	skip_unless_exhaustible("max_eps", ia.max_eps);
	DAT_EP_ATTR a = ep_attr_of(&e);
	check_ok(dat_ep_free(e.ep));
	a.max_recv_dtos = a.max_request_dtos = 1; /* keep each EP small */
	DAT_EP_HANDLE *eps = calloc((size_t)ia.max_eps, sizeof *eps);
	assert_non_null(eps);
	for (DAT_COUNT i = 0; i < ia.max_eps; i++)
		check_ok(dat_ep_create(e.ia, e.pz, e.recv, e.req, e.conn, &a, &eps[i]));
	DAT_EP_HANDLE extra;
	check_type(dat_ep_create(e.ia, e.pz, e.recv, e.req, e.conn, &a, &extra), DAT_INSUFFICIENT_RESOURCES);
	/* Freeing one makes room again. */
	check_ok(dat_ep_free(eps[0]));
	check_ok(dat_ep_create(e.ia, e.pz, e.recv, e.req, e.conn, &a, &extra));
	free(eps);
	end_close(&e);
}

/* "Invalid DAT handle": the IA, the PZ and each EVD are checked, an EVD
 * of the wrong kind included. */
static void invalid_handle(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_EP_HANDLE ep;
	check_ret(dat_ep_create(e.pz, e.pz, e.recv, e.req, e.conn, NULL, &ep), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	check_ret(dat_ep_create(e.ia, e.ia, e.recv, e.req, e.conn, NULL, &ep), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	check_ret(dat_ep_create(e.ia, e.pz, e.cr, e.req, e.conn, NULL, &ep), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EVD_RECV);
	check_ret(dat_ep_create(e.ia, e.pz, e.recv, e.conn, e.conn, NULL, &ep), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EVD_REQUEST);
	check_ret(dat_ep_create(e.ia, e.pz, e.recv, e.req, e.req, NULL, &ep), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EVD_CONN);
	/* A PZ of another IA is not this IA's. */
	struct end o;
	end_open(&o, NULL);
	check_type(dat_ep_create(e.ia, o.pz, e.recv, e.req, e.conn, NULL, &ep), DAT_INVALID_HANDLE);
	end_close(&o);
	end_close(&e);
}

/* "One of the requested EP parameters or attributes was invalid". */
static void invalid_parameter(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_IA_ATTR ia = ia_attr(e.ia);
	DAT_EP_ATTR a = ep_attr_of(&e);
	DAT_EP_HANDLE ep;
	a.max_request_dtos = ia.max_dto_per_ep + 1;
	check_ret(dat_ep_create(e.ia, e.pz, e.recv, e.req, e.conn, &a, &ep), DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	a = ep_attr_of(&e);
	a.max_request_iov = ia.max_iov_segments_per_dto + 1;
	check_ret(dat_ep_create(e.ia, e.pz, e.recv, e.req, e.conn, &a, &ep), DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	a = ep_attr_of(&e);
	a.max_message_size = ia.max_message_size + 1;
	check_ret(dat_ep_create(e.ia, e.pz, e.recv, e.req, e.conn, &a, &ep), DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	a = ep_attr_of(&e);
	a.request_completion_flags = 0x100;
	check_ret(dat_ep_create(e.ia, e.pz, e.recv, e.req, e.conn, &a, &ep), DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	check_ret(dat_ep_create(e.ia, e.pz, e.recv, e.req, e.conn, NULL, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG7);
	end_close(&e);
}

/* "The requested Provider Model was not supported": the provider supports
 * only DAT_QOS_BEST_EFFORT (its dat_qos_supported attribute). */
static void model_not_supported(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_PROVIDER_ATTR pa;
	DAT_EVD_HANDLE async;
	check_ok(dat_ia_query(e.ia, &async, 0, NULL, DAT_PROVIDER_FIELD_ALL, &pa));
	assert_int_equal(pa.dat_qos_supported, DAT_QOS_BEST_EFFORT);
	DAT_EP_ATTR a = ep_attr_of(&e);
	a.qos = DAT_QOS_PREMIUM;
	DAT_EP_HANDLE ep;
	check_type(dat_ep_create(e.ia, e.pz, e.recv, e.req, e.conn, &a, &ep), DAT_MODEL_NOT_SUPPORTED);
	end_close(&e);
}

/* "Completions of Receive DTOs are reported in recv_evd_handle Event
 * Dispatcher, and completions of Send, RDMA Read, and RDMA Write DTOs are
 * reported in request_evd_handle Event Dispatcher." */
static void completion_streams(void **state)
{
	(void)state;
	struct pair x;
	struct mem ma, mp;
	pair_up(&x, NULL);
	mem_reg(&ma, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&mp, x.p.ia, x.p.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET ia = iov_at(&ma, 0, 8), ip = iov_at(&mp, 0, 8);
	DAT_RMR_TRIPLET rp = rmr_at(&mp, 16, 8);
	check_ok(dat_ep_post_recv(x.p.ep, 1, &ip, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(x.a.ep, 1, &ia, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_rdma_write(x.a.ep, 1, &ia, cookie(3), &rp, DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_rdma_read(x.a.ep, 1, &ia, cookie(4), &rp, DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(x.p.recv, x.p.ep, 1, DAT_DTO_SUCCESS);
	expect_dto(x.a.req, x.a.ep, 2, DAT_DTO_SUCCESS);
	expect_dto(x.a.req, x.a.ep, 3, DAT_DTO_SUCCESS);
	expect_dto(x.a.req, x.a.ep, 4, DAT_DTO_SUCCESS);
	expect_empty(x.a.recv);
	expect_empty(x.a.conn);
	expect_empty(x.p.req);
	expect_empty(x.p.conn);
	mem_free(&ma, 0);
	mem_free(&mp, 0);
	pair_close(&x);
}

/* "All Connection events for the connected Endpoint are reported to the
 * Consumer through connect_evd_handle Event Dispatcher." */
static void connection_events(void **state)
{
	(void)state;
	struct pair x;
	pair_up(&x, NULL); /* established on both connect EVDs */
	pair_disconnect(&x);
	expect_empty(x.a.req);
	expect_empty(x.a.recv);
	expect_empty(x.p.req);
	expect_empty(x.p.recv);
	pair_close(&x);
}

/* "DAT_HANDLE_NULL specifies that the Consumer is not interested in events
 * for completions of receives" (and of requests, and connection events):
 * an EP with no EVDs is created and reports DAT_HANDLE_NULL for them. */
static void null_evds(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_EP_HANDLE ep;
	check_ok(dat_ep_create(e.ia, e.pz, DAT_HANDLE_NULL, DAT_HANDLE_NULL, DAT_HANDLE_NULL, NULL, &ep));
	DAT_EP_PARAM p;
	check_ok(dat_ep_query(ep, DAT_EP_FIELD_ALL, &p));
	assert_null(p.recv_evd_handle);
	assert_null(p.request_evd_handle);
	assert_null(p.connect_evd_handle);
	assert_int_equal(p.ep_state, DAT_EP_STATE_UNCONNECTED);
	check_ok(dat_ep_free(ep));
	end_close(&e);
}

/* "Only memory referred to by LMRs and RMRs that match the Endpoint
 * Protection Zone can be accessed by the Endpoint." */
static void protection_zone(void **state)
{
	(void)state;
	struct pair x;
	struct mem other;
	pair_up(&x, NULL);
	DAT_PZ_HANDLE pz2;
	check_ok(dat_pz_create(x.a.ia, &pz2));
	mem_reg(&other, x.a.ia, pz2, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET iov = iov_at(&other, 0, 8);
	check_type(dat_ep_post_send(x.a.ep, 1, &iov, cookie(1), DAT_COMPLETION_DEFAULT_FLAG), DAT_PROTECTION_VIOLATION);
	mem_free(&other, 0);
	pair_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_unconnected),
		cmocka_unit_test(null_attributes_defaults),
		cmocka_unit_test(attributes_honoured),
		cmocka_unit_test(insufficient_resources),
		cmocka_unit_test(invalid_handle),
		cmocka_unit_test(invalid_parameter),
		cmocka_unit_test(model_not_supported),
		cmocka_unit_test(completion_streams),
		cmocka_unit_test(connection_events),
		cmocka_unit_test(null_evds),
		cmocka_unit_test(protection_zone),
	};
	return cmocka_run_group_tests_name("dat_ep_create", tests, NULL, NULL);
}
