/* Outputs written over whatever the consumer's memory held before.
 *
 * Programs hand the library uninitialized memory to fill: a DAT_EVENT or a
 * handle variable on the stack, a parameter structure from malloc. Its old
 * contents can be anything, including words left on the thread's stack by
 * the Go runtime (which runs its callbacks from C on that stack). The
 * library must write handles and addresses there as plain integers: a
 * pointer-typed Go store runs the garbage collector's write barrier, which
 * while a collection marks takes the slot's old word for a pointer to
 * shade, and an old word that falls in the Go heap kills the process
 * ("fatal error: found bad pointer in Go heap"). The ASan run of
 * test_dat_srq_set_lw over godat-tcp died that way about once in ten runs
 * with the collector kept busy.
 *
 * The child below fills every output with the word 0xdeaddeaddeaddead
 * before each call (the one non-heap value the collector rejects however
 * the heap lies) and runs with GOGC=1, so that a collection marks during
 * much of the run: any pointer-typed store over such a word then aborts the
 * child. It covers every call that writes a handle or an address into the
 * consumer's memory: the create calls' handle outputs, the queries'
 * parameter and attribute structures, dat_strerror's strings,
 * dat_cno_wait's EVD output, and events of every kind that carries one
 * (software, DTO completion, connection request, connection established
 * with private data, disconnected). */
#define _GNU_SOURCE
#include "pages.h"

#define STALE_WORD 0xdeaddeaddeaddeadULL
#define ROUNDS 3000
#define CONNECTS 20
/* Rounds stop at a connection's end once this much time has passed: the
 * software transports do them all in about a second; an RDMA device
 * emulated under TCG would take 40 s. */
#define BUDGET_NS (8 * 1000000000L)

/* Fills the consumer's memory at p with the stale word. */
static void stale(void *p, size_t n)
{
	unsigned char *b = p;
	uint64_t w = STALE_WORD;
	for (size_t i = 0; i + sizeof w <= n; i += sizeof w)
		memcpy(b + i, &w, sizeof w);
}
#define STALE(v) stale(&(v), sizeof(v))
/* Declares var, poisons it, and makes the call that fills it. */
#define STALE_OUT(type, var, call)                                              \
	type var;                                                               \
	STALE(var);                                                             \
	check_ok(call)

/* Dequeues the next event of evd into a stale DAT_EVENT. */
static DAT_EVENT take_stale(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;
	DAT_COUNT n;
	STALE(ev);
	check_ok(dat_evd_wait(evd, TMO_US, 1, &ev, &n));
	assert_ptr_equal(ev.evd_handle, evd);
	return ev;
}

/* The objects of one IA, each created into a stale handle and queried into
 * a stale structure, then freed. */
static void objects_round(DAT_IA_HANDLE ia, void *buf, uint64_t round)
{
	STALE_OUT(DAT_EVD_HANDLE, evd, dat_evd_create(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG, &evd));
	post_se(evd, (uintptr_t)round);
	DAT_EVENT ev = take_stale(evd);
	assert_int_equal(ev.event_number, DAT_SOFTWARE_EVENT);
	assert_int_equal((uintptr_t)ev.event_data.software_event_data.pointer, (uintptr_t)round);
	STALE_OUT(DAT_EVD_PARAM, evp, dat_evd_query(evd, DAT_EVD_FIELD_ALL, &evp));
	assert_ptr_equal(evp.ia_handle, ia);

	STALE_OUT(DAT_PZ_HANDLE, pz2, dat_pz_create(ia, &pz2));
	STALE_OUT(DAT_PZ_PARAM, pzp, dat_pz_query(pz2, DAT_PZ_FIELD_ALL, &pzp));
	assert_ptr_equal(pzp.ia_handle, ia);

	STALE_OUT(DAT_CNO_HANDLE, cno, dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	STALE_OUT(DAT_CNO_PARAM, cnop, dat_cno_query(cno, DAT_CNO_FIELD_ALL, &cnop));
	assert_ptr_equal(cnop.ia_handle, ia);
	DAT_EVD_HANDLE woke;
	STALE(woke);
	check_ret(dat_cno_wait(cno, 0, &woke), DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	assert_null(woke);

	STALE_OUT(struct lmr, l, lmr_create_va(ia, pz2, buf, 4096, DAT_MEM_PRIV_ALL_FLAG, &l));
	STALE_OUT(DAT_LMR_PARAM, lp, dat_lmr_query(l.h, DAT_LMR_FIELD_ALL, &lp));
	assert_ptr_equal(lp.ia_handle, ia);
	assert_ptr_equal(lp.pz_handle, pz2);

	STALE_OUT(DAT_RMR_HANDLE, rmr, dat_rmr_create(pz2, &rmr));
	STALE_OUT(DAT_RMR_PARAM, rp, dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &rp));
	assert_ptr_equal(rp.ia_handle, ia);

	DAT_SRQ_ATTR sa = {.max_recv_dtos = 4, .max_recv_iov = 1};
	STALE_OUT(DAT_SRQ_HANDLE, srq, dat_srq_create(ia, pz2, &sa, &srq));
	STALE_OUT(DAT_SRQ_PARAM, sp, dat_srq_query(srq, DAT_SRQ_FIELD_ALL, &sp));
	assert_ptr_equal(sp.ia_handle, ia);

	DAT_EVD_FLAGS fl = DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG;
	STALE_OUT(DAT_EVD_HANDLE, conn, dat_evd_create(ia, 8, DAT_HANDLE_NULL, fl, &conn));
	STALE_OUT(DAT_EP_HANDLE, ep, dat_ep_create(ia, pz2, conn, conn, conn, NULL, &ep));
	STALE_OUT(DAT_EP_PARAM, epp, dat_ep_query(ep, DAT_EP_FIELD_ALL, &epp));
	assert_ptr_equal(epp.pz_handle, pz2);
	assert_ptr_equal(epp.connect_evd_handle, conn);

	STALE_OUT(DAT_EVD_HANDLE, cr, dat_evd_create(ia, 4, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr));
	DAT_CONN_QUAL q;
	STALE_OUT(DAT_PSP_HANDLE, psp, dat_psp_create_any(ia, &q, cr, DAT_PSP_CONSUMER_FLAG, &psp));
	STALE_OUT(DAT_PSP_PARAM, pp, dat_psp_query(psp, DAT_PSP_FIELD_ALL, &pp));
	assert_ptr_equal(pp.evd_handle, cr);
	check_ok(dat_psp_free(psp));
	/* The PSP's qualifier, free again, or the next free one (TCP: a port
	 * another process may hold). */
	DAT_RSP_HANDLE rsp;
	DAT_RETURN r = DAT_CONN_QUAL_IN_USE;
	for (DAT_CONN_QUAL k = 0; k < 64 && DAT_GET_TYPE(r) == DAT_CONN_QUAL_IN_USE; k++) {
		STALE(rsp);
		r = dat_rsp_create(ia, q + k, ep, cr, &rsp);
	}
	check_ok(r);
	STALE_OUT(DAT_RSP_PARAM, rsp_p, dat_rsp_query(rsp, DAT_RSP_FIELD_ALL, &rsp_p));
	assert_ptr_equal(rsp_p.ep_handle, ep);

	DAT_IA_ATTR ia_a;
	DAT_PROVIDER_ATTR pr_a;
	DAT_EVD_HANDLE async;
	STALE(ia_a);
	STALE(pr_a);
	STALE(async);
	check_ok(dat_ia_query(ia, &async, DAT_IA_FIELD_ALL, &ia_a, DAT_PROVIDER_FIELD_ALL, &pr_a));
	const char *maj, *min;
	STALE(maj);
	STALE(min);
	check_ok(dat_strerror(DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_EP, &maj, &min));
	assert_non_null(maj);

	check_ok(dat_rsp_free(rsp));
	check_ok(dat_evd_free(cr));
	check_ok(dat_ep_free(ep));
	check_ok(dat_evd_free(conn));
	check_ok(dat_srq_free(srq));
	check_ok(dat_rmr_free(rmr));
	check_ok(dat_lmr_free(l.h));
	check_ok(dat_cno_free(cno));
	check_ok(dat_pz_free(pz2));
	check_ok(dat_evd_free(evd));
}

/* A message each way on a connected pair, every completion dequeued into a
 * stale event. */
static void dto_round(struct pair *p, struct lmr *m, char (*bufs)[8192], uint64_t round)
{
	for (int s = 0; s < 2; s++) {
		DAT_LMR_TRIPLET r = triplet(&m[s], bufs[s], 64);
		check_ok(dat_ep_post_recv(p->ep[s], 1, &r, (DAT_DTO_COOKIE){.as_64 = round}, DAT_COMPLETION_DEFAULT_FLAG));
	}
	for (int s = 0; s < 2; s++) {
		DAT_LMR_TRIPLET t = triplet(&m[s], bufs[s] + 64, 8);
		check_ok(dat_ep_post_send(p->ep[s], 1, &t, (DAT_DTO_COOKIE){.as_64 = round}, DAT_COMPLETION_DEFAULT_FLAG));
	}
	for (int s = 0; s < 2; s++) {
		for (int k = 0; k < 2; k++) {
			DAT_EVENT ev = take_stale(p->evd[s]);
			assert_int_equal(ev.event_number, DAT_DTO_COMPLETION_EVENT);
			assert_ptr_equal(ev.event_data.dto_completion_event_data.ep_handle, p->ep[s]);
			assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
		}
	}
}

/* A connection: the request, its query, both established events (with
 * private data) and the disconnect, each into stale memory. */
static void connect_round(struct pair *p)
{
	struct sockaddr_in sa = loopback_addr();
	static char pd[] = "private", apd[] = "accepted";
	check_ok(dat_ep_connect(p->ep[1], (DAT_IA_ADDRESS_PTR)&sa, p->qual, TMO_US, sizeof pd, pd, DAT_QOS_BEST_EFFORT,
				DAT_CONNECT_DEFAULT_FLAG));
	DAT_EVENT ev = take_stale(p->cr);
	assert_int_equal(ev.event_number, DAT_CONNECTION_REQUEST_EVENT);
	DAT_CR_HANDLE crh = ev.event_data.cr_arrival_event_data.cr_handle;
	assert_ptr_equal(ev.event_data.cr_arrival_event_data.sp_handle.psp_handle, p->psp);
	STALE_OUT(DAT_CR_PARAM, crp, dat_cr_query(crh, DAT_CR_FIELD_ALL, &crp));
	assert_int_equal(crp.private_data_size, sizeof pd);
	assert_memory_equal(crp.private_data, pd, sizeof pd);
	check_ok(dat_cr_accept(crh, p->ep[0], sizeof apd, apd));
	ev = take_stale(p->evd[0]);
	assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, p->ep[0]);
	ev = take_stale(p->evd[1]);
	assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, p->ep[1]);
	assert_int_equal(ev.event_data.connect_event_data.private_data_size, sizeof apd);
	assert_memory_equal(ev.event_data.connect_event_data.private_data, apd, sizeof apd);
}

static void disconnect_round(struct pair *p)
{
	check_ok(dat_ep_disconnect(p->ep[1], DAT_CLOSE_GRACEFUL_FLAG));
	for (int s = 1; s >= 0; s--) {
		DAT_EVENT ev = take_stale(p->evd[s]);
		assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_DISCONNECTED);
		assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, p->ep[s]);
		check_ok(dat_ep_reset(p->ep[s]));
	}
}

static void stale_child_test(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	STALE(ia);
	check_ok(dat_ia_open(TEST_IA, 16, &async, &ia));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));

	struct pair p;
	pair_open(&p, NULL);
	static char bufs[2][8192] __attribute__((aligned(4096)));
	struct lmr m[2];
	for (int s = 0; s < 2; s++)
		m[s] = make_lmr(p.ia[s], p.pz[s], bufs[s], 4096, DAT_MEM_PRIV_ALL_FLAG);
	long deadline = now_ns() + BUDGET_NS;
	for (int c = 0; c < CONNECTS && (c == 0 || now_ns() < deadline); c++) {
		connect_round(&p);
		for (uint64_t r = 0; r < ROUNDS / CONNECTS; r++) {
			dto_round(&p, m, bufs, r);
			objects_round(p.ia[r % 2], bufs[r % 2] + 4096, r);
		}
		disconnect_round(&p);
	}
	for (int s = 0; s < 2; s++)
		check_ok(dat_lmr_free(m[s].h));
	pair_close(&p);
}

/* The calls above in a child whose collector runs all the time (GOGC=1):
 * it must finish them all, not abort. */
static void test_outputs_over_stale_memory(void **state)
{
	(void)state;
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 2, sizeof *env);
	assert_non_null(env);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "GOGC=", 5) != 0)
			env[k++] = environ[i];
	env[k++] = "GOGC=1";
	env[k] = NULL;
	int st = run_self("stale-child", env);
	free(env);
	assert_int_equal(st, 0);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "stale-child") == 0) {
		const struct CMUnitTest child[] = {cmocka_unit_test(stale_child_test)};
		return cmocka_run_group_tests_name("stale-child", child, NULL, NULL);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_outputs_over_stale_memory),
	};
	return cmocka_run_group_tests_name("stale_outputs", tests, NULL, NULL);
}
