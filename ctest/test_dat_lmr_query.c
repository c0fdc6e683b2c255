/* dat_lmr_query(3DAT): every return value. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_lmr_query() function provides the Consumer LMR
 * parameters": the values dat_lmr_create was given and returned. */
static void test_lmr_query_success(void **state)
{
	(void)state;
	static char buf[300];
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_MEM_PRIV_FLAGS priv = DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_LOCAL_WRITE_FLAG |
				  DAT_MEM_PRIV_REMOTE_READ_FLAG;
	struct lmr l = make_lmr(ia, pz, buf + 10, 200, priv);
	DAT_LMR_PARAM p;
	memset(&p, 0, sizeof p);
	check_ok(dat_lmr_query(l.h, DAT_LMR_FIELD_ALL, &p));
	assert_ptr_equal(p.ia_handle, ia);
	assert_int_equal(p.mem_type, DAT_MEM_TYPE_VIRTUAL);
	assert_ptr_equal(p.region_desc.for_va, buf + 10);
	assert_int_equal(p.length, 200);
	assert_ptr_equal(p.pz_handle, pz);
	assert_int_equal(p.mem_priv, priv);
	assert_int_equal(p.lmr_context, l.lctx);
	assert_int_equal(p.rmr_context, l.rctx);
	assert_int_equal(p.registered_size, l.size);
	assert_int_equal(p.registered_address, l.addr);
	/* "The Provider returns values for lmr_param_mask requested
	 * parameters": one field asked, that field right. */
	memset(&p, 0, sizeof p);
	check_ok(dat_lmr_query(l.h, DAT_LMR_FIELD_LMR_CONTEXT, &p));
	assert_int_equal(p.lmr_context, l.lctx);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_PARAMETER: "The lmr_param_mask function is invalid": a bit
 * outside DAT_LMR_FIELD_ALL (argument 2); NULL lmr_param is argument 3. */
static void test_lmr_query_invalid_parameter(void **state)
{
	(void)state;
	static char buf[64];
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	struct lmr l = make_lmr(ia, pz, buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_PARAM p;
	check_ret(dat_lmr_query(l.h, (DAT_LMR_PARAM_MASK)(DAT_LMR_FIELD_ALL + 1), &p), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG2);
	check_ret(dat_lmr_query(l.h, DAT_LMR_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "The lmr_handle function is invalid": NULL, a PZ,
 * a freed LMR (DAT_INVALID_HANDLE_LMR); nothing is written. */
static void test_lmr_query_invalid_handle(void **state)
{
	(void)state;
	static char buf[64];
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	struct lmr l = make_lmr(ia, pz, buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	check_ok(dat_lmr_free(l.h));
	DAT_LMR_PARAM p;
	memset(&p, 0xA5, sizeof p);
	check_ret(dat_lmr_query(DAT_HANDLE_NULL, DAT_LMR_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	check_ret(dat_lmr_query(pz, DAT_LMR_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	check_ret(dat_lmr_query(l.h, DAT_LMR_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	assert_int_equal(((unsigned char *)&p)[0], 0xA5);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lmr_query_success),
		cmocka_unit_test(test_lmr_query_invalid_parameter),
		cmocka_unit_test(test_lmr_query_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_lmr_query", tests, NULL, NULL);
}
