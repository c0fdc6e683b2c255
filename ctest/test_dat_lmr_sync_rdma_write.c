/* dat_lmr_sync_rdma_write(3DAT): every return value. Memory is coherent on
 * every platform this provider runs on (lmr_sync_req is DAT_FALSE), so the
 * call checks its segments and the program sees a peer's RDMA write without
 * it. */
#define _GNU_SOURCE
#include "lmr_sync.h"

/* DAT_SUCCESS: "It is permissible to batch synchronizations of multiple
 * RDMA Write operations in a single call by passing a local_segments array
 * that includes all modified memory ranges. The local_segments entries
 * need not contain the same LMR and need not be in the same Protection
 * Zone." */
static void test_lmr_sync_rdma_write_success(void **state)
{
	(void)state;
	static char a[128], b[128];
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz1 = make_pz(ia), pz2 = make_pz(ia);
	struct lmr la = make_lmr(ia, pz1, a, sizeof a, DAT_MEM_PRIV_ALL_FLAG);
	struct lmr lb = make_lmr(ia, pz2, b, sizeof b, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET segs[3] = {triplet(&la, a, sizeof a), triplet(&lb, b + 10, 20), triplet(&la, a + 127, 1)};
	check_ok(dat_lmr_sync_rdma_write(ia, segs, 3));
	check_ok(dat_lmr_sync_rdma_write(ia, segs + 1, 1));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "The dat_lmr_sync_rdma_write() function is needed if and only if the
 * Provider attribute specifies that this operation is needed after an
 * incoming RDMA Write operation." This provider says it is not
 * (lmr_sync_req DAT_FALSE), and after a peer's RDMA write completes the
 * program reads the new contents, with or without the call. */
static void test_lmr_sync_rdma_write_not_required(void **state)
{
	(void)state;
	static char src[32], dst[32];
	struct pair p;
	DAT_PROVIDER_ATTR pa;
	pair_open(&p, NULL);
	check_ok(dat_ia_query(p.ia[0], NULL, 0, NULL, DAT_PROVIDER_FIELD_LMR_SYNC_REQ, &pa));
	assert_int_equal(pa.lmr_sync_req, DAT_FALSE);
	pair_connect(&p);
	struct lmr d = make_lmr(p.ia[0], p.pz[0], dst, sizeof dst, DAT_MEM_PRIV_ALL_FLAG);
	struct lmr s = make_lmr(p.ia[1], p.pz[1], src, sizeof src, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET st = triplet(&s, src, sizeof src), dt = triplet(&d, dst, sizeof dst);
	DAT_RMR_TRIPLET r = {.rmr_context = d.rctx, .target_address = d.addr, .segment_length = sizeof dst};
	DAT_DTO_COOKIE ck = {.as_64 = 1};
	for (int round = 0; round < 2; round++) {
		snprintf(src, sizeof src, "written, round %d", round);
		check_ok(dat_ep_post_rdma_write(p.ep[1], 1, &st, ck, &r, DAT_COMPLETION_DEFAULT_FLAG));
		DAT_EVENT ev = wait_event(p.evd[1], DAT_DTO_COMPLETION_EVENT);
		assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
		if (round == 1)
			check_ok(dat_lmr_sync_rdma_write(p.ia[0], &dt, 1));
		assert_string_equal(dst, src);
	}
	pair_close(&p);
}

/* DAT_INVALID_HANDLE: "The DAT handle is invalid": NULL, closed, a PZ
 * (DAT_INVALID_HANDLE_IA). */
static void test_lmr_sync_rdma_write_invalid_handle(void **state)
{
	(void)state;
	lmr_sync_invalid_handle(dat_lmr_sync_rdma_write);
}

/* DAT_INVALID_PARAMETER: "the address range for a local segment fell
 * outside the boundaries of the corresponding Local Memory Region or the
 * LMR handle was invalid" (lmr_sync.h lists the cases). */
static void test_lmr_sync_rdma_write_invalid_parameter(void **state)
{
	(void)state;
	lmr_sync_invalid_parameter(dat_lmr_sync_rdma_write);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lmr_sync_rdma_write_success),
		cmocka_unit_test(test_lmr_sync_rdma_write_not_required),
		cmocka_unit_test(test_lmr_sync_rdma_write_invalid_handle),
		cmocka_unit_test(test_lmr_sync_rdma_write_invalid_parameter),
	};
	return cmocka_run_group_tests_name("dat_lmr_sync_rdma_write", tests, NULL, NULL);
}
