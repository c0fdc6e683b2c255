/* dat_ia_close(3DAT): every provokable return value, the abrupt cascading
 * close (objects destroyed, waiters released) and the graceful close. */
#define _GNU_SOURCE
#include "pages.h"

static int is_dead(DAT_HANDLE h)
{
	DAT_HANDLE_TYPE t;
	return DAT_GET_TYPE(dat_get_handle_type(h, &t)) == DAT_INVALID_HANDLE;
}

/* DAT_SUCCESS: "The dat_ia_close() function closes an IA (destroys an
 * instance of the Interface Adapter)." Both flags close a fresh IA, and
 * DAT_CLOSE_DEFAULT is the abrupt close; the handle is dead afterwards. */
static void test_ia_close_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE a = open_ia(NULL), b = open_ia(NULL), c = open_ia(NULL);
	assert_int_equal(DAT_CLOSE_DEFAULT, DAT_CLOSE_ABRUPT_FLAG);
	check_ok(dat_ia_close(a, DAT_CLOSE_GRACEFUL_FLAG));
	check_ok(dat_ia_close(b, DAT_CLOSE_ABRUPT_FLAG));
	check_ok(dat_ia_close(c, DAT_CLOSE_DEFAULT));
	assert_true(is_dead(a));
	assert_true(is_dead(b));
	assert_true(is_dead(c));
}

/* "The abrupt close does a phased, cascading destroy. All DAT Objects
 * associated with an IA instance are destroyed. These include all the
 * connection oriented Objects: public and reserved Service Points;
 * Endpoints, Connection Requests, LMRs (including lmr_contexts), RMRs
 * (including rmr_contexts), Event Dispatchers, CNOs, and Protection
 * Zones." Every handle is dead after the close, a pending connection
 * request among them. "If async EVD was created as part of of
 * dat_ia_open(3DAT), dat_ia_close() must destroy it." */
static void test_ia_close_abrupt_destroys_everything(void **state)
{
	(void)state;
	static char buf[256];
	struct pair p;
	DAT_RSP_HANDLE rsp;
	DAT_EP_HANDLE rep;
	DAT_CNO_HANDLE cno;
	DAT_RMR_HANDLE rmr;
	pair_open(&p, NULL);
	DAT_IA_HANDLE ia = p.ia[0];
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_HANDLE sw = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	check_ok(dat_rmr_create(p.pz[0], &rmr));
	struct lmr l = make_lmr(ia, p.pz[0], buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	check_ok(dat_ep_create(ia, p.pz[0], p.evd[0], p.evd[0], p.evd[0], NULL, &rep));
	check_ok(dat_rsp_create(ia, p.qual + 1, rep, p.cr, &rsp));
	/* A connection request that is never answered. */
	struct sockaddr_in sa = loopback_addr();
	check_ok(dat_ep_connect(p.ep[1], (DAT_IA_ADDRESS_PTR)&sa, p.qual, TMO_US, 0, NULL, DAT_QOS_BEST_EFFORT,
				DAT_CONNECT_DEFAULT_FLAG));
	DAT_EVENT ev = wait_event(p.cr, DAT_CONNECTION_REQUEST_EVENT);
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	post_se(sw, 1);

	DAT_HANDLE all[] = {ia, p.async[0], p.evd[0], p.cr, sw, p.pz[0], p.ep[0], rep, p.psp, rsp, cr, cno, rmr, l.h};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		assert_false(is_dead(all[i]));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		if (!is_dead(all[i]))
			fail_msg("handle %zu (%p) survived the abrupt close", i, all[i]);
	/* The LMR's context no longer names registered memory. */
	check_ok(dat_ia_close(p.ia[1], DAT_CLOSE_ABRUPT_FLAG));
}

/* "All the waiters on all CNOs ... are unblocked with the DAT_HANDLE_NULL
 * handle returns for an unblocking EVD. All direct waiters on all EVDs are
 * also unblocked and return with DAT_ABORT." */
static void test_ia_close_abrupt_releases_waiters(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	DAT_EVD_HANDLE fed = make_evd(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	(void)fed;
	struct blocked w, c;
	blocked_start(&w, blocked_evd_main, evd, 20 * 1000000, 1);
	blocked_start(&c, blocked_cno_main, cno, 20 * 1000000, 0);
	wait_until_sleeping(&w);
	wait_until_sleeping(&c);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	blocked_join(&w, 10);
	blocked_join(&c, 10);
	check_ret(w.ret, DAT_ABORT, DAT_NO_SUBTYPE);
	check_ok(c.ret);
	assert_null(c.evd_out);
}

/* "The graceful close does a destroy only if the Consumer has done a
 * cleanup of all DAT objects created by the Consumer with the exception
 * of the asynchronous EVD." "Because the Consumer did not create async EVD
 * explicitly, the Consumer does not need to destroy it for graceful close
 * to succeed." The async EVD is destroyed with the IA. */
static void test_ia_close_graceful_after_cleanup(void **state)
{
	(void)state;
	DAT_EVD_HANDLE async;
	DAT_IA_HANDLE ia = open_ia(&async);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	check_ok(dat_pz_free(pz));
	check_ok(dat_evd_free(evd));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
	assert_true(is_dead(async));
}

/* "If async_evd_handle was passed in by the Consumer at dat_ia_open(), this
 * handle is not destroyed. This is applicable to both abrupt and graceful
 * ia_flags values." */
static void test_ia_close_keeps_consumer_async_evd(void **state)
{
	(void)state;
	DAT_EVD_HANDLE async;
	DAT_IA_HANDLE owner = open_ia(&async);
	for (int abrupt = 0; abrupt < 2; abrupt++) {
		DAT_EVD_HANDLE given = async;
		DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
		check_ok(dat_ia_open(TEST_IA, 0, &given, &ia));
		check_ok(dat_ia_close(ia, abrupt ? DAT_CLOSE_ABRUPT_FLAG : DAT_CLOSE_GRACEFUL_FLAG));
		assert_false(is_dead(async));
		assert_true(evd_qlen(async) > 0); /* still queryable */
		expect_empty(async);
	}
	check_ok(dat_ia_close(owner, DAT_CLOSE_GRACEFUL_FLAG));
}

/* DAT_INVALID_HANDLE: "ia_handle is invalid": NULL, an IA already closed,
 * a handle of another type (DAT_INVALID_HANDLE_IA). */
static void test_ia_close_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL), closed = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	check_ok(dat_ia_close(closed, DAT_CLOSE_GRACEFUL_FLAG));
	check_ret(dat_ia_close(DAT_HANDLE_NULL, DAT_CLOSE_ABRUPT_FLAG), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	check_ret(dat_ia_close(closed, DAT_CLOSE_ABRUPT_FLAG), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	check_ret(dat_ia_close(pz, DAT_CLOSE_ABRUPT_FLAG), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	assert_false(is_dead(pz));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_PARAMETER: "ia_flags is invalid" (argument 2); the IA stays
 * open. */
static void test_ia_close_invalid_parameter(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	check_ret(dat_ia_close(ia, (DAT_CLOSE_FLAGS)2), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_ia_close(ia, (DAT_CLOSE_FLAGS)-1), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	assert_false(is_dead(ia));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* DAT_INVALID_STATE: "IA instance has Consumer-created objects associated
 * with it" (DAT_INVALID_STATE_IA_IN_USE): "the operation does not destroy
 * the IA instance". Any one object is enough; after it is freed the
 * graceful close succeeds. */
static void test_ia_close_invalid_state(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	check_ret(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG), DAT_INVALID_STATE, DAT_INVALID_STATE_IA_IN_USE);
	assert_false(is_dead(ia));
	assert_false(is_dead(pz));
	check_ok(dat_pz_free(pz));
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ret(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG), DAT_INVALID_STATE, DAT_INVALID_STATE_IA_IN_USE);
	check_ok(dat_cno_free(cno));
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	check_ret(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG), DAT_INVALID_STATE, DAT_INVALID_STATE_IA_IN_USE);
	check_ok(dat_evd_free(evd));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* USAGE: "This is the general cleanup and last resort method for Consumer
 * recovery. An implementation must provide for successful completion
 * under all conditions": an abrupt close of an IA with a connected,
 * busy endpoint succeeds, and the peer sees the connection end. */
static void test_ia_close_abrupt_connected(void **state)
{
	(void)state;
	struct pair p;
	static char rbuf[64];
	pair_open(&p, NULL);
	pair_connect(&p);
	struct lmr l = make_lmr(p.ia[0], p.pz[0], rbuf, sizeof rbuf, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET t = triplet(&l, rbuf, sizeof rbuf);
	DAT_DTO_COOKIE ck = {.as_64 = 9};
	check_ok(dat_ep_post_recv(p.ep[0], 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ia_close(p.ia[0], DAT_CLOSE_ABRUPT_FLAG));
	DAT_EVENT ev;
	DAT_COUNT n;
	check_ok(dat_evd_wait(p.evd[1], TMO_US, 1, &ev, &n));
	assert_true(ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED ||
		    ev.event_number == DAT_CONNECTION_EVENT_BROKEN);
	check_ok(dat_ia_close(p.ia[1], DAT_CLOSE_ABRUPT_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ia_close_success),
		cmocka_unit_test(test_ia_close_abrupt_destroys_everything),
		cmocka_unit_test(test_ia_close_abrupt_releases_waiters),
		cmocka_unit_test(test_ia_close_graceful_after_cleanup),
		cmocka_unit_test(test_ia_close_keeps_consumer_async_evd),
		cmocka_unit_test(test_ia_close_invalid_handle),
		cmocka_unit_test(test_ia_close_invalid_parameter),
		cmocka_unit_test(test_ia_close_invalid_state),
		cmocka_unit_test(test_ia_close_abrupt_connected),
	};
	return cmocka_run_group_tests_name("dat_ia_close", tests, NULL, NULL);
}
