/* dat_ep_create_with_srq(3DAT): return values and the SRQ sentences. */
#include "srq.h"

/* DAT_SUCCESS. "The Endpoint is created in the Unconnected state." "Shared
 * Receive Queue srq_handle specifies where the EP will dequeue Recv DTO
 * buffers." The query names the SRQ and the EVDs, and "Created Endpoint
 * has the exact Consumer requested values for max_recv_dtos,
 * max_message_size, max_rdma_size, max_ rdma_read_in, and
 * max_rdma_read_out." */
static void dat_ep_create_with_srq__success(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_SRQ_HANDLE q = srq_make(&s, 8, 0);
	DAT_EP_ATTR a = s.attr;
	a.max_recv_dtos = 3;
	a.max_message_size = 4096;
	a.max_rdma_size = 8192;
	a.max_rdma_read_in = 1;
	a.max_rdma_read_out = 2;
	DAT_EP_HANDLE ep = DAT_HANDLE_NULL;
	DAT_EP_PARAM p;
	check_ok(dat_ep_create_with_srq(s.ia, s.pz, s.dto, s.dto, s.conn, q, &a, &ep));
	assert_non_null(ep);
	check_ok(dat_ep_query(ep, DAT_EP_FIELD_ALL, &p));
	assert_int_equal(p.ep_state, DAT_EP_STATE_UNCONNECTED);
	assert_ptr_equal(p.srq_handle, q);
	assert_ptr_equal(p.pz_handle, s.pz);
	assert_ptr_equal(p.recv_evd_handle, s.dto);
	assert_ptr_equal(p.connect_evd_handle, s.conn);
	assert_int_equal(p.ep_attr.max_recv_dtos, 3);
	assert_int_equal(p.ep_attr.max_message_size, 4096);
	assert_int_equal(p.ep_attr.max_rdma_size, 8192);
	assert_int_equal(p.ep_attr.max_rdma_read_in, 1);
	assert_int_equal(p.ep_attr.max_rdma_read_out, 2);
	assert_int_equal(p.ep_attr.srq_soft_hw, DAT_HW_DEFAULT);
	/* A plain EP names no SRQ. */
	DAT_EP_HANDLE plain = ep_make(&s, NULL);
	check_ok(dat_ep_query(plain, DAT_EP_FIELD_SRQ_HANDLE, &p));
	assert_null(p.srq_handle);
	side_close(&s);
}

/* "Receive buffers cannot be posted to the created Endpoint. Receive
 * buffers must be posted to the SRQ to be used for the created Endpoint."
 * The EP's own post fails (DAT_INVALID_STATE: the EP has no receive
 * queue); the SRQ's buffers serve it. */
static void dat_ep_create_with_srq__no_ep_receives(void **state)
{
	(void)state;
	struct side s, c;
	side_open(&s);
	side_open(&c);
	DAT_SRQ_HANDLE q = srq_make(&s, 8, 0);
	DAT_EP_HANDLE sep = ep_make(&s, q), cep = ep_make(&c, NULL);
	DAT_LMR_TRIPLET t = rslot(&s, 0, SLOT);
	DAT_DTO_COOKIE ck = {.as_64 = 1};
	check_type(dat_ep_post_recv(sep, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_STATE);
	connect_eps(&c, cep, &s, sep);
	check_type(dat_ep_post_recv(sep, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_STATE);
	srq_post(&s, q, 4);
	send_tagged(&c, cep, 2, 1, 0, 16);
	DAT_EVENT ev = expect_dto(s.dto);
	assert_int_equal(ev.event_data.dto_completion_event_data.user_cookie.as_64, 4);
	side_close(&c);
	side_close(&s);
}

/* "The created EP can be reset. The relationship between SRQ and EP is not
 * effected by dat_ep_reset(3DAT)." Connect, disconnect, reset, reconnect:
 * the EP still names and uses the SRQ. "SRQ can not be disassociated or
 * replaced from created EP. The only way to disassociate SRQ from EP is to
 * destroy EP." dat_ep_modify cannot change srq_handle. */
static void dat_ep_create_with_srq__reset_keeps_srq(void **state)
{
	(void)state;
	struct side s, c;
	side_open(&s);
	side_open(&c);
	DAT_SRQ_HANDLE q = srq_make(&s, 8, 0), q2 = srq_make(&s, 8, 0);
	DAT_EP_HANDLE sep = ep_make(&s, q), cep = ep_make(&c, NULL);
	DAT_EP_PARAM p;
	connect_eps(&c, cep, &s, sep);
	check_ok(dat_ep_disconnect(cep, DAT_CLOSE_ABRUPT_FLAG));
	assert_int_equal(wait_ev(s.conn).event_number, DAT_CONNECTION_EVENT_DISCONNECTED);
	assert_int_equal(wait_ev(c.conn).event_number, DAT_CONNECTION_EVENT_DISCONNECTED);
	check_ok(dat_ep_reset(sep));
	check_ok(dat_ep_reset(cep));
	check_ok(dat_ep_query(sep, DAT_EP_FIELD_SRQ_HANDLE | DAT_EP_FIELD_EP_STATE, &p));
	assert_ptr_equal(p.srq_handle, q);
	assert_int_equal(p.ep_state, DAT_EP_STATE_UNCONNECTED);
	p.srq_handle = q2;
	check_type(dat_ep_modify(sep, DAT_EP_FIELD_SRQ_HANDLE, &p), DAT_INVALID_PARAMETER);
	connect_eps(&c, cep, &s, sep);
	srq_post(&s, q, 6);
	send_tagged(&c, cep, 3, 1, 0, 16);
	assert_int_equal(expect_dto(s.dto).event_data.dto_completion_event_data.user_cookie.as_64, 6);
	check_type(dat_srq_free(q), DAT_INVALID_STATE);
	check_ok(dat_ep_free(sep));
	check_ok(dat_srq_free(q));
	side_close(&c);
	side_close(&s);
}

/* DAT_INSUFFICIENT_RESOURCES "The operation failed due to resource
 * limitations.": more EPs than the IA's max_eps (max_ep_per_srq is the
 * same number). */
static void dat_ep_create_with_srq__insufficient_resources(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_IA_ATTR ia;
	check_ok(dat_ia_query(s.ia, NULL, DAT_IA_ALL, &ia, 0, NULL));
	assert_true(ia.max_ep_per_srq >= ia.max_eps);
	skip_unless_exhaustible("max_eps", ia.max_eps);
	DAT_SRQ_HANDLE q = srq_make(&s, 8, 0);
	DAT_EP_ATTR a = s.attr;
	a.max_request_dtos = 1;
	DAT_EP_HANDLE ep;
	DAT_COUNT made = 0;
	DAT_RETURN r;
	while ((r = dat_ep_create_with_srq(s.ia, s.pz, s.dto, s.dto, s.conn, q, &a, &ep)) == DAT_SUCCESS)
		made++;
	check_ret(r, DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
	assert_int_equal(made, ia.max_eps);
	side_close(&s);
}

/* DAT_INVALID_HANDLE "Invalid DAT handle.": each handle argument, NULL,
 * freed, wrong family, or of another IA. */
static void dat_ep_create_with_srq__invalid_handle(void **state)
{
	(void)state;
	struct side s, o;
	side_open(&s);
	side_open(&o);
	DAT_SRQ_HANDLE q = srq_make(&s, 8, 0), gone = srq_make(&s, 8, 0), foreign = srq_make(&o, 8, 0);
	check_ok(dat_srq_free(gone));
	DAT_EP_HANDLE ep;
	DAT_EP_ATTR *a = &s.attr;
	check_ret(dat_ep_create_with_srq(DAT_HANDLE_NULL, s.pz, s.dto, s.dto, s.conn, q, a, &ep), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_IA);
	check_ret(dat_ep_create_with_srq(s.ia, freed_pz(&s), s.dto, s.dto, s.conn, q, a, &ep), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_PZ);
	check_ret(dat_ep_create_with_srq(s.ia, s.pz, s.cr, s.dto, s.conn, q, a, &ep), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EVD_RECV);
	check_ret(dat_ep_create_with_srq(s.ia, s.pz, s.dto, (DAT_EVD_HANDLE)s.pz, s.conn, q, a, &ep),
		  DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_REQUEST);
	check_ret(dat_ep_create_with_srq(s.ia, s.pz, s.dto, s.dto, s.dto, q, a, &ep), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EVD_CONN);
	check_ret(dat_ep_create_with_srq(s.ia, s.pz, s.dto, s.dto, s.conn, DAT_HANDLE_NULL, a, &ep),
		  DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	check_ret(dat_ep_create_with_srq(s.ia, s.pz, s.dto, s.dto, s.conn, gone, a, &ep), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_SRQ);
	check_ret(dat_ep_create_with_srq(s.ia, s.pz, s.dto, s.dto, s.conn, (DAT_SRQ_HANDLE)s.lmr, a, &ep),
		  DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	check_ret(dat_ep_create_with_srq(s.ia, s.pz, s.dto, s.dto, s.conn, foreign, a, &ep), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_SRQ);
	side_close(&o);
	side_close(&s);
}

/* DAT_INVALID_PARAMETER "One of the requested EP parameters or attributes
 * was invalid or a combination of attributes or parameters is invalid."
 * ep_attributes "Cannot be NULL."; a NULL ep_handle; attributes beyond the
 * IA's limits; a negative srq_soft_hw that is not DAT_HW_DEFAULT. (The
 * page's example, a PZ that does not match the SRQ's, is allowed where the
 * IA reports srq_ep_pz_difference_supported and refused where it does not:
 * see dat_srq_create.) */
static void dat_ep_create_with_srq__invalid_parameter(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_IA_ATTR ia;
	check_ok(dat_ia_query(s.ia, NULL, DAT_IA_ALL, &ia, 0, NULL));
	DAT_SRQ_HANDLE q = srq_make(&s, 8, 0);
	DAT_EP_HANDLE ep;
	DAT_EP_ATTR a;
	check_ret(dat_ep_create_with_srq(s.ia, s.pz, s.dto, s.dto, s.conn, q, NULL, &ep), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG7);
	check_ret(dat_ep_create_with_srq(s.ia, s.pz, s.dto, s.dto, s.conn, q, &s.attr, NULL), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG8);
	a = s.attr;
	a.max_request_dtos = ia.max_dto_per_ep + 1;
	check_ret(dat_ep_create_with_srq(s.ia, s.pz, s.dto, s.dto, s.conn, q, &a, &ep), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG7);
	a = s.attr;
	a.max_rdma_read_iov = ia.max_iov_segments_per_rdma_read + 1;
	check_ret(dat_ep_create_with_srq(s.ia, s.pz, s.dto, s.dto, s.conn, q, &a, &ep), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG7);
	a = s.attr;
	a.srq_soft_hw = -5;
	check_ret(dat_ep_create_with_srq(s.ia, s.pz, s.dto, s.dto, s.conn, q, &a, &ep), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG7);
	side_close(&s);
}

/* The srq_soft_hw attribute is the EP's initial soft high watermark (the
 * one dat_ep_set_watermark replaces): an EP created with 1 reports the
 * second buffer it holds. */
static void dat_ep_create_with_srq__srq_soft_hw(void **state)
{
	(void)state;
	struct side s, c;
	side_open(&s);
	side_open(&c);
	DAT_SRQ_HANDLE q = srq_make(&s, 8, 0);
	DAT_EP_ATTR a = s.attr;
	DAT_EP_HANDLE sep, cep = ep_make(&c, NULL);
	a.srq_soft_hw = 1;
	check_ok(dat_ep_create_with_srq(s.ia, s.pz, s.dto, s.dto, s.conn, q, &a, &sep));
	connect_eps(&c, cep, &s, sep);
	for (int i = 0; i < 4; i++)
		srq_post(&s, q, i);
	send_tagged(&c, cep, 1, 1, 0, 16);
	srq_until_avail(q, 3);
	expect_none(s.async);
	send_tagged(&c, cep, 1, 1, 1, 16);
	srq_until_avail(q, 2);
	expect_watermark(&s, sep, DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT);
	side_close(&c);
	side_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dat_ep_create_with_srq__success),
		cmocka_unit_test(dat_ep_create_with_srq__no_ep_receives),
		cmocka_unit_test(dat_ep_create_with_srq__reset_keeps_srq),
		cmocka_unit_test(dat_ep_create_with_srq__insufficient_resources),
		cmocka_unit_test(dat_ep_create_with_srq__invalid_handle),
		cmocka_unit_test(dat_ep_create_with_srq__invalid_parameter),
		cmocka_unit_test(dat_ep_create_with_srq__srq_soft_hw),
	};
	return cmocka_run_group_tests_name("dat_ep_create_with_srq", tests, NULL, NULL);
}
