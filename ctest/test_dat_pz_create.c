/* dat_pz_create(3DAT): every return value and the protection a PZ gives. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_pz_create() function creates an instance of the
 * Protection Zone." Each call gives a new PZ handle owned by the IA. */
static void test_pz_create_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE a = DAT_HANDLE_NULL, b = DAT_HANDLE_NULL;
	DAT_HANDLE_TYPE t;
	DAT_PZ_PARAM p;
	check_ok(dat_pz_create(ia, &a));
	check_ok(dat_pz_create(ia, &b));
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	check_ok(dat_get_handle_type(a, &t));
	assert_int_equal(t, DAT_HANDLE_TYPE_PZ);
	check_ok(dat_pz_query(b, DAT_PZ_FIELD_ALL, &p));
	assert_ptr_equal(p.ia_handle, ia);
	check_ok(dat_pz_free(a));
	check_ok(dat_pz_free(b));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* "The Protection Zone provides Consumers a mechanism for association
 * Endpoints with LMRs and RMRs to provide protection for local and remote
 * memory accesses by DTOs." A send from an LMR of another PZ than the
 * endpoint's is refused with DAT_PROTECTION_VIOLATION (reading local
 * memory); one from an LMR of the endpoint's PZ completes. */
static void test_pz_create_protects_dtos(void **state)
{
	(void)state;
	struct pair p;
	static char rbuf[64], sbuf[64] = "through the right PZ";
	pair_open(&p, NULL);
	pair_connect(&p);
	DAT_PZ_HANDLE other = make_pz(p.ia[1]);
	struct lmr rl = make_lmr(p.ia[0], p.pz[0], rbuf, sizeof rbuf, DAT_MEM_PRIV_ALL_FLAG);
	struct lmr good = make_lmr(p.ia[1], p.pz[1], sbuf, sizeof sbuf, DAT_MEM_PRIV_ALL_FLAG);
	struct lmr bad = make_lmr(p.ia[1], other, sbuf, sizeof sbuf, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET riov = triplet(&rl, rbuf, sizeof rbuf), giov = triplet(&good, sbuf, sizeof sbuf),
			biov = triplet(&bad, sbuf, sizeof sbuf);
	DAT_DTO_COOKIE c1 = {.as_64 = 1}, c2 = {.as_64 = 2}, c3 = {.as_64 = 3};
	check_ok(dat_ep_post_recv(p.ep[0], 1, &riov, c1, DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(p.ep[1], 1, &giov, c2, DAT_COMPLETION_DEFAULT_FLAG));
	DAT_EVENT ev = wait_event(p.evd[1], DAT_DTO_COMPLETION_EVENT);
	assert_int_equal(ev.event_data.dto_completion_event_data.user_cookie.as_64, 2);
	assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	ev = wait_event(p.evd[0], DAT_DTO_COMPLETION_EVENT);
	assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	assert_string_equal(rbuf, "through the right PZ");

	check_ret(dat_ep_post_send(p.ep[1], 1, &biov, c3, DAT_COMPLETION_DEFAULT_FLAG), DAT_PROTECTION_VIOLATION,
		  DAT_PROTECTION_READ);
	expect_empty(p.evd[1]);
	pair_close(&p);
}

/* DAT_INSUFFICIENT_RESOURCES: "The operation failed due to resource
 * limitations." Every object takes a slot of the library's handle table;
 * once all are taken dat_pz_create fails with DAT_RESOURCE_MEMORY, and
 * works again once PZs are freed. */
static void test_pz_create_insufficient_resources(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE *pzs, pz = DAT_HANDLE_NULL;
	size_t n = exhaust_handles(ia, &pzs);
	assert_true(n > 1000);
	check_ret(dat_pz_create(ia, &pz), DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
	assert_null(pz);
	release_pzs(pzs, n);
	check_ok(dat_pz_create(ia, &pz));
	check_ok(dat_pz_free(pz));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* DAT_INVALID_PARAMETER: no place for the handle (argument 2). */
static void test_pz_create_invalid_parameter(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	check_ret(dat_pz_create(ia, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* DAT_INVALID_HANDLE: "The ia_handle parameter is invalid." NULL, a closed
 * IA and a handle of another type, all with DAT_INVALID_HANDLE_IA; nothing
 * is written to pz_handle. */
static void test_pz_create_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL), closed = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia), out = (DAT_PZ_HANDLE)(uintptr_t)0x77;
	check_ok(dat_ia_close(closed, DAT_CLOSE_ABRUPT_FLAG));
	check_ret(dat_pz_create(DAT_HANDLE_NULL, &out), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	check_ret(dat_pz_create(closed, &out), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	check_ret(dat_pz_create(pz, &out), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	assert_int_equal((uintptr_t)out, 0x77);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pz_create_success),
		cmocka_unit_test(test_pz_create_protects_dtos),
		cmocka_unit_test(test_pz_create_insufficient_resources),
		cmocka_unit_test(test_pz_create_invalid_parameter),
		cmocka_unit_test(test_pz_create_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_pz_create", tests, NULL, NULL);
}
