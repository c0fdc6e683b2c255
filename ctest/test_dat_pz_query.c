/* dat_pz_query(3DAT): every return value. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The Provider returns values for pz_param_mask requested
 * parameters": the only parameter, the IA handle, for DAT_PZ_FIELD_ALL and
 * for DAT_PZ_FIELD_IA_HANDLE alone. */
static void test_pz_query_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL), ia2 = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia), pz2 = make_pz(ia2);
	DAT_PZ_PARAM p;
	memset(&p, 0, sizeof p);
	check_ok(dat_pz_query(pz, DAT_PZ_FIELD_ALL, &p));
	assert_ptr_equal(p.ia_handle, ia);
	memset(&p, 0, sizeof p);
	check_ok(dat_pz_query(pz2, DAT_PZ_FIELD_IA_HANDLE, &p));
	assert_ptr_equal(p.ia_handle, ia2);
	check_ok(dat_ia_close(ia2, DAT_CLOSE_ABRUPT_FLAG));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_PARAMETER: "The pz_param_mask parameter is invalid": a bit
 * outside DAT_PZ_FIELD_ALL (argument 2); a NULL pz_param is argument 3. */
static void test_pz_query_invalid_parameter(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_PZ_PARAM p;
	check_ret(dat_pz_query(pz, (DAT_PZ_PARAM_MASK)(DAT_PZ_FIELD_ALL + 1), &p), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG2);
	check_ret(dat_pz_query(pz, DAT_PZ_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "The pz_handle parameter is invalid": NULL, a freed
 * PZ, an IA handle; the output is untouched. */
static void test_pz_query_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_PZ_PARAM p;
	check_ok(dat_pz_free(pz));
	memset(&p, 0xA5, sizeof p);
	check_ret(dat_pz_query(DAT_HANDLE_NULL, DAT_PZ_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	check_ret(dat_pz_query(pz, DAT_PZ_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	check_ret(dat_pz_query(ia, DAT_PZ_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	assert_int_equal(((unsigned char *)&p)[0], 0xA5);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pz_query_success),
		cmocka_unit_test(test_pz_query_invalid_parameter),
		cmocka_unit_test(test_pz_query_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_pz_query", tests, NULL, NULL);
}
