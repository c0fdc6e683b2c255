/* dat_rmr_free(3DAT): every return value; freeing a bound RMR unbinds it. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_rmr_free() function is allowed on either bound or
 * unbound RMR. If RMR is bound, dat_rmr_free() unbinds ... and then free
 * RMR." The LMR it was bound to is free to go afterwards, and "Any remote
 * RDMA operation that uses the destroyed RMR rmr_context, whose
 * Transport-specific request arrived to the local host after the
 * dat_rmr_free() has completed, fails and reports a protection
 * violation" (DAT_DTO_ERR_REMOTE_ACCESS at the peer, nothing written);
 * "If it fails, DAT_DTO_ERR_REMOTE_ACCESS is reported in
 * DAT_DTO_COMPLETION_STATUS for the remote RDMA DTO and the connection is
 * broken" (broken.h). */
static void test_rmr_free_success(void **state)
{
	(void)state;
	static char buf[128], src[16] = "after free";
	struct pair p;
	pair_open(&p, NULL);
	pair_connect(&p);
	DAT_RMR_HANDLE unbound, bound;
	check_ok(dat_rmr_create(p.pz[0], &unbound));
	check_ok(dat_rmr_free(unbound));

	struct lmr l = make_lmr(p.ia[0], p.pz[0], buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET t = triplet(&l, buf, sizeof buf);
	DAT_RMR_COOKIE ck = {.as_64 = 1};
	DAT_RMR_CONTEXT rc;
	check_ok(dat_rmr_create(p.pz[0], &bound));
	check_ok(dat_rmr_bind(bound, &t, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, p.ep[0], ck, 0, &rc));
	wait_event(p.evd[0], DAT_RMR_BIND_COMPLETION_EVENT);
	check_ok(dat_rmr_free(bound));

	struct lmr s = make_lmr(p.ia[1], p.pz[1], src, sizeof src, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET st = triplet(&s, src, sizeof src);
	DAT_RMR_TRIPLET r = {.rmr_context = rc, .target_address = (DAT_VADDR)(uintptr_t)buf, .segment_length = sizeof src};
	DAT_DTO_COOKIE dc = {.as_64 = 2};
	check_ok(dat_ep_post_rdma_write(p.ep[1], 1, &st, dc, &r, DAT_COMPLETION_DEFAULT_FLAG));
	pair_expect_broken(&p, 1, 2);
	for (size_t i = 0; i < sizeof buf; i++)
		assert_int_equal(buf[i], 0);
	check_ok(dat_lmr_free(l.h));
	pair_close(&p);
}

/* DAT_INVALID_HANDLE: "The rmr_handle handle is invalid": NULL, another
 * type, a freed RMR (DAT_INVALID_HANDLE_RMR). "Use of the handle of the
 * destroyed RMR in any subsequent operation except for the dat_rmr_free()
 * fails": query and bind fail too. */
static void test_rmr_free_invalid_handle(void **state)
{
	(void)state;
	static char buf[64];
	struct pair p;
	pair_open(&p, NULL);
	pair_connect(&p);
	DAT_RMR_HANDLE rmr;
	check_ok(dat_rmr_create(p.pz[0], &rmr));
	check_ok(dat_rmr_free(rmr));
	check_ret(dat_rmr_free(DAT_HANDLE_NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
	check_ret(dat_rmr_free(p.pz[0]), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
	check_ret(dat_rmr_free(rmr), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
	DAT_RMR_PARAM rp;
	check_ret(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &rp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
	struct lmr l = make_lmr(p.ia[0], p.pz[0], buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET t = triplet(&l, buf, sizeof buf);
	DAT_RMR_COOKIE ck = {.as_64 = 1};
	DAT_RMR_CONTEXT rc;
	check_ret(dat_rmr_bind(rmr, &t, DAT_MEM_PRIV_REMOTE_READ_FLAG, p.ep[0], ck, 0, &rc), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_RMR);
	pair_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rmr_free_success),
		cmocka_unit_test(test_rmr_free_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_rmr_free", tests, NULL, NULL);
}
