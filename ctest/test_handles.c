/* Handles: every handle-taking call refuses NULL, freed, wrong-type and
 * random values with DAT_INVALID_HANDLE and never crashes; handle types and
 * consumer contexts work for every object family. */
#include "common.h"
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

/* A bad handle must give DAT_INVALID_HANDLE from every call that takes it. */
static int expect_invalid(const char *call, DAT_HANDLE h, DAT_RETURN r)
{
	if (DAT_GET_TYPE(r) != DAT_INVALID_HANDLE) {
		print_error("%s(%p): got %s, want DAT_INVALID_HANDLE\n", call, h, ret_name(r));
		return 1;
	}
	return 0;
}

/* Feeds h to every call that takes a handle in any position. Outputs are
 * valid so that only the handle can be at fault. */
static int feed_all(DAT_HANDLE h)
{
	DAT_EVENT ev;
	DAT_COUNT n;
	DAT_HANDLE_TYPE t;
	DAT_CONTEXT ctx;
	DAT_EVD_HANDLE e;
	DAT_HANDLE out;
	DAT_LMR_TRIPLET iov = {0};
	DAT_RMR_TRIPLET riov = {0};
	DAT_DTO_COOKIE ck = {0};
	DAT_EP_STATE st;
	DAT_BOOLEAN b1, b2;
	DAT_IA_ATTR iaa;
	DAT_EP_PARAM epp;
	DAT_EVD_PARAM evdp;
	DAT_LMR_PARAM lmrp;
	DAT_RMR_PARAM rmrp;
	DAT_PZ_PARAM pzp;
	DAT_PSP_PARAM pspp;
	DAT_RSP_PARAM rspp;
	DAT_CR_PARAM crp;
	DAT_CNO_PARAM cnop;
	DAT_SRQ_PARAM srqp;
	DAT_SRQ_ATTR srqa = {8, 1, 0};
	DAT_CONN_QUAL q;
	DAT_LMR_CONTEXT lc;
	DAT_RMR_CONTEXT rc;
	DAT_VLEN vl;
	DAT_VADDR va;
	DAT_REGION_DESCRIPTION rd = {.for_va = &iov};
	struct sockaddr_in sa = {.sin_family = AF_INET};
	DAT_EVENT se = {.event_number = DAT_SOFTWARE_EVENT};
	int bad = 0;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ctx.as_64 = 1;

#define F(call) bad += expect_invalid(#call, h, call)
	F(dat_ia_query(h, &e, DAT_IA_ALL, &iaa, 0, NULL));
	F(dat_ia_close(h, DAT_CLOSE_ABRUPT_FLAG));
	F(dats_get_ia_handle(h, &out));
	F(dat_set_consumer_context(h, ctx));
	F(dat_get_consumer_context(h, &ctx));
	F(dat_get_handle_type(h, &t));
	F(dat_cr_query(h, DAT_CR_FIELD_ALL, &crp));
	F(dat_cr_accept(h, DAT_HANDLE_NULL, 0, NULL));
	F(dat_cr_reject(h));
	F(dat_cr_handoff(h, 1));
	F(dat_evd_resize(h, 4));
	F(dat_evd_post_se(h, &se));
	F(dat_evd_dequeue(h, &ev));
	F(dat_evd_query(h, DAT_EVD_FIELD_ALL, &evdp));
	F(dat_evd_free(h));
	F(dat_evd_wait(h, 0, 1, &ev, &n));
	F(dat_evd_enable(h));
	F(dat_evd_disable(h));
	F(dat_evd_set_unwaitable(h));
	F(dat_evd_clear_unwaitable(h));
	F(dat_evd_modify_cno(h, DAT_HANDLE_NULL));
	F(dat_evd_create(h, 4, DAT_HANDLE_NULL, DAT_EVD_DEFAULT_FLAG, &e));
	F(dat_ep_create(h, h, h, h, h, NULL, &out));
	F(dat_ep_create_with_srq(h, h, h, h, h, h, NULL, &out));
	F(dat_ep_query(h, DAT_EP_FIELD_ALL, &epp));
	F(dat_ep_modify(h, DAT_EP_FIELD_EP_ATTR_QOS, &epp));
	F(dat_ep_connect(h, (DAT_IA_ADDRESS_PTR)&sa, 1, 0, 0, NULL, DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	F(dat_ep_dup_connect(h, h, 0, 0, NULL, DAT_QOS_BEST_EFFORT));
	F(dat_ep_disconnect(h, DAT_CLOSE_ABRUPT_FLAG));
	F(dat_ep_post_send(h, 1, &iov, ck, 0));
	F(dat_ep_post_recv(h, 1, &iov, ck, 0));
	F(dat_ep_post_rdma_read(h, 1, &iov, ck, &riov, 0));
	F(dat_ep_post_rdma_write(h, 1, &iov, ck, &riov, 0));
	F(dat_ep_get_status(h, &st, &b1, &b2));
	F(dat_ep_free(h));
	F(dat_ep_reset(h));
	F(dat_ep_recv_query(h, &n, &n));
	F(dat_ep_set_watermark(h, 1, 1));
	F(dat_lmr_create(h, DAT_MEM_TYPE_VIRTUAL, rd, 8, h, DAT_MEM_PRIV_ALL_FLAG, &out, &lc, &rc, &vl, &va));
	F(dat_lmr_query(h, DAT_LMR_FIELD_ALL, &lmrp));
	F(dat_lmr_free(h));
	F(dat_lmr_sync_rdma_read(h, &iov, 1));
	F(dat_lmr_sync_rdma_write(h, &iov, 1));
	F(dat_rmr_create(h, &out));
	F(dat_rmr_query(h, DAT_RMR_FIELD_ALL, &rmrp));
	F(dat_rmr_bind(h, &iov, DAT_MEM_PRIV_ALL_FLAG, h, ck, 0, &rc));
	F(dat_rmr_free(h));
	F(dat_psp_create(h, 1, h, DAT_PSP_CONSUMER_FLAG, &out));
	F(dat_psp_create_any(h, &q, h, DAT_PSP_CONSUMER_FLAG, &out));
	F(dat_psp_query(h, DAT_PSP_FIELD_ALL, &pspp));
	F(dat_psp_free(h));
	F(dat_rsp_create(h, 1, h, h, &out));
	F(dat_rsp_query(h, DAT_RSP_FIELD_ALL, &rspp));
	F(dat_rsp_free(h));
	F(dat_pz_create(h, &out));
	F(dat_pz_query(h, DAT_PZ_FIELD_ALL, &pzp));
	F(dat_pz_free(h));
	F(dat_srq_create(h, h, &srqa, &out));
	F(dat_srq_free(h));
	F(dat_srq_post_recv(h, 1, &iov, ck));
	F(dat_srq_query(h, DAT_SRQ_FIELD_ALL, &srqp));
	F(dat_srq_resize(h, 4));
	F(dat_srq_set_lw(h, 1));
	F(dat_cno_create(h, DAT_OS_WAIT_PROXY_AGENT_NULL, &out));
	F(dat_cno_modify_agent(h, DAT_OS_WAIT_PROXY_AGENT_NULL));
	F(dat_cno_query(h, DAT_CNO_FIELD_ALL, &cnop));
	F(dat_cno_free(h));
	F(dat_cno_wait(h, 0, &e));
#undef F
	return bad;
}

/* A collection of one live object of every family but CR (which needs a
 * connection; see test_connect.c) and SRQ (not implemented yet). */
struct objs {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, evd, crevd;
	DAT_PZ_HANDLE pz;
	DAT_LMR_HANDLE lmr;
	DAT_RMR_HANDLE rmr;
	DAT_EP_HANDLE ep, rep;
	DAT_PSP_HANDLE psp;
	DAT_RSP_HANDLE rsp;
	DAT_CNO_HANDLE cno;
	char buf[256];
};

static void make_objs(struct objs *o)
{
	DAT_REGION_DESCRIPTION rd;
	DAT_LMR_CONTEXT lc;
	DAT_RMR_CONTEXT rc;
	DAT_VLEN vl;
	DAT_VADDR va;
	DAT_CONN_QUAL q;
	o->ia = open_ia(&o->async);
	check_ok(dat_cno_create(o->ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &o->cno));
	check_ok(dat_evd_create(o->ia, 8, o->cno, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &o->evd));
	check_ok(dat_evd_create(o->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &o->crevd));
	check_ok(dat_pz_create(o->ia, &o->pz));
	rd.for_va = o->buf;
	check_ok(dat_lmr_create(o->ia, DAT_MEM_TYPE_VIRTUAL, rd, sizeof o->buf, o->pz, DAT_MEM_PRIV_ALL_FLAG, &o->lmr, &lc, &rc, &vl, &va));
	check_ok(dat_rmr_create(o->pz, &o->rmr));
	check_ok(dat_ep_create(o->ia, o->pz, o->evd, o->evd, o->evd, NULL, &o->ep));
	check_ok(dat_ep_create(o->ia, o->pz, o->evd, o->evd, o->evd, NULL, &o->rep));
	check_ok(dat_psp_create_any(o->ia, &q, o->crevd, DAT_PSP_CONSUMER_FLAG, &o->psp));
	/* Any free qualifier will do, and q + 1 may be taken: over verbs a
	 * qualifier is a port of the host's rdma_cm port space (one CI run in
	 * the VM got DAT_CONN_QUAL_IN_USE here). */
	DAT_RETURN r = DAT_CONN_QUAL_IN_USE;
	for (DAT_CONN_QUAL k = q + 1; k < q + 64 && DAT_GET_TYPE(r) == DAT_CONN_QUAL_IN_USE; k++)
		r = dat_rsp_create(o->ia, k, o->rep, o->crevd, &o->rsp);
	check_ok(r);
}

static void free_objs(struct objs *o)
{
	check_ok(dat_rsp_free(o->rsp));
	check_ok(dat_psp_free(o->psp));
	check_ok(dat_ep_free(o->rep));
	check_ok(dat_ep_free(o->ep));
	check_ok(dat_rmr_free(o->rmr));
	check_ok(dat_lmr_free(o->lmr));
	check_ok(dat_pz_free(o->pz));
	check_ok(dat_evd_free(o->crevd));
	check_ok(dat_evd_free(o->evd));
	check_ok(dat_cno_free(o->cno));
	check_ok(dat_ia_close(o->ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* "dat_get_handle_type ... for every object type" and the consumer
 * context round trip. */
static void test_types_and_contexts(void **state)
{
	(void)state;
	struct objs o;
	make_objs(&o);
	struct {
		DAT_HANDLE h;
		DAT_HANDLE_TYPE t;
	} all[] = {
		{o.ia, DAT_HANDLE_TYPE_IA},   {o.async, DAT_HANDLE_TYPE_EVD}, {o.evd, DAT_HANDLE_TYPE_EVD},
		{o.pz, DAT_HANDLE_TYPE_PZ},   {o.lmr, DAT_HANDLE_TYPE_LMR},   {o.rmr, DAT_HANDLE_TYPE_RMR},
		{o.ep, DAT_HANDLE_TYPE_EP},   {o.psp, DAT_HANDLE_TYPE_PSP},   {o.rsp, DAT_HANDLE_TYPE_RSP},
		{o.cno, DAT_HANDLE_TYPE_CNO},
	};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
		DAT_HANDLE_TYPE t;
		DAT_CONTEXT c = {.as_64 = 0}, in = {.as_64 = 0xC0FFEE00u + i};
		assert_non_null(all[i].h);
		check_ok(dat_get_handle_type(all[i].h, &t));
		assert_int_equal(t, all[i].t);
		check_ok(dat_get_consumer_context(all[i].h, &c));
		assert_int_equal(c.as_64, 0); /* a new object's context is zero */
		check_ok(dat_set_consumer_context(all[i].h, in));
		check_ok(dat_get_consumer_context(all[i].h, &c));
		assert_int_equal(c.as_64, in.as_64);
	}
	/* NULL outputs with a valid handle are parameter errors. */
	check_ret(dat_get_handle_type(o.pz, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_get_consumer_context(o.pz, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	free_objs(&o);
}

/* Wrong-type handles get the subtype of the family the argument wants. */
static void test_wrong_type_subtypes(void **state)
{
	(void)state;
	struct objs o;
	DAT_PZ_PARAM pzp;
	DAT_EP_PARAM epp;
	DAT_LMR_PARAM lp;
	make_objs(&o);
	check_ret(dat_pz_query(o.ep, DAT_PZ_FIELD_ALL, &pzp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	check_ret(dat_ep_query(o.pz, DAT_EP_FIELD_ALL, &epp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_lmr_query(o.rmr, DAT_LMR_FIELD_ALL, &lp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	check_ret(dat_ia_close(o.pz, DAT_CLOSE_ABRUPT_FLAG), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	check_ret(dat_rmr_free(o.lmr), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
	check_ret(dat_psp_free(o.rsp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PSP);
	check_ret(dat_rsp_free(o.psp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RSP);
	check_ret(dat_cno_free(o.evd), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
	check_ret(dat_cr_reject(o.ep), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR);
	check_ret(dat_srq_free(o.ep), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	check_ret(dat_pz_query(NULL, DAT_PZ_FIELD_ALL, &pzp), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	/* Nothing was written on failure. */
	memset(&pzp, 0xA5, sizeof pzp);
	check_type(dat_pz_query(o.ep, DAT_PZ_FIELD_ALL, &pzp), DAT_INVALID_HANDLE);
	assert_int_equal(((unsigned char *)&pzp)[0], 0xA5);
	free_objs(&o);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* At least 10,000 random and stale values to every handle-taking call. */
static void test_random_and_stale_handles(void **state)
{
	(void)state;
	enum { N = 10000, STALE = 64 };
	DAT_HANDLE stale[STALE * 11];
	size_t ns = 0;
	int bad = 0;
	/* Stale handles of every family this test can create. */
	for (int i = 0; i < STALE / 8; i++) {
		struct objs o;
		make_objs(&o);
		DAT_HANDLE hs[] = {o.rsp, o.psp, o.rep, o.ep, o.rmr, o.lmr, o.pz, o.crevd, o.evd, o.cno, o.ia, o.async};
		free_objs(&o);
		for (size_t k = 0; k < sizeof hs / sizeof hs[0]; k++)
			stale[ns++] = hs[k];
	}
	/* A live object near which to aim: addresses next to real handles. */
	struct objs live;
	make_objs(&live);
	uintptr_t base = (uintptr_t)live.pz;
	bad += feed_all(DAT_HANDLE_NULL);
	for (int i = 0; i < N; i++) {
		uintptr_t v;
		switch (i % 5) {
		case 0: v = (uintptr_t)next_rand(); break;
		case 1: v = next_rand() % 4096; break;
		case 2: v = base + (uintptr_t)((int64_t)(next_rand() % 8192) - 4096); break;
		case 3: v = base + ((next_rand() % 256) << 22) + (next_rand() % 64) * 16; break;
		default: v = (uintptr_t)stale[next_rand() % ns]; break;
		}
		/* Skip the live handles themselves. */
		DAT_HANDLE lh[] = {live.ia, live.async, live.evd, live.crevd, live.pz, live.lmr, live.rmr, live.ep, live.rep, live.psp, live.rsp, live.cno};
		int is_live = 0;
		for (size_t k = 0; k < sizeof lh / sizeof lh[0]; k++)
			is_live |= (uintptr_t)lh[k] == v;
		if (!is_live)
			bad += feed_all((DAT_HANDLE)v);
	}
	/* The live objects survived all of that. */
	DAT_HANDLE_TYPE t;
	check_ok(dat_get_handle_type(live.pz, &t));
	assert_int_equal(t, DAT_HANDLE_TYPE_PZ);
	free_objs(&live);
	assert_int_equal(bad, 0);
	print_message("fed %d random/stale values (+NULL) to every handle-taking call\n", N);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_types_and_contexts),
		cmocka_unit_test(test_wrong_type_subtypes),
		cmocka_unit_test(test_random_and_stale_handles),
	};
	return cmocka_run_group_tests_name("handles", tests, NULL, NULL);
}
