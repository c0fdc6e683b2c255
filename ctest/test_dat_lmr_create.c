/* dat_lmr_create(3DAT): every return value, the three memory types, the
 * returned contexts, and what the PZ and privileges allow. */
#define _GNU_SOURCE
#include "pages.h"
#include <sys/mman.h>

static char cookie_a[DAT_LMR_COOKIE_SIZE] = "godat-ctest-shared-region";

/* DAT_SUCCESS: "The dat_lmr_create() function registers a memory region
 * with an IA." "The return values of registered_size and
 * registered_address indicate to the Consumer how much the contiguous
 * region of Consumer virtual memory was registered by the Provider and
 * where the region starts": the whole buffer, at its address. */
static void test_lmr_create_success(void **state)
{
	(void)state;
	static char buf[1000];
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	struct lmr l = make_lmr(ia, pz, buf + 3, 997, DAT_MEM_PRIV_ALL_FLAG);
	assert_non_null(l.h);
	assert_int_equal(l.size, 997);
	assert_int_equal(l.addr, (DAT_VADDR)(uintptr_t)(buf + 3));
	DAT_HANDLE_TYPE t;
	check_ok(dat_get_handle_type(l.h, &t));
	assert_int_equal(t, DAT_HANDLE_TYPE_LMR);
	/* The other outputs are optional. */
	DAT_REGION_DESCRIPTION rd = {.for_va = buf};
	DAT_LMR_HANDLE h2;
	check_ok(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, 10, pz, DAT_MEM_PRIV_LOCAL_READ_FLAG, &h2, NULL, NULL,
				NULL, NULL));
	/* Two registrations of the same memory have their own contexts. */
	struct lmr l3 = make_lmr(ia, pz, buf + 3, 997, DAT_MEM_PRIV_ALL_FLAG);
	assert_int_not_equal(l3.lctx, l.lctx);
	assert_int_not_equal(l3.rctx, l.rctx);
	check_ok(dat_lmr_free(l3.h));
	check_ok(dat_lmr_free(h2));
	check_ok(dat_lmr_free(l.h));
	check_ok(dat_pz_free(pz));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* "If mem_privileges does not specify remote Read and Write privileges,
 * rmr_context is not generated and NULL is returned. No remote privileges
 * are given for Memory Region unless explicitly asked for by the
 * Consumer." Local-only LMRs get a zero rmr_context; with a remote flag
 * there is one. */
static void test_lmr_create_rmr_context_only_with_remote_privileges(void **state)
{
	(void)state;
	static char buf[64];
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_MEM_PRIV_FLAGS local[] = {DAT_MEM_PRIV_NONE_FLAG, DAT_MEM_PRIV_LOCAL_READ_FLAG,
				      DAT_MEM_PRIV_LOCAL_WRITE_FLAG,
				      DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_LOCAL_WRITE_FLAG};
	for (size_t i = 0; i < 4; i++) {
		struct lmr l;
		l.rctx = 0x1234;
		check_ok(lmr_create_va(ia, pz, buf, sizeof buf, local[i], &l));
		assert_int_equal(l.rctx, 0);
		check_ok(dat_lmr_free(l.h));
	}
	struct lmr r = make_lmr(ia, pz, buf, sizeof buf, DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_REMOTE_READ_FLAG);
	assert_int_not_equal(r.rctx, 0);
	check_ok(dat_lmr_free(r.h));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "The return value of rmr_context can be transferred by the local
 * Consumer to a Consumer on a remote host to be used for an RDMA DTO":
 * the peer RDMA-writes into the LMR and RDMA-reads it back through it. */
static void test_lmr_create_rmr_context_for_rdma(void **state)
{
	(void)state;
	static char target[64], src[64] = "written by the peer", back[64];
	struct pair p;
	pair_open(&p, NULL);
	pair_connect(&p);
	struct lmr t = make_lmr(p.ia[0], p.pz[0], target, sizeof target, DAT_MEM_PRIV_ALL_FLAG);
	struct lmr s = make_lmr(p.ia[1], p.pz[1], src, sizeof src, DAT_MEM_PRIV_ALL_FLAG);
	struct lmr b = make_lmr(p.ia[1], p.pz[1], back, sizeof back, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET siov = triplet(&s, src, sizeof src), biov = triplet(&b, back, sizeof back);
	DAT_RMR_TRIPLET r = {.rmr_context = t.rctx, .target_address = t.addr, .segment_length = sizeof target};
	DAT_DTO_COOKIE ck = {.as_64 = 1};
	check_ok(dat_ep_post_rdma_write(p.ep[1], 1, &siov, ck, &r, DAT_COMPLETION_DEFAULT_FLAG));
	DAT_EVENT ev = wait_event(p.evd[1], DAT_DTO_COMPLETION_EVENT);
	assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	assert_string_equal(target, "written by the peer");
	target[0] = 'W';
	check_ok(dat_ep_post_rdma_read(p.ep[1], 1, &biov, ck, &r, DAT_COMPLETION_DEFAULT_FLAG));
	ev = wait_event(p.evd[1], DAT_DTO_COMPLETION_EVENT);
	assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	assert_string_equal(back, "Written by the peer");
	pair_close(&p);
}

/* "The created lmr_context can be used for local buffers of DTOs and for
 * binding RMRs, and lmr_handle can be used for creating other LMRs."
 * USAGE: "Consumers can create an LMR over the existing LMR memory with
 * different Protection Zones and privileges": DAT_MEM_TYPE_LMR ("Length
 * parameter is ignored") registers the same range in another PZ with
 * other privileges. */
static void test_lmr_create_over_lmr(void **state)
{
	(void)state;
	static char buf[512];
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia), pz2 = make_pz(ia);
	struct lmr base = make_lmr(ia, pz, buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	DAT_REGION_DESCRIPTION rd = {.for_lmr_handle = base.h};
	struct lmr o;
	check_ok(dat_lmr_create(ia, DAT_MEM_TYPE_LMR, rd, 1, pz2, DAT_MEM_PRIV_LOCAL_READ_FLAG, &o.h, &o.lctx, &o.rctx,
				&o.size, &o.addr));
	assert_int_equal(o.size, sizeof buf);
	assert_int_equal(o.addr, (DAT_VADDR)(uintptr_t)buf);
	assert_int_equal(o.rctx, 0);
	assert_int_not_equal(o.lctx, base.lctx);
	DAT_LMR_PARAM lp;
	check_ok(dat_lmr_query(o.h, DAT_LMR_FIELD_ALL, &lp));
	assert_int_equal(lp.mem_type, DAT_MEM_TYPE_LMR);
	assert_ptr_equal(lp.region_desc.for_lmr_handle, base.h);
	assert_ptr_equal(lp.pz_handle, pz2);
	assert_int_equal(lp.mem_priv, DAT_MEM_PRIV_LOCAL_READ_FLAG);
	/* The base LMR is in use while the one over it exists. */
	check_ret(dat_lmr_free(base.h), DAT_INVALID_STATE, DAT_INVALID_STATE_LMR_IN_USE);
	check_ok(dat_lmr_free(o.h));
	check_ok(dat_lmr_free(base.h));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* "The pz_handle parameter allows Consumers to restrict local accesses to
 * the registered LMR by DTOs": a receive into an LMR of another PZ than
 * the endpoint's is refused with DAT_PROTECTION_VIOLATION (writing local
 * memory). */
static void test_lmr_create_pz_restricts_access(void **state)
{
	(void)state;
	static char buf[64];
	struct pair p;
	pair_open(&p, NULL);
	pair_connect(&p);
	DAT_PZ_HANDLE other = make_pz(p.ia[0]);
	struct lmr l = make_lmr(p.ia[0], other, buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET t = triplet(&l, buf, sizeof buf);
	DAT_DTO_COOKIE ck = {.as_64 = 5};
	check_ret(dat_ep_post_recv(p.ep[0], 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG), DAT_PROTECTION_VIOLATION,
		  DAT_PROTECTION_WRITE);
	expect_empty(p.evd[0]);
	assert_int_equal(buf[0], 0);
	pair_close(&p);
}

/* DAT_MEM_TYPE_SHARED_VIRTUAL: "All DAT Consumers of the shared memory must
 * allocate the memory region as shared memory using Platform-specific
 * primitives": a MAP_SHARED mapping registers, with its 40-byte cookie. */
static void test_lmr_create_shared_virtual(void **state)
{
	(void)state;
	size_t len = 3 * 4096;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_REGION_DESCRIPTION rd;
	memset(&rd, 0, sizeof rd);
	rd.for_shared_memory.virtual_address = m + 100;
	rd.for_shared_memory.shared_memory_id = &cookie_a;
	struct lmr l;
	check_ok(dat_lmr_create(ia, DAT_MEM_TYPE_SHARED_VIRTUAL, rd, len - 100, pz, DAT_MEM_PRIV_ALL_FLAG, &l.h,
				&l.lctx, &l.rctx, &l.size, &l.addr));
	assert_int_equal(l.size, len - 100);
	assert_int_equal(l.addr, (DAT_VADDR)(uintptr_t)(m + 100));
	DAT_LMR_PARAM lp;
	check_ok(dat_lmr_query(l.h, DAT_LMR_FIELD_ALL, &lp));
	assert_int_equal(lp.mem_type, DAT_MEM_TYPE_SHARED_VIRTUAL);
	check_ok(dat_lmr_free(l.h));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	munmap(m, len);
}

/* DAT_UNSUFFICIENT_RESOURCES (the page's spelling of
 * DAT_INSUFFICIENT_RESOURCES): "The operation failed due to resource
 * limitations." After max_lmrs registrations the next one fails with
 * DAT_RESOURCE_MEMORY_REGION; freeing one makes room. */
static void test_lmr_create_insufficient_resources(void **state)
{
	(void)state;
	static char buf[64];
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_IA_ATTR a;
	check_ok(dat_ia_query(ia, NULL, DAT_IA_FIELD_IA_MAX_LMRS, &a, 0, NULL));
	skip_unless_exhaustible("max_lmrs", a.max_lmrs);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_LMR_HANDLE *v = calloc((size_t)a.max_lmrs, sizeof *v);
	assert_non_null(v);
	for (DAT_COUNT i = 0; i < a.max_lmrs; i++) {
		struct lmr l;
		check_ok(lmr_create_va(ia, pz, buf, sizeof buf, DAT_MEM_PRIV_LOCAL_READ_FLAG, &l));
		v[i] = l.h;
	}
	struct lmr extra;
	extra.h = (DAT_LMR_HANDLE)(uintptr_t)0x33;
	check_ret(lmr_create_va(ia, pz, buf, sizeof buf, DAT_MEM_PRIV_LOCAL_READ_FLAG, &extra),
		  DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY_REGION);
	assert_int_equal((uintptr_t)extra.h, 0x33);
	check_ok(dat_lmr_free(v[0]));
	check_ok(lmr_create_va(ia, pz, buf, sizeof buf, DAT_MEM_PRIV_LOCAL_READ_FLAG, &extra));
	free(v);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_PARAMETER: undefined privilege bits (argument 6), a NULL
 * virtual address (argument 3), a length past max_lmr_block_size
 * (argument 4), and no place for the handle (argument 7). A zero length is
 * DAT_LENGTH_ERROR (test_negative.c). */
static void test_lmr_create_invalid_parameter(void **state)
{
	(void)state;
	static char buf[64];
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_IA_ATTR a;
	check_ok(dat_ia_query(ia, NULL, DAT_IA_FIELD_IA_MAX_LMR_BLOCK_SIZE, &a, 0, NULL));
	struct lmr l;
	DAT_REGION_DESCRIPTION rd = {.for_va = buf};
	check_ret(lmr_create_va(ia, pz, buf, sizeof buf, 0x40, &l), DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	check_ret(lmr_create_va(ia, pz, NULL, sizeof buf, DAT_MEM_PRIV_ALL_FLAG, &l), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG3);
	check_ret(lmr_create_va(ia, pz, buf, a.max_lmr_block_size + 1, DAT_MEM_PRIV_ALL_FLAG, &l),
		  DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	check_ret(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, sizeof buf, pz, DAT_MEM_PRIV_ALL_FLAG, NULL, NULL, NULL,
				 NULL, NULL),
		  DAT_INVALID_PARAMETER, DAT_INVALID_ARG7);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: a bad IA (DAT_INVALID_HANDLE_IA), a bad or freed PZ
 * (DAT_INVALID_HANDLE_PZ), a PZ of another IA, and for DAT_MEM_TYPE_LMR a
 * bad or freed region LMR (DAT_INVALID_HANDLE_LMR). */
static void test_lmr_create_invalid_handle(void **state)
{
	(void)state;
	static char buf[64];
	DAT_IA_HANDLE ia = open_ia(NULL), ia2 = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia), pz2 = make_pz(ia2), freed = make_pz(ia);
	check_ok(dat_pz_free(freed));
	struct lmr l, gone = make_lmr(ia, pz, buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	check_ok(dat_lmr_free(gone.h));
	check_ret(lmr_create_va(DAT_HANDLE_NULL, pz, buf, 8, DAT_MEM_PRIV_ALL_FLAG, &l), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_IA);
	check_ret(lmr_create_va(pz, pz, buf, 8, DAT_MEM_PRIV_ALL_FLAG, &l), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	check_ret(lmr_create_va(ia, DAT_HANDLE_NULL, buf, 8, DAT_MEM_PRIV_ALL_FLAG, &l), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_PZ);
	check_ret(lmr_create_va(ia, freed, buf, 8, DAT_MEM_PRIV_ALL_FLAG, &l), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_PZ);
	check_ret(lmr_create_va(ia, pz2, buf, 8, DAT_MEM_PRIV_ALL_FLAG, &l), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	DAT_REGION_DESCRIPTION rd = {.for_lmr_handle = gone.h};
	check_ret(dat_lmr_create(ia, DAT_MEM_TYPE_LMR, rd, 0, pz, DAT_MEM_PRIV_ALL_FLAG, &l.h, NULL, NULL, NULL, NULL),
		  DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	rd.for_lmr_handle = pz;
	check_ret(dat_lmr_create(ia, DAT_MEM_TYPE_LMR, rd, 0, pz, DAT_MEM_PRIV_ALL_FLAG, &l.h, NULL, NULL, NULL, NULL),
		  DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	check_ok(dat_ia_close(ia2, DAT_CLOSE_ABRUPT_FLAG));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_STATE: "shared virtual buffer was not created shared by the
 * platform": private memory (static data, a MAP_PRIVATE mapping, and a
 * shared mapping that runs on into a private one) registered as
 * DAT_MEM_TYPE_SHARED_VIRTUAL. */
static void test_lmr_create_invalid_state(void **state)
{
	(void)state;
	static char priv[8192];
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	char *pm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(pm != MAP_FAILED);
	/* A shared page followed by a private one. */
	char *two = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(two != MAP_FAILED);
	assert_true(mmap(two, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == two);
	struct {
		char *at;
		size_t len;
	} cases[] = {{priv, sizeof priv}, {pm, 4096}, {two, 8192}};
	for (size_t i = 0; i < 3; i++) {
		DAT_REGION_DESCRIPTION rd;
		DAT_LMR_HANDLE h;
		rd.for_shared_memory.virtual_address = cases[i].at;
		rd.for_shared_memory.shared_memory_id = &cookie_a;
		check_ret(dat_lmr_create(ia, DAT_MEM_TYPE_SHARED_VIRTUAL, rd, cases[i].len, pz, DAT_MEM_PRIV_ALL_FLAG, &h,
					 NULL, NULL, NULL, NULL),
			  DAT_INVALID_STATE, DAT_NO_SUBTYPE);
	}
	/* The shared page alone registers. */
	DAT_REGION_DESCRIPTION rd;
	DAT_LMR_HANDLE h;
	rd.for_shared_memory.virtual_address = two;
	rd.for_shared_memory.shared_memory_id = &cookie_a;
	check_ok(dat_lmr_create(ia, DAT_MEM_TYPE_SHARED_VIRTUAL, rd, 4096, pz, DAT_MEM_PRIV_ALL_FLAG, &h, NULL, NULL,
				NULL, NULL));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	munmap(pm, 4096);
	munmap(two, 8192);
}

/* DAT_MODEL_NOT_SUPPORTED: "requested Memory Type was not supported by the
 * Provider": DAT_MEM_TYPE_SO_VIRTUAL (a Solaris addition for platforms
 * with relaxed ordering, which this one is not) and an undefined type. */
static void test_lmr_create_model_not_supported(void **state)
{
	(void)state;
	static char buf[64];
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	DAT_REGION_DESCRIPTION rd = {.for_va = buf};
	DAT_LMR_HANDLE h;
	check_ret(dat_lmr_create(ia, DAT_MEM_TYPE_SO_VIRTUAL, rd, sizeof buf, pz, DAT_MEM_PRIV_ALL_FLAG, &h, NULL, NULL,
				 NULL, NULL),
		  DAT_MODEL_NOT_SUPPORTED, DAT_NO_SUBTYPE);
	check_ret(dat_lmr_create(ia, (DAT_MEM_TYPE)0x10, rd, sizeof buf, pz, DAT_MEM_PRIV_ALL_FLAG, &h, NULL, NULL,
				 NULL, NULL),
		  DAT_MODEL_NOT_SUPPORTED, DAT_NO_SUBTYPE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lmr_create_success),
		cmocka_unit_test(test_lmr_create_rmr_context_only_with_remote_privileges),
		cmocka_unit_test(test_lmr_create_rmr_context_for_rdma),
		cmocka_unit_test(test_lmr_create_over_lmr),
		cmocka_unit_test(test_lmr_create_pz_restricts_access),
		cmocka_unit_test(test_lmr_create_shared_virtual),
		cmocka_unit_test(test_lmr_create_insufficient_resources),
		cmocka_unit_test(test_lmr_create_invalid_parameter),
		cmocka_unit_test(test_lmr_create_invalid_handle),
		cmocka_unit_test(test_lmr_create_invalid_state),
		cmocka_unit_test(test_lmr_create_model_not_supported),
	};
	return cmocka_run_group_tests_name("dat_lmr_create", tests, NULL, NULL);
}
