/* The connection model seen from C, two IAs in one process: EPs created
 * with NULL attributes (the defaults are visible and usable), dat_ep_query
 * addresses and port qualifiers on both sides, connections to 64-bit
 * qualifiers (25248, 0x50DE, 0xAFF5B1E+n) and to one from
 * dat_psp_create_any, dat_cr_query, dat_cr_handoff, dat_ep_dup_connect,
 * and a reserved service point (RSP). */
#define _GNU_SOURCE
#include "pattern.h"
#include "rdma.h"

struct side {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, evd, cr;
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep;
};

static struct waiter wt = {MODE_WAIT, DAT_HANDLE_NULL};

static void side_open(struct side *s)
{
	s->ia = open_ia(&s->async);
	check_ok(dat_evd_create(s->ia, 32, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &s->evd));
	check_ok(dat_evd_create(s->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &s->cr));
	check_ok(dat_pz_create(s->ia, &s->pz));
	check_ok(dat_ep_create(s->ia, s->pz, s->evd, s->evd, s->evd, NULL, &s->ep));
}

static void side_close(struct side *s)
{
	check_ok(dat_ia_close(s->ia, DAT_CLOSE_ABRUPT_FLAG));
}

static uint32_t sin_addr_of(DAT_IA_ADDRESS_PTR p)
{
	assert_non_null(p);
	assert_int_equal(p->sa_family, AF_INET);
	return ntohl(((struct sockaddr_in *)p)->sin_addr.s_addr);
}

static uint32_t ia_addr(DAT_IA_HANDLE ia)
{
	return ntohl(conn_addr(ia));
}

/* Accepts the next request on s's CR EVD with ep, checks the private data
 * and the qualifier it came in on, and waits for both sides. */
static void accept_next(struct side *s, DAT_EP_HANDLE ep, struct side *c, DAT_EP_HANDLE cep, DAT_CONN_QUAL q,
			const char *pd)
{
	DAT_EVENT ev = expect_event(&wt, s->cr, DAT_CONNECTION_REQUEST_EVENT, "request");
	assert_int_equal(ev.event_data.cr_arrival_event_data.conn_qual, q);
	assert_non_null(ev.event_data.cr_arrival_event_data.local_ia_address_ptr);
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	DAT_CR_PARAM p;
	check_ok(dat_cr_query(cr, DAT_CR_FIELD_ALL, &p));
	assert_int_equal(p.private_data_size, strlen(pd) + 1);
	assert_string_equal((char *)p.private_data, pd);
	assert_int_equal(sin_addr_of(p.remote_ia_address_ptr), ia_addr(c->ia));
	assert_null(p.local_ep_handle); /* a PSP's request carries no EP */
	check_ok(dat_cr_accept(cr, ep, 0, NULL));
	ev = expect_event(&wt, s->evd, DAT_CONNECTION_EVENT_ESTABLISHED, "accepted");
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, ep);
	assert_int_equal(ev.event_data.connect_event_data.private_data_size, 0);
	ev = expect_event(&wt, c->evd, DAT_CONNECTION_EVENT_ESTABLISHED, "connected");
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, cep);
}

static void disconnect_both(struct side *c, DAT_EP_HANDLE cep, struct side *s, DAT_EP_HANDLE sep)
{
	check_ok(dat_ep_disconnect(cep, DAT_CLOSE_ABRUPT_FLAG));
	DAT_EVENT ev = expect_event(&wt, c->evd, DAT_CONNECTION_EVENT_DISCONNECTED, "active disconnect");
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, cep);
	ev = expect_event(&wt, s->evd, DAT_CONNECTION_EVENT_DISCONNECTED, "passive disconnect");
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, sep);
	check_ok(dat_ep_reset(cep));
	check_ok(dat_ep_reset(sep));
}

static void test_null_attr_defaults(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_IA_ATTR a;
	check_ok(dat_ia_query(s.ia, NULL, DAT_IA_ALL, &a, 0, NULL));
	DAT_EP_PARAM p;
	check_ok(dat_ep_query(s.ep, DAT_EP_FIELD_ALL, &p));
	assert_ptr_equal(p.ia_handle, s.ia);
	assert_int_equal(p.ep_state, DAT_EP_STATE_UNCONNECTED);
	assert_ptr_equal(p.pz_handle, s.pz);
	assert_ptr_equal(p.recv_evd_handle, s.evd);
	assert_ptr_equal(p.request_evd_handle, s.evd);
	assert_ptr_equal(p.connect_evd_handle, s.evd);
	assert_null(p.srq_handle);
	/* Defaults a consumer can use: messages and RDMA of useful sizes,
	 * queues and IOVs of more than one entry, RDMA reads allowed. */
	DAT_EP_ATTR *e = &p.ep_attr;
	assert_int_equal(e->service_type, DAT_SERVICE_TYPE_RC);
	assert_true(e->max_message_size >= 65536 && e->max_message_size <= a.max_message_size);
	assert_true(e->max_rdma_size >= 65536 && e->max_rdma_size <= a.max_rdma_size);
	assert_true(e->max_recv_dtos >= 16 && e->max_recv_dtos <= a.max_dto_per_ep);
	assert_true(e->max_request_dtos >= 16 && e->max_request_dtos <= a.max_dto_per_ep);
	assert_true(e->max_recv_iov >= 4 && e->max_recv_iov <= a.max_iov_segments_per_dto);
	assert_true(e->max_request_iov >= 4 && e->max_request_iov <= a.max_iov_segments_per_dto);
	assert_true(e->max_rdma_read_iov >= 4 && e->max_rdma_write_iov >= 4);
	assert_true(e->max_rdma_read_in >= 1 && e->max_rdma_read_out >= 1);
	assert_int_equal(e->recv_completion_flags, DAT_COMPLETION_DEFAULT_FLAG);
	assert_int_equal(e->request_completion_flags, DAT_COMPLETION_DEFAULT_FLAG);
	/* An unconnected EP has no peer. */
	assert_int_equal(p.remote_port_qual, 0);
	/* dat_ep_modify within the defaults works and shows in the query. */
	DAT_EP_PARAM m = p;
	m.ep_attr.max_recv_dtos = e->max_recv_dtos / 2;
	check_ok(dat_ep_modify(s.ep, DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS, &m));
	check_ok(dat_ep_query(s.ep, DAT_EP_FIELD_ALL, &p));
	assert_int_equal(p.ep_attr.max_recv_dtos, m.ep_attr.max_recv_dtos);
	side_close(&s);
}

/* Connections to fixed 64-bit qualifiers and to a dat_psp_create_any one;
 * dat_ep_query names the peer and the qualifiers on both sides. */
static void test_qualifiers_and_query(void **state)
{
	(void)state;
	struct side s, c;
	side_open(&s);
	side_open(&c);
	DAT_CONN_QUAL quals[5] = {25248, 0x50DE, 0xAFF5B1Eull, 0xAFF5B1Eull + 1, 0};
	DAT_PSP_HANDLE psp[5], dup;
	for (int i = 0; i < 4; i++)
		check_ok(dat_psp_create(s.ia, quals[i], s.cr, DAT_PSP_CONSUMER_FLAG, &psp[i]));
	check_ok(dat_psp_create_any(s.ia, &quals[4], s.cr, DAT_PSP_CONSUMER_FLAG, &psp[4]));
	check_type(dat_psp_create(s.ia, quals[4], s.cr, DAT_PSP_CONSUMER_FLAG, &dup), DAT_CONN_QUAL_IN_USE);
	check_type(dat_psp_create(c.ia, 25248, c.cr, DAT_PSP_CONSUMER_FLAG, &dup), DAT_CONN_QUAL_IN_USE);
	for (int i = 0; i < 5; i++) {
		char pd[32];
		snprintf(pd, sizeof pd, "to %#" PRIx64, (uint64_t)quals[i]);
		connect_ep(c.ep, quals[i], PAT_TMO, pd, (DAT_COUNT)strlen(pd) + 1);
		DAT_EP_STATE st;
		check_ok(dat_ep_get_status(c.ep, &st, NULL, NULL));
		assert_true(st == DAT_EP_STATE_ACTIVE_CONNECTION_PENDING || st == DAT_EP_STATE_CONNECTED);
		accept_next(&s, s.ep, &c, c.ep, quals[i], pd);
		DAT_EP_PARAM ap, pp;
		check_ok(dat_ep_query(c.ep, DAT_EP_FIELD_ALL, &ap));
		check_ok(dat_ep_query(s.ep, DAT_EP_FIELD_ALL, &pp));
		assert_int_equal(ap.ep_state, DAT_EP_STATE_CONNECTED);
		assert_int_equal(pp.ep_state, DAT_EP_STATE_CONNECTED);
		assert_int_equal(ap.remote_port_qual, quals[i]);
		assert_int_equal(pp.local_port_qual, quals[i]);
		/* The active side's peer is the address it connected to. */
		assert_int_equal(sin_addr_of(ap.remote_ia_address_ptr), INADDR_LOOPBACK);
		assert_int_equal(sin_addr_of(ap.local_ia_address_ptr), ia_addr(c.ia));
		assert_int_equal(sin_addr_of(pp.remote_ia_address_ptr), ia_addr(c.ia));
		assert_int_equal(sin_addr_of(pp.local_ia_address_ptr), ia_addr(s.ia));
		disconnect_both(&c, c.ep, &s, s.ep);
		check_ok(dat_ep_query(c.ep, DAT_EP_FIELD_ALL, &ap));
		assert_int_equal(ap.ep_state, DAT_EP_STATE_UNCONNECTED);
	}
	for (int i = 0; i < 5; i++)
		check_ok(dat_psp_free(psp[i]));
	/* A freed qualifier is refused by the transport, then bindable again. */
	connect_ep(c.ep, 0x50DE, PAT_TMO, NULL, 0);
	expect_event(&wt, c.evd, DAT_CONNECTION_EVENT_NON_PEER_REJECTED, "freed qualifier");
	check_ok(dat_psp_create(s.ia, 0x50DE, s.cr, DAT_PSP_CONSUMER_FLAG, &dup));
	check_ok(dat_psp_free(dup));
	side_close(&c);
	side_close(&s);
}

/* dat_cr_handoff passes a request to the PSP of another qualifier. */
static void test_handoff(void **state)
{
	(void)state;
	struct side s, c;
	DAT_EVD_HANDLE cr2;
	DAT_PSP_HANDLE front, back;
	side_open(&s);
	side_open(&c);
	check_ok(dat_evd_create(s.ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr2));
	check_ok(dat_psp_create(s.ia, 0xAFF5B1Eull + 10, s.cr, DAT_PSP_CONSUMER_FLAG, &front));
	check_ok(dat_psp_create(s.ia, 0xAFF5B1Eull + 11, cr2, DAT_PSP_CONSUMER_FLAG, &back));
	connect_ep(c.ep, 0xAFF5B1Eull + 10, PAT_TMO, "handed", 7);
	DAT_EVENT ev = expect_event(&wt, s.cr, DAT_CONNECTION_REQUEST_EVENT, "front request");
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	check_type(dat_cr_handoff(cr, 0xAFF5B1Eull + 99), DAT_INVALID_PARAMETER); /* nobody there */
	check_ok(dat_cr_handoff(cr, 0xAFF5B1Eull + 11));
	DAT_HANDLE_TYPE t;
	check_type(dat_get_handle_type(cr, &t), DAT_INVALID_HANDLE); /* destroyed by the handoff */
	ev = expect_event(&wt, cr2, DAT_CONNECTION_REQUEST_EVENT, "handed-off request");
	assert_ptr_equal(ev.event_data.cr_arrival_event_data.sp_handle.psp_handle, back);
	DAT_CR_PARAM p;
	check_ok(dat_cr_query(ev.event_data.cr_arrival_event_data.cr_handle, DAT_CR_FIELD_ALL, &p));
	assert_string_equal((char *)p.private_data, "handed");
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, s.ep, 3, "ok"));
	expect_event(&wt, s.evd, DAT_CONNECTION_EVENT_ESTABLISHED, "accepted");
	ev = expect_event(&wt, c.evd, DAT_CONNECTION_EVENT_ESTABLISHED, "connected");
	assert_string_equal((char *)ev.event_data.connect_event_data.private_data, "ok");
	expect_empty(s.cr, "front PSP");
	check_ok(dat_psp_free(front));
	check_ok(dat_psp_free(back));
	side_close(&c);
	side_close(&s);
}

/* dat_ep_dup_connect reaches the same service point as a connected EP. */
static void test_dup_connect(void **state)
{
	(void)state;
	struct side s, c;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	DAT_EP_HANDLE sep2, cep2;
	side_open(&s);
	side_open(&c);
	check_ok(dat_ep_create(s.ia, s.pz, s.evd, s.evd, s.evd, NULL, &sep2));
	check_ok(dat_ep_create(c.ia, c.pz, c.evd, c.evd, c.evd, NULL, &cep2));
	check_ok(dat_psp_create_any(s.ia, &q, s.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	/* Not connected yet: nothing to duplicate. */
	check_type(dat_ep_dup_connect(cep2, c.ep, PAT_TMO, 0, NULL, DAT_QOS_BEST_EFFORT), DAT_INVALID_STATE);
	connect_ep(c.ep, q, PAT_TMO, "first", 6);
	accept_next(&s, s.ep, &c, c.ep, q, "first");
	check_ok(dat_ep_dup_connect(cep2, c.ep, PAT_TMO, 7, "second", DAT_QOS_BEST_EFFORT));
	accept_next(&s, sep2, &c, cep2, q, "second");
	DAT_EP_PARAM p;
	check_ok(dat_ep_query(cep2, DAT_EP_FIELD_ALL, &p));
	assert_int_equal(p.remote_port_qual, q);
	disconnect_both(&c, cep2, &s, sep2);
	disconnect_both(&c, c.ep, &s, s.ep);
	check_ok(dat_psp_free(psp));
	side_close(&c);
	side_close(&s);
}

/* An RSP binds a qualifier to one EP: the request carries it, and the
 * accept (with the EP handle NULL) uses it. */
static void test_rsp(void **state)
{
	(void)state;
	struct side s, c;
	DAT_RSP_HANDLE rsp;
	side_open(&s);
	side_open(&c);
	check_ok(dat_rsp_create(s.ia, 0xAFF5B1Eull + 20, s.ep, s.cr, &rsp));
	DAT_EP_STATE st;
	check_ok(dat_ep_get_status(s.ep, &st, NULL, NULL));
	assert_int_equal(st, DAT_EP_STATE_RESERVED);
	connect_ep(c.ep, 0xAFF5B1Eull + 20, PAT_TMO, "rsp", 4);
	DAT_EVENT ev = expect_event(&wt, s.cr, DAT_CONNECTION_REQUEST_EVENT, "request");
	assert_ptr_equal(ev.event_data.cr_arrival_event_data.sp_handle.rsp_handle, rsp);
	DAT_CR_PARAM p;
	check_ok(dat_cr_query(ev.event_data.cr_arrival_event_data.cr_handle, DAT_CR_FIELD_ALL, &p));
	assert_ptr_equal(p.local_ep_handle, s.ep);
	check_ok(dat_ep_get_status(s.ep, &st, NULL, NULL));
	assert_int_equal(st, DAT_EP_STATE_PASSIVE_CONNECTION_PENDING);
	check_type(dat_ep_free(s.ep), DAT_INVALID_STATE);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, DAT_HANDLE_NULL, 0, NULL));
	expect_event(&wt, s.evd, DAT_CONNECTION_EVENT_ESTABLISHED, "accepted");
	expect_event(&wt, c.evd, DAT_CONNECTION_EVENT_ESTABLISHED, "connected");
	disconnect_both(&c, c.ep, &s, s.ep);
	check_ok(dat_rsp_free(rsp));
	side_close(&c);
	side_close(&s);
}

int main(void)
{
	alarm(250);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_attr_defaults),
		cmocka_unit_test(test_qualifiers_and_query),
		cmocka_unit_test(test_handoff),
		cmocka_unit_test(test_dup_connect),
		cmocka_unit_test(test_rsp),
	};
	return cmocka_run_group_tests_name("connection model", tests, NULL, NULL);
}
