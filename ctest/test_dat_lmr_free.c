/* dat_lmr_free(3DAT): every return value; a freed LMR's contexts stop
 * working locally and for the peer; the memory itself stays. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_lmr_free() function destroys an instance of the
 * LMR." "The operation does not deallocate the memory region or unpin
 * memory on a host": the buffer is still the program's and can be
 * registered again. */
static void test_lmr_free_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	char *buf = malloc(4096);
	assert_non_null(buf);
	memset(buf, 'a', 4096);
	struct lmr l = make_lmr(ia, pz, buf, 4096, DAT_MEM_PRIV_ALL_FLAG);
	check_ok(dat_lmr_free(l.h));
	memset(buf, 'b', 4096);
	assert_int_equal(buf[4095], 'b');
	l = make_lmr(ia, pz, buf, 4096, DAT_MEM_PRIV_ALL_FLAG);
	check_ok(dat_lmr_free(l.h));
	free(buf);
	check_ok(dat_pz_free(pz));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* "Any DTO operation that uses the destroyed LMR after the dat_lmr_free()
 * is completed shall fail and report a protection violation": a send from
 * the freed lmr_context is refused (with the code dat_ep_post_send(3DAT)
 * gives an invalid LMR, DAT_PRIVILEGES_VIOLATION) and sends nothing.
 * "Any remote RDMA operation that uses the destroyed LMR rmr_context,
 * whose Transport-specific request arrived to the local host after the
 * dat_lmr_free() has completed, fails and reports a protection
 * violation": the peer's RDMA write completes with
 * DAT_DTO_ERR_REMOTE_ACCESS and writes nothing, and "The use of
 * rmr_context of the destroyed LMR by a remote peer for an RDMA DTO results
 * in an error and broken connection on which it was used" (broken.h). */
static void test_lmr_free_contexts_die(void **state)
{
	(void)state;
	static char target[64], src[64] = "too late";
	struct pair p;
	pair_open(&p, NULL);
	pair_connect(&p);
	struct lmr t = make_lmr(p.ia[0], p.pz[0], target, sizeof target, DAT_MEM_PRIV_ALL_FLAG);
	struct lmr s = make_lmr(p.ia[1], p.pz[1], src, sizeof src, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET siov = triplet(&s, src, sizeof src), tiov = triplet(&t, target, sizeof target);
	DAT_RMR_TRIPLET r = {.rmr_context = t.rctx, .target_address = t.addr, .segment_length = sizeof target};
	DAT_DTO_COOKIE ck = {.as_64 = 11};
	check_ok(dat_lmr_free(t.h));

	check_ok(dat_ep_post_rdma_write(p.ep[1], 1, &siov, ck, &r, DAT_COMPLETION_DEFAULT_FLAG));
	pair_expect_broken(&p, 1, 11);
	for (size_t i = 0; i < sizeof target; i++)
		assert_int_equal(target[i], 0);
	/* Locally, on a fresh connection. */
	pair_close(&p);
	pair_open(&p, NULL);
	pair_connect(&p);
	t = make_lmr(p.ia[1], p.pz[1], target, sizeof target, DAT_MEM_PRIV_ALL_FLAG);
	tiov = triplet(&t, target, sizeof target);
	check_ok(dat_lmr_free(t.h));
	/* dat_ep_post_send(3DAT) names the error for an LMR that "is
	 * invalid": DAT_PRIVILEGES_VIOLATION, at once. */
	check_ret(dat_ep_post_send(p.ep[1], 1, &tiov, ck, DAT_COMPLETION_DEFAULT_FLAG), DAT_PRIVILEGES_VIOLATION,
		  DAT_PRIVILEGES_READ);
	expect_empty(p.evd[1]);
	pair_close(&p);
}

/* DAT_INVALID_STATE: "LMR is in use by an RMR instance"
 * (DAT_INVALID_STATE_LMR_IN_USE): an RMR bound to the LMR keeps it; once
 * the RMR is unbound (bound with length 0) or freed the LMR can go. An
 * LMR registered over it (DAT_MEM_TYPE_LMR) keeps it too. */
static void test_lmr_free_invalid_state(void **state)
{
	(void)state;
	static char buf[256];
	struct pair p;
	pair_open(&p, NULL);
	pair_connect(&p);
	DAT_RMR_HANDLE rmr;
	DAT_RMR_CONTEXT rc;
	DAT_RMR_COOKIE ck = {.as_64 = 1};
	struct lmr l = make_lmr(p.ia[0], p.pz[0], buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET t = triplet(&l, buf, 128);
	check_ok(dat_rmr_create(p.pz[0], &rmr));
	check_ok(dat_rmr_bind(rmr, &t, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, p.ep[0], ck, DAT_COMPLETION_DEFAULT_FLAG, &rc));
	wait_event(p.evd[0], DAT_RMR_BIND_COMPLETION_EVENT);
	check_ret(dat_lmr_free(l.h), DAT_INVALID_STATE, DAT_INVALID_STATE_LMR_IN_USE);
	t.segment_length = 0;
	check_ok(dat_rmr_bind(rmr, &t, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, p.ep[0], ck, DAT_COMPLETION_DEFAULT_FLAG, &rc));
	wait_event(p.evd[0], DAT_RMR_BIND_COMPLETION_EVENT);
	check_ok(dat_lmr_free(l.h));

	l = make_lmr(p.ia[0], p.pz[0], buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	t = triplet(&l, buf, 64);
	check_ok(dat_rmr_bind(rmr, &t, DAT_MEM_PRIV_REMOTE_READ_FLAG, p.ep[0], ck, DAT_COMPLETION_DEFAULT_FLAG, &rc));
	wait_event(p.evd[0], DAT_RMR_BIND_COMPLETION_EVENT);
	check_ret(dat_lmr_free(l.h), DAT_INVALID_STATE, DAT_INVALID_STATE_LMR_IN_USE);
	check_ok(dat_rmr_free(rmr));
	check_ok(dat_lmr_free(l.h));

	l = make_lmr(p.ia[0], p.pz[0], buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	DAT_REGION_DESCRIPTION rd = {.for_lmr_handle = l.h};
	DAT_LMR_HANDLE over;
	check_ok(dat_lmr_create(p.ia[0], DAT_MEM_TYPE_LMR, rd, 0, p.pz[0], DAT_MEM_PRIV_LOCAL_READ_FLAG, &over, NULL,
				NULL, NULL, NULL));
	check_ret(dat_lmr_free(l.h), DAT_INVALID_STATE, DAT_INVALID_STATE_LMR_IN_USE);
	check_ok(dat_lmr_free(over));
	check_ok(dat_lmr_free(l.h));
	pair_close(&p);
}

/* DAT_INVALID_HANDLE: "The lmr_handle parameter is invalid": NULL,
 * another type, a freed LMR (DAT_INVALID_HANDLE_LMR). "Use of the handle
 * of the destroyed LMR in any subsequent operation except for
 * dat_lmr_free() fails." */
static void test_lmr_free_invalid_handle(void **state)
{
	(void)state;
	static char buf[64];
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	struct lmr l = make_lmr(ia, pz, buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	check_ok(dat_lmr_free(l.h));
	check_ret(dat_lmr_free(DAT_HANDLE_NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	check_ret(dat_lmr_free(pz), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	check_ret(dat_lmr_free(l.h), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	DAT_LMR_PARAM lp;
	check_ret(dat_lmr_query(l.h, DAT_LMR_FIELD_ALL, &lp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	DAT_REGION_DESCRIPTION rd = {.for_lmr_handle = l.h};
	DAT_LMR_HANDLE h;
	check_ret(dat_lmr_create(ia, DAT_MEM_TYPE_LMR, rd, 0, pz, DAT_MEM_PRIV_ALL_FLAG, &h, NULL, NULL, NULL, NULL),
		  DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	DAT_LMR_TRIPLET t = triplet(&l, buf, sizeof buf);
	check_ret(dat_lmr_sync_rdma_read(ia, &t, 1), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lmr_free_success),
		cmocka_unit_test(test_lmr_free_contexts_die),
		cmocka_unit_test(test_lmr_free_invalid_state),
		cmocka_unit_test(test_lmr_free_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_lmr_free", tests, NULL, NULL);
}
