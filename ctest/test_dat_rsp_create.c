/* dat_rsp_create(3DAT): a reserved service point, one EP, at most one
 * connection request. */
#include "conn.h"

#define Q 0x45500000000000AAull

/* "The dat_rsp_create() function creates a Reserved Service Point with the
 * specified Endpoint that generates, at most, one Connection Request that
 * is delivered to the specified Event Dispatcher in a Notification event."
 * USAGE: "Delivers the Connection Request Notice to the Consumer-specified
 * target (CNO) evd_handle. The Local Endpoint is transitioned from Reserved
 * to Passive Connection Pending state." "If accepted, the original Local
 * Endpoint is now in a Connected state ... The Consumer is notified that
 * the Endpoint is in a Connected state by a Connection Established Event on
 * the Endpoint connect_evd_handle." */
static void success_lifecycle(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(x.p.ia, Q, x.p.ep, x.p.cr, &rsp));
	DAT_HANDLE_TYPE t;
	check_ok(dat_get_handle_type(rsp, &t));
	assert_int_equal(t, DAT_HANDLE_TYPE_RSP);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_RESERVED);
	check_ok(connect_ep(x.a.ep, Q, CONN_TMO, "to-rsp"));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	assert_ptr_equal(ev.event_data.cr_arrival_event_data.sp_handle.rsp_handle, rsp);
	assert_int_equal(ev.event_data.cr_arrival_event_data.conn_qual, Q);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_PASSIVE_CONNECTION_PENDING);
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	DAT_CR_PARAM crp;
	check_ok(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	assert_ptr_equal(crp.local_ep_handle, x.p.ep);
	assert_string_equal((char *)crp.private_data, "to-rsp");
	check_ok(dat_cr_accept(cr, DAT_HANDLE_NULL, 0, NULL));
	ev = expect_ev(x.p.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, x.p.ep);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_CONNECTED);
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	pair_close(&x);
}

/* "... generates, at most, one Connection Request": a second connect to
 * the qualifier gets no request delivered and is refused. */
static void at_most_one_request(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(x.p.ia, Q, x.p.ep, x.p.cr, &rsp));
	check_ok(connect_ep(x.a.ep, Q, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	DAT_EP_HANDLE a2;
	check_ok(dat_ep_create(x.a.ia, x.a.pz, x.a.recv, x.a.req, x.a.conn, NULL, &a2));
	check_ok(connect_ep(a2, Q, CONN_TMO, NULL));
	DAT_EVENT r = wait_ev(x.a.conn);
	assert_ptr_equal(r.event_data.connect_event_data.ep_handle, a2);
	assert_true(r.event_number == DAT_CONNECTION_EVENT_PEER_REJECTED ||
		    r.event_number == DAT_CONNECTION_EVENT_NON_PEER_REJECTED);
	expect_empty(x.p.cr);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, DAT_HANDLE_NULL, 0, NULL));
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	pair_close(&x);
}

/* USAGE: "If rejected, the Local Endpoint point transitions into
 * Unconnected state. The DAT Consumer can elect to destroy it or reuse it
 * for other purposes." */
static void rejected_ep_reusable(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(x.p.ia, Q, x.p.ep, x.p.cr, &rsp));
	check_ok(connect_ep(x.a.ep, Q, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_cr_reject(ev.event_data.cr_arrival_event_data.cr_handle));
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_PEER_REJECTED);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_UNCONNECTED);
	/* Reused: accept a request of the PSP with it. */
	check_ok(dat_ep_reset(x.a.ep));
	pair_connect(&x);
	pair_close(&x);
}

/* The reserved qualifier needs a file descriptor; with none left the call
 * fails and the EP stays unconnected. */
static void insufficient_resources(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	DAT_RSP_HANDLE rsp;
	struct rlimit old = fds_exhaust();
	DAT_RETURN r = dat_rsp_create(s.ia, Q, s.ep, s.cr, &rsp);
	fds_restore(old);
	if (r == DAT_SUCCESS) /* a failure must not keep Q for the next cases */
		end_close(&s);
	check_type(r, DAT_INSUFFICIENT_RESOURCES);
	assert_int_equal(ep_state(s.ep), DAT_EP_STATE_UNCONNECTED);
	end_close(&s);
}

/* "The ia_handle, evd_handle, or ep_handle parameter is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct end s, o;
	end_open(&s, NULL);
	end_open(&o, NULL);
	DAT_RSP_HANDLE rsp;
	check_ret(dat_rsp_create(s.ep, Q, s.ep, s.cr, &rsp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	check_ret(dat_rsp_create(s.ia, Q, s.pz, s.cr, &rsp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_rsp_create(s.ia, Q, DAT_HANDLE_NULL, s.cr, &rsp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_rsp_create(s.ia, Q, o.ep, s.cr, &rsp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_rsp_create(s.ia, Q, s.ep, s.conn, &rsp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_CR);
	assert_int_equal(ep_state(s.ep), DAT_EP_STATE_UNCONNECTED);
	/* A request EVD of another IA of the process is valid, as in the
	 * references (issue 13; test_compat_multi_ia.c uses one). */
	check_ok(dat_rsp_create(s.ia, Q, s.ep, o.cr, &rsp));
	check_ok(dat_rsp_free(rsp));
	end_close(&o);
	end_close(&s);
}

/* DAT_INVALID_PARAMETER: every 64-bit qualifier is valid here, so the
 * output handle pointer is what can be invalid. */
static void invalid_parameter(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	check_ret(dat_rsp_create(s.ia, Q, s.ep, s.cr, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	assert_int_equal(ep_state(s.ep), DAT_EP_STATE_UNCONNECTED);
	end_close(&s);
}

/* "Parameter in an invalid state. For example, an Endpoint was not in the
 * Idle state": reserved already, connected. */
static void invalid_state(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_RSP_HANDLE rsp, rsp2;
	check_ok(dat_rsp_create(x.p.ia, Q, x.p.ep, x.p.cr, &rsp));
	check_ret(dat_rsp_create(x.p.ia, Q + 1, x.p.ep, x.p.cr, &rsp2), DAT_INVALID_STATE,
		  DAT_INVALID_STATE_EP_RESERVED);
	check_ok(dat_rsp_free(rsp));
	pair_connect(&x);
	check_ret(dat_rsp_create(x.p.ia, Q + 1, x.p.ep, x.p.cr, &rsp2), DAT_INVALID_STATE,
		  DAT_INVALID_STATE_EP_CONNECTED);
	check_ret(dat_rsp_create(x.a.ia, Q + 1, x.a.ep, x.a.cr, &rsp2), DAT_INVALID_STATE,
		  DAT_INVALID_STATE_EP_CONNECTED);
	pair_close(&x);
}

/* "Specified Connection Qualifier is in use." */
static void conn_qual_in_use(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_RSP_HANDLE rsp, rsp2;
	check_type(dat_rsp_create(x.p.ia, x.q, x.p.ep, x.p.cr, &rsp), DAT_CONN_QUAL_IN_USE); /* the PSP's */
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_UNCONNECTED);
	check_ok(dat_rsp_create(x.p.ia, Q, x.p.ep, x.p.cr, &rsp));
	check_type(dat_rsp_create(x.a.ia, Q, x.a.ep, x.a.cr, &rsp2), DAT_CONN_QUAL_IN_USE);
	assert_int_equal(ep_state(x.a.ep), DAT_EP_STATE_UNCONNECTED);
	pair_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_lifecycle),
		cmocka_unit_test(at_most_one_request),
		cmocka_unit_test(rejected_ep_reusable),
		cmocka_unit_test(insufficient_resources),
		cmocka_unit_test(invalid_handle),
		cmocka_unit_test(invalid_parameter),
		cmocka_unit_test(invalid_state),
		cmocka_unit_test(conn_qual_in_use),
	};
	return cmocka_run_group_tests_name("dat_rsp_create", tests, NULL, NULL);
}
