/* dat_cr_accept(3DAT): accepting a connection request. */
#include <limits.h>
#include "conn.h"

static DAT_CR_HANDLE request(struct pair *x, DAT_TIMEOUT tmo)
{
	check_ok(connect_ep(x->a.ep, x->q, tmo, "request"));
	DAT_EVENT ev = expect_ev(x->p.cr, DAT_CONNECTION_REQUEST_EVENT);
	return ev.event_data.cr_arrival_event_data.cr_handle;
}

/* "The dat_cr_accept() function establishes a Connection between the
 * active remote side requesting Endpoint and the passive side local
 * Endpoint." "Consumers can specify private data that is provided to the
 * remote side upon Connection establishment." "The successful completion
 * of the operation is reported through a Connection Event of type
 * DAT_CONNECTION_EVENT_ESTABLISHED on the connect_evd of the local
 * Endpoint." "This operation, if successful, also destroys the Connection
 * Request instance. Use of the handle of the destroyed cr_handle in any
 * consequent operation fails." */
static void success_established(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_CR_HANDLE cr = request(&x, CONN_TMO);
	check_ok(dat_cr_accept(cr, x.p.ep, 9, "accepted"));
	DAT_EVENT ev = expect_ev(x.p.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, x.p.ep);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_CONNECTED);
	ev = expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_int_equal(ev.event_data.connect_event_data.private_data_size, 9);
	assert_string_equal((char *)ev.event_data.connect_event_data.private_data, "accepted");
	DAT_CR_PARAM crp;
	check_ret(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	check_ret(dat_cr_accept(cr, x.p.ep, 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	check_ret(dat_cr_reject(cr), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	pair_close(&x);
}

/* "The local Endpoint is either specified explicitly by ep_handle or
 * implicitly by a Connection Request. In the second case, ep_handle is
 * DAT_HANDLE_NULL." (the EP of a reserved service point) */
static void implicit_ep(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(x.p.ia, 0x4CC0, x.p.ep, x.p.cr, &rsp));
	check_ok(connect_ep(x.a.ep, 0x4CC0, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, DAT_HANDLE_NULL, 0, NULL));
	ev = expect_ev(x.p.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, x.p.ep);
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	pair_close(&x);
}

/* "If the provided local Endpoint does not satisfy the requested
 * Connection Request, the operation fails without any effect on the local
 * Endpoint, Pending Connection Request, private data, or remote Endpoint."
 * A connected EP cannot take the request; the request, its private data
 * and the EP are unchanged, and another EP accepts it. */
static void unsuitable_ep_no_effect(void **state)
{
	(void)state;
	struct pair x;
	pair_up(&x, NULL);
	DAT_EP_HANDLE a2, p2;
	check_ok(dat_ep_create(x.a.ia, x.a.pz, x.a.recv, x.a.req, x.a.conn, NULL, &a2));
	check_ok(dat_ep_create(x.p.ia, x.p.pz, x.p.recv, x.p.req, x.p.conn, NULL, &p2));
	check_ok(connect_ep(a2, x.q, CONN_TMO, "second"));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	assert_int_not_equal(dat_cr_accept(cr, x.p.ep, 0, NULL), DAT_SUCCESS);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_CONNECTED);
	DAT_CR_PARAM crp;
	check_ok(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	assert_string_equal((char *)crp.private_data, "second");
	assert_int_equal(ep_state(a2), DAT_EP_STATE_ACTIVE_CONNECTION_PENDING);
	expect_empty(x.a.conn);
	check_ok(dat_cr_accept(cr, p2, 0, NULL));
	ev = expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, a2);
	pair_close(&x);
}

/* "If the Provider cannot complete the Connection establishment, the
 * connection is not established and the Consumer is notified through a
 * Connection Event of type DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR on
 * the connect_evd of the local Endpoint. It can be caused by the active
 * side timeout expiration ... If Connection is not established, Endpoint
 * transitions into Disconnected state and all posted Recv DTOs are flushed
 * to its recv_evd_handle." */
static void accept_completion_error(void **state)
{
	(void)state;
	struct pair x;
	struct mem m;
	pair_open(&x, NULL);
	mem_reg(&m, x.p.ia, x.p.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET r = iov_at(&m, 0, 64);
	check_ok(dat_ep_post_recv(x.p.ep, 1, &r, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	DAT_CR_HANDLE cr = request(&x, 100000);
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_TIMED_OUT); /* the active side gave up */
	check_ok(dat_cr_accept(cr, x.p.ep, 0, NULL));
	DAT_EVENT ev = expect_ev(x.p.conn, DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, x.p.ep);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_DISCONNECTED);
	expect_dto(x.p.recv, x.p.ep, 1, DAT_DTO_ERR_FLUSHED);
	/* The EP can be reset and used again. */
	check_ok(dat_ep_reset(x.p.ep));
	check_ok(dat_ep_reset(x.a.ep));
	pair_connect(&x);
	mem_free(&m, 0);
	pair_close(&x);
}

/* "The cr_handle or ep_handle parameter is invalid." A PSP request carries
 * no EP, so DAT_HANDLE_NULL is not a valid ep_handle for it. */
static void invalid_handle(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_CR_HANDLE cr = request(&x, CONN_TMO);
	check_ret(dat_cr_accept(x.p.ep, x.p.ep, 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	check_ret(dat_cr_accept(DAT_HANDLE_NULL, x.p.ep, 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	check_ret(dat_cr_accept(cr, x.p.pz, 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_cr_accept(cr, DAT_HANDLE_NULL, 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_cr_accept(cr, x.a.ep, 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP); /* other IA */
	check_ret(dat_cr_accept(cr, dead_ep(), 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ok(dat_cr_accept(cr, x.p.ep, 0, NULL)); /* still pending */
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	pair_close(&x);
}

/* "The private_data_size or private_data parameter is invalid, out of
 * range, or a combination of parameters was invalid" */
static void invalid_parameter(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	DAT_CR_HANDLE cr = request(&x, CONN_TMO);
	DAT_PROVIDER_ATTR pa;
	DAT_EVD_HANDLE async;
	check_ok(dat_ia_query(x.p.ia, &async, 0, NULL, DAT_PROVIDER_FIELD_ALL, &pa));
	char *big = calloc(1, (size_t)pa.max_private_data_size + 1);
	assert_non_null(big);
	check_ret(dat_cr_accept(cr, x.p.ep, -1, "x"), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ret(dat_cr_accept(cr, x.p.ep, 4, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ret(dat_cr_accept(cr, x.p.ep, pa.max_private_data_size + 1, big), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG3);
	/* A size far past a small buffer is refused before the buffer is
	 * read (issue 15). */
	char *small = malloc(8);
	assert_non_null(small);
	check_ret(dat_cr_accept(cr, x.p.ep, INT_MAX, small), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	free(small);
	assert_int_equal(ep_state(x.p.ep), DAT_EP_STATE_UNCONNECTED);
	check_ok(dat_cr_accept(cr, x.p.ep, pa.max_private_data_size, big)); /* the largest is fine */
	DAT_EVENT ev = expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_int_equal(ev.event_data.connect_event_data.private_data_size, pa.max_private_data_size);
	free(big);
	pair_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_established),
		cmocka_unit_test(implicit_ep),
		cmocka_unit_test(unsuitable_ep_no_effect),
		cmocka_unit_test(accept_completion_error),
		cmocka_unit_test(invalid_handle),
		cmocka_unit_test(invalid_parameter),
	};
	return cmocka_run_group_tests_name("dat_cr_accept", tests, NULL, NULL);
}
