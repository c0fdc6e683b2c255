/* dat_srq_free(3DAT): return values and description. */
#include "srq.h"

/* DAT_SUCCESS, and "It is illegal to use the destroyed handle in any
 * consequent operation." (Usage: "If the Provider detects the use of a
 * deleted object handle, it should return DAT_INVALID_HANDLE.") Posted,
 * never used buffers go with the SRQ; its PZ is free again. */
static void dat_srq_free__success(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_PZ_HANDLE pz;
	DAT_SRQ_ATTR a = {.max_recv_dtos = 8, .max_recv_iov = 1};
	DAT_SRQ_HANDLE q;
	DAT_SRQ_PARAM p;
	check_ok(dat_pz_create(s.ia, &pz));
	check_ok(dat_srq_create(s.ia, pz, &a, &q));
	check_type(dat_pz_free(pz), DAT_INVALID_STATE);
	check_ok(dat_srq_free(q));
	check_ret(dat_srq_query(q, DAT_SRQ_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	check_ret(dat_srq_free(q), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	check_ok(dat_pz_free(pz));
	q = srq_make(&s, 8, 0);
	srq_post(&s, q, 0);
	check_ok(dat_srq_free(q));
	side_close(&s);
}

/* DAT_SRQ_IN_USE "The Shared Receive Queue can not be destroyed because it
 * is in still associated with an EP instance." (DAT 1.2 spells it
 * DAT_INVALID_STATE with subtype DAT_INVALID_STATE_SRQ_IN_USE.) "The SRQ
 * cannot be destroyed if it is in use by an EP." Connected or not; after
 * the EP is freed (the only way to detach it), the SRQ can go. */
static void dat_srq_free__in_use(void **state)
{
	(void)state;
	struct side s, c;
	side_open(&s);
	side_open(&c);
	DAT_SRQ_HANDLE q = srq_make(&s, 8, 0);
	DAT_EP_HANDLE sep = ep_make(&s, q);
	check_ret(dat_srq_free(q), DAT_INVALID_STATE, DAT_INVALID_STATE_SRQ_IN_USE);
	DAT_EP_HANDLE cep = ep_make(&c, NULL);
	connect_eps(&c, cep, &s, sep);
	check_ret(dat_srq_free(q), DAT_INVALID_STATE, DAT_INVALID_STATE_SRQ_IN_USE);
	check_ok(dat_ep_disconnect(sep, DAT_CLOSE_ABRUPT_FLAG));
	assert_int_equal(wait_ev(s.conn).event_number, DAT_CONNECTION_EVENT_DISCONNECTED);
	check_ret(dat_srq_free(q), DAT_INVALID_STATE, DAT_INVALID_STATE_SRQ_IN_USE);
	DAT_SRQ_PARAM p;
	check_ok(dat_srq_query(q, DAT_SRQ_FIELD_ALL, &p)); /* still alive */
	check_ok(dat_ep_free(sep));
	check_ok(dat_srq_free(q));
	side_close(&c);
	side_close(&s);
}

/* DAT_INVALID_HANDLE "The srq_handle argument is an invalid DAT handle." */
static void dat_srq_free__invalid_handle(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	check_ret(dat_srq_free(DAT_HANDLE_NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	check_ret(dat_srq_free((DAT_SRQ_HANDLE)s.pz), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	check_ret(dat_srq_free((DAT_SRQ_HANDLE)(uintptr_t)0x1234), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	check_ok(dat_pz_query(s.pz, DAT_PZ_FIELD_ALL, &(DAT_PZ_PARAM){0})); /* the PZ was not touched */
	side_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dat_srq_free__success),
		cmocka_unit_test(dat_srq_free__in_use),
		cmocka_unit_test(dat_srq_free__invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_srq_free", tests, NULL, NULL);
}
