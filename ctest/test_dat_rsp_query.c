/* dat_rsp_query(3DAT): parameters of a reserved service point. */
#include "conn.h"

#define Q 0x45500000000000CCull

/* "The dat_rsp_query() function provides to the Consumer parameters of the
 * Reserved Service Point." */
static void success_params(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(s.ia, Q, s.ep, s.cr, &rsp));
	DAT_RSP_PARAM p;
	memset(&p, 0xee, sizeof p);
	check_ok(dat_rsp_query(rsp, DAT_RSP_FIELD_ALL, &p));
	assert_ptr_equal(p.ia_handle, s.ia);
	assert_int_equal(p.conn_qual, Q);
	assert_ptr_equal(p.evd_handle, s.cr);
	assert_ptr_equal(p.ep_handle, s.ep);
	end_close(&s);
}

/* "The Provider returns values for rsp_param_mask requested parameters." */
static void success_mask(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(s.ia, Q, s.ep, s.cr, &rsp));
	DAT_RSP_PARAM p;
	check_ok(dat_rsp_query(rsp, DAT_RSP_FIELD_EP_HANDLE, &p));
	assert_ptr_equal(p.ep_handle, s.ep);
	check_ok(dat_rsp_query(rsp, DAT_RSP_FIELD_CONN_QUAL, &p));
	assert_int_equal(p.conn_qual, Q);
	end_close(&s);
}

/* "The rsp_handle parameter is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	DAT_RSP_PARAM p;
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(s.ia, Q, s.ep, s.cr, &rsp));
	check_ok(dat_rsp_free(rsp));
	check_ret(dat_rsp_query(rsp, DAT_RSP_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RSP);
	check_ret(dat_rsp_query(s.ep, DAT_RSP_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RSP);
	check_ret(dat_rsp_query(DAT_HANDLE_NULL, DAT_RSP_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RSP);
	end_close(&s);
}

/* "The rsp_param_mask parameter is invalid." */
static void invalid_parameter(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	DAT_RSP_HANDLE rsp;
	check_ok(dat_rsp_create(s.ia, Q, s.ep, s.cr, &rsp));
	DAT_RSP_PARAM p;
	check_ret(dat_rsp_query(rsp, (DAT_RSP_PARAM_MASK)0x10, &p), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_rsp_query(rsp, DAT_RSP_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
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
	return cmocka_run_group_tests_name("dat_rsp_query", tests, NULL, NULL);
}
