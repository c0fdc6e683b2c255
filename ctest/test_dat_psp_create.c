/* dat_psp_create(3DAT): public service points on a given qualifier. */
#include "conn.h"

#define Q 0x95C0000000000001ull

/* "The dat_psp_create() function creates a persistent Public Service Point
 * that can receive multiple requests for connection and generate multiple
 * Connection Request instances that are delivered through the specified
 * Event Dispatcher in Notification events." "The dat_psp_create() function
 * is blocking. When the Public Service Point is created, DAT_SUCCESS is
 * returned and psp_handle contains a handle to an opaque Public Service
 * Point Object": a connect right after the call reaches it. */
static void success_persistent(void **state)
{
	(void)state;
	struct end s, c;
	end_open(&s, NULL);
	end_open(&c, NULL);
	DAT_PSP_HANDLE psp;
	check_ok(dat_psp_create(s.ia, Q, s.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	DAT_HANDLE_TYPE t;
	check_ok(dat_get_handle_type(psp, &t));
	assert_int_equal(t, DAT_HANDLE_TYPE_PSP);
	DAT_EP_HANDLE ceps[3], seps[3];
	for (int i = 0; i < 3; i++) {
		check_ok(dat_ep_create(c.ia, c.pz, c.recv, c.req, c.conn, NULL, &ceps[i]));
		check_ok(dat_ep_create(s.ia, s.pz, s.recv, s.req, s.conn, NULL, &seps[i]));
		check_ok(connect_ep(ceps[i], Q, CONN_TMO, NULL));
		DAT_EVENT ev = expect_ev(s.cr, DAT_CONNECTION_REQUEST_EVENT);
		assert_ptr_equal(ev.event_data.cr_arrival_event_data.sp_handle.psp_handle, psp);
		assert_int_equal(ev.event_data.cr_arrival_event_data.conn_qual, Q);
		check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, seps[i], 0, NULL));
		expect_ev(c.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
		expect_ev(s.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	}
	for (int i = 0; i < 3; i++)
		assert_int_equal(ep_state(seps[i]), DAT_EP_STATE_CONNECTED);
	end_close(&c);
	end_close(&s);
}

/* A software event to fill an EVD with. */
static void post_se(DAT_EVD_HANDLE evd)
{
	DAT_EVENT se;
	memset(&se, 0, sizeof se);
	se.event_number = DAT_SOFTWARE_EVENT;
	se.event_data.software_event_data.pointer = &se;
	check_ok(dat_evd_post_se(evd, &se));
}

/* "There is no explicit backlog for a Public Service Point. Instead,
 * Consumers can control the size of backlog through the queue size of the
 * associated Event Dispatcher." With the EVD's queue full, a request is
 * refused as by a full backlog (dat_ep_connect: "Backlog of the requested
 * Service Point is full" gives NON_PEER_REJECTED); once an event is
 * dequeued there is room again. */
static void backlog_is_evd_qlen(void **state)
{
	(void)state;
	struct end s, c;
	end_open(&s, NULL);
	end_open(&c, NULL);
	DAT_EVD_HANDLE evd;
	check_ok(dat_evd_create(s.ia, 2, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG | DAT_EVD_SOFTWARE_FLAG, &evd));
	DAT_PSP_HANDLE psp;
	check_ok(dat_psp_create(s.ia, Q, evd, DAT_PSP_CONSUMER_FLAG, &psp));
	DAT_EP_HANDLE ep[3];
	for (int i = 0; i < 3; i++)
		check_ok(dat_ep_create(c.ia, c.pz, c.recv, c.req, c.conn, NULL, &ep[i]));
	post_se(evd);
	check_ok(connect_ep(ep[0], Q, CONN_TMO, NULL));
	/* Threshold 2: returns the software event once the request is queued
	 * behind it. */
	DAT_EVENT ev;
	DAT_COUNT n = 0;
	check_ok(dat_evd_wait(evd, CONN_TMO, 2, &ev, &n));
	assert_int_equal(ev.event_number, DAT_SOFTWARE_EVENT);
	assert_int_equal(n, 1);
	post_se(evd); /* queue: request, software event = qlen */
	check_ok(connect_ep(ep[1], Q, CONN_TMO, NULL));
	ev = expect_ev(c.conn, DAT_CONNECTION_EVENT_NON_PEER_REJECTED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, ep[1]);
	ev = expect_ev(evd, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, s.ep, 0, NULL));
	ev = expect_ev(c.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, ep[0]);
	expect_ev(evd, DAT_SOFTWARE_EVENT);
	/* Room again. */
	check_ok(connect_ep(ep[2], Q, CONN_TMO, NULL));
	ev = expect_ev(evd, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_cr_reject(ev.event_data.cr_arrival_event_data.cr_handle));
	ev = expect_ev(c.conn, DAT_CONNECTION_EVENT_PEER_REJECTED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, ep[2]);
	end_close(&c);
	end_close(&s);
}

/* The listening qualifier needs a file descriptor; with none left the call
 * fails and the qualifier stays free. */
static void insufficient_resources(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	DAT_PSP_HANDLE psp;
	struct rlimit old = fds_exhaust();
	DAT_RETURN r = dat_psp_create(s.ia, Q, s.cr, DAT_PSP_CONSUMER_FLAG, &psp);
	fds_restore(old);
	if (r == DAT_SUCCESS) /* a failure must not keep Q for the next cases */
		end_close(&s);
	check_type(r, DAT_INSUFFICIENT_RESOURCES);
	check_ok(dat_psp_create(s.ia, Q, s.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	end_close(&s);
}

/* "The ia_handle or evd_handle parameter is invalid." An EVD without the
 * connection request stream is not a valid evd_handle here. */
static void invalid_handle(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	DAT_PSP_HANDLE psp;
	check_ret(dat_psp_create(s.pz, Q, s.cr, DAT_PSP_CONSUMER_FLAG, &psp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	check_ret(dat_psp_create(DAT_HANDLE_NULL, Q, s.cr, DAT_PSP_CONSUMER_FLAG, &psp), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_IA);
	check_ret(dat_psp_create(s.ia, Q, s.conn, DAT_PSP_CONSUMER_FLAG, &psp), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EVD_CR);
	check_ret(dat_psp_create(s.ia, Q, DAT_HANDLE_NULL, DAT_PSP_CONSUMER_FLAG, &psp), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EVD_CR);
	check_ret(dat_psp_create(s.ia, Q, s.pz, DAT_PSP_CONSUMER_FLAG, &psp), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EVD_CR);
	end_close(&s);
}

/* "The conn_qual or psp_flags parameter is invalid." */
static void invalid_parameter(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	DAT_PSP_HANDLE psp;
	check_ret(dat_psp_create(s.ia, Q, s.cr, (DAT_PSP_FLAGS)2, &psp), DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	check_ret(dat_psp_create(s.ia, Q, s.cr, DAT_PSP_CONSUMER_FLAG, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	/* The qualifier was not taken by the failed calls. */
	check_ok(dat_psp_create(s.ia, Q, s.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	end_close(&s);
}

/* "The specified Connection Qualifier was in use": by a PSP or an RSP, of
 * this IA or of another one on the same address. */
static void conn_qual_in_use(void **state)
{
	(void)state;
	struct end s, o;
	end_open(&s, NULL);
	end_open(&o, NULL);
	DAT_PSP_HANDLE psp, dup;
	DAT_RSP_HANDLE rsp;
	check_ok(dat_psp_create(s.ia, Q, s.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	check_type(dat_psp_create(s.ia, Q, s.cr, DAT_PSP_CONSUMER_FLAG, &dup), DAT_CONN_QUAL_IN_USE);
	check_type(dat_psp_create(o.ia, Q, o.cr, DAT_PSP_CONSUMER_FLAG, &dup), DAT_CONN_QUAL_IN_USE);
	check_ok(dat_rsp_create(s.ia, Q + 1, s.ep, s.cr, &rsp));
	check_type(dat_psp_create(s.ia, Q + 1, s.cr, DAT_PSP_CONSUMER_FLAG, &dup), DAT_CONN_QUAL_IN_USE);
	end_close(&o);
	end_close(&s);
}

/* DAT_CONN_QUAL_IN_USE means a service point uses the qualifier, nothing
 * else: a qualifier that names no PSP or RSP can be listened on, even one
 * whose number is the local port an earlier connection of this library
 * used. Over TCP a qualifier is a port (q mod 65536), and the side of a
 * connection that closes first keeps its port in TIME_WAIT for a minute; a
 * listener must still be able to bind it (a client socket that did not set
 * SO_REUSEADDR before its bind blocks that). The active EP's
 * local_port_qual is that port. Which side's close comes first is up to
 * the provider's threads, so eight connections are made and closed, and
 * every one of their ports must be free. */
static void port_of_closed_connection_is_free(void **state)
{
	(void)state;
	enum { N = 8 };
	DAT_CONN_QUAL used[N];
	for (int i = 0; i < N; i++) {
		struct pair x;
		pair_up(&x, NULL);
		DAT_EP_PARAM ap;
		check_ok(dat_ep_query(x.a.ep, DAT_EP_FIELD_ALL, &ap));
		used[i] = ap.local_port_qual;
		pair_disconnect(&x);
		pair_close(&x);
	}
	struct end s;
	end_open(&s, NULL);
	int busy = 0;
	char list[256] = "";
	for (int i = 0; i < N; i++) {
		DAT_PSP_HANDLE psp;
		DAT_RETURN r = dat_psp_create(s.ia, used[i], s.cr, DAT_PSP_CONSUMER_FLAG, &psp);
		if (r == DAT_SUCCESS) {
			check_ok(dat_psp_free(psp));
			continue;
		}
		busy++;
		size_t n = strlen(list);
		snprintf(list + n, sizeof list - n, " %#llx: %s;", (unsigned long long)used[i], ret_name(r));
	}
	end_close(&s);
	if (busy)
		fail_msg("%d of %d local port qualifiers of closed connections cannot be listened on:%s", busy, N, list);
}

/* "The psp_flags parameter allows Consumers to request that the Provider
 * create an implicit Endpoint for each incoming Connection Request, or
 * request that the Provider should not create one per Connection Request.
 * If the Provider cannot satisfy the request, the operation shall fail and
 * DAT_MODEL_NOT_SUPPORTED is returned." This provider satisfies both
 * (its ep_creator attribute says it creates EPs if asked), so
 * DAT_MODEL_NOT_SUPPORTED cannot occur (COVERAGE.md); a request on a
 * DAT_PSP_PROVIDER_FLAG PSP carries the EP the provider made for it
 * (test_compat_psp_provider.c follows one through accept and reject). */
static void provider_flag(void **state)
{
	(void)state;
	struct end s, c;
	end_open(&s, NULL);
	end_open(&c, NULL);
	DAT_PROVIDER_ATTR pa;
	DAT_EVD_HANDLE async;
	check_ok(dat_ia_query(s.ia, &async, 0, NULL, DAT_PROVIDER_FIELD_ALL, &pa));
	assert_int_equal(pa.ep_creator, DAT_PSP_CREATES_EP_IFASKED);
	DAT_PSP_HANDLE psp;
	check_ok(dat_psp_create(s.ia, Q, s.cr, DAT_PSP_PROVIDER_FLAG, &psp));
	check_ok(connect_ep(c.ep, Q, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(s.cr, DAT_CONNECTION_REQUEST_EVENT);
	DAT_CR_PARAM p;
	check_ok(dat_cr_query(ev.event_data.cr_arrival_event_data.cr_handle, DAT_CR_FIELD_ALL, &p));
	assert_non_null(p.local_ep_handle);
	assert_int_equal(ep_state(p.local_ep_handle), DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING);
	end_close(&c);
	end_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_persistent),
		cmocka_unit_test(backlog_is_evd_qlen),
		cmocka_unit_test(insufficient_resources),
		cmocka_unit_test(invalid_handle),
		cmocka_unit_test(invalid_parameter),
		cmocka_unit_test(conn_qual_in_use),
		cmocka_unit_test(port_of_closed_connection_is_free),
		cmocka_unit_test(provider_flag),
	};
	return cmocka_run_group_tests_name("dat_psp_create", tests, NULL, NULL);
}
