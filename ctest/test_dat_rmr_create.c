/* dat_rmr_create(3DAT): every return value; the RMR's PZ decides which
 * connections may use it. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_rmr_create() function creates an RMR for the
 * specified Protection Zone." "The created RMR can be bound to a memory
 * region within the LMR through a lightweight dat_rmr_bind(3DAT)
 * operation that generates rmr_context." */
static void test_rmr_create_success(void **state)
{
	(void)state;
	static char buf[64];
	struct pair p;
	pair_open(&p, NULL);
	pair_connect(&p);
	DAT_RMR_HANDLE rmr = DAT_HANDLE_NULL;
	check_ok(dat_rmr_create(p.pz[0], &rmr));
	assert_non_null(rmr);
	DAT_HANDLE_TYPE t;
	check_ok(dat_get_handle_type(rmr, &t));
	assert_int_equal(t, DAT_HANDLE_TYPE_RMR);
	DAT_RMR_PARAM rp;
	check_ok(dat_rmr_query(rmr, DAT_RMR_FIELD_IA_HANDLE | DAT_RMR_FIELD_PZ_HANDLE, &rp));
	assert_ptr_equal(rp.ia_handle, p.ia[0]);
	assert_ptr_equal(rp.pz_handle, p.pz[0]);
	struct lmr l = make_lmr(p.ia[0], p.pz[0], buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET tr = triplet(&l, buf, sizeof buf);
	DAT_RMR_CONTEXT rc = 0;
	DAT_RMR_COOKIE ck = {.as_64 = 1};
	check_ok(dat_rmr_bind(rmr, &tr, DAT_MEM_PRIV_REMOTE_READ_FLAG, p.ep[0], ck, DAT_COMPLETION_DEFAULT_FLAG, &rc));
	assert_int_not_equal(rc, 0);
	wait_event(p.evd[0], DAT_RMR_BIND_COMPLETION_EVENT);
	check_ok(dat_rmr_free(rmr));
	pair_close(&p);
}

/* "The pz_handle parameter provide Consumers a way to restrict access to
 * an RMR by authorized connection only." The peer of an endpoint in the
 * RMR's PZ reads through it; the peer of another connection of the same
 * IA, whose endpoint is in another PZ, gets a remote access error, reads
 * nothing, and that connection breaks (broken.h), as on verbs; the
 * authorized connection between the same two IAs is not affected. */
static void test_rmr_create_pz_authorizes_connections(void **state)
{
	(void)state;
	static char buf[64] = "only for the right connection", got[64];
	struct pair p;
	pair_open(&p, NULL);
	pair_connect(&p);
	DAT_PZ_HANDLE other = make_pz(p.ia[0]);
	DAT_EP_HANDLE b0, b1;
	check_ok(dat_ep_create(p.ia[0], other, p.evd[0], p.evd[0], p.evd[0], NULL, &b0));
	check_ok(dat_ep_create(p.ia[1], p.pz[1], p.evd[1], p.evd[1], p.evd[1], NULL, &b1));
	pair_connect_eps(&p, b0, b1, NULL, NULL);

	DAT_RMR_HANDLE rmr;
	DAT_RMR_CONTEXT rc;
	DAT_RMR_COOKIE ck = {.as_64 = 2};
	check_ok(dat_rmr_create(p.pz[0], &rmr));
	struct lmr l = make_lmr(p.ia[0], p.pz[0], buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET tr = triplet(&l, buf, sizeof buf);
	check_ok(dat_rmr_bind(rmr, &tr, DAT_MEM_PRIV_REMOTE_READ_FLAG, p.ep[0], ck, DAT_COMPLETION_DEFAULT_FLAG, &rc));
	wait_event(p.evd[0], DAT_RMR_BIND_COMPLETION_EVENT);

	struct lmr g = make_lmr(p.ia[1], p.pz[1], got, sizeof got, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET gt = triplet(&g, got, sizeof got);
	DAT_RMR_TRIPLET r = {.rmr_context = rc, .target_address = (DAT_VADDR)(uintptr_t)buf,
			     .segment_length = sizeof buf};
	DAT_DTO_COOKIE dc = {.as_64 = 3};
	check_ok(dat_ep_post_rdma_read(b1, 1, &gt, dc, &r, DAT_COMPLETION_DEFAULT_FLAG));
	pair_expect_broken_eps(&p, 1, b1, b0, 3);
	assert_int_equal(got[0], 0);
	check_ok(dat_ep_post_rdma_read(p.ep[1], 1, &gt, dc, &r, DAT_COMPLETION_DEFAULT_FLAG));
	DAT_EVENT ev = wait_event(p.evd[1], DAT_DTO_COMPLETION_EVENT);
	assert_ptr_equal(ev.event_data.dto_completion_event_data.ep_handle, p.ep[1]);
	assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	assert_string_equal(got, buf);
	pair_close(&p);
}

/* DAT_INSUFFICIENT_RESOURCES: "The operation failed due to resource
 * limitations": the IA supports max_rmrs RMRs; the next one fails with
 * DAT_RESOURCE_MEMORY_REGION until one is freed. */
static void test_rmr_create_insufficient_resources(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_IA_ATTR a;
	check_ok(dat_ia_query(ia, NULL, DAT_IA_FIELD_IA_MAX_RMRS, &a, 0, NULL));
	skip_unless_exhaustible("max_rmrs", a.max_rmrs);
	DAT_RMR_HANDLE *v = calloc((size_t)a.max_rmrs, sizeof *v), extra = DAT_HANDLE_NULL;
	assert_non_null(v);
	for (DAT_COUNT i = 0; i < a.max_rmrs; i++)
		check_ok(dat_rmr_create(pz, &v[i]));
	check_ret(dat_rmr_create(pz, &extra), DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY_REGION);
	assert_null(extra);
	check_ok(dat_rmr_free(v[a.max_rmrs / 2]));
	check_ok(dat_rmr_create(pz, &extra));
	free(v);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "The pz_handle parameter is invalid": NULL, an IA
 * handle, a freed PZ (DAT_INVALID_HANDLE_PZ). A NULL rmr_handle pointer is
 * a parameter error (argument 2). */
static void test_rmr_create_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia), gone = make_pz(ia);
	DAT_RMR_HANDLE rmr = (DAT_RMR_HANDLE)(uintptr_t)0x44;
	check_ok(dat_pz_free(gone));
	check_ret(dat_rmr_create(DAT_HANDLE_NULL, &rmr), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	check_ret(dat_rmr_create(ia, &rmr), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	check_ret(dat_rmr_create(gone, &rmr), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	assert_int_equal((uintptr_t)rmr, 0x44);
	check_ret(dat_rmr_create(pz, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rmr_create_success),
		cmocka_unit_test(test_rmr_create_pz_authorizes_connections),
		cmocka_unit_test(test_rmr_create_insufficient_resources),
		cmocka_unit_test(test_rmr_create_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_rmr_create", tests, NULL, NULL);
}
