/* dat_psp_create_any(3DAT): a public service point on a qualifier the
 * provider picks. */
#include "conn.h"

/* "The dat_psp_create_any() function allocates an unused Connection
 * Qualifier, creates a Public Service point for it, and returns both the
 * allocated Connection Qualifier and the created Public Service Point to
 * the Consumer." The qualifier is reachable and differs from every one in
 * use. */
static void success_allocates(void **state)
{
	(void)state;
	struct end s, c;
	end_open(&s, NULL);
	end_open(&c, NULL);
	DAT_PSP_HANDLE fixed, psp[8];
	DAT_CONN_QUAL q[8];
	check_ok(dat_psp_create(s.ia, 0xA11CE, s.cr, DAT_PSP_CONSUMER_FLAG, &fixed));
	for (int i = 0; i < 8; i++) {
		check_ok(dat_psp_create_any(s.ia, &q[i], s.cr, DAT_PSP_CONSUMER_FLAG, &psp[i]));
		assert_int_not_equal(q[i], 0xA11CE);
		for (int j = 0; j < i; j++)
			assert_int_not_equal(q[i], q[j]);
		DAT_PSP_PARAM p;
		check_ok(dat_psp_query(psp[i], DAT_PSP_FIELD_ALL, &p));
		assert_int_equal(p.conn_qual, q[i]);
	}
	/* The same qualifier cannot be bound again while in use. */
	DAT_PSP_HANDLE dup;
	check_type(dat_psp_create(c.ia, q[3], c.cr, DAT_PSP_CONSUMER_FLAG, &dup), DAT_CONN_QUAL_IN_USE);
	check_ok(connect_ep(c.ep, q[5], CONN_TMO, "any"));
	DAT_EVENT ev = expect_ev(s.cr, DAT_CONNECTION_REQUEST_EVENT);
	assert_ptr_equal(ev.event_data.cr_arrival_event_data.sp_handle.psp_handle, psp[5]);
	assert_int_equal(ev.event_data.cr_arrival_event_data.conn_qual, q[5]);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, s.ep, 0, NULL));
	expect_ev(c.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	end_close(&c);
	end_close(&s);
}

/* The listening qualifier needs a file descriptor; with none left the call
 * fails. */
static void insufficient_resources(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	struct rlimit old = fds_exhaust();
	DAT_RETURN r = dat_psp_create_any(s.ia, &q, s.cr, DAT_PSP_CONSUMER_FLAG, &psp);
	fds_restore(old);
	check_type(r, DAT_INSUFFICIENT_RESOURCES);
	check_ok(dat_psp_create_any(s.ia, &q, s.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	end_close(&s);
}

/* "The ia_handle or evd_handle parameter is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	check_ret(dat_psp_create_any(s.cr, &q, s.cr, DAT_PSP_CONSUMER_FLAG, &psp), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_IA);
	check_ret(dat_psp_create_any(s.ia, &q, s.recv, DAT_PSP_CONSUMER_FLAG, &psp), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EVD_CR);
	check_ret(dat_psp_create_any(s.ia, &q, DAT_HANDLE_NULL, DAT_PSP_CONSUMER_FLAG, &psp), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EVD_CR);
	end_close(&s);
}

/* "The conn_qual or psp_flags parameter is invalid": here conn_qual is the
 * output pointer. */
static void invalid_parameter(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	check_ret(dat_psp_create_any(s.ia, NULL, s.cr, DAT_PSP_CONSUMER_FLAG, &psp), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG2);
	check_ret(dat_psp_create_any(s.ia, &q, s.cr, (DAT_PSP_FLAGS)4, &psp), DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	check_ret(dat_psp_create_any(s.ia, &q, s.cr, DAT_PSP_CONSUMER_FLAG, NULL), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG5);
	end_close(&s);
}

/* "If the Provider cannot satisfy the request, the operation shall fail and
 * DAT_MODEL_NOT_SUPPORTED is returned": this provider satisfies
 * DAT_PSP_PROVIDER_FLAG (it creates an EP per request, see
 * test_compat_psp_provider.c), so the code cannot occur (COVERAGE.md). */
static void provider_flag(void **state)
{
	(void)state;
	struct end s;
	end_open(&s, NULL);
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q = 0;
	check_ok(dat_psp_create_any(s.ia, &q, s.cr, DAT_PSP_PROVIDER_FLAG, &psp));
	DAT_PSP_PARAM p;
	check_ok(dat_psp_query(psp, DAT_PSP_FIELD_ALL, &p));
	assert_int_equal(p.psp_flags, DAT_PSP_PROVIDER_FLAG);
	assert_int_equal(p.conn_qual, q);
	end_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_allocates),
		cmocka_unit_test(insufficient_resources),
		cmocka_unit_test(invalid_handle),
		cmocka_unit_test(invalid_parameter),
		cmocka_unit_test(provider_flag),
	};
	return cmocka_run_group_tests_name("dat_psp_create_any", tests, NULL, NULL);
}
