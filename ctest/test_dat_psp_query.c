/* dat_psp_query(3DAT): parameters of a public service point. */
#include "conn.h"

/* "The dat_psp_query() function provides to the Consumer parameters of the
 * Public Service Point." */
static void success_params(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	DAT_PSP_HANDLE psp;
	check_ok(dat_psp_create(s.ia, 0x9E5F00D, s.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	DAT_PSP_PARAM p;
	memset(&p, 0xee, sizeof p);
	check_ok(dat_psp_query(psp, DAT_PSP_FIELD_ALL, &p));
	assert_ptr_equal(p.ia_handle, s.ia);
	assert_int_equal(p.conn_qual, 0x9E5F00D);
	assert_ptr_equal(p.evd_handle, s.cr);
	assert_int_equal(p.psp_flags, DAT_PSP_CONSUMER_FLAG);
	end_close(&s);
}

/* "The Provider will return values for psp_param_mask requested
 * parameters." */
static void success_mask(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	check_ok(dat_psp_create_any(s.ia, &q, s.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	DAT_PSP_PARAM p;
	check_ok(dat_psp_query(psp, DAT_PSP_FIELD_CONN_QUAL, &p));
	assert_int_equal(p.conn_qual, q);
	check_ok(dat_psp_query(psp, DAT_PSP_FIELD_EVD_HANDLE, &p));
	assert_ptr_equal(p.evd_handle, s.cr);
	end_close(&s);
}

/* "The psp_handle parameter is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	DAT_PSP_PARAM p;
	DAT_PSP_HANDLE psp;
	check_ok(dat_psp_create(s.ia, 0x9E5F00E, s.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	check_ok(dat_psp_free(psp));
	check_ret(dat_psp_query(psp, DAT_PSP_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PSP);
	check_ret(dat_psp_query(s.cr, DAT_PSP_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PSP);
	check_ret(dat_psp_query(DAT_HANDLE_NULL, DAT_PSP_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PSP);
	end_close(&s);
}

/* "The psp_param_mask parameter is invalid." */
static void invalid_parameter(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	DAT_PSP_HANDLE psp;
	check_ok(dat_psp_create(s.ia, 0x9E5F00F, s.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	DAT_PSP_PARAM p;
	check_ret(dat_psp_query(psp, (DAT_PSP_PARAM_MASK)(DAT_PSP_FIELD_ALL + 1), &p), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG2);
	check_ret(dat_psp_query(psp, DAT_PSP_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	end_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_params),
		cmocka_unit_test(success_mask),
		cmocka_unit_test(invalid_handle),
		cmocka_unit_test(invalid_parameter),
	};
	return cmocka_run_group_tests_name("dat_psp_query", tests, NULL, NULL);
}
