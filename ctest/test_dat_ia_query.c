/* dat_ia_query(3DAT): every return value and the IA and provider
 * attributes the page defines. */
#define _GNU_SOURCE
#include "pages.h"
#include "iaaddr.h"

/* DAT_SUCCESS: "The dat_ia_query() functions provides the Consumer with
 * the IA parameters, as well as the IA and Provider attributes." The
 * async EVD handle is the one dat_ia_open returned; "Adapter name: The
 * name of the IA controlled by the Provider. The same as ia_name_ptr."
 * "IA_address_ptr: An address of the interface Adapter." */
static void test_ia_query_success(void **state)
{
	(void)state;
	DAT_EVD_HANDLE async, q = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia = open_ia(&async);
	DAT_IA_ATTR a;
	DAT_PROVIDER_ATTR pa;
	memset(&a, 0, sizeof a);
	memset(&pa, 0, sizeof pa);
	check_ok(dat_ia_query(ia, &q, DAT_IA_FIELD_ALL, &a, DAT_PROVIDER_FIELD_ALL, &pa));
	assert_ptr_equal(q, async);
	assert_string_equal(a.adapter_name, TEST_IA);
	assert_true(a.vendor_name[0] != 0);
	assert_non_null(a.ia_address_ptr);
	assert_int_equal(a.ia_address_ptr->sa_family, AF_INET);
	/* The shipped IAs' addresses: iaaddr.h. */
	char got[INET_ADDRSTRLEN];
	inet_ntop(AF_INET, &((struct sockaddr_in *)a.ia_address_ptr)->sin_addr, got, sizeof got);
	const char *want = shipped_ia_addr(TEST_IA);
	if (want != NULL)
		assert_string_equal(got, want);
	/* Limits are positive. */
	assert_true(a.max_eps > 0);
	assert_true(a.max_dto_per_ep > 0);
	assert_true(a.max_evds > 0);
	assert_true(a.max_evd_qlen > 0);
	assert_true(a.max_iov_segments_per_dto > 0);
	assert_true(a.max_lmrs > 0);
	assert_true(a.max_lmr_block_size > 0);
	assert_true(a.max_pzs > 0);
	assert_true(a.max_message_size > 0);
	assert_true(a.max_rdma_size > 0);
	assert_true(a.max_rmrs > 0);
	/* "Num transport attributes" / "Num vendor attributes": none. */
	assert_int_equal(a.num_transport_attr, 0);
	assert_int_equal(a.num_vendor_attr, 0);
	/* Only what was asked: masks of zero and NULL structures are fine. */
	q = DAT_HANDLE_NULL;
	check_ok(dat_ia_query(ia, &q, 0, NULL, 0, NULL));
	assert_ptr_equal(q, async);
	check_ok(dat_ia_query(ia, NULL, DAT_IA_FIELD_IA_MAX_EPS, &a, 0, NULL));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* "The IA attributes are common to all open instances of the IA." */
static void test_ia_query_common_to_opens(void **state)
{
	(void)state;
	DAT_IA_HANDLE a = open_ia(NULL), b = open_ia(NULL);
	DAT_IA_ATTR x, y;
	check_ok(dat_ia_query(a, NULL, DAT_IA_FIELD_ALL, &x, 0, NULL));
	check_ok(dat_ia_query(b, NULL, DAT_IA_FIELD_ALL, &y, 0, NULL));
	assert_string_equal(x.adapter_name, y.adapter_name);
	assert_string_equal(x.vendor_name, y.vendor_name);
	assert_int_equal(x.max_eps, y.max_eps);
	assert_int_equal(x.max_dto_per_ep, y.max_dto_per_ep);
	assert_int_equal(x.max_evd_qlen, y.max_evd_qlen);
	assert_int_equal(x.max_lmrs, y.max_lmrs);
	assert_int_equal(x.max_pzs, y.max_pzs);
	assert_int_equal(x.max_rmrs, y.max_rmrs);
	assert_int_equal(x.max_message_size, y.max_message_size);
	check_ok(dat_ia_close(a, DAT_CLOSE_GRACEFUL_FLAG));
	check_ok(dat_ia_close(b, DAT_CLOSE_GRACEFUL_FLAG));
}

/* The provider attributes: "DAPL API version major / minor" is the 1.2
 * this library implements; "All Providers must support the following
 * Memory Types: DAT_MEM_TYPE_VIRTUAL, DAT_MEM_TYPE_LMR, and
 * DAT_MEM_TYPE_SHARED_VIRTUAL"; "Max private data size ... is at least 64
 * bytes"; "The DAT_OPTIMAL_ALIGMNEMT must be divisible by this attribute
 * value. The maximum allowed value is ... 256"; the four completion flags
 * the page lists are supported; "The Provider should support merging of
 * all event stream types" and an EVD merging them all can be created. */
static void test_ia_query_provider_attributes(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PROVIDER_ATTR pa;
	memset(&pa, 0, sizeof pa);
	check_ok(dat_ia_query(ia, NULL, 0, NULL, DAT_PROVIDER_FIELD_ALL, &pa));
	assert_true(pa.provider_name[0] != 0);
	assert_int_equal(pa.dapl_version_major, 1);
	assert_int_equal(pa.dapl_version_minor, 2);
	assert_true(pa.lmr_mem_types_supported & DAT_MEM_TYPE_LMR);
	assert_true(pa.lmr_mem_types_supported & DAT_MEM_TYPE_SHARED_VIRTUAL);
	assert_true(pa.max_private_data_size >= 64);
	assert_true(pa.optimal_buffer_alignment > 0 && pa.optimal_buffer_alignment <= 256);
	assert_int_equal(DAT_OPTIMAL_ALIGNMENT % pa.optimal_buffer_alignment, 0);
	DAT_COMPLETION_FLAGS want = DAT_COMPLETION_SUPPRESS_FLAG | DAT_COMPLETION_UNSIGNALLED_FLAG |
				    DAT_COMPLETION_SOLICITED_WAIT_FLAG | DAT_COMPLETION_BARRIER_FENCE_FLAG;
	assert_int_equal(pa.completion_flags_supported & want, want);
	assert_true(pa.iov_ownership_on_return == DAT_IOV_CONSUMER ||
		    pa.iov_ownership_on_return == DAT_IOV_PROVIDER_NOMOD ||
		    pa.iov_ownership_on_return == DAT_IOV_PROVIDER_MOD);
	assert_true(pa.ep_creator == DAT_PSP_CREATES_EP_NEVER || pa.ep_creator == DAT_PSP_CREATES_EP_IFASKED ||
		    pa.ep_creator == DAT_PSP_CREATES_EP_ALWAYS);
	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 6; j++)
			if (pa.evd_stream_merging_supported[i][j] != DAT_TRUE)
				fail_msg("evd_stream_merging_supported[%d][%d] is %d", i, j,
					 (int)pa.evd_stream_merging_supported[i][j]);
	DAT_EVD_HANDLE all = make_evd(ia, 8, DAT_HANDLE_NULL,
				      DAT_EVD_SOFTWARE_FLAG | DAT_EVD_CR_FLAG | DAT_EVD_DTO_FLAG |
					      DAT_EVD_CONNECTION_FLAG | DAT_EVD_RMR_BIND_FLAG);
	check_ok(dat_evd_free(all));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* "Max LMRs: Maximum number of Local Memory Regions IA supports": exactly
 * max_lmrs registrations fit. "Max private data size": a connect with
 * that much private data is accepted, one byte more is not. */
static void test_ia_query_limits_hold(void **state)
{
	(void)state;
	static char buf[4096];
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_IA_ATTR a;
	DAT_PROVIDER_ATTR pa;
	check_ok(dat_ia_query(ia, NULL, DAT_IA_FIELD_ALL, &a, DAT_PROVIDER_FIELD_ALL, &pa));
	/* Soft-RoCE in a 2 GiB VM reports max_mr 524287 and refuses the
	 * 262139th registration: too many to exhaust (common.h). */
	skip_unless_exhaustible("max_lmrs", a.max_lmrs);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_LMR_HANDLE *v = calloc((size_t)a.max_lmrs + 1, sizeof *v);
	assert_non_null(v);
	for (DAT_COUNT i = 0; i < a.max_lmrs; i++) {
		struct lmr l;
		DAT_RETURN r = lmr_create_va(ia, pz, buf + i % 64, 64, DAT_MEM_PRIV_LOCAL_READ_FLAG, &l);
		if (r != DAT_SUCCESS)
			fail_msg("LMR %d of max_lmrs %d: %s", i, a.max_lmrs, ret_name(r));
		v[i] = l.h;
	}
	struct lmr extra;
	check_type(lmr_create_va(ia, pz, buf, 64, DAT_MEM_PRIV_LOCAL_READ_FLAG, &extra), DAT_INSUFFICIENT_RESOURCES);
	for (DAT_COUNT i = 0; i < a.max_lmrs; i++)
		check_ok(dat_lmr_free(v[i]));
	free(v);
	check_ok(dat_pz_free(pz));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));

	struct pair p;
	pair_open(&p, NULL);
	char *pd = calloc(1, (size_t)pa.max_private_data_size + 1);
	assert_non_null(pd);
	struct sockaddr_in sa = loopback_addr();
	check_ret(dat_ep_connect(p.ep[1], (DAT_IA_ADDRESS_PTR)&sa, p.qual, TMO_US, pa.max_private_data_size + 1, pd,
				 DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG),
		  DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	check_ok(dat_ep_connect(p.ep[1], (DAT_IA_ADDRESS_PTR)&sa, p.qual, TMO_US, pa.max_private_data_size, pd,
				DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	DAT_EVENT ev = wait_event(p.cr, DAT_CONNECTION_REQUEST_EVENT);
	DAT_CR_PARAM crp;
	check_ok(dat_cr_query(ev.event_data.cr_arrival_event_data.cr_handle, DAT_CR_FIELD_ALL, &crp));
	assert_int_equal(crp.private_data_size, pa.max_private_data_size);
	free(pd);
	pair_close(&p);
}

/* DAT_INVALID_PARAMETER: a mask bit outside DAT_IA_FIELD_ALL (argument 3),
 * an IA mask with no structure (argument 4), a bit outside
 * DAT_PROVIDER_FIELD_ALL (argument 5), a provider mask with no structure
 * (argument 6). */
static void test_ia_query_invalid_parameter(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_IA_ATTR a;
	DAT_PROVIDER_ATTR pa;
	check_ret(dat_ia_query(ia, NULL, DAT_IA_FIELD_ALL + 1, &a, 0, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ret(dat_ia_query(ia, NULL, DAT_IA_FIELD_ALL, NULL, 0, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	check_ret(dat_ia_query(ia, NULL, 0, NULL, DAT_PROVIDER_FIELD_ALL + 1, &pa), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG5);
	check_ret(dat_ia_query(ia, NULL, 0, NULL, DAT_PROVIDER_FIELD_ALL, NULL), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG6);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* DAT_INVALID_HANDLE: "ia_handle is invalid": NULL, closed, another type;
 * no output is written. */
static void test_ia_query_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL), closed = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_EVD_HANDLE q = (DAT_EVD_HANDLE)(uintptr_t)0x99;
	DAT_IA_ATTR a;
	check_ok(dat_ia_close(closed, DAT_CLOSE_GRACEFUL_FLAG));
	memset(&a, 0xA5, sizeof a);
	check_ret(dat_ia_query(DAT_HANDLE_NULL, &q, DAT_IA_FIELD_ALL, &a, 0, NULL), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_IA);
	check_ret(dat_ia_query(closed, &q, DAT_IA_FIELD_ALL, &a, 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	check_ret(dat_ia_query(pz, &q, DAT_IA_FIELD_ALL, &a, 0, NULL), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	assert_int_equal((uintptr_t)q, 0x99);
	assert_int_equal(((unsigned char *)&a)[0], 0xA5);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ia_query_success),
		cmocka_unit_test(test_ia_query_common_to_opens),
		cmocka_unit_test(test_ia_query_provider_attributes),
		cmocka_unit_test(test_ia_query_limits_hold),
		cmocka_unit_test(test_ia_query_invalid_parameter),
		cmocka_unit_test(test_ia_query_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_ia_query", tests, NULL, NULL);
}
