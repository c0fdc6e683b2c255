/* dat_psp_free(3DAT): stop listening; pending requests stay valid. */
#include "conn.h"

/* "The dat_psp_free() function destroys a specified instance of the Public
 * Service Point." "Use of the handle of the destroyed Public Service Point
 * in any consequent operation fails." "Any incoming Connection Requests for
 * the Connection Qualifier on the destroyed Service Point it had been
 * listening on are automatically rejected by the Provider with the return
 * analogous to the no listening Service Point." */
static void success_stops_listening(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	check_ok(dat_psp_free(x.psp));
	DAT_PSP_PARAM p;
	check_ret(dat_psp_query(x.psp, DAT_PSP_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PSP);
	check_ok(connect_ep(x.a.ep, x.q, CONN_TMO, NULL));
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_NON_PEER_REJECTED);
	expect_empty(x.p.cr);
	/* The qualifier is free for a new service point. */
	DAT_PSP_HANDLE again;
	check_ok(dat_psp_create(x.p.ia, x.q, x.p.cr, DAT_PSP_CONSUMER_FLAG, &again));
	pair_close(&x);
}

/* "This operation shall have no effect on previously generated Connection
 * Requested Events. This includes Connection Request instances": a request
 * that arrived before the free can still be accepted. */
static void pending_requests_survive(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	check_ok(connect_ep(x.a.ep, x.q, CONN_TMO, "before-free"));
	DAT_EVENT ev = expect_ev(x.p.cr, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_psp_free(x.psp));
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	DAT_CR_PARAM crp;
	check_ok(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	assert_string_equal((char *)crp.private_data, "before-free");
	check_ok(dat_cr_accept(cr, x.p.ep, 0, NULL));
	expect_ev(x.a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	expect_ev(x.p.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	pair_close(&x);
}

/* "The psp_handle parameter is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct pair x;
	pair_open(&x, NULL);
	check_ok(dat_psp_free(x.psp));
	check_ret(dat_psp_free(x.psp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PSP);
	check_ret(dat_psp_free(x.p.ep), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PSP);
	check_ret(dat_psp_free(DAT_HANDLE_NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PSP);
	/* An RSP is not a PSP. */
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(x.p.ia, 0xF3EE, x.p.ep, x.p.cr, &rsp));
	check_ret(dat_psp_free(rsp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PSP);
	pair_close(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_stops_listening),
		cmocka_unit_test(pending_requests_survive),
		cmocka_unit_test(invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_psp_free", tests, NULL, NULL);
}
