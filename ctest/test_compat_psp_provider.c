/* Program pattern: the provider creates the endpoints (issue 13, item 5),
 * over godat-shm and godat-tcp. A server makes its PSP with
 * DAT_PSP_PROVIDER_FLAG; for each request the provider creates an EP,
 * which dat_cr_query shows; the server gives it a PZ and EVDs with
 * dat_ep_modify and accepts with a NULL EP handle; a request it rejects
 * takes the EP with it.
 *
 * dat_psp_create(3DAT): "All Endpoints created by the Provider have
 * DAT_HANDLE_NULL for the Protection Zone and all Event Dispatchers. ...
 * Consumers should change Endpoint parameters, especially PZ and EVD ...
 * prior to the connection request acceptance". dat_cr_reject(3DAT): "If
 * the Provider passed a local Endpoint into a Consumer for the Public
 * Service Point-created Connection Request, that Endpoint reverts to
 * Provider Control." Where the pages leave it open godat does what OFED
 * dapl and illumos udapl do: the EP has the IA's default attributes and is
 * in DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING; accepting it without a PZ,
 * or a request that carries an EP with another EP, is DAT_INVALID_HANDLE
 * (DAT_INVALID_HANDLE_EP); a rejected request's EP is freed. */
#include "conn.h"

#define QUAL 0x13005

struct server {
	struct end e; /* its EP is an ordinary one, for comparison */
	DAT_PSP_HANDLE psp;
};

/* The EP the provider created for the next request on s's PSP, and the
 * request. */
static DAT_EP_HANDLE next_request(struct server *s, DAT_CR_HANDLE *cr)
{
	DAT_EVENT ev = expect_ev(s->e.cr, DAT_CONNECTION_REQUEST_EVENT);
	const DAT_CR_ARRIVAL_EVENT_DATA *d = &ev.event_data.cr_arrival_event_data;
	assert_ptr_equal(d->sp_handle.psp_handle, s->psp);
	assert_int_equal(d->conn_qual, QUAL);
	*cr = d->cr_handle;
	DAT_CR_PARAM p;
	memset(&p, 0, sizeof p);
	check_ok(dat_cr_query(*cr, DAT_CR_FIELD_ALL, &p));
	assert_non_null(p.local_ep_handle);
	assert_int_equal(p.private_data_size, 6);
	assert_memory_equal(p.private_data, "hello", 6);
	DAT_HANDLE_TYPE t;
	check_ok(dat_get_handle_type(p.local_ep_handle, &t));
	assert_int_equal(t, DAT_HANDLE_TYPE_EP);
	return p.local_ep_handle;
}

static void provider_creates_endpoints(void **state)
{
	const char *name = *state;
	struct server s;
	struct end c, c2;
	end_open_ia(&s.e, name, NULL);
	end_open_ia(&c, name, NULL);
	end_open_ia(&c2, name, NULL);
	check_ok(dat_psp_create(s.e.ia, QUAL, s.e.cr, DAT_PSP_PROVIDER_FLAG, &s.psp));
	DAT_PSP_PARAM pp;
	check_ok(dat_psp_query(s.psp, DAT_PSP_FIELD_ALL, &pp));
	assert_int_equal(pp.psp_flags, DAT_PSP_PROVIDER_FLAG);
	assert_int_equal(pp.conn_qual, QUAL);
	assert_ptr_equal(pp.evd_handle, s.e.cr);
	DAT_PROVIDER_ATTR pa;
	DAT_EVD_HANDLE async;
	check_ok(dat_ia_query(s.e.ia, &async, 0, NULL, DAT_PROVIDER_FIELD_ALL, &pa));
	assert_int_equal(pa.ep_creator, DAT_PSP_CREATES_EP_IFASKED);

	/* A request: the provider's EP, as the page and references make it. */
	check_ok(connect_ep(c.ep, QUAL, CONN_TMO, "hello"));
	DAT_CR_HANDLE cr;
	DAT_EP_HANDLE ep = next_request(&s, &cr);
	DAT_EP_PARAM p, mine;
	check_ok(dat_ep_query(ep, DAT_EP_FIELD_ALL, &p));
	check_ok(dat_ep_query(s.e.ep, DAT_EP_FIELD_ALL, &mine));
	assert_int_equal(p.ep_state, DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING);
	assert_ptr_equal(p.ia_handle, s.e.ia);
	assert_null(p.pz_handle);
	assert_null(p.recv_evd_handle);
	assert_null(p.request_evd_handle);
	assert_null(p.connect_evd_handle);
	assert_memory_equal(&p.ep_attr, &mine.ep_attr, sizeof p.ep_attr); /* the IA's defaults */
	/* Not freeable while the request is pending. */
	check_type(dat_ep_free(ep), DAT_INVALID_STATE);

	/* Accepting before it has a PZ fails and changes nothing; so does
	 * naming another EP for a request that carries one. */
	check_ret(dat_cr_accept(cr, DAT_HANDLE_NULL, 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_cr_accept(cr, s.e.ep, 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ok(dat_ep_query(ep, DAT_EP_FIELD_EP_STATE, &p));
	assert_int_equal(p.ep_state, DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING);
	assert_int_equal(ep_state(s.e.ep), DAT_EP_STATE_UNCONNECTED);

	/* The consumer gives it a PZ and EVDs, posts a receive, accepts with
	 * a NULL EP handle. */
	memset(&p, 0, sizeof p);
	p.pz_handle = s.e.pz;
	p.recv_evd_handle = s.e.recv;
	p.request_evd_handle = s.e.req;
	p.connect_evd_handle = s.e.conn;
	check_ok(dat_ep_modify(ep,
			       DAT_EP_FIELD_PZ_HANDLE | DAT_EP_FIELD_RECV_EVD_HANDLE | DAT_EP_FIELD_REQUEST_EVD_HANDLE |
				   DAT_EP_FIELD_CONNECT_EVD_HANDLE,
			       &p));
	struct mem sm, cm;
	mem_reg(&sm, s.e.ia, s.e.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&cm, c.ia, c.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET in = iov_at(&sm, 0, 64);
	check_ok(dat_ep_post_recv(ep, 1, &in, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_cr_accept(cr, DAT_HANDLE_NULL, 0, NULL));
	DAT_EVENT ev = expect_ev(s.e.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, ep);
	expect_ev(c.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_int_equal(ep_state(ep), DAT_EP_STATE_CONNECTED);
	check_type(dat_cr_query(cr, DAT_CR_FIELD_ALL, &(DAT_CR_PARAM){0}), DAT_INVALID_HANDLE);

	/* It carries data both ways. */
	memcpy(cm.buf, "to the provider's EP", 21);
	DAT_LMR_TRIPLET out = iov_at(&cm, 0, 21);
	check_ok(dat_ep_post_send(c.ep, 1, &out, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
	assert_int_equal(expect_dto(s.e.recv, ep, 1, DAT_DTO_SUCCESS), 21);
	assert_string_equal((char *)sm.buf, "to the provider's EP");
	expect_dto(c.req, c.ep, 2, DAT_DTO_SUCCESS);
	DAT_LMR_TRIPLET back = iov_at(&sm, 0, 5), cin = iov_at(&cm, 32, 32);
	memcpy(sm.buf, "back", 5);
	check_ok(dat_ep_post_recv(c.ep, 1, &cin, cookie(3), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(ep, 1, &back, cookie(4), DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(s.e.req, ep, 4, DAT_DTO_SUCCESS);
	assert_int_equal(expect_dto(c.recv, c.ep, 3, DAT_DTO_SUCCESS), 5);
	assert_string_equal((char *)cm.buf + 32, "back");

	/* A second request, rejected: its EP goes back to the provider, which
	 * frees it; the active side is rejected by its peer. */
	check_ok(connect_ep(c2.ep, QUAL, CONN_TMO, "hello"));
	DAT_CR_HANDLE cr2;
	DAT_EP_HANDLE ep2 = next_request(&s, &cr2);
	assert_ptr_not_equal(ep2, ep);
	check_ok(dat_cr_reject(cr2));
	expect_ev(c2.conn, DAT_CONNECTION_EVENT_PEER_REJECTED);
	check_ret(dat_ep_query(ep2, DAT_EP_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);

	/* The accepted EP is the consumer's: it disconnects and frees it. */
	check_ok(dat_ep_disconnect(ep, DAT_CLOSE_ABRUPT_FLAG));
	expect_ev(s.e.conn, DAT_CONNECTION_EVENT_DISCONNECTED);
	check_ok(dat_ep_free(ep));
	check_ok(dat_psp_free(s.psp));
	mem_free(&sm, 0);
	mem_free(&cm, 0);
	end_close(&c2);
	end_close(&c);
	end_close(&s.e);
}

/* A request still pending when the IA closes: its provider EP goes with
 * the IA, and the active side is rejected at once. */
static void pending_at_close(void **state)
{
	const char *name = *state;
	struct server s;
	struct end c;
	end_open_ia(&s.e, name, NULL);
	end_open_ia(&c, name, NULL);
	check_ok(dat_psp_create(s.e.ia, QUAL, s.e.cr, DAT_PSP_PROVIDER_FLAG, &s.psp));
	check_ok(connect_ep(c.ep, QUAL, CONN_TMO, "hello"));
	DAT_CR_HANDLE cr;
	next_request(&s, &cr);
	end_close(&s.e);
	expect_ev(c.conn, DAT_CONNECTION_EVENT_PEER_REJECTED);
	end_close(&c);
}

#define BOTH(f) cmocka_unit_test_prestate(f, (void *)"godat-shm"), cmocka_unit_test_prestate(f, (void *)"godat-tcp")

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(provider_creates_endpoints),
		BOTH(pending_at_close),
	};
	return cmocka_run_group_tests_name("compat PSP provider flag", tests, NULL, NULL);
}
