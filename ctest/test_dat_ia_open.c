/* dat_ia_open(3DAT): every return value, the async EVD the IA creates or
 * is given, several opens of one IA, and the names it accepts. */
#define _GNU_SOURCE
#include "pages.h"
#include "rdma.h"
#include <time.h>

static long now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

static DAT_EVD_PARAM evd_param(DAT_EVD_HANDLE evd)
{
	DAT_EVD_PARAM p;
	memset(&p, 0, sizeof p);
	check_ok(dat_evd_query(evd, DAT_EVD_FIELD_ALL, &p));
	return p;
}

/* DAT_SUCCESS: "The dat_ia_open() function opens an IA by creating an IA
 * instance. Multiple instances (opens) of an IA can exist." Two opens of
 * the same name give two distinct, independently usable IA handles, and
 * closing one leaves the other open. */
static void test_ia_open_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE a = DAT_HANDLE_NULL, b = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE aa = DAT_HANDLE_NULL, ab = DAT_HANDLE_NULL;
	DAT_HANDLE_TYPE t;
	check_ok(dat_ia_open(TEST_IA, 8, &aa, &a));
	check_ok(dat_ia_open(TEST_IA, 8, &ab, &b));
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_ptr_not_equal(aa, ab);
	check_ok(dat_get_handle_type(a, &t));
	assert_int_equal(t, DAT_HANDLE_TYPE_IA);
	check_ok(dat_ia_close(a, DAT_CLOSE_GRACEFUL_FLAG));
	DAT_PZ_HANDLE pz = make_pz(b);
	check_ok(dat_pz_free(pz));
	check_ok(dat_ia_close(b, DAT_CLOSE_GRACEFUL_FLAG));
}

/* "The value of DAT_HANDLE_NULL for async_evd_handle ... indicates that the
 * default Event Dispatcher is created with the requested
 * async_evd_min_qlen. The async_evd_handle returns the handle of the
 * created Asynchronous Event Dispatcher." "The Asynchronous Event
 * Dispatcher (async_evd_handle) is created with no CNO (DAT_HANDLE_NULL)."
 * "The Consumer can determine the actual queue size by querying the
 * created Event Dispatcher instance" and it is at least the minimum. */
static void test_ia_open_creates_async_evd(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, q = DAT_HANDLE_NULL;
	DAT_HANDLE_TYPE t;
	check_ok(dat_ia_open(TEST_IA, 37, &async, &ia));
	assert_non_null(async);
	check_ok(dat_get_handle_type(async, &t));
	assert_int_equal(t, DAT_HANDLE_TYPE_EVD);
	DAT_EVD_PARAM p = evd_param(async);
	assert_ptr_equal(p.ia_handle, ia);
	assert_null(p.cno_handle);
	assert_true(p.evd_qlen >= 37);
	assert_true(p.evd_flags & DAT_EVD_ASYNC_FLAG);
	check_ok(dat_ia_query(ia, &q, 0, NULL, 0, NULL));
	assert_ptr_equal(q, async);
	/* "Consumers can change these values using dat_evd_modify_cno" and
	 * "dat_evd_resize". */
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ok(dat_evd_modify_cno(async, cno));
	check_ok(dat_evd_resize(async, 100));
	p = evd_param(async);
	assert_ptr_equal(p.cno_handle, cno);
	assert_true(p.evd_qlen >= 100);
	check_ok(dat_evd_modify_cno(async, DAT_HANDLE_NULL));
	check_ok(dat_cno_free(cno));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* "If async_evd_handle is not DAT_HANDLE_NULL, the Provider does not
 * create an Event Dispatcher for an asynchronous event and the Provider
 * ignores the async_evd_min_qlen value." "The async_evd_handle remains
 * unchanged, so the returned async_evd_handle is the same the Consumer
 * passed in. All asynchronous notifications for the open instance of the
 * IA are directed by the Provider to the Consumer passed in Asynchronous
 * Event Dispatcher": an EVD overflow on the second IA is reported on the
 * first IA's async EVD. */
static void test_ia_open_consumer_async_evd(void **state)
{
	(void)state;
	DAT_IA_HANDLE first = DAT_HANDLE_NULL, ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, given, q = DAT_HANDLE_NULL;
	check_ok(dat_ia_open(TEST_IA, 16, &async, &first));
	given = async;
	check_ok(dat_ia_open(TEST_IA, 0, &given, &ia)); /* qlen 0 is ignored */
	assert_ptr_equal(given, async);
	check_ok(dat_ia_query(ia, &q, 0, NULL, 0, NULL));
	assert_ptr_equal(q, async);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));

	/* Side 1 of the pair uses the first IA's async EVD; its one-entry
	 * EVD overflows with two receive completions. */
	struct pair p;
	static char rbuf[2][16], sbuf[16] = "overflow";
	pair_open_with(&p, NULL, async, 1);
	pair_connect(&p);
	struct lmr rl = make_lmr(p.ia[1], p.pz[1], rbuf, sizeof rbuf, DAT_MEM_PRIV_ALL_FLAG);
	struct lmr sl = make_lmr(p.ia[0], p.pz[0], sbuf, sizeof sbuf, DAT_MEM_PRIV_ALL_FLAG);
	DAT_DTO_COOKIE ck = {.as_64 = 0};
	for (int i = 0; i < 2; i++) {
		DAT_LMR_TRIPLET r = triplet(&rl, rbuf[i], sizeof rbuf[i]);
		check_ok(dat_ep_post_recv(p.ep[1], 1, &r, ck, DAT_COMPLETION_DEFAULT_FLAG));
	}
	for (int i = 0; i < 2; i++) {
		DAT_LMR_TRIPLET s = triplet(&sl, sbuf, sizeof sbuf);
		check_ok(dat_ep_post_send(p.ep[0], 1, &s, ck, DAT_COMPLETION_DEFAULT_FLAG));
		wait_event(p.evd[0], DAT_DTO_COMPLETION_EVENT);
	}
	/* Both completions must be queued at once, so nothing dequeues from the
	 * EVD until the overflow is reported. Arrivals become events when the
	 * consumer progresses the EVD (there is no progress thread), and they
	 * may come one at a time (over TCP the sends completed when the kernel
	 * took them): a CNO waiter progresses the EVD without taking its
	 * events, so the test waits on a CNO until the overflow shows. */
	DAT_CNO_HANDLE cno;
	DAT_EVENT ev;
	check_ok(dat_cno_create(p.ia[1], DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ok(dat_evd_modify_cno(p.evd[1], cno));
	long deadline = now_us() + TMO_US;
	while (dat_evd_dequeue(async, &ev) != DAT_SUCCESS) {
		long left = deadline - now_us();
		if (left <= 0)
			fail_msg("no overflow event within %d us", TMO_US);
		DAT_EVD_HANDLE hint;
		DAT_RETURN r = dat_cno_wait(cno, (DAT_TIMEOUT)left, &hint);
		if (r != DAT_SUCCESS && DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY)
			fail_msg("dat_cno_wait: %s", ret_name(r));
	}
	assert_int_equal(ev.event_number, DAT_ASYNC_ERROR_EVD_OVERFLOW);
	assert_ptr_equal(ev.event_data.asynch_error_event_data.dat_handle, p.evd[1]);
	wait_event(p.evd[1], DAT_DTO_COMPLETION_EVENT);
	wait_event(p.evd[1], DAT_DTO_COMPLETION_EVENT);
	check_ok(dat_evd_modify_cno(p.evd[1], DAT_HANDLE_NULL));
	check_ok(dat_cno_free(cno));
	/* The second IA's close leaves the EVD it was given alone. */
	pair_close(&p);
	assert_non_null(evd_param(async).ia_handle);
	check_ok(dat_ia_close(first, DAT_CLOSE_GRACEFUL_FLAG));
}

/* "Consumer can specify the value of DAT_EVD_ASYNC_EXISTS to indicate that
 * there exists an event dispatcher somewhere else on the host ... A
 * special handle may be returned for the Asynchronous Event Dispatcher for
 * this scenario, DAT_EVD_OUT_OF_SCOPE". The open succeeds without creating
 * an EVD; the IA reports the out-of-scope handle. */
static void test_ia_open_async_exists(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_EVD_ASYNC_EXISTS, q = DAT_HANDLE_NULL;
	check_ok(dat_ia_open(TEST_IA, 0, &async, &ia));
	assert_non_null(ia);
	assert_true(async == DAT_EVD_ASYNC_EXISTS || async == DAT_EVD_OUT_OF_SCOPE);
	check_ok(dat_ia_query(ia, &q, 0, NULL, 0, NULL));
	assert_ptr_equal(q, async);
	/* Objects work as on any IA. */
	DAT_PZ_HANDLE pz = make_pz(ia);
	check_ok(dat_pz_free(pz));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* DAT_INSUFFICIENT_RESOURCES: "The operation failed due to resource
 * limitations." With every handle of the library's handle table in use,
 * a new IA cannot get one; nothing is written to the outputs. */
static void test_ia_open_insufficient_resources(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL), ia2 = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_PZ_HANDLE *pzs;
	size_t n = exhaust_handles(ia, &pzs);
	check_ret(dat_ia_open(TEST_IA, 8, &async, &ia2), DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
	assert_null(ia2);
	assert_null(async);
	/* One handle free is not enough either: the IA needs two (itself
	 * and its async EVD). */
	check_ok(dat_pz_free(pzs[--n]));
	check_ret(dat_ia_open(TEST_IA, 8, &async, &ia2), DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
	assert_null(ia2);
	release_pzs(pzs, n);
	check_ok(dat_ia_open(TEST_IA, 8, &async, &ia2));
	check_ok(dat_ia_close(ia2, DAT_CLOSE_GRACEFUL_FLAG));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* DAT_INVALID_PARAMETER: a NULL name (argument 1), a name longer than
 * DAT_NAME_MAX_LENGTH - 1 (argument 1), no async EVD and a non-positive
 * async_evd_min_qlen (argument 2), a NULL async_evd_handle pointer
 * (argument 3) and a NULL ia_handle pointer (argument 4). */
static void test_ia_open_invalid_parameter(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	char longname[DAT_NAME_MAX_LENGTH + 1];
	memset(longname, 'x', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	check_ret(dat_ia_open(NULL, 8, &async, &ia), DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	check_ret(dat_ia_open(longname, 8, &async, &ia), DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	check_ret(dat_ia_open(TEST_IA, 0, &async, &ia), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_ia_open(TEST_IA, -3, &async, &ia), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_ia_open(TEST_IA, 8, NULL, &ia), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ret(dat_ia_open(TEST_IA, 8, &async, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	assert_null(ia);
	assert_null(async);
}

/* "If the name is prefixed by the string RO_AWARE_, then the prefix is
 * removed prior to being passed down": RO_AWARE_<name> opens <name>, and
 * the adapter is named without the prefix. "If the prefix is not present
 * and the platform ... is utilizing relaxed ordering, the open will fail":
 * this platform does not reorder, so the plain name opens too. */
static void test_ia_open_ro_aware_prefix(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_IA_ATTR a;
	char name[DAT_NAME_MAX_LENGTH];
	snprintf(name, sizeof name, "RO_AWARE_%s", TEST_IA);
	check_ok(dat_ia_open(name, 8, &async, &ia));
	check_ok(dat_ia_query(ia, NULL, DAT_IA_FIELD_IA_ADAPTER_NAME, &a, 0, NULL));
	assert_string_equal(a.adapter_name, TEST_IA);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
	async = DAT_HANDLE_NULL;
	check_ret(dat_ia_open("RO_AWARE_no-such-ia-godat", 8, &async, &ia), DAT_PROVIDER_NOT_FOUND,
		  DAT_NAME_NOT_REGISTERED);
}

/* DAT_PROVIDER_NOT_FOUND: "The specified provider was not registered in
 * the registry": DAT_NAME_NOT_REGISTERED, outputs untouched. */
static void test_ia_open_provider_not_found(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	check_ret(dat_ia_open("no-such-ia-godat-ctest", 8, &async, &ia), DAT_PROVIDER_NOT_FOUND,
		  DAT_NAME_NOT_REGISTERED);
	check_ret(dat_ia_open("", 8, &async, &ia), DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED);
	assert_null(ia);
	assert_null(async);
}

/* DAT_INVALID_HANDLE: "async_evd_handle is invalid" (subtype
 * DAT_INVALID_HANDLE_EVD_ASYNC): a garbage value, a freed EVD, a handle of
 * another type, and an EVD that is not an asynchronous one ("The
 * async_evd_handle value passed in by the Consumer must be an asynchronous
 * Event Dispatcher"). The handle passed in is left as it was. */
static void test_ia_open_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE other = open_ia(NULL), ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE dto = make_evd(other, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG);
	DAT_EVD_HANDLE freed = make_evd(other, 8, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_PZ_HANDLE pz = make_pz(other);
	check_ok(dat_evd_free(freed));
	DAT_EVD_HANDLE bad[] = {(DAT_EVD_HANDLE)(uintptr_t)0x1234560, freed, pz, other, dto};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		DAT_EVD_HANDLE async = bad[i];
		check_ret(dat_ia_open(TEST_IA, 8, &async, &ia), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_ASYNC);
		assert_ptr_equal(async, bad[i]);
		assert_null(ia);
	}
	check_ok(dat_ia_close(other, DAT_CLOSE_ABRUPT_FLAG));
}

/* USAGE: "The dat_ia_open() function creates a unique handle for the IA to
 * the Consumer. All further DAT Objects created for this Consumer
 * reference this handle as their owner." "When the Consumer closes its
 * handle, all its DAT Objects are released." */
static void test_ia_open_owner_of_objects(void **state)
{
	(void)state;
	static char buf[64];
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_CNO_HANDLE cno;
	DAT_RMR_HANDLE rmr;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ok(dat_rmr_create(pz, &rmr));
	struct lmr l = make_lmr(ia, pz, buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	DAT_PZ_PARAM pzp;
	DAT_EVD_PARAM ep;
	DAT_CNO_PARAM cp;
	DAT_LMR_PARAM lp;
	DAT_RMR_PARAM rp;
	check_ok(dat_pz_query(pz, DAT_PZ_FIELD_ALL, &pzp));
	check_ok(dat_evd_query(evd, DAT_EVD_FIELD_ALL, &ep));
	check_ok(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &cp));
	check_ok(dat_lmr_query(l.h, DAT_LMR_FIELD_ALL, &lp));
	check_ok(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &rp));
	assert_ptr_equal(pzp.ia_handle, ia);
	assert_ptr_equal(ep.ia_handle, ia);
	assert_ptr_equal(cp.ia_handle, ia);
	assert_ptr_equal(lp.ia_handle, ia);
	assert_ptr_equal(rp.ia_handle, ia);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	DAT_HANDLE all[] = {ia, pz, evd, cno, rmr, l.h};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
		DAT_HANDLE_TYPE t;
		check_type(dat_get_handle_type(all[i], &t), DAT_INVALID_HANDLE);
	}
}

/* "Valid IA names are obtained from dat_registry_list_providers(3DAT)":
 * every DAT 1.2 name listed is accepted by dat_ia_open (it opens, or its
 * transport reports DAT_NOT_IMPLEMENTED), never DAT_PROVIDER_NOT_FOUND. */
static void test_ia_open_listed_names(void **state)
{
	(void)state;
	DAT_COUNT n = 0, m = 0;
	dat_registry_list_providers(0, &n, NULL);
	assert_true(n > 0);
	DAT_PROVIDER_INFO *infos = calloc((size_t)n, sizeof *infos), **ptrs = calloc((size_t)n, sizeof *ptrs);
	assert_non_null(infos);
	assert_non_null(ptrs);
	for (DAT_COUNT i = 0; i < n; i++)
		ptrs[i] = &infos[i];
	check_ok(dat_registry_list_providers(n, &m, ptrs));
	int opened = 0;
	for (DAT_COUNT i = 0; i < m; i++) {
		if (infos[i].dapl_version_major != 1 || infos[i].dapl_version_minor != 2)
			continue;
		DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
		DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
		DAT_RETURN r = dat_ia_open(infos[i].ia_name, 8, &async, &ia);
		if (r == DAT_SUCCESS) {
			opened++;
			check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
		} else if (strcmp(infos[i].ia_name, "godat-verbs") == 0 && !verbs_usable()) {
			/* The shipped entry for an RDMA device, where there is
			 * none (test_verbs_absent checks how it fails). */
			check_ret(r, DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED);
		} else if (r != DAT_NOT_IMPLEMENTED) {
			fail_msg("listed name %s: %s", infos[i].ia_name, ret_name(r));
		}
	}
	assert_true(opened > 0);
	free(infos);
	free(ptrs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ia_open_success),
		cmocka_unit_test(test_ia_open_creates_async_evd),
		cmocka_unit_test(test_ia_open_consumer_async_evd),
		cmocka_unit_test(test_ia_open_async_exists),
		cmocka_unit_test(test_ia_open_insufficient_resources),
		cmocka_unit_test(test_ia_open_invalid_parameter),
		cmocka_unit_test(test_ia_open_ro_aware_prefix),
		cmocka_unit_test(test_ia_open_provider_not_found),
		cmocka_unit_test(test_ia_open_invalid_handle),
		cmocka_unit_test(test_ia_open_owner_of_objects),
		cmocka_unit_test(test_ia_open_listed_names),
	};
	return cmocka_run_group_tests_name("dat_ia_open", tests, NULL, NULL);
}
