/* Memory and event objects seen from C: LMR types (virtual, LMR in LMR,
 * shared virtual), privileges, queries and the sync calls; RMR bind,
 * rebind, unbind and free with their completion events, and remote access
 * checked against the RMR's bounds and privileges (each refusal breaks its
 * connection: broken.h); EVD flags, resize,
 * software events up to the queue length, enable/disable and CNOs. */
#define _GNU_SOURCE
#include "pattern.h"
#include "broken.h"
#include <sys/mman.h>

struct side {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, evd, cr;
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep;
	struct mem m;
};

static struct waiter wt = {MODE_WAIT, DAT_HANDLE_NULL};

static void side_open(struct side *s)
{
	s->ia = open_ia(&s->async);
	check_ok(dat_evd_create(s->ia, 32, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG | DAT_EVD_RMR_BIND_FLAG,
				&s->evd));
	check_ok(dat_evd_create(s->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &s->cr));
	check_ok(dat_pz_create(s->ia, &s->pz));
	check_ok(dat_ep_create(s->ia, s->pz, s->evd, s->evd, s->evd, NULL, &s->ep));
	mem_create(&s->m, s->ia, s->pz, 65536);
}

static void side_close(struct side *s)
{
	check_ok(dat_ia_close(s->ia, DAT_CLOSE_ABRUPT_FLAG));
	free(s->m.buf);
}

static void connect_sides(struct side *c, struct side *s)
{
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	check_ok(dat_psp_create_any(s->ia, &q, s->cr, DAT_PSP_CONSUMER_FLAG, &psp));
	connect_ep(c->ep, q, PAT_TMO, NULL, 0);
	DAT_EVENT ev = expect_event(&wt, s->cr, DAT_CONNECTION_REQUEST_EVENT, "request");
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, s->ep, 0, NULL));
	expect_event(&wt, s->evd, DAT_CONNECTION_EVENT_ESTABLISHED, "accept");
	expect_event(&wt, c->evd, DAT_CONNECTION_EVENT_ESTABLISHED, "connect");
	check_ok(dat_psp_free(psp));
}

static DAT_DTO_COMPLETION_STATUS rdma_status(struct side *c, int write, DAT_RMR_CONTEXT ctx, char *addr, size_t len)
{
	DAT_LMR_TRIPLET l = mem_seg(&c->m, 0, len);
	DAT_RMR_TRIPLET r = rmr_seg(ctx, (uint64_t)(uintptr_t)addr, len);
	if (write)
		check_ok(dat_ep_post_rdma_write(c->ep, 1, &l, cookie(77), &r, DAT_COMPLETION_DEFAULT_FLAG));
	else
		check_ok(dat_ep_post_rdma_read(c->ep, 1, &l, cookie(77), &r, DAT_COMPLETION_DEFAULT_FLAG));
	DAT_EVENT ev = expect_event(&wt, c->evd, DAT_DTO_COMPLETION_EVENT, "RDMA");
	assert_int_equal(ev.event_data.dto_completion_event_data.user_cookie.as_64, 77);
	return ev.event_data.dto_completion_event_data.status;
}

/* c's request with cookie ck, just posted, was refused by s: a remote
 * access violation breaks the connection as on verbs (broken.h). */
static void sides_expect_broken(struct side *c, struct side *s, uint64_t ck)
{
	struct brk_end ini = {c->ep, c->evd, c->evd, c->async};
	struct brk_end tgt = {s->ep, s->evd, s->evd, s->async};
	expect_access_broken(ini, ck, tgt, 0);
}

/* c RDMA-writes (write 1) or -reads len bytes at addr of s through ctx, and
 * s refuses it: DAT_DTO_ERR_REMOTE_ACCESS and a broken connection. The
 * caller checks that nothing was written. */
static void rdma_refused(struct side *c, struct side *s, int write, DAT_RMR_CONTEXT ctx, char *addr, size_t len)
{
	DAT_LMR_TRIPLET l = mem_seg(&c->m, 0, len);
	DAT_RMR_TRIPLET r = rmr_seg(ctx, (uint64_t)(uintptr_t)addr, len);
	if (write)
		check_ok(dat_ep_post_rdma_write(c->ep, 1, &l, cookie(77), &r, DAT_COMPLETION_DEFAULT_FLAG));
	else
		check_ok(dat_ep_post_rdma_read(c->ep, 1, &l, cookie(77), &r, DAT_COMPLETION_DEFAULT_FLAG));
	sides_expect_broken(c, s, 77);
}

/* A new connection between c and s once the last one broke: new EPs on the
 * same IAs, PZs and EVDs. RMRs and LMRs belong to the PZ, not to the EP a
 * bind went through, and stay as they were. */
static void reconnect_sides(struct side *c, struct side *s)
{
	struct side *v[2] = {c, s};
	for (int i = 0; i < 2; i++) {
		check_ok(dat_ep_free(v[i]->ep));
		check_ok(dat_ep_create(v[i]->ia, v[i]->pz, v[i]->evd, v[i]->evd, v[i]->evd, NULL, &v[i]->ep));
	}
	connect_sides(c, s);
}

/* No byte of buf[0, n) differs from v. */
static void expect_bytes(const char *buf, size_t n, unsigned char v, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)buf[i] != v)
			fail_msg("%s: byte %zu is 0x%02x, want 0x%02x", what, i, (unsigned char)buf[i], v);
}

static void test_lmr_types(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_LMR_PARAM p;
	check_ok(dat_lmr_query(s.m.lmr, DAT_LMR_FIELD_ALL, &p));
	assert_ptr_equal(p.ia_handle, s.ia);
	assert_int_equal(p.mem_type, DAT_MEM_TYPE_VIRTUAL);
	assert_ptr_equal(p.region_desc.for_va, s.m.buf);
	assert_int_equal(p.length, 65536);
	assert_ptr_equal(p.pz_handle, s.pz);
	assert_int_equal(p.mem_priv, DAT_MEM_PRIV_ALL_FLAG);
	assert_int_equal(p.lmr_context, s.m.lctx);
	assert_int_equal(p.rmr_context, s.m.rctx);
	assert_true(p.registered_size >= 65536);
	assert_int_equal(p.registered_address, (DAT_VADDR)(uintptr_t)s.m.buf);

	/* An LMR over an LMR: same memory, its own context and privileges. */
	DAT_REGION_DESCRIPTION rd;
	DAT_LMR_HANDLE child;
	DAT_LMR_CONTEXT cl;
	DAT_RMR_CONTEXT crx;
	DAT_VLEN rl;
	DAT_VADDR rv;
	rd.for_lmr_handle = s.m.lmr;
	check_ok(dat_lmr_create(s.ia, DAT_MEM_TYPE_LMR, rd, 4096, s.pz, DAT_MEM_PRIV_LOCAL_READ_FLAG, &child, &cl, &crx, &rl,
				&rv));
	assert_int_not_equal(cl, s.m.lctx);
	assert_int_equal(rv, (DAT_VADDR)(uintptr_t)s.m.buf);
	check_ok(dat_lmr_query(child, DAT_LMR_FIELD_ALL, &p));
	assert_int_equal(p.mem_type, DAT_MEM_TYPE_LMR);
	assert_ptr_equal(p.region_desc.for_lmr_handle, s.m.lmr);
	assert_int_equal(p.mem_priv, DAT_MEM_PRIV_LOCAL_READ_FLAG);
	/* "Length parameter is ignored": the new LMR covers the old one. */
	assert_int_equal(p.length, 65536);
	check_ret(dat_lmr_free(s.m.lmr), DAT_INVALID_STATE, DAT_INVALID_STATE_LMR_IN_USE);

	/* Shared virtual memory: a shared mapping's address plus a 40-byte
	 * id (private memory is refused with DAT_INVALID_STATE). */
	char id[DAT_LMR_COOKIE_SIZE] = "godat-shared-region";
	DAT_LMR_HANDLE shared;
	rd.for_shared_memory.virtual_address = s.m.buf;
	rd.for_shared_memory.shared_memory_id = &id;
	check_type(dat_lmr_create(s.ia, DAT_MEM_TYPE_SHARED_VIRTUAL, rd, 8192, s.pz, DAT_MEM_PRIV_ALL_FLAG, &shared, &cl,
				  &crx, &rl, &rv),
		   DAT_INVALID_STATE);
	char *shm = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(shm != MAP_FAILED);
	rd.for_shared_memory.virtual_address = shm;
	rd.for_shared_memory.shared_memory_id = &id;
	check_ok(dat_lmr_create(s.ia, DAT_MEM_TYPE_SHARED_VIRTUAL, rd, 8192, s.pz, DAT_MEM_PRIV_ALL_FLAG, &shared, &cl,
				&crx, &rl, &rv));
	check_ok(dat_lmr_query(shared, DAT_LMR_FIELD_ALL, &p));
	assert_int_equal(p.mem_type, DAT_MEM_TYPE_SHARED_VIRTUAL);
	assert_int_equal(p.length, 8192);

	/* The sync calls accept registered memory and refuse other memory. */
	DAT_LMR_TRIPLET t[2] = {mem_seg(&s.m, 0, 100), mem_seg(&s.m, 60000, 5536)};
	check_ok(dat_lmr_sync_rdma_read(s.ia, t, 2));
	check_ok(dat_lmr_sync_rdma_write(s.ia, t, 2));
	char other[64];
	DAT_LMR_TRIPLET bad = {.lmr_context = s.m.lctx, .virtual_address = (DAT_VADDR)(uintptr_t)other, .segment_length = 64};
	check_type(dat_lmr_sync_rdma_read(s.ia, &bad, 1), DAT_INVALID_PARAMETER);
	t[1].segment_length = 5537; /* one byte past the LMR */
	check_type(dat_lmr_sync_rdma_write(s.ia, t, 2), DAT_INVALID_PARAMETER);

	check_ok(dat_lmr_free(shared));
	munmap(shm, 8192);
	check_ok(dat_lmr_free(child));
	mem_free(&s.m);
	s.m.buf = NULL;
	side_close(&s);
}

/* Local privileges: a receive into an LMR without local write fails with
 * a protection error, and the memory is untouched. */
static void test_lmr_privileges(void **state)
{
	(void)state;
	struct side s, c;
	side_open(&s);
	side_open(&c);
	connect_sides(&c, &s);
	DAT_REGION_DESCRIPTION rd = {.for_va = s.m.buf};
	DAT_LMR_HANDLE ro;
	DAT_LMR_CONTEXT rl_ctx;
	DAT_RMR_CONTEXT rr_ctx;
	DAT_VLEN rl;
	DAT_VADDR rv;
	check_ok(dat_lmr_create(s.ia, DAT_MEM_TYPE_VIRTUAL, rd, 4096, s.pz, DAT_MEM_PRIV_LOCAL_READ_FLAG, &ro, &rl_ctx,
				&rr_ctx, &rl, &rv));
	memset(s.m.buf, 0x44, 4096);
	DAT_LMR_TRIPLET t = {.lmr_context = rl_ctx, .virtual_address = (DAT_VADDR)(uintptr_t)s.m.buf, .segment_length = 64};
	/* Refused at post (DAT_PRIVILEGES_VIOLATION), or, by a transport
	 * that checks later, completed with a local protection error. */
	DAT_RETURN r = dat_ep_post_recv(s.ep, 1, &t, cookie(1), DAT_COMPLETION_DEFAULT_FLAG);
	if (r == DAT_SUCCESS) {
		DAT_LMR_TRIPLET src = mem_seg(&c.m, 0, 64);
		memset(c.m.buf, 0x55, 64);
		check_ok(dat_ep_post_send(c.ep, 1, &src, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
		DAT_EVENT ev = expect_event(&wt, s.evd, DAT_DTO_COMPLETION_EVENT, "receive into read-only memory");
		assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_ERR_LOCAL_PROTECTION);
		expect_event(&wt, c.evd, DAT_DTO_COMPLETION_EVENT, "the send");
	} else {
		assert_int_equal(DAT_GET_TYPE(r), DAT_PRIVILEGES_VIOLATION);
	}
	assert_int_equal((unsigned char)s.m.buf[0], 0x44);
	/* The peer's RMR context of an LMR without remote rights is 0 or
	 * useless: remote access fails, and breaks the connection. */
	rdma_refused(&c, &s, 1, rr_ctx, s.m.buf, 64);
	expect_bytes(s.m.buf, 4096, 0x44, "an LMR without remote rights");
	check_ok(dat_lmr_free(ro));
	side_close(&c);
	side_close(&s);
}

static DAT_RMR_BIND_COMPLETION_EVENT_DATA expect_bind(DAT_EVD_HANDLE evd, DAT_RMR_HANDLE rmr, uint64_t id)
{
	DAT_EVENT ev = expect_event(&wt, evd, DAT_RMR_BIND_COMPLETION_EVENT, "bind");
	DAT_RMR_BIND_COMPLETION_EVENT_DATA d = ev.event_data.rmr_completion_event_data;
	assert_ptr_equal(d.rmr_handle, rmr);
	assert_int_equal(d.user_cookie.as_64, id);
	return d;
}

static void test_rmr(void **state)
{
	(void)state;
	struct side s, c;
	DAT_RMR_HANDLE rmr;
	DAT_RMR_CONTEXT ctx, ctx2;
	side_open(&s);
	side_open(&c);
	check_ok(dat_rmr_create(s.pz, &rmr));
	/* Binding needs a connected (or disconnected) EP. */
	DAT_LMR_TRIPLET win = mem_seg(&s.m, 4096, 8192);
	DAT_RMR_COOKIE rc = {.as_64 = 1};
	check_type(dat_rmr_bind(rmr, &win, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, s.ep, rc, DAT_COMPLETION_DEFAULT_FLAG, &ctx),
		   DAT_INVALID_STATE);
	connect_sides(&c, &s);
	check_type(dat_rmr_bind(rmr, &win, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, s.ep, rc, DAT_COMPLETION_UNSIGNALLED_FLAG, &ctx),
		   DAT_INVALID_PARAMETER); /* the EP is not configured for it */
	check_ok(dat_rmr_bind(rmr, &win, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, s.ep, rc, DAT_COMPLETION_DEFAULT_FLAG, &ctx));
	DAT_RMR_BIND_COMPLETION_EVENT_DATA b = expect_bind(s.evd, rmr, 1);
	assert_int_equal(b.status, DAT_RMR_BIND_SUCCESS);
	DAT_RMR_PARAM p;
	check_ok(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &p));
	assert_ptr_equal(p.pz_handle, s.pz);
	assert_int_equal(p.lmr_triplet.virtual_address, win.virtual_address);
	assert_int_equal(p.lmr_triplet.segment_length, 8192);
	assert_int_equal(p.mem_priv, DAT_MEM_PRIV_REMOTE_WRITE_FLAG);
	assert_int_equal(p.rmr_context, ctx);

	/* Inside the window, writes work; outside it, or reading without the
	 * read right, fails, and nothing is written (nor read). Each refused
	 * access breaks its connection, so each has one; before each, an
	 * access that must work shows the window is still bound as it was. */
	memset(s.m.buf, 0, 65536);
	memset(c.m.buf, 0x66, 8192);
	assert_int_equal(rdma_status(&c, 1, ctx, s.m.buf + 4096, 8192), DAT_DTO_SUCCESS);
	assert_int_equal((unsigned char)s.m.buf[4096 + 8191], 0x66);
	rdma_refused(&c, &s, 1, ctx, s.m.buf + 4095, 64);
	assert_int_equal((unsigned char)s.m.buf[4095], 0);
	expect_bytes(s.m.buf + 4096, 8192, 0x66, "the window after a write from before it");
	reconnect_sides(&c, &s);
	memset(c.m.buf, 0x67, 8192);
	assert_int_equal(rdma_status(&c, 1, ctx, s.m.buf + 4096, 8192), DAT_DTO_SUCCESS);
	memset(c.m.buf, 0x68, 64);
	rdma_refused(&c, &s, 1, ctx, s.m.buf + 4096 + 8192 - 63, 64);
	assert_int_equal((unsigned char)s.m.buf[4096 + 8192], 0);
	expect_bytes(s.m.buf + 4096, 8192, 0x67, "the window after a write past its end");
	reconnect_sides(&c, &s);
	memset(c.m.buf, 0x68, 64);
	assert_int_equal(rdma_status(&c, 1, ctx, s.m.buf + 4096, 64), DAT_DTO_SUCCESS);
	expect_bytes(s.m.buf + 4096, 64, 0x68, "the window after a write");
	memset(c.m.buf, 0x69, 64);
	rdma_refused(&c, &s, 0, ctx, s.m.buf + 4096, 64);
	expect_bytes(c.m.buf, 64, 0x69, "the local buffer of a read without the read right");
	assert_int_equal((unsigned char)s.m.buf[4095], 0);
	assert_int_equal((unsigned char)s.m.buf[4096 + 8192], 0);
	reconnect_sides(&c, &s);

	/* Rebind elsewhere with read rights: the old context stops working. */
	memset(s.m.buf + 32768, 0x5A, 4096);
	DAT_LMR_TRIPLET win2 = mem_seg(&s.m, 32768, 4096);
	rc.as_64 = 2;
	check_ok(dat_rmr_bind(rmr, &win2, DAT_MEM_PRIV_REMOTE_READ_FLAG, s.ep, rc, DAT_COMPLETION_DEFAULT_FLAG, &ctx2));
	expect_bind(s.evd, rmr, 2);
	memset(c.m.buf, 0x6A, 64);
	rdma_refused(&c, &s, 1, ctx, s.m.buf + 4096, 64);
	expect_bytes(s.m.buf + 4096, 64, 0x68, "the old window after a write through the old context");
	reconnect_sides(&c, &s);
	assert_int_equal(rdma_status(&c, 0, ctx2, s.m.buf + 32768, 4096), DAT_DTO_SUCCESS);
	expect_bytes(c.m.buf, 4096, 0x5A, "what the read brought");
	memset(c.m.buf, 0x6B, 64);
	rdma_refused(&c, &s, 1, ctx2, s.m.buf + 32768, 64);
	expect_bytes(s.m.buf + 32768, 4096, 0x5A, "a read-only window after a write");
	reconnect_sides(&c, &s);

	/* A suppressed bind makes no event. */
	rc.as_64 = 3;
	check_ok(dat_rmr_bind(rmr, &win2, DAT_MEM_PRIV_REMOTE_READ_FLAG, s.ep, rc, DAT_COMPLETION_SUPPRESS_FLAG, &ctx2));
	expect_empty(s.evd, "suppressed bind");
	/* A window outside the LMR, or rights the LMR cannot give. */
	DAT_LMR_TRIPLET outside = mem_seg(&s.m, 65536 - 100, 100);
	outside.segment_length = 101;
	check_type(dat_rmr_bind(rmr, &outside, DAT_MEM_PRIV_REMOTE_READ_FLAG, s.ep, rc, DAT_COMPLETION_DEFAULT_FLAG, &ctx2),
		   DAT_INVALID_PARAMETER);
	DAT_REGION_DESCRIPTION rd = {.for_va = s.m.buf};
	DAT_LMR_HANDLE ro;
	DAT_LMR_CONTEXT rol;
	DAT_RMR_CONTEXT ror;
	DAT_VLEN rl;
	DAT_VADDR rv;
	check_ok(dat_lmr_create(s.ia, DAT_MEM_TYPE_VIRTUAL, rd, 4096, s.pz, DAT_MEM_PRIV_LOCAL_READ_FLAG, &ro, &rol, &ror,
				&rl, &rv));
	DAT_LMR_TRIPLET rowin = {.lmr_context = rol, .virtual_address = (DAT_VADDR)(uintptr_t)s.m.buf, .segment_length = 64};
	check_type(dat_rmr_bind(rmr, &rowin, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, s.ep, rc, DAT_COMPLETION_DEFAULT_FLAG, &ctx2),
		   DAT_PRIVILEGES_VIOLATION);
	check_ok(dat_lmr_free(ro));

	/* Unbind (length 0): the context stops working. */
	check_ok(dat_rmr_bind(rmr, &win2, DAT_MEM_PRIV_REMOTE_READ_FLAG, s.ep, rc, DAT_COMPLETION_DEFAULT_FLAG, &ctx2));
	expect_bind(s.evd, rmr, 3);
	assert_int_equal(rdma_status(&c, 0, ctx2, s.m.buf + 32768, 64), DAT_DTO_SUCCESS);
	DAT_LMR_TRIPLET none = win2;
	none.segment_length = 0;
	rc.as_64 = 4;
	DAT_RMR_CONTEXT unused;
	check_ok(dat_rmr_bind(rmr, &none, DAT_MEM_PRIV_REMOTE_READ_FLAG, s.ep, rc, DAT_COMPLETION_DEFAULT_FLAG, &unused));
	expect_bind(s.evd, rmr, 4);
	memset(c.m.buf, 0x6C, 64);
	rdma_refused(&c, &s, 0, ctx2, s.m.buf + 32768, 64);
	expect_bytes(c.m.buf, 64, 0x6C, "the local buffer of a read through an unbound context");
	reconnect_sides(&c, &s);

	/* Bound again, then freed: the context dies with it. */
	rc.as_64 = 5;
	check_ok(dat_rmr_bind(rmr, &win2, DAT_MEM_PRIV_REMOTE_READ_FLAG, s.ep, rc, DAT_COMPLETION_DEFAULT_FLAG, &ctx2));
	expect_bind(s.evd, rmr, 5);
	assert_int_equal(rdma_status(&c, 0, ctx2, s.m.buf + 32768, 64), DAT_DTO_SUCCESS);
	check_ok(dat_rmr_free(rmr));
	memset(c.m.buf, 0x6D, 64);
	rdma_refused(&c, &s, 0, ctx2, s.m.buf + 32768, 64);
	expect_bytes(c.m.buf, 64, 0x6D, "the local buffer of a read through a freed RMR's context");
	reconnect_sides(&c, &s);

	/* A bind on a disconnected EP is flushed, and binds nothing. */
	check_ok(dat_rmr_create(s.pz, &rmr));
	check_ok(dat_ep_disconnect(s.ep, DAT_CLOSE_ABRUPT_FLAG));
	expect_event(&wt, s.evd, DAT_CONNECTION_EVENT_DISCONNECTED, "disconnect");
	rc.as_64 = 6;
	check_ok(dat_rmr_bind(rmr, &win, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, s.ep, rc, DAT_COMPLETION_SUPPRESS_FLAG, &ctx));
	b = expect_bind(s.evd, rmr, 6);
	assert_int_equal(b.status, DAT_DTO_ERR_FLUSHED);
	check_ok(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &p));
	assert_int_equal(p.lmr_triplet.segment_length, 0);
	check_ok(dat_rmr_free(rmr));
	side_close(&c);
	side_close(&s);
}

static void test_evd_operations(void **state)
{
	(void)state;
	DAT_EVD_HANDLE async, e;
	DAT_IA_HANDLE ia = open_ia(&async);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	/* Every combination of the stream flags is an EVD. */
	const DAT_EVD_FLAGS all[] = {DAT_EVD_SOFTWARE_FLAG, DAT_EVD_CR_FLAG, DAT_EVD_DTO_FLAG, DAT_EVD_CONNECTION_FLAG,
				     DAT_EVD_RMR_BIND_FLAG};
	for (unsigned mask = 1; mask < 32; mask++) {
		DAT_EVD_FLAGS f = 0;
		for (int i = 0; i < 5; i++)
			if (mask & (1u << i))
				f |= all[i];
		check_ok(dat_evd_create(ia, 4, mask & 1 ? cno : DAT_HANDLE_NULL, f, &e));
		DAT_EVD_PARAM p;
		check_ok(dat_evd_query(e, DAT_EVD_FIELD_ALL, &p));
		assert_int_equal(p.evd_flags, f);
		assert_int_equal(p.evd_qlen, 4);
		assert_ptr_equal(p.cno_handle, mask & 1 ? cno : DAT_HANDLE_NULL);
		assert_ptr_equal(p.ia_handle, ia);
		check_ok(dat_evd_free(e));
	}
	check_type(dat_evd_create(ia, 4, DAT_HANDLE_NULL, 0, &e), DAT_INVALID_PARAMETER);
	check_type(dat_evd_create(ia, 4, DAT_HANDLE_NULL, 0x8000, &e), DAT_INVALID_PARAMETER);
	check_type(dat_evd_create(ia, 0, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &e), DAT_INVALID_PARAMETER);
	/* The IA has its async EVD: a second one is refused. */
	check_type(dat_evd_create(ia, 4, DAT_HANDLE_NULL, DAT_EVD_ASYNC_FLAG, &e), DAT_INVALID_PARAMETER);

	/* Software events up to the queue length, then DAT_QUEUE_FULL. */
	check_ok(dat_evd_create(ia, 3, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG, &e));
	DAT_EVENT se, ev;
	memset(&se, 0, sizeof se);
	se.event_number = DAT_SOFTWARE_EVENT;
	for (int i = 0; i < 3; i++) {
		se.event_data.software_event_data.pointer = (DAT_PVOID)(uintptr_t)(i + 1);
		check_ok(dat_evd_post_se(e, &se));
	}
	check_type(dat_evd_post_se(e, &se), DAT_QUEUE_FULL);
	se.event_number = DAT_DTO_COMPLETION_EVENT;
	check_type(dat_evd_post_se(e, &se), DAT_INVALID_PARAMETER);
	/* Resize: not below what is queued; growing makes room. */
	check_type(dat_evd_resize(e, 2), DAT_INVALID_STATE);
	check_ok(dat_evd_resize(e, 8));
	se.event_number = DAT_SOFTWARE_EVENT;
	se.event_data.software_event_data.pointer = (DAT_PVOID)4;
	check_ok(dat_evd_post_se(e, &se));
	DAT_COUNT n;
	check_ok(dat_evd_wait(e, 0, 4, &ev, &n)); /* a threshold within the new length */
	assert_ptr_equal(ev.event_data.software_event_data.pointer, (DAT_PVOID)1);
	assert_int_equal(n, 3);
	for (int i = 2; i <= 4; i++) {
		check_ok(dat_evd_dequeue(e, &ev));
		assert_ptr_equal(ev.event_data.software_event_data.pointer, (DAT_PVOID)(uintptr_t)i);
	}
	check_ok(dat_evd_resize(e, 1));
	DAT_EVD_PARAM p;
	check_ok(dat_evd_query(e, DAT_EVD_FIELD_ALL, &p));
	assert_int_equal(p.evd_qlen, 1);

	/* A disabled EVD does not trigger its CNO; events still queue. */
	check_ok(dat_evd_modify_cno(e, cno));
	check_ok(dat_evd_disable(e));
	check_ok(dat_evd_query(e, DAT_EVD_FIELD_ALL, &p));
	assert_true(p.evd_state & DAT_EVD_STATE_DISABLED);
	check_ok(dat_evd_post_se(e, &se));
	DAT_EVD_HANDLE hint;
	check_type(dat_cno_wait(cno, 20000, &hint), DAT_QUEUE_EMPTY);
	check_ok(dat_evd_dequeue(e, &ev));
	check_ok(dat_evd_enable(e));
	check_ok(dat_evd_post_se(e, &se));
	check_ok(dat_cno_wait(cno, PAT_TMO, &hint));
	assert_ptr_equal(hint, e);
	check_ok(dat_evd_dequeue(e, &ev));
	/* The CNO is in use while an EVD is attached. */
	check_type(dat_cno_free(cno), DAT_INVALID_STATE);
	check_ok(dat_evd_modify_cno(e, DAT_HANDLE_NULL));
	check_ok(dat_evd_query(e, DAT_EVD_FIELD_ALL, &p));
	assert_null(p.cno_handle);
	check_ok(dat_evd_free(e));
	check_ok(dat_cno_free(cno));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	alarm(250);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lmr_types),
		cmocka_unit_test(test_lmr_privileges),
		cmocka_unit_test(test_rmr),
		cmocka_unit_test(test_evd_operations),
	};
	return cmocka_run_group_tests_name("memory and events", tests, NULL, NULL);
}
