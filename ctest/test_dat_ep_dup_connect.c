/* dat_ep_dup_connect(3DAT): a second connection to the remote end of a
 * connected EP. */
#include <limits.h>
#include "conn.h"

static DAT_RETURN dup_connect(DAT_EP_HANDLE ep, DAT_EP_HANDLE dup, const char *pd)
{
	return dat_ep_dup_connect(ep, dup, CONN_TMO, pd ? (DAT_COUNT)strlen(pd) + 1 : 0, (DAT_PVOID)pd,
				  DAT_QOS_BEST_EFFORT);
}

/* "The remote end of the requested connection shall be the same as the
 * remote end of the dup_ep_handle." "Upon successful completion of this
 * operation, the local Endpoint is transferred into
 * DAT_EP_STATE_ACTIVE_CONNECTION_PENDING." "The Consumer-provided
 * private_data is passed to the remote side and is provided to the remote
 * Consumer in the Connection Request." "The acceptance of the requested
 * connection by the remote Consumer is reported to the local Consumer
 * through a DAT_CONNECTION_EVENT_ESTABLISHED event on the
 * connect_evd_handle of the local Endpoint." */
static void success_same_remote(void **state)
{
	(void)state;
	struct pair x;
	pair_up(&x, NULL);
	DAT_EP_HANDLE a2, p2;
	check_ok(dat_ep_create(x.a.ia, x.a.pz, x.a.recv, x.a.req, x.a.conn, NULL, &a2));
	check_ok(dat_ep_create(x.p.ia, x.p.pz, x.p.recv, x.p.req, x.p.conn, NULL, &p2));
	check_ok(dup_connect(a2, x.a.ep, "dup-private"));
	assert_int_equal(ep_state(a2), DAT_EP_STATE_ACTIVE_CONNECTION_PENDING);
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	/* It reached the same service point. */
	assert_ptr_equal(ev.event_data.cr_arrival_event_data.sp_handle.psp_handle, x.psp);
	assert_int_equal(ev.event_data.cr_arrival_event_data.conn_qual, x.q);
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	DAT_CR_PARAM crp;
	check_ok(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	assert_string_equal((char *)crp.private_data, "dup-private");
	check_ok(dat_cr_accept(cr, p2, 0, NULL));
	ev = expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, a2);
	assert_int_equal(ep_state(a2), DAT_EP_STATE_CONNECTED);
	DAT_EP_PARAM p1, pd;
	check_ok(dat_ep_query(x.a.ep, DAT_EP_FIELD_ALL, &p1));
	check_ok(dat_ep_query(a2, DAT_EP_FIELD_ALL, &pd));
	assert_int_equal(pd.remote_port_qual, p1.remote_port_qual);
	assert_memory_equal(pd.remote_ia_address_ptr, p1.remote_ia_address_ptr, sizeof(struct sockaddr_in));
	pair_close(&x);
}

/* "The rejection of the connection by the remote Consumer is reported to
 * the local Consumer through a DAT_CONNECTION_EVENT_PEER_REJECTED event on
 * the connect_evd_handle of the local Endpoint." */
static void peer_rejected(void **state)
{
	(void)state;
	struct pair x;
	pair_up(&x, NULL);
	DAT_EP_HANDLE a2;
	check_ok(dat_ep_create(x.a.ia, x.a.pz, x.a.recv, x.a.req, x.a.conn, NULL, &a2));
	check_ok(dup_connect(a2, x.a.ep, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_cr_reject(ev.event_data.cr_arrival_event_data.cr_handle));
	ev = expect_ev(x.a.conn, DAT_CONNECTION_EVENT_PEER_REJECTED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, a2);
	pair_close(&x);
}

/* "The same DAT_CONNECTION_EVENT_NON_PEER_REJECTED event is returned if
 * connection cannot be established for all reasons for not establishing
 * the connection, except timeout, remote host not reachable, and remote
 * peer reject. For example, ... remote Consumer is not listening on the
 * requested Connection Qualifier": the PSP is gone. */
static void non_peer_rejected(void **state)
{
	(void)state;
	struct pair x;
	pair_up(&x, NULL);
	check_ok(dat_psp_free(x.psp));
	DAT_EP_HANDLE a2;
	check_ok(dat_ep_create(x.a.ia, x.a.pz, x.a.recv, x.a.req, x.a.conn, NULL, &a2));
	check_ok(dup_connect(a2, x.a.ep, NULL));
	DAT_EVENT ev = expect_ev(x.a.conn, DAT_CONNECTION_EVENT_NON_PEER_REJECTED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, a2);
	pair_close(&x);
}

/* "When the timeout expired prior to completion of the Connection
 * establishment, ... the local Consumer through a
 * DAT_CONNECTION_EVENT_TIMED_OUT event on the connect_evd_handle". */
static void timed_out(void **state)
{
	(void)state;
	struct pair x;
	pair_up(&x, NULL);
	DAT_EP_HANDLE a2;
	check_ok(dat_ep_create(x.a.ia, x.a.pz, x.a.recv, x.a.req, x.a.conn, NULL, &a2));
	check_ok(dat_ep_dup_connect(a2, x.a.ep, 200000, 0, NULL, DAT_QOS_BEST_EFFORT));
	expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT); /* never answered */
	DAT_EVENT ev = expect_ev(x.a.conn, DAT_CONNECTION_EVENT_TIMED_OUT);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, a2);
	assert_int_equal(ep_state(a2), DAT_EP_STATE_DISCONNECTED);
	pair_close(&x);
}

/* The new connection needs a file descriptor; with none left the call
 * fails at once. */
static void insufficient_resources(void **state)
{
	(void)state;
	struct pair x;
	pair_up(&x, NULL);
	DAT_EP_HANDLE a2;
	check_ok(dat_ep_create(x.a.ia, x.a.pz, x.a.recv, x.a.req, x.a.conn, NULL, &a2));
	struct rlimit old = fds_exhaust();
	DAT_RETURN r = dup_connect(a2, x.a.ep, NULL);
	fds_restore(old);
	check_type(r, DAT_INSUFFICIENT_RESOURCES);
	assert_int_equal(ep_state(a2), DAT_EP_STATE_UNCONNECTED);
	pair_close(&x);
}

/* "private_data_size: Size of private_data. Must be nonnegative."
 * "timeout: ... Values must be positive." More private data than the
 * provider takes is an invalid private_data_size too (argument 4 here,
 * where dat_ep_connect has it 5th). */
static void invalid_parameter(void **state)
{
	(void)state;
	struct pair x;
	pair_up(&x, NULL);
	DAT_EP_HANDLE a2;
	check_ok(dat_ep_create(x.a.ia, x.a.pz, x.a.recv, x.a.req, x.a.conn, NULL, &a2));
	char pd[1024] = "x";
	DAT_PROVIDER_ATTR pa;
	DAT_EVD_HANDLE async;
	check_ok(dat_ia_query(x.a.ia, &async, 0, NULL, DAT_PROVIDER_FIELD_ALL, &pa));
	assert_true(pa.max_private_data_size < (DAT_COUNT)sizeof pd);
	check_ret(dat_ep_dup_connect(a2, x.a.ep, CONN_TMO, pa.max_private_data_size + 1, pd, DAT_QOS_BEST_EFFORT),
		  DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	/* A size far past a small buffer is refused before the buffer is
	 * read (issue 15). */
	char *small = malloc(8);
	assert_non_null(small);
	check_ret(dat_ep_dup_connect(a2, x.a.ep, CONN_TMO, INT_MAX, small, DAT_QOS_BEST_EFFORT), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG4);
	free(small);
	check_ret(dat_ep_dup_connect(a2, x.a.ep, 0, 0, NULL, DAT_QOS_BEST_EFFORT), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG3);
	check_ret(dat_ep_dup_connect(a2, x.a.ep, CONN_TMO, -1, pd, DAT_QOS_BEST_EFFORT), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG4);
	check_ret(dat_ep_dup_connect(a2, x.a.ep, CONN_TMO, 8, NULL, DAT_QOS_BEST_EFFORT), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG4);
	check_ret(dat_ep_dup_connect(a2, x.a.ep, CONN_TMO, 0, NULL, (DAT_QOS)0x100), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG6);
	assert_int_equal(ep_state(a2), DAT_EP_STATE_UNCONNECTED);
	pair_close(&x);
}

/* "The ep_handle or dup_ep_handle parameter is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct pair x;
	pair_up(&x, NULL);
	DAT_EP_HANDLE a2;
	check_ok(dat_ep_create(x.a.ia, x.a.pz, x.a.recv, x.a.req, x.a.conn, NULL, &a2));
	check_ret(dup_connect(x.a.pz, x.a.ep, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dup_connect(a2, x.a.pz, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dup_connect(a2, DAT_HANDLE_NULL, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dup_connect(dead_ep(), x.a.ep, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	pair_close(&x);
}

/* "A parameter is in an invalid state": dup_ep_handle must be a
 * "Connected local Endpoint", and ep_handle must be unconnected. */
static void invalid_state(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_EP_HANDLE a2;
	check_ok(dat_ep_create(x.a.ia, x.a.pz, x.a.recv, x.a.req, x.a.conn, NULL, &a2));
	check_ret(dup_connect(a2, x.a.ep, NULL), DAT_INVALID_STATE, DAT_INVALID_STATE_EP_UNCONNECTED);
	pair_connect(&x);
	check_ret(dup_connect(x.a.ep, x.a.ep, NULL), DAT_INVALID_STATE, DAT_INVALID_STATE_EP_CONNECTED);
	pair_disconnect(&x);
	check_ret(dup_connect(a2, x.a.ep, NULL), DAT_INVALID_STATE, DAT_INVALID_STATE_EP_DISCONNECTED);
	assert_int_equal(ep_state(a2), DAT_EP_STATE_UNCONNECTED);
	pair_close(&x);
}

/* "If the local Provider or Transport does not support the requested qos,
 * the operation fails and DAT_MODEL_NOT_SUPPORTED is returned
 * synchronously." */
static void model_not_supported(void **state)
{
	(void)state;
	struct pair x;
	pair_up(&x, NULL);
	DAT_EP_HANDLE a2;
	check_ok(dat_ep_create(x.a.ia, x.a.pz, x.a.recv, x.a.req, x.a.conn, NULL, &a2));
	check_type(dat_ep_dup_connect(a2, x.a.ep, CONN_TMO, 0, NULL, DAT_QOS_HIGH_THROUGHPUT), DAT_MODEL_NOT_SUPPORTED);
	assert_int_equal(ep_state(a2), DAT_EP_STATE_UNCONNECTED);
	expect_empty(x.p.cr);
	pair_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_same_remote),
		cmocka_unit_test(peer_rejected),
		cmocka_unit_test(non_peer_rejected),
		cmocka_unit_test(timed_out),
		cmocka_unit_test(insufficient_resources),
		cmocka_unit_test(invalid_parameter),
		cmocka_unit_test(invalid_handle),
		cmocka_unit_test(invalid_state),
		cmocka_unit_test(model_not_supported),
	};
	return cmocka_run_group_tests_name("dat_ep_dup_connect", tests, NULL, NULL);
}
