/* dat_ep_post_rdma_write(3DAT): return values and one-sided writes. */
#include <limits.h>
#include "conn.h"
#include "broken.h"

#define BIG (64 * 1024)

struct rig {
	struct pair x;
	struct mem l;  /* active side, local */
	struct mem r;  /* passive side, the remote buffer */
	struct mem ro; /* passive side, remote read only */
};

static void rig_up(struct rig *g, const DAT_EP_ATTR *attr)
{
	pair_up(&g->x, attr);
	mem_reg(&g->l, g->x.a.ia, g->x.a.pz, BIG, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&g->r, g->x.p.ia, g->x.p.pz, BIG, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&g->ro, g->x.p.ia, g->x.p.pz, 64,
		DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_LOCAL_WRITE_FLAG | DAT_MEM_PRIV_REMOTE_READ_FLAG);
}

static void rig_down(struct rig *g)
{
	mem_free(&g->l, 0);
	mem_free(&g->r, 0);
	mem_free(&g->ro, 0);
	pair_close(&g->x);
}

/* "The dat_ep_post_rdma_write() function requests the transfer of all the
 * data specified by the local_iov over the connection of the ep_handle
 * Endpoint into the remote_buffer." "The local_iov segments are traversed
 * in the I/O Vector order until all the data is transferred." "The
 * user_cookie is returned to the Consumer in the Completion event for the
 * posted RDMA Write." No event reaches the remote side. */
static void success_gather(void **state)
{
	(void)state;
	struct rig g;
	rig_up(&g, NULL);
	memcpy(g.l.buf, "22221111", 8);
	DAT_LMR_TRIPLET iov[2] = {iov_at(&g.l, 4, 4), iov_at(&g.l, 0, 4)};
	DAT_RMR_TRIPLET rb = rmr_at(&g.r, 100, 8);
	check_ok(dat_ep_post_rdma_write(g.x.a.ep, 2, iov, cookie(0x1234), &rb, DAT_COMPLETION_DEFAULT_FLAG));
	assert_int_equal(expect_dto(g.x.a.req, g.x.a.ep, 0x1234, DAT_DTO_SUCCESS), 8);
	assert_memory_equal(g.r.buf + 100, "11112222", 8);
	expect_empty(g.x.p.recv);
	expect_empty(g.x.p.req);
	/* A large write, and one into a larger remote buffer. */
	memset(g.l.buf, 0x77, BIG);
	DAT_LMR_TRIPLET all = iov_at(&g.l, 0, BIG);
	DAT_RMR_TRIPLET rall = rmr_at(&g.r, 0, BIG);
	check_ok(dat_ep_post_rdma_write(g.x.a.ep, 1, &all, cookie(2), &rall, DAT_COMPLETION_DEFAULT_FLAG));
	assert_int_equal(expect_dto(g.x.a.req, g.x.a.ep, 2, DAT_DTO_SUCCESS), BIG);
	assert_memory_equal(g.r.buf, g.l.buf, BIG);
	rig_down(&g);
}

/* "If the operation returns successfully for the Endpoint in the
 * DAT_EP_STATE_DISCONNECTED state, the posted RDMA Write is immediately
 * flushed to request_evd_handle." */
static void disconnected_flush(void **state)
{
	(void)state;
	struct rig g;
	rig_up(&g, NULL);
	pair_disconnect(&g.x);
	DAT_LMR_TRIPLET iov = iov_at(&g.l, 0, 8);
	DAT_RMR_TRIPLET rb = rmr_at(&g.r, 0, 8);
	check_ok(dat_ep_post_rdma_write(g.x.a.ep, 1, &iov, cookie(5), &rb, DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(g.x.a.req, g.x.a.ep, 5, DAT_DTO_ERR_FLUSHED);
	assert_int_equal(g.r.buf[0], 0);
	rig_down(&g);
}

/* "The value of DAT_COMPLETION_UNSIGNALLED_FLAG is only valid if the
 * Endpoint Request Completion Flags DAT_COMPLETION_UNSIGNALLED_FLAG.
 * Otherwise, DAT_INVALID_PARAMETER is returned." */
static void unsignalled_flag(void **state)
{
	(void)state;
	struct rig g;
	rig_up(&g, NULL);
	DAT_LMR_TRIPLET iov = iov_at(&g.l, 0, 8);
	DAT_RMR_TRIPLET rb = rmr_at(&g.r, 0, 8);
	check_ret(dat_ep_post_rdma_write(g.x.a.ep, 1, &iov, cookie(1), &rb, DAT_COMPLETION_UNSIGNALLED_FLAG),
		  DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	rig_down(&g);
}

/* The rig's pair as the two ends of a broken connection: the active side
 * initiates, the passive side is the target. */
static void rig_expect_broken(struct rig *g, uint64_t bad)
{
	struct brk_end ini = {g->x.a.ep, g->x.a.req, g->x.a.conn, g->x.a.async};
	struct brk_end tgt = {g->x.p.ep, g->x.p.recv, g->x.p.conn, g->x.p.async};
	expect_access_broken(ini, bad, tgt, 0);
}

/* "rmr_context does not have the remote write privileges": the target
 * checks the remote buffer; the write completes with
 * DAT_DTO_ERR_REMOTE_ACCESS without touching the memory, and, as on verbs
 * (a QP access error), the connection breaks (broken.h). */
static void remote_privileges(void **state)
{
	(void)state;
	struct rig g;
	rig_up(&g, NULL);
	memset(g.l.buf, 0x11, 8);
	DAT_LMR_TRIPLET iov = iov_at(&g.l, 0, 8);
	DAT_RMR_TRIPLET rb = rmr_at(&g.ro, 0, 8);
	check_ok(dat_ep_post_rdma_write(g.x.a.ep, 1, &iov, cookie(3), &rb, DAT_COMPLETION_DEFAULT_FLAG));
	rig_expect_broken(&g, 3);
	for (int i = 0; i < 64; i++)
		assert_int_equal(g.ro.buf[i], 0);
	rig_down(&g);
}

/* Outside the remote region, likewise, on a connection of its own: the
 * four bytes that were inside stay untouched too. */
static void remote_out_of_bounds(void **state)
{
	(void)state;
	struct rig g;
	rig_up(&g, NULL);
	memset(g.l.buf, 0x11, 8);
	DAT_LMR_TRIPLET iov = iov_at(&g.l, 0, 8);
	DAT_RMR_TRIPLET rb = rmr_at(&g.r, BIG - 4, 8);
	check_ok(dat_ep_post_rdma_write(g.x.a.ep, 1, &iov, cookie(4), &rb, DAT_COMPLETION_DEFAULT_FLAG));
	rig_expect_broken(&g, 4);
	for (int i = 0; i < BIG; i++)
		if (g.r.buf[i] != 0)
			fail_msg("target byte %d written by a refused RDMA write", i);
	rig_down(&g);
}

/* "Protection Zone mismatch between ... the rmr_context and the remote
 * Endpoint": the target's LMR is in another PZ than its EP. That mismatch
 * can only be found at the target, so it is the same remote access
 * violation: REMOTE_ACCESS, a broken connection, nothing written. */
static void remote_protection_zone(void **state)
{
	(void)state;
	struct rig g;
	struct mem other;
	rig_up(&g, NULL);
	DAT_PZ_HANDLE pz2;
	check_ok(dat_pz_create(g.x.p.ia, &pz2));
	mem_reg(&other, g.x.p.ia, pz2, 64, DAT_MEM_PRIV_ALL_FLAG);
	memset(g.l.buf, 0x11, 8);
	DAT_LMR_TRIPLET iov = iov_at(&g.l, 0, 8);
	DAT_RMR_TRIPLET rb = rmr_at(&other, 0, 8);
	check_ok(dat_ep_post_rdma_write(g.x.a.ep, 1, &iov, cookie(6), &rb, DAT_COMPLETION_DEFAULT_FLAG));
	rig_expect_broken(&g, 6);
	for (int i = 0; i < 64; i++)
		assert_int_equal(other.buf[i], 0);
	mem_free(&other, 0);
	rig_down(&g);
}

/* "The size of the remote buffer is too small for the data of the local
 * buffer." */
static void length_error(void **state)
{
	(void)state;
	struct rig g;
	rig_up(&g, NULL);
	DAT_LMR_TRIPLET iov = iov_at(&g.l, 0, 16);
	DAT_RMR_TRIPLET rb = rmr_at(&g.r, 0, 8);
	check_type(dat_ep_post_rdma_write(g.x.a.ep, 1, &iov, cookie(1), &rb, DAT_COMPLETION_DEFAULT_FLAG),
		   DAT_LENGTH_ERROR);
	expect_empty(g.x.a.req);
	rig_down(&g);
}

/* More requests outstanding than max_request_dtos: a large send the peer
 * has not taken holds the only slot. */
static void insufficient_resources(void **state)
{
	(void)state;
	struct rig g;
	DAT_EP_ATTR a = provider_defaults();
	a.max_request_dtos = 1;
	rig_up(&g, &a);
	DAT_LMR_TRIPLET big = iov_at(&g.l, 0, BIG), iov = iov_at(&g.l, 0, 8);
	DAT_RMR_TRIPLET rb = rmr_at(&g.r, 0, 8);
	check_ok(dat_ep_post_send(g.x.a.ep, 1, &big, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	check_type(dat_ep_post_rdma_write(g.x.a.ep, 1, &iov, cookie(2), &rb, DAT_COMPLETION_DEFAULT_FLAG),
		   DAT_INSUFFICIENT_RESOURCES);
	rig_down(&g);
}

/* "Invalid parameter. For example, one of the IOV segments pointed to a
 * memory outside its LMR." */
static void invalid_parameter(void **state)
{
	(void)state;
	struct rig g;
	rig_up(&g, NULL);
	DAT_LMR_TRIPLET out = iov_at(&g.l, BIG - 4, 8), ok = iov_at(&g.l, 0, 8);
	DAT_RMR_TRIPLET rb = rmr_at(&g.r, 0, 64);
	check_ret(dat_ep_post_rdma_write(g.x.a.ep, 1, &out, cookie(1), &rb, DAT_COMPLETION_DEFAULT_FLAG),
		  DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ret(dat_ep_post_rdma_write(g.x.a.ep, -1, &ok, cookie(1), &rb, DAT_COMPLETION_DEFAULT_FLAG),
		  DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_ep_post_rdma_write(g.x.a.ep, 1, &ok, cookie(1), NULL, DAT_COMPLETION_DEFAULT_FLAG),
		  DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	check_ret(dat_ep_post_rdma_write(g.x.a.ep, 1, &ok, cookie(1), &rb, (DAT_COMPLETION_FLAGS)0x20),
		  DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	DAT_EP_ATTR a = ep_attr_of(&g.x.a);
	DAT_LMR_TRIPLET *many = calloc((size_t)a.max_rdma_write_iov + 1, sizeof *many);
	assert_non_null(many);
	for (DAT_COUNT i = 0; i <= a.max_rdma_write_iov; i++)
		many[i] = iov_at(&g.l, 0, 1);
	check_ret(dat_ep_post_rdma_write(g.x.a.ep, a.max_rdma_write_iov + 1, many, cookie(1), &rb,
					 DAT_COMPLETION_DEFAULT_FLAG),
		  DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	free(many);
	/* A count far past a short array is refused before the array is
	 * read (issue 15). */
	DAT_LMR_TRIPLET one = iov_at(&g.l, 0, 1);
	check_ret(dat_ep_post_rdma_write(g.x.a.ep, INT_MAX, &one, cookie(1), &rb, DAT_COMPLETION_DEFAULT_FLAG),
		  DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	expect_empty(g.x.a.req);
	rig_down(&g);
}

/* "The ep_handle parameter is invalid." */
static void invalid_handle(void **state)
{
	(void)state;
	struct end e;
	end_open(&e, NULL);
	DAT_RMR_TRIPLET rb;
	memset(&rb, 0, sizeof rb);
	check_ret(dat_ep_post_rdma_write(e.req, 0, NULL, cookie(1), &rb, DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_post_rdma_write(dead_ep(), 0, NULL, cookie(1), &rb, DAT_COMPLETION_DEFAULT_FLAG),
		  DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	end_close(&e);
}

/* "Endpoint was not in the DAT_EP_STATE_CONNECTED or
 * DAT_EP_STATE_DISCONNECTED state." */
static void invalid_state(void **state)
{
	(void)state;
	struct end e;
	struct mem m;
	end_open(&e, NULL);
	mem_reg(&m, e.ia, e.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET iov = iov_at(&m, 0, 8);
	DAT_RMR_TRIPLET rb = rmr_at(&m, 8, 8);
	check_ret(dat_ep_post_rdma_write(e.ep, 1, &iov, cookie(1), &rb, DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_STATE,
		  DAT_INVALID_STATE_EP_UNCONNECTED);
	mem_free(&m, 0);
	end_close(&e);
}

/* "Protection Zone mismatch between either an LMR of one of the local_iov
 * segments and the local Endpoint or the rmr_context and the remote
 * Endpoint." The local mismatch is found when posting. */
static void protection_violation(void **state)
{
	(void)state;
	struct rig g;
	struct mem other;
	rig_up(&g, NULL);
	DAT_PZ_HANDLE pz2;
	check_ok(dat_pz_create(g.x.a.ia, &pz2));
	mem_reg(&other, g.x.a.ia, pz2, 64, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET iov = iov_at(&other, 0, 8);
	DAT_RMR_TRIPLET rb = rmr_at(&g.r, 0, 8);
	check_type(dat_ep_post_rdma_write(g.x.a.ep, 1, &iov, cookie(1), &rb, DAT_COMPLETION_DEFAULT_FLAG),
		   DAT_PROTECTION_VIOLATION);
	mem_free(&other, 0);
	rig_down(&g);
}

/* "Either one of the LMRs used in local_iov is invalid or does not have the
 * local read privileges". An invalid LMR is the violation. An LMR without
 * DAT_MEM_PRIV_LOCAL_READ_FLAG is not: the page and the references differ,
 * and godat follows the references (issue 13), which let the local side
 * read what it registered (verbs has no local-read permission); the write
 * is accepted and completes. */
static void privileges_violation(void **state)
{
	(void)state;
	struct rig g;
	struct mem wo;
	rig_up(&g, NULL);
	mem_reg(&wo, g.x.a.ia, g.x.a.pz, 64, DAT_MEM_PRIV_LOCAL_WRITE_FLAG);
	DAT_LMR_TRIPLET iov = iov_at(&wo, 0, 8);
	DAT_RMR_TRIPLET rb = rmr_at(&g.r, 0, 8);
	check_ok(dat_ep_post_rdma_write(g.x.a.ep, 1, &iov, cookie(1), &rb, DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(g.x.a.req, g.x.a.ep, 1, DAT_DTO_SUCCESS);
	iov.lmr_context ^= 0x5a5a0000u; /* no such LMR */
	check_type(dat_ep_post_rdma_write(g.x.a.ep, 1, &iov, cookie(2), &rb, DAT_COMPLETION_DEFAULT_FLAG),
		   DAT_PRIVILEGES_VIOLATION);
	mem_free(&wo, 0);
	rig_down(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(success_gather),
		cmocka_unit_test(disconnected_flush),
		cmocka_unit_test(unsignalled_flag),
		cmocka_unit_test(remote_privileges),
		cmocka_unit_test(remote_out_of_bounds),
		cmocka_unit_test(remote_protection_zone),
		cmocka_unit_test(length_error),
		cmocka_unit_test(insufficient_resources),
		cmocka_unit_test(invalid_parameter),
		cmocka_unit_test(invalid_handle),
		cmocka_unit_test(invalid_state),
		cmocka_unit_test(protection_violation),
		cmocka_unit_test(privileges_violation),
	};
	return cmocka_run_group_tests_name("dat_ep_post_rdma_write", tests, NULL, NULL);
}
