/* dat_rmr_query(3DAT): every return value. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_rmr_query() function provides RMR parameters to
 * the Consumer": for a bound RMR, the IA, PZ, the bound triplet, the
 * privileges and the rmr_context the bind returned. "Not all parameters
 * can have a value at all times. For example, lmr_handle, target_address,
 * segment_length, mem_privileges, and rmr_context are not defined for an
 * unbound RMR": only the IA and PZ are checked before the bind. */
static void test_rmr_query_success(void **state)
{
	(void)state;
	static char buf[256];
	struct pair p;
	pair_open(&p, NULL);
	pair_connect(&p);
	DAT_RMR_HANDLE rmr;
	DAT_RMR_PARAM rp;
	check_ok(dat_rmr_create(p.pz[0], &rmr));
	memset(&rp, 0, sizeof rp);
	check_ok(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &rp));
	assert_ptr_equal(rp.ia_handle, p.ia[0]);
	assert_ptr_equal(rp.pz_handle, p.pz[0]);
	struct lmr l = make_lmr(p.ia[0], p.pz[0], buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET t = triplet(&l, buf + 16, 100);
	DAT_RMR_COOKIE ck = {.as_64 = 1};
	DAT_RMR_CONTEXT rc;
	DAT_MEM_PRIV_FLAGS priv = DAT_MEM_PRIV_REMOTE_READ_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG;
	check_ok(dat_rmr_bind(rmr, &t, priv, p.ep[0], ck, 0, &rc));
	memset(&rp, 0, sizeof rp);
	check_ok(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &rp));
	assert_ptr_equal(rp.ia_handle, p.ia[0]);
	assert_ptr_equal(rp.pz_handle, p.pz[0]);
	assert_int_equal(rp.lmr_triplet.lmr_context, l.lctx);
	assert_int_equal(rp.lmr_triplet.virtual_address, (DAT_VADDR)(uintptr_t)(buf + 16));
	assert_int_equal(rp.lmr_triplet.segment_length, 100);
	assert_int_equal(rp.mem_priv, priv);
	assert_int_equal(rp.rmr_context, rc);
	/* "The Provider returns values for rmr_param_mask requested
	 * parameters." */
	memset(&rp, 0, sizeof rp);
	check_ok(dat_rmr_query(rmr, DAT_RMR_FIELD_RMR_CONTEXT, &rp));
	assert_int_equal(rp.rmr_context, rc);
	pair_close(&p);
}

/* DAT_INVALID_PARAMETER: "The rmr_param_mask parameter is invalid": a bit
 * outside DAT_RMR_FIELD_ALL (argument 2); a NULL rmr_param (argument 3). */
static void test_rmr_query_invalid_parameter(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_RMR_HANDLE rmr;
	DAT_RMR_PARAM rp;
	check_ok(dat_rmr_create(pz, &rmr));
	check_ret(dat_rmr_query(rmr, (DAT_RMR_PARAM_MASK)(DAT_RMR_FIELD_ALL + 1), &rp), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG2);
	check_ret(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "The mr_handle parameter is invalid": NULL, a PZ, a
 * freed RMR (DAT_INVALID_HANDLE_RMR); nothing is written. */
static void test_rmr_query_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_RMR_HANDLE rmr;
	DAT_RMR_PARAM rp;
	check_ok(dat_rmr_create(pz, &rmr));
	check_ok(dat_rmr_free(rmr));
	memset(&rp, 0xA5, sizeof rp);
	check_ret(dat_rmr_query(DAT_HANDLE_NULL, DAT_RMR_FIELD_ALL, &rp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
	check_ret(dat_rmr_query(pz, DAT_RMR_FIELD_ALL, &rp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
	check_ret(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &rp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
	assert_int_equal(((unsigned char *)&rp)[0], 0xA5);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rmr_query_success),
		cmocka_unit_test(test_rmr_query_invalid_parameter),
		cmocka_unit_test(test_rmr_query_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_rmr_query", tests, NULL, NULL);
}
