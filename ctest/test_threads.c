/* Thread safety: every call made from many threads on one IA. Consumers
 * often open an IA as thread-unsafe and use threads anyway, so the
 * library is safe either way.
 *
 *  - object churn: threads create, use, query and free PZs, CNOs, EVDs,
 *    EPs, LMRs, RMRs, PSPs and RSPs on one IA at the same time;
 *  - connection churn: threads connect their own EPs to one PSP while an
 *    accepting thread serves them, then disconnect and reset;
 *  - one EP shared by several posting threads while another reaps, with
 *    every cookie completed exactly once;
 *  - one receive EVD of several EPs reaped by several polling threads,
 *    each posting its receives again, while the peer streams: every
 *    message taken exactly once;
 *  - an abrupt close while threads are still calling: each call works or
 *    fails with an error, none crashes or hangs.
 * Threads never call cmocka; they count failures that the test asserts. */
#define _GNU_SOURCE
#include "pattern.h"

#define NTH 6
#define ROUNDS 40

static DAT_IA_HANDLE ia_open_unsafe(DAT_EVD_HANDLE *async)
{
	DAT_IA_HANDLE ia;
	*async = DAT_HANDLE_NULL;
	check_ok(dat_ia_openv(TEST_IA, 16, async, &ia, DAT_VERSION_MAJOR, DAT_VERSION_MINOR, DAT_FALSE));
	return ia;
}

struct churn {
	DAT_IA_HANDLE ia;
	int id;
	int failures;
	char first[512];
};

#define C_OK(c, expr)                                                             \
	do {                                                                      \
		DAT_RETURN r_ = (expr);                                           \
		if (r_ != DAT_SUCCESS && (c)->failures++ == 0)                    \
			snprintf((c)->first, sizeof (c)->first, "%s: %s", #expr,   \
				 ret_name(r_));                                   \
	} while (0)

static void *churn_thread(void *p)
{
	struct churn *c = p;
	char *buf = malloc(8192);
	for (int r = 0; r < ROUNDS; r++) {
		DAT_PZ_HANDLE pz;
		DAT_CNO_HANDLE cno;
		DAT_EVD_HANDLE evd, cr;
		DAT_EP_HANDLE ep;
		DAT_LMR_HANDLE lmr;
		DAT_LMR_CONTEXT lc;
		DAT_RMR_CONTEXT rc;
		DAT_VLEN rl;
		DAT_VADDR rv;
		DAT_RMR_HANDLE rmr;
		DAT_PSP_HANDLE psp;
		DAT_RSP_HANDLE rsp;
		DAT_CONN_QUAL q;
		DAT_REGION_DESCRIPTION rd = {.for_va = buf};
		C_OK(c, dat_pz_create(c->ia, &pz));
		C_OK(c, dat_cno_create(c->ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
		C_OK(c, dat_evd_create(c->ia, 8, cno, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &evd));
		C_OK(c, dat_evd_create(c->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr));
		C_OK(c, dat_ep_create(c->ia, pz, evd, evd, evd, NULL, &ep));
		C_OK(c, dat_lmr_create(c->ia, DAT_MEM_TYPE_VIRTUAL, rd, 8192, pz, DAT_MEM_PRIV_ALL_FLAG, &lmr, &lc, &rc, &rl, &rv));
		C_OK(c, dat_rmr_create(pz, &rmr));
		C_OK(c, dat_psp_create_any(c->ia, &q, cr, DAT_PSP_CONSUMER_FLAG, &psp));
		C_OK(c, dat_rsp_create(c->ia, 0xC0FFEE000000ull + (DAT_CONN_QUAL)c->id * 1000 + r, ep, cr, &rsp));
		DAT_CONTEXT ctx = {.as_64 = (uint64_t)c->id << 32 | (uint64_t)r}, got;
		C_OK(c, dat_set_consumer_context(ep, ctx));
		C_OK(c, dat_get_consumer_context(ep, &got));
		if (got.as_64 != ctx.as_64 && c->failures++ == 0)
			snprintf(c->first, sizeof c->first, "consumer context mixed up");
		DAT_EP_PARAM epp;
		DAT_EVD_PARAM evp;
		DAT_LMR_PARAM lp;
		DAT_IA_ATTR ia_attr;
		DAT_EP_STATE st;
		DAT_EVENT ev;
		DAT_EVD_HANDLE hint;
		C_OK(c, dat_ep_query(ep, DAT_EP_FIELD_ALL, &epp));
		C_OK(c, dat_evd_query(evd, DAT_EVD_FIELD_ALL, &evp));
		C_OK(c, dat_lmr_query(lmr, DAT_LMR_FIELD_ALL, &lp));
		C_OK(c, dat_ia_query(c->ia, NULL, DAT_IA_ALL, &ia_attr, 0, NULL));
		C_OK(c, dat_ep_get_status(ep, &st, NULL, NULL));
		if (DAT_GET_TYPE(dat_evd_dequeue(evd, &ev)) != DAT_QUEUE_EMPTY && c->failures++ == 0)
			snprintf(c->first, sizeof c->first, "an event on a fresh EVD");
		if (DAT_GET_TYPE(dat_cno_wait(cno, 0, &hint)) != DAT_QUEUE_EMPTY && c->failures++ == 0)
			snprintf(c->first, sizeof c->first, "a CNO trigger from nowhere");
		C_OK(c, dat_rsp_free(rsp));
		C_OK(c, dat_psp_free(psp));
		C_OK(c, dat_rmr_free(rmr));
		C_OK(c, dat_lmr_free(lmr));
		C_OK(c, dat_ep_free(ep));
		C_OK(c, dat_evd_free(cr));
		C_OK(c, dat_evd_free(evd));
		C_OK(c, dat_cno_free(cno));
		C_OK(c, dat_pz_free(pz));
	}
	free(buf);
	return NULL;
}

static void test_object_churn(void **state)
{
	(void)state;
	DAT_EVD_HANDLE async;
	DAT_IA_HANDLE ia = ia_open_unsafe(&async);
	struct churn c[NTH];
	pthread_t th[NTH];
	for (int i = 0; i < NTH; i++) {
		c[i] = (struct churn){.ia = ia, .id = i};
		assert_int_equal(pthread_create(&th[i], NULL, churn_thread, &c[i]), 0);
	}
	for (int i = 0; i < NTH; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NTH; i++)
		if (c[i].failures)
			fail_msg("thread %d: %d failures, first: %s", i, c[i].failures, c[i].first);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG)); /* everything was freed */
}

/* ---- connection churn ---- */

struct conn_arg {
	DAT_IA_HANDLE ia;
	DAT_CONN_QUAL q;
	int id;
	int failures;
	char first[512];
};

static void *connector(void *p)
{
	struct conn_arg *c = p;
	struct waiter w = {MODE_WAIT, DAT_HANDLE_NULL};
	DAT_PZ_HANDLE pz;
	DAT_EVD_HANDLE evd;
	DAT_EP_HANDLE ep;
	DAT_EVENT ev;
	C_OK(c, dat_pz_create(c->ia, &pz));
	C_OK(c, dat_evd_create(c->ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &evd));
	C_OK(c, dat_ep_create(c->ia, pz, evd, evd, evd, NULL, &ep));
	for (int r = 0; r < 10 && !c->failures; r++) {
		struct sockaddr_in sa = loopback_addr();
		C_OK(c, dat_ep_connect(ep, (DAT_IA_ADDRESS_PTR)&sa, c->q, PAT_TMO, sizeof c->id, &c->id, DAT_QOS_BEST_EFFORT,
				       DAT_CONNECT_DEFAULT_FLAG));
		C_OK(c, pat_next(&w, evd, &ev, PAT_TMO));
		if (ev.event_number != DAT_CONNECTION_EVENT_ESTABLISHED && c->failures++ == 0)
			snprintf(c->first, sizeof c->first, "connect: %s", event_name(ev.event_number));
		C_OK(c, dat_ep_disconnect(ep, r % 2 ? DAT_CLOSE_GRACEFUL_FLAG : DAT_CLOSE_ABRUPT_FLAG));
		C_OK(c, pat_next(&w, evd, &ev, PAT_TMO));
		if (ev.event_number != DAT_CONNECTION_EVENT_DISCONNECTED && c->failures++ == 0)
			snprintf(c->first, sizeof c->first, "disconnect: %s", event_name(ev.event_number));
		C_OK(c, dat_ep_reset(ep));
	}
	C_OK(c, dat_ep_free(ep));
	C_OK(c, dat_evd_free(evd));
	C_OK(c, dat_pz_free(pz));
	return NULL;
}

struct acceptor_arg {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE cr;
	int n;
	int failures;
	char first[512];
};

static void *acceptor(void *p)
{
	struct acceptor_arg *c = p;
	struct waiter w = {MODE_WAIT, DAT_HANDLE_NULL};
	DAT_PZ_HANDLE pz;
	DAT_EVD_HANDLE evd;
	DAT_EVENT ev;
	enum { MAXEP = 128 };
	DAT_EP_HANDLE eps[MAXEP];
	int neps = 0;
	C_OK(c, dat_pz_create(c->ia, &pz));
	C_OK(c, dat_evd_create(c->ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &evd));
	for (int k = 0; k < c->n && !c->failures; k++) {
		C_OK(c, pat_next(&w, c->cr, &ev, PAT_TMO));
		if (c->failures)
			break;
		DAT_EP_HANDLE ep;
		C_OK(c, dat_ep_create(c->ia, pz, evd, evd, evd, NULL, &ep));
		if (neps < MAXEP)
			eps[neps++] = ep;
		C_OK(c, dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, ep, 0, NULL));
		/* Reap whatever connection events have come. */
		while (dat_evd_dequeue(evd, &ev) == DAT_SUCCESS)
			;
	}
	/* The EPs are freed by the IA's abrupt close. */
	(void)eps;
	return NULL;
}

static void test_connection_churn(void **state)
{
	(void)state;
	DAT_EVD_HANDLE sasync, casync, cr;
	DAT_IA_HANDLE sia = ia_open_unsafe(&sasync), cia = ia_open_unsafe(&casync);
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	check_ok(dat_evd_create(sia, 64, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr));
	check_ok(dat_psp_create_any(sia, &q, cr, DAT_PSP_CONSUMER_FLAG, &psp));
	struct acceptor_arg a = {.ia = sia, .cr = cr, .n = 4 * 10};
	struct conn_arg c[4];
	pthread_t at, ct[4];
	assert_int_equal(pthread_create(&at, NULL, acceptor, &a), 0);
	for (int i = 0; i < 4; i++) {
		c[i] = (struct conn_arg){.ia = cia, .q = q, .id = i};
		assert_int_equal(pthread_create(&ct[i], NULL, connector, &c[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(ct[i], NULL);
	pthread_join(at, NULL);
	for (int i = 0; i < 4; i++)
		if (c[i].failures)
			fail_msg("connector %d: %s", i, c[i].first);
	if (a.failures)
		fail_msg("acceptor: %s", a.first);
	check_ok(dat_ia_close(cia, DAT_CLOSE_GRACEFUL_FLAG));
	check_ok(dat_ia_close(sia, DAT_CLOSE_ABRUPT_FLAG));
}

/* ---- one EP, many posting threads ---- */

#define POSTERS 4
#define PER_POSTER 300

struct poster {
	DAT_EP_HANDLE ep;
	struct mem *m;
	int id;
	int failures;
	char first[512];
};

static void *poster(void *p)
{
	struct poster *c = p;
	for (int i = 0; i < PER_POSTER; i++) {
		DAT_LMR_TRIPLET t = mem_seg(c->m, (size_t)c->id * 64, 64);
		DAT_RETURN r;
		/* A full request queue is a legal answer: retry (bounded). */
		long deadline = now_ns() + PAT_TMO * 1000L;
		while (DAT_GET_TYPE(r = dat_ep_post_send(c->ep, 1, &t, cookie((uint64_t)c->id << 32 | (uint64_t)i),
							 i % 3 ? DAT_COMPLETION_DEFAULT_FLAG : DAT_COMPLETION_SUPPRESS_FLAG)) ==
			       DAT_INSUFFICIENT_RESOURCES ||
		       DAT_GET_TYPE(r) == DAT_QUEUE_FULL) {
			if (now_ns() > deadline)
				break;
			sched_yield();
		}
		C_OK(c, r);
		DAT_EP_STATE st;
		DAT_BOOLEAN ri, qi;
		C_OK(c, dat_ep_get_status(c->ep, &st, &ri, &qi));
	}
	return NULL;
}

static void test_shared_ep_posters(void **state)
{
	(void)state;
	DAT_EVD_HANDLE sasync, casync, cr, sevd, cevd;
	DAT_IA_HANDLE sia = ia_open_unsafe(&sasync), cia = ia_open_unsafe(&casync);
	DAT_PZ_HANDLE spz, cpz;
	DAT_EP_HANDLE sep, cep;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	struct waiter w = {MODE_WAIT, DAT_HANDLE_NULL};
	struct mem sm, cm;
	check_ok(dat_pz_create(sia, &spz));
	check_ok(dat_pz_create(cia, &cpz));
	check_ok(dat_evd_create(sia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &sevd));
	check_ok(dat_evd_create(cia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &cevd));
	check_ok(dat_evd_create(sia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr));
	check_ok(dat_ep_create(sia, spz, sevd, sevd, sevd, NULL, &sep));
	check_ok(dat_ep_create(cia, cpz, cevd, cevd, cevd, NULL, &cep));
	mem_create(&sm, sia, spz, 256 * 64);
	mem_create(&cm, cia, cpz, POSTERS * 64);
	for (int i = 0; i < 200; i++) {
		DAT_LMR_TRIPLET t = mem_seg(&sm, (size_t)i * 64, 64);
		check_ok(dat_ep_post_recv(sep, 1, &t, cookie(i), DAT_COMPLETION_DEFAULT_FLAG));
	}
	check_ok(dat_psp_create_any(sia, &q, cr, DAT_PSP_CONSUMER_FLAG, &psp));
	connect_ep(cep, q, PAT_TMO, NULL, 0);
	DAT_EVENT ev = expect_event(&w, cr, DAT_CONNECTION_REQUEST_EVENT, "request");
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, sep, 0, NULL));
	expect_event(&w, sevd, DAT_CONNECTION_EVENT_ESTABLISHED, "accept");
	expect_event(&w, cevd, DAT_CONNECTION_EVENT_ESTABLISHED, "connect");

	/* The receiving side keeps receives posted as messages are used. */
	struct poster ps[POSTERS];
	pthread_t th[POSTERS];
	for (int i = 0; i < POSTERS; i++) {
		ps[i] = (struct poster){.ep = cep, .m = &cm, .id = i};
		assert_int_equal(pthread_create(&th[i], NULL, poster, &ps[i]), 0);
	}
	static unsigned char seen[POSTERS][PER_POSTER];
	memset(seen, 0, sizeof seen);
	int want_sends = 0, got_sends = 0, got_recvs = 0, next_recv = 200;
	for (int i = 0; i < POSTERS; i++)
		for (int k = 0; k < PER_POSTER; k++)
			want_sends += k % 3 != 0;
	/* No progress thread: this thread polls both EVDs, which is what
	 * moves the receiving side along. */
	long deadline = now_ns() + 6 * PAT_TMO * 1000L;
	while (got_sends < want_sends || got_recvs < POSTERS * PER_POSTER) {
		if (now_ns() > deadline)
			fail_msg("stalled after %d of %d sends and %d receives", got_sends, want_sends, got_recvs);
		DAT_RETURN r = dat_evd_dequeue(cevd, &ev);
		if (r == DAT_SUCCESS) {
			assert_int_equal(ev.event_number, DAT_DTO_COMPLETION_EVENT);
			DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
			assert_int_equal(d.status, DAT_DTO_SUCCESS);
			assert_ptr_equal(d.ep_handle, cep);
			uint64_t c = d.user_cookie.as_64;
			int id = (int)(c >> 32), k = (int)(c & 0xffffffff);
			assert_true(id < POSTERS && k < PER_POSTER && k % 3 != 0);
			assert_int_equal(seen[id][k]++, 0);
			got_sends++;
		} else
			assert_int_equal(DAT_GET_TYPE(r), DAT_QUEUE_EMPTY);
		r = dat_evd_dequeue(sevd, &ev);
		if (r == DAT_SUCCESS) {
			assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
			assert_int_equal(ev.event_data.dto_completion_event_data.user_cookie.as_64, got_recvs);
			got_recvs++;
			DAT_LMR_TRIPLET t = mem_seg(&sm, (size_t)(next_recv % 256) * 64, 64);
			check_ok(dat_ep_post_recv(sep, 1, &t, cookie(next_recv), DAT_COMPLETION_DEFAULT_FLAG));
			next_recv++;
		} else
			assert_int_equal(DAT_GET_TYPE(r), DAT_QUEUE_EMPTY);
	}
	for (int i = 0; i < POSTERS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < POSTERS; i++)
		if (ps[i].failures)
			fail_msg("poster %d: %s", i, ps[i].first);
	expect_empty(cevd, "no completion twice");
	DAT_EP_STATE st;
	DAT_BOOLEAN ri, qi;
	check_ok(dat_ep_get_status(cep, &st, &ri, &qi));
	assert_int_equal(qi, DAT_TRUE);
	check_ok(dat_psp_free(psp));
	check_ok(dat_ia_close(cia, DAT_CLOSE_ABRUPT_FLAG));
	check_ok(dat_ia_close(sia, DAT_CLOSE_ABRUPT_FLAG));
	free(sm.buf);
	free(cm.buf);
}

/* ---- one receive EVD, many reaping threads ---- */

#define REAPERS 3
#define REAP_EPS 4
#define REAP_MSGS 1500 /* per EP */
#define REAP_DEPTH 8   /* receives per EP */

struct reap_msg {
	uint32_t magic, ep, k;
};

struct reapers {
	DAT_EVD_HANDLE evd;
	DAT_EP_HANDLE ep[REAP_EPS];
	struct mem *m; /* REAP_DEPTH receive slots of 64 bytes per EP */
	int seen[REAP_EPS][REAP_MSGS];
	int taken;
	long deadline;
};

struct reaper {
	struct reapers *r;
	int failures;
	char first[512];
};

/* Dequeues until every message is taken: checks the message, counts it,
 * and posts its receive again. */
static void *reaper(void *p)
{
	struct reaper *c = p;
	struct reapers *r = c->r;
	for (unsigned idle = 0; __atomic_load_n(&r->taken, __ATOMIC_ACQUIRE) < REAP_EPS * REAP_MSGS; idle++) {
		if (now_ns() > r->deadline) {
			if (c->failures++ == 0)
				snprintf(c->first, sizeof c->first, "stalled at %d messages",
					 __atomic_load_n(&r->taken, __ATOMIC_ACQUIRE));
			return NULL;
		}
		DAT_EVENT ev;
		DAT_RETURN rc = dat_evd_dequeue(r->evd, &ev);
		if (DAT_GET_TYPE(rc) == DAT_QUEUE_EMPTY) {
			if ((idle & 255) == 255)
				sched_yield();
			continue;
		}
		C_OK(c, rc);
		if (rc != DAT_SUCCESS)
			return NULL;
		DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
		uint64_t slot = d.user_cookie.as_64;
		int e = (int)(slot / REAP_DEPTH);
		struct reap_msg msg;
		if (ev.event_number != DAT_DTO_COMPLETION_EVENT || d.status != DAT_DTO_SUCCESS || e >= REAP_EPS ||
		    d.ep_handle != r->ep[e] || d.transfered_length != sizeof msg) {
			if (c->failures++ == 0)
				snprintf(c->first, sizeof c->first, "receive %" PRIu64 ": event %#x status %d, %" PRIu64 " bytes",
					 slot, ev.event_number, d.status, (uint64_t)d.transfered_length);
			return NULL;
		}
		memcpy(&msg, r->m->buf + slot * 64, sizeof msg);
		if (msg.magic != 0x4EA9u || msg.ep != (uint32_t)e || msg.k >= REAP_MSGS) {
			if (c->failures++ == 0)
				snprintf(c->first, sizeof c->first, "EP %d: message of EP %u number %u (magic %#x)", e, msg.ep,
					 msg.k, msg.magic);
			return NULL;
		}
		__atomic_add_fetch(&r->seen[e][msg.k], 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&r->taken, 1, __ATOMIC_RELEASE);
		DAT_LMR_TRIPLET t = mem_seg(r->m, slot * 64, 64);
		C_OK(c, dat_ep_post_recv(r->ep[e], 1, &t, d.user_cookie, DAT_COMPLETION_DEFAULT_FLAG));
		idle = 0;
	}
	return NULL;
}

static void test_shared_evd_reapers(void **state)
{
	(void)state;
	DAT_EVD_HANDLE sasync, casync, cr, srcv, sreq, sconn, creq, crcv, cconn;
	DAT_IA_HANDLE sia = ia_open_unsafe(&sasync), cia = ia_open_unsafe(&casync);
	DAT_PZ_HANDLE spz, cpz;
	DAT_EP_HANDLE cep[REAP_EPS];
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	struct waiter w = {MODE_WAIT, DAT_HANDLE_NULL};
	struct mem sm, cm;
	static struct reapers R;
	memset(&R, 0, sizeof R);
	check_ok(dat_pz_create(sia, &spz));
	check_ok(dat_pz_create(cia, &cpz));
	check_ok(dat_evd_create(sia, REAP_EPS * REAP_DEPTH + 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &srcv));
	check_ok(dat_evd_create(sia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &sreq));
	check_ok(dat_evd_create(sia, 2 * REAP_EPS, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &sconn));
	check_ok(dat_evd_create(sia, 2 * REAP_EPS, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr));
	check_ok(dat_evd_create(cia, 256, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &creq));
	check_ok(dat_evd_create(cia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &crcv));
	check_ok(dat_evd_create(cia, 2 * REAP_EPS, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &cconn));
	mem_create(&sm, sia, spz, (size_t)REAP_EPS * REAP_DEPTH * 64);
	mem_create(&cm, cia, cpz, (size_t)REAP_EPS * 64 * 64);
	check_ok(dat_psp_create_any(sia, &q, cr, DAT_PSP_CONSUMER_FLAG, &psp));
	R.m = &sm;
	R.evd = srcv;
	for (int e = 0; e < REAP_EPS; e++) {
		check_ok(dat_ep_create(sia, spz, srcv, sreq, sconn, NULL, &R.ep[e]));
		for (int i = 0; i < REAP_DEPTH; i++) {
			DAT_LMR_TRIPLET t = mem_seg(&sm, ((size_t)e * REAP_DEPTH + (size_t)i) * 64, 64);
			check_ok(dat_ep_post_recv(R.ep[e], 1, &t, cookie((uint64_t)e * REAP_DEPTH + (uint64_t)i),
						  DAT_COMPLETION_DEFAULT_FLAG));
		}
		check_ok(dat_ep_create(cia, cpz, crcv, creq, cconn, NULL, &cep[e]));
		connect_ep(cep[e], q, PAT_TMO, NULL, 0);
		DAT_EVENT ev = expect_event(&w, cr, DAT_CONNECTION_REQUEST_EVENT, "request");
		check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, R.ep[e], 0, NULL));
		expect_event(&w, sconn, DAT_CONNECTION_EVENT_ESTABLISHED, "accept");
		expect_event(&w, cconn, DAT_CONNECTION_EVENT_ESTABLISHED, "connect");
	}

	R.deadline = now_ns() + 6 * PAT_TMO * 1000L;
	struct reaper rs[REAPERS];
	pthread_t th[REAPERS];
	for (int i = 0; i < REAPERS; i++) {
		rs[i] = (struct reaper){.r = &R};
		assert_int_equal(pthread_create(&th[i], NULL, reaper, &rs[i]), 0);
	}
	/* This thread streams: message k on every EP in turn, from 64 source
	 * slots per EP, reaping its send completions (in post order per EP)
	 * to use a slot again. A failure here is noted, not asserted: the
	 * reapers are joined first. */
	int done[REAP_EPS] = {0};
	char why[256] = "";
	for (int k = 0; k < REAP_MSGS && !why[0]; k++)
		for (int e = 0; e < REAP_EPS && !why[0]; e++) {
			while (k - done[e] >= 64 && !why[0]) {
				DAT_EVENT ev;
				DAT_RETURN rc = pat_next(&w, creq, &ev, PAT_TMO);
				DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
				int de = (int)(d.user_cookie.as_64 >> 32);
				if (rc != DAT_SUCCESS || d.status != DAT_DTO_SUCCESS)
					snprintf(why, sizeof why, "send completion: %s, status %d", ret_name(rc), d.status);
				else if (de < 0 || de >= REAP_EPS || (int)(uint32_t)d.user_cookie.as_64 != done[de])
					snprintf(why, sizeof why, "send completion %#" PRIx64 " out of its EP's post order",
						 (uint64_t)d.user_cookie.as_64);
				else
					done[de]++;
			}
			if (why[0])
				break;
			struct reap_msg msg = {0x4EA9u, (uint32_t)e, (uint32_t)k};
			size_t off = ((size_t)e * 64 + (size_t)(k % 64)) * 64;
			memcpy(cm.buf + off, &msg, sizeof msg);
			DAT_LMR_TRIPLET t = mem_seg(&cm, off, sizeof msg);
			DAT_RETURN rc = dat_ep_post_send(cep[e], 1, &t, cookie((uint64_t)e << 32 | (uint64_t)k),
							 DAT_COMPLETION_DEFAULT_FLAG);
			if (rc != DAT_SUCCESS)
				snprintf(why, sizeof why, "dat_ep_post_send: %s", ret_name(rc));
		}
	for (int i = 0; i < REAPERS; i++)
		pthread_join(th[i], NULL);
	if (why[0])
		fail_msg("%s", why);
	for (int i = 0; i < REAPERS; i++)
		if (rs[i].failures)
			fail_msg("reaper %d: %s", i, rs[i].first);
	for (int e = 0; e < REAP_EPS; e++)
		for (int k = 0; k < REAP_MSGS; k++)
			if (R.seen[e][k] != 1)
				fail_msg("EP %d message %d taken %d times", e, k, R.seen[e][k]);
	expect_empty(srcv, "no message twice");
	check_ok(dat_psp_free(psp));
	check_ok(dat_ia_close(cia, DAT_CLOSE_ABRUPT_FLAG));
	check_ok(dat_ia_close(sia, DAT_CLOSE_ABRUPT_FLAG));
	free(sm.buf);
	free(cm.buf);
}

/* ---- an abrupt close while threads call ---- */

struct late_arg {
	DAT_IA_HANDLE ia;
	DAT_EP_HANDLE ep;
	DAT_EVD_HANDLE evd;
	volatile int stop;
	long calls;
};

static void *late_caller(void *p)
{
	struct late_arg *a = p;
	char buf[64];
	DAT_LMR_TRIPLET t = {.lmr_context = 1, .virtual_address = (DAT_VADDR)(uintptr_t)buf, .segment_length = 64};
	while (!a->stop) {
		DAT_PZ_HANDLE pz;
		DAT_EVENT ev;
		DAT_COUNT n;
		if (dat_pz_create(a->ia, &pz) == DAT_SUCCESS)
			dat_pz_free(pz);
		dat_ep_post_recv(a->ep, 1, &t, cookie(1), DAT_COMPLETION_DEFAULT_FLAG);
		dat_evd_dequeue(a->evd, &ev);
		dat_evd_wait(a->evd, 1000, 1, &ev, &n);
		__atomic_add_fetch(&a->calls, 1, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static void test_close_while_calling(void **state)
{
	(void)state;
	DAT_EVD_HANDLE async, evd;
	DAT_IA_HANDLE ia = ia_open_unsafe(&async);
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep;
	check_ok(dat_pz_create(ia, &pz));
	check_ok(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &evd));
	check_ok(dat_ep_create(ia, pz, evd, evd, evd, NULL, &ep));
	struct late_arg a[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		a[i] = (struct late_arg){.ia = ia, .ep = ep, .evd = evd};
		assert_int_equal(pthread_create(&th[i], NULL, late_caller, &a[i]), 0);
	}
	/* The close must come while every thread is calling: wait (bounded)
	 * until each has made a round of calls, however slow the machine. */
	long deadline = now_ns() + 10000000000L;
	for (int i = 0; i < 4; i++)
		while (__atomic_load_n(&a[i].calls, __ATOMIC_SEQ_CST) == 0) {
			if (now_ns() > deadline)
				fail_msg("thread %d made no call within 10 s", i);
			usleep(1000);
		}
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	usleep(20000);
	for (int i = 0; i < 4; i++)
		a[i].stop = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++)
		assert_true(a[i].calls > 0);
	DAT_PZ_HANDLE pz2;
	check_ret(dat_pz_create(ia, &pz2), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
}

int main(void)
{
	alarm(250);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_object_churn),
		cmocka_unit_test(test_connection_churn),
		cmocka_unit_test(test_shared_ep_posters),
		cmocka_unit_test(test_shared_evd_reapers),
		cmocka_unit_test(test_close_while_calling),
	};
	return cmocka_run_group_tests_name("threads", tests, NULL, NULL);
}
