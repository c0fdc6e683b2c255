/* dat_pz_free(3DAT): every return value; a PZ in use by an endpoint, an
 * LMR or an RMR cannot be freed, and a freed PZ's handle is dead. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_pz_free() function destroys an instance of the
 * Protection Zone." An unused PZ is freed and the IA then closes
 * gracefully (it has no consumer objects left). */
static void test_pz_free_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	check_ok(dat_pz_free(pz));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* DAT_INVALID_STATE: "The Protection Zone cannot be destroyed if it is in
 * use by an Endpoint, LMR, or RMR." Each user alone keeps the PZ alive
 * (DAT_INVALID_STATE_PZ_IN_USE); once it is freed the PZ can be freed. */
static void test_pz_free_invalid_state(void **state)
{
	(void)state;
	static char buf[128];
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG);
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep;
	DAT_RMR_HANDLE rmr;

	pz = make_pz(ia);
	check_ok(dat_ep_create(ia, pz, evd, evd, evd, NULL, &ep));
	check_ret(dat_pz_free(pz), DAT_INVALID_STATE, DAT_INVALID_STATE_PZ_IN_USE);
	check_ok(dat_ep_free(ep));
	check_ok(dat_pz_free(pz));

	pz = make_pz(ia);
	struct lmr l = make_lmr(ia, pz, buf, sizeof buf, DAT_MEM_PRIV_LOCAL_READ_FLAG);
	check_ret(dat_pz_free(pz), DAT_INVALID_STATE, DAT_INVALID_STATE_PZ_IN_USE);
	check_ok(dat_lmr_free(l.h));
	check_ok(dat_pz_free(pz));

	pz = make_pz(ia);
	check_ok(dat_rmr_create(pz, &rmr));
	check_ret(dat_pz_free(pz), DAT_INVALID_STATE, DAT_INVALID_STATE_PZ_IN_USE);
	check_ok(dat_rmr_free(rmr));
	check_ok(dat_pz_free(pz));

	check_ok(dat_evd_free(evd));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* DAT_INVALID_HANDLE: "The pz_handle parameter is invalid." NULL, another
 * type and a freed PZ: DAT_INVALID_HANDLE_PZ. "Use of the handle of the
 * destroyed Protection Zone in any subsequent operation except for
 * dat_pz_free() fails": query, LMR, RMR and EP creation with it fail too. */
static void test_pz_free_invalid_handle(void **state)
{
	(void)state;
	static char buf[64];
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_PZ_PARAM pp;
	DAT_RMR_HANDLE rmr;
	DAT_EP_HANDLE ep;
	struct lmr l;
	check_ret(dat_pz_free(DAT_HANDLE_NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	check_ret(dat_pz_free(ia), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	check_ret(dat_pz_free(evd), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	check_ok(dat_pz_free(pz));
	check_ret(dat_pz_free(pz), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	check_ret(dat_pz_query(pz, DAT_PZ_FIELD_ALL, &pp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	check_ret(dat_rmr_create(pz, &rmr), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	check_ret(lmr_create_va(ia, pz, buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG, &l), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_PZ);
	check_ret(dat_ep_create(ia, pz, evd, evd, evd, NULL, &ep), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	check_ok(dat_evd_free(evd));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pz_free_success),
		cmocka_unit_test(test_pz_free_invalid_state),
		cmocka_unit_test(test_pz_free_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_pz_free", tests, NULL, NULL);
}
