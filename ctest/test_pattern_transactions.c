/* Consumer pattern: transactions. Two threads of one process each drive
 * four EPs of one IA against a server process whose two threads serve
 * them, in the wait, dequeue and CNO modes.
 *
 * Per EP and iteration the client posts, without waiting in between: an
 * RDMA write of 3 segments into the EP's area of the server's memory, an
 * RDMA read of 2 segments of the same range back, and a 2-segment send of
 * a varying size (inline and rendezvous sizes), and it has a 3-segment
 * receive posted for the echo. It then reaps, from the one EVD its EPs
 * share for requests and receives, every completion of the four EPs:
 * sends are reaped together with receives. Read data and echoes are
 * checked byte for byte. The server echoes each message from its 2-segment
 * receive buffer and reposts the receive once the echo's send completed.
 * At the end both sides see their EPs disconnected, and the server checks
 * that each area holds the last data written into it.
 *
 * Threads never call cmocka: they report a failure in their result and
 * the test thread asserts on it after joining them. */
#define _GNU_SOURCE
#include "pattern.h"

#define NTHREADS 2
#define NEPS 4
#define ITER 100
#define AREA 32768  /* server RDMA area per EP */
#define WLEN 9000   /* RDMA write/read length: 1000 + 3000 + 5000 */
#define MAXMSG 20000
#define RBUF 32768  /* server receive slot (2 segments of 16 KiB) */

struct offer {
	uint64_t addr;
	uint32_t rmr_context;
	uint32_t magic;
};
#define OFFER_MAGIC 0x7A5u

/* A thread's failure, or an empty string. */
struct result {
	char msg[512];
};

#define T_FAIL(r, ...)                                                           \
	do {                                                                     \
		snprintf((r)->msg, sizeof (r)->msg, __VA_ARGS__);                \
		return;                                                          \
	} while (0)
#define T_OK(r, expr)                                                            \
	do {                                                                     \
		DAT_RETURN r_ = (expr);                                          \
		if (r_ != DAT_SUCCESS)                                           \
			T_FAIL(r, "%s:%d: %s: %s", __FILE__, __LINE__, #expr,     \
			       ret_name(r_));                                    \
	} while (0)
#define T_TRUE(r, cond, ...)                                                     \
	do {                                                                     \
		if (!(cond)) {                                                   \
			char m_[300];                                            \
			snprintf(m_, sizeof m_, __VA_ARGS__);                    \
			T_FAIL(r, "%s:%d: %s: %s", __FILE__, __LINE__, #cond, m_); \
		}                                                                \
	} while (0)

static inline uint8_t pattern_byte(int t, int e, int i, size_t k)
{
	return (uint8_t)(t * 131 + e * 31 + i * 7 + k * 13 + (k >> 8));
}

static size_t msg_len(int t, int e, int i)
{
	/* Small (inline) and large (rendezvous) messages, mixed. */
	size_t n = 16 + ((size_t)(t * 7919 + e * 104729 + i * 1237) % (MAXMSG - 16));
	return (i % 3 == 0) ? n % 512 + 8 : n;
}

/* cookies: ep index e, iteration i, operation op */
enum { OP_WRITE, OP_READ, OP_SEND, OP_RECV, OP_COUNT };
static uint64_t tcookie(int e, int i, int op)
{
	return ((uint64_t)e << 32) | ((uint64_t)i << 8) | (uint64_t)op;
}

/* ---- client ---- */

struct cthread {
	int t;
	DAT_IA_HANDLE ia;
	DAT_PZ_HANDLE pz;
	enum pat_mode mode;
	DAT_CONN_QUAL qual;
	struct result res;
};

/* Client buffers per EP: write source, read target, send, receive. */
#define CB_W 0
#define CB_R (CB_W + WLEN)
#define CB_S (CB_R + WLEN)
#define CB_V (CB_S + MAXMSG)
#define CB_SIZE (CB_V + MAXMSG + 64)

static void client_thread_body(struct cthread *ct)
{
	struct result *r = &ct->res;
	struct waiter w;
	DAT_EVD_HANDLE dto, conn;
	DAT_EP_HANDLE ep[NEPS];
	struct offer off[NEPS];
	struct mem m;
	DAT_EVENT ev;
	int t = ct->t;

	w.mode = ct->mode;
	w.cno = DAT_HANDLE_NULL;
	if (w.mode == MODE_CNO)
		T_OK(r, dat_cno_create(ct->ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &w.cno));
	/* A small EVD: posted DTOs are not limited by its length. */
	T_OK(r, dat_evd_create(ct->ia, 8, w.cno, DAT_EVD_DTO_FLAG, &dto));
	T_OK(r, dat_evd_create(ct->ia, 8, w.cno, DAT_EVD_CONNECTION_FLAG, &conn));
	m.len = (size_t)NEPS * CB_SIZE;
	T_TRUE(r, posix_memalign((void **)&m.buf, 4096, m.len) == 0, "memory");
	memset(m.buf, 0, m.len);
	DAT_REGION_DESCRIPTION rd = {.for_va = m.buf};
	DAT_VLEN rl;
	DAT_VADDR rv;
	T_OK(r, dat_lmr_create(ct->ia, DAT_MEM_TYPE_VIRTUAL, rd, m.len, ct->pz, DAT_MEM_PRIV_ALL_FLAG, &m.lmr, &m.lctx,
			       &m.rctx, &rl, &rv));
	for (int e = 0; e < NEPS; e++) {
		char pd[16];
		T_OK(r, dat_ep_create(ct->ia, ct->pz, dto, dto, conn, NULL, &ep[e]));
		snprintf(pd, sizeof pd, "%d %d", t, e);
		struct sockaddr_in sa = loopback_addr();
		T_OK(r, dat_ep_connect(ep[e], (DAT_IA_ADDRESS_PTR)&sa, ct->qual, PAT_TMO, (DAT_COUNT)strlen(pd) + 1, pd,
				       DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	}
	for (int k = 0; k < NEPS; k++) {
		T_OK(r, pat_next(&w, conn, &ev, PAT_TMO));
		T_TRUE(r, ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED, "event %s", event_name(ev.event_number));
		int e = -1;
		for (int j = 0; j < NEPS; j++)
			if (ev.event_data.connect_event_data.ep_handle == ep[j])
				e = j;
		T_TRUE(r, e >= 0, "established event names no EP of this thread");
		T_TRUE(r, ev.event_data.connect_event_data.private_data_size == sizeof off[e], "private data size %d",
		       ev.event_data.connect_event_data.private_data_size);
		memcpy(&off[e], ev.event_data.connect_event_data.private_data, sizeof off[e]);
		T_TRUE(r, off[e].magic == OFFER_MAGIC, "offer magic");
	}

	for (int i = 0; i < ITER; i++) {
		size_t slen[NEPS];
		for (int e = 0; e < NEPS; e++) {
			char *b = m.buf + (size_t)e * CB_SIZE;
			/* The echo's receive: 3 segments. */
			memset(b + CB_V, 0, MAXMSG);
			DAT_LMR_TRIPLET rv3[3] = {mem_seg(&m, (size_t)e * CB_SIZE + CB_V, 100),
						  mem_seg(&m, (size_t)e * CB_SIZE + CB_V + 100, 9000),
						  mem_seg(&m, (size_t)e * CB_SIZE + CB_V + 9100, MAXMSG - 9100)};
			T_OK(r, dat_ep_post_recv(ep[e], 3, rv3, cookie(tcookie(e, i, OP_RECV)), DAT_COMPLETION_DEFAULT_FLAG));
			/* RDMA write of 3 segments. */
			for (size_t k = 0; k < WLEN; k++)
				b[CB_W + k] = (char)pattern_byte(t, e, i, k);
			DAT_LMR_TRIPLET w3[3] = {mem_seg(&m, (size_t)e * CB_SIZE + CB_W, 1000),
						 mem_seg(&m, (size_t)e * CB_SIZE + CB_W + 1000, 3000),
						 mem_seg(&m, (size_t)e * CB_SIZE + CB_W + 4000, 5000)};
			size_t roff = (size_t)(i % 3) * 4096;
			DAT_RMR_TRIPLET rt = rmr_seg(off[e].rmr_context, off[e].addr + roff, WLEN);
			T_OK(r, dat_ep_post_rdma_write(ep[e], 3, w3, cookie(tcookie(e, i, OP_WRITE)), &rt,
						       DAT_COMPLETION_DEFAULT_FLAG));
			/* RDMA read of 2 segments of the same range. */
			memset(b + CB_R, 0, WLEN);
			DAT_LMR_TRIPLET r2[2] = {mem_seg(&m, (size_t)e * CB_SIZE + CB_R, 4500),
						 mem_seg(&m, (size_t)e * CB_SIZE + CB_R + 4500, WLEN - 4500)};
			T_OK(r, dat_ep_post_rdma_read(ep[e], 2, r2, cookie(tcookie(e, i, OP_READ)), &rt,
						      DAT_COMPLETION_DEFAULT_FLAG));
			/* A 2-segment send. */
			slen[e] = msg_len(t, e, i);
			for (size_t k = 0; k < slen[e]; k++)
				b[CB_S + k] = (char)pattern_byte(t, e, i + 1000, k);
			size_t h = slen[e] / 3;
			DAT_LMR_TRIPLET s2[2] = {mem_seg(&m, (size_t)e * CB_SIZE + CB_S, h),
						 mem_seg(&m, (size_t)e * CB_SIZE + CB_S + h, slen[e] - h)};
			T_OK(r, dat_ep_post_send(ep[e], 2, s2, cookie(tcookie(e, i, OP_SEND)), DAT_COMPLETION_DEFAULT_FLAG));
		}
		/* Reap everything: sends with receives, in any order across
		 * EPs, in post order within an EP's request stream. */
		int seen[NEPS][OP_COUNT];
		memset(seen, 0, sizeof seen);
		for (int n = 0; n < NEPS * OP_COUNT; n++) {
			DAT_RETURN got = pat_next(&w, dto, &ev, PAT_TMO);
			if (got != DAT_SUCCESS) {
				/* Which completions never came (write, read, send, receive per EP). */
				char miss[128] = "";
				for (int e = 0; e < NEPS; e++)
					for (int op = 0; op < OP_COUNT; op++)
						if (!seen[e][op])
							snprintf(miss + strlen(miss), sizeof miss - strlen(miss), " %d:%s", e,
								 (const char *[]){"write", "read", "send", "recv"}[op]);
				T_FAIL(r, "iteration %d: %d of %d completions, then %s; missing (EP:request)%s", i, n,
				       NEPS * OP_COUNT, ret_name(got), miss);
			}
			T_TRUE(r, ev.event_number == DAT_DTO_COMPLETION_EVENT, "event %s", event_name(ev.event_number));
			DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
			uint64_t c = d.user_cookie.as_64;
			int e = (int)(c >> 32), ci = (int)((c >> 8) & 0xffffff), op = (int)(c & 0xff);
			T_TRUE(r, e >= 0 && e < NEPS && ci == i && op < OP_COUNT, "cookie %#" PRIx64, c);
			T_TRUE(r, d.ep_handle == ep[e], "ep_handle of cookie %#" PRIx64, c);
			T_TRUE(r, d.status == DAT_DTO_SUCCESS, "status %d of cookie %#" PRIx64, d.status, c);
			T_TRUE(r, !seen[e][op], "second completion of cookie %#" PRIx64, c);
			if (op == OP_READ)
				T_TRUE(r, seen[e][OP_WRITE], "read completed before the write posted before it");
			if (op == OP_SEND)
				T_TRUE(r, seen[e][OP_READ], "send completed before the read posted before it");
			seen[e][op] = 1;
			char *b = m.buf + (size_t)e * CB_SIZE;
			size_t want = op == OP_SEND || op == OP_RECV ? slen[e] : WLEN;
			T_TRUE(r, d.transfered_length == want, "length %" PRIu64 " of cookie %#" PRIx64 ", want %zu",
			       (uint64_t)d.transfered_length, c, want);
			if (op == OP_READ)
				T_TRUE(r, memcmp(b + CB_R, b + CB_W, WLEN) == 0, "RDMA read data, EP %d iteration %d", e, i);
			if (op == OP_RECV)
				T_TRUE(r, memcmp(b + CB_V, b + CB_S, slen[e]) == 0, "echo data, EP %d iteration %d", e, i);
		}
		DAT_RETURN q = dat_evd_dequeue(dto, &ev);
		T_TRUE(r, DAT_GET_TYPE(q) == DAT_QUEUE_EMPTY, "extra event after iteration %d: %s", i, ret_name(q));
	}
	for (int e = 0; e < NEPS; e++)
		T_OK(r, dat_ep_disconnect(ep[e], DAT_CLOSE_GRACEFUL_FLAG));
	for (int k = 0; k < NEPS; k++) {
		T_OK(r, pat_next(&w, conn, &ev, PAT_TMO));
		T_TRUE(r, ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED, "event %s", event_name(ev.event_number));
	}
	for (int e = 0; e < NEPS; e++)
		T_OK(r, dat_ep_free(ep[e]));
	T_OK(r, dat_lmr_free(m.lmr));
	free(m.buf);
	T_OK(r, dat_evd_free(dto));
	T_OK(r, dat_evd_free(conn));
	if (w.cno != DAT_HANDLE_NULL)
		T_OK(r, dat_cno_free(w.cno));
}

static void *client_thread(void *arg)
{
	client_thread_body(arg);
	return NULL;
}

static void client(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_PZ_HANDLE pz;
	pthread_t th[NTHREADS];
	struct cthread ct[NTHREADS];
	check_ok(dat_ia_open(TEST_IA, 8, &async, &ia));
	check_ok(dat_pz_create(ia, &pz));
	for (int t = 0; t < NTHREADS; t++) {
		ct[t] = (struct cthread){.t = t, .ia = ia, .pz = pz, .mode = child_args.mode, .qual = child_args.qual};
		assert_int_equal(pthread_create(&th[t], NULL, client_thread, &ct[t]), 0);
	}
	for (int t = 0; t < NTHREADS; t++)
		assert_int_equal(pthread_join(th[t], NULL), 0);
	for (int t = 0; t < NTHREADS; t++)
		if (ct[t].res.msg[0])
			fail_msg("client thread %d: %s", t, ct[t].res.msg);
	check_ok(dat_pz_free(pz));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* ---- server ---- */

struct sthread {
	int t;
	struct waiter w;
	DAT_EVD_HANDLE dto, conn;
	DAT_EP_HANDLE ep[NEPS];
	struct mem *m; /* shared: areas, then receive slots */
	struct result res;
};

static size_t area_off(int t, int e)
{
	return ((size_t)t * NEPS + (size_t)e) * AREA;
}

static size_t rslot_off(int t, int e, int s)
{
	return (size_t)NTHREADS * NEPS * AREA + (((size_t)t * NEPS + (size_t)e) * 2 + (size_t)s) * RBUF;
}

static void server_post_recv(struct sthread *st, int e, int s, struct result *r)
{
	DAT_LMR_TRIPLET two[2] = {mem_seg(st->m, rslot_off(st->t, e, s), RBUF / 2),
				  mem_seg(st->m, rslot_off(st->t, e, s) + RBUF / 2, RBUF / 2)};
	T_OK(r, dat_ep_post_recv(st->ep[e], 2, two, cookie(((uint64_t)e << 8) | (uint64_t)s), DAT_COMPLETION_DEFAULT_FLAG));
}

static void server_thread_body(struct sthread *st)
{
	struct result *r = &st->res;
	DAT_EVENT ev;
	int echoed[NEPS] = {0}, pending = NEPS * ITER;
	for (int k = 0; k < NEPS; k++) {
		T_OK(r, pat_next(&st->w, st->conn, &ev, PAT_TMO));
		T_TRUE(r, ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED, "event %s", event_name(ev.event_number));
	}
	/* Sends (the echoes) are reaped from the same EVD as receives. */
	int outstanding_sends = 0;
	while (pending > 0 || outstanding_sends > 0) {
		T_OK(r, pat_next(&st->w, st->dto, &ev, PAT_TMO));
		T_TRUE(r, ev.event_number == DAT_DTO_COMPLETION_EVENT, "event %s", event_name(ev.event_number));
		DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
		uint64_t c = d.user_cookie.as_64;
		/* Once every message has been echoed the client may end the
		 * connections before this thread reaps its last echoes' send
		 * completions (it has the echoes): a receive reposted then is
		 * flushed, which is what a disconnect does to it. */
		if (pending == 0 && !(c & (1ull << 63)) && d.status == DAT_DTO_ERR_FLUSHED)
			continue;
		T_TRUE(r, d.status == DAT_DTO_SUCCESS, "status %d of cookie %#" PRIx64, d.status, c);
		int e = (int)((c >> 8) & 0xff), s = (int)(c & 1);
		T_TRUE(r, e < NEPS && d.ep_handle == st->ep[e], "completion for an unknown EP");
		if (c & (1ull << 63)) {
			/* An echo went out: its receive slot is free again. */
			outstanding_sends--;
			T_TRUE(r, d.transfered_length == (c >> 16 & 0xffffff), "echo send length");
			server_post_recv(st, e, s, r);
			if (r->msg[0])
				return;
			continue;
		}
		/* A message: echo it from where it landed. */
		size_t len = d.transfered_length;
		T_TRUE(r, len > 0 && len <= MAXMSG, "message length %zu", len);
		size_t h = len < RBUF / 2 ? len : RBUF / 2;
		DAT_LMR_TRIPLET two[2] = {mem_seg(st->m, rslot_off(st->t, e, s), h),
					  mem_seg(st->m, rslot_off(st->t, e, s) + RBUF / 2, len - h)};
		uint64_t sc = (1ull << 63) | ((uint64_t)len << 16) | ((uint64_t)e << 8) | (uint64_t)s;
		T_OK(r, dat_ep_post_send(st->ep[e], len > h ? 2 : 1, two, cookie(sc), DAT_COMPLETION_DEFAULT_FLAG));
		outstanding_sends++;
		echoed[e]++;
		pending--;
	}
	for (int k = 0; k < NEPS; k++) {
		T_OK(r, pat_next(&st->w, st->conn, &ev, PAT_TMO));
		T_TRUE(r, ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED, "event %s", event_name(ev.event_number));
	}
	/* Each area holds the last data written into it. */
	for (int e = 0; e < NEPS; e++) {
		T_TRUE(r, echoed[e] == ITER, "EP %d echoed %d messages", e, echoed[e]);
		size_t roff = (size_t)((ITER - 1) % 3) * 4096;
		const uint8_t *a = (const uint8_t *)st->m->buf + area_off(st->t, e) + roff;
		for (size_t k = 0; k < WLEN; k++)
			T_TRUE(r, a[k] == pattern_byte(st->t, e, ITER - 1, k), "area of EP %d byte %zu", e, k);
	}
}

static void *server_thread(void *arg)
{
	server_thread_body(arg);
	return NULL;
}

static void server(enum pat_mode mode)
{
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, cr;
	DAT_PZ_HANDLE pz;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	struct waiter w;
	struct mem m;
	struct sthread st[NTHREADS];
	pthread_t th[NTHREADS];
	check_ok(dat_ia_open(TEST_IA, 8, &async, &ia));
	waiter_init(&w, ia, mode);
	check_ok(dat_pz_create(ia, &pz));
	cr = waiter_evd(&w, ia, 16, DAT_EVD_CR_FLAG);
	mem_create(&m, ia, pz, (size_t)NTHREADS * NEPS * (AREA + 2 * RBUF));
	for (int t = 0; t < NTHREADS; t++) {
		st[t].t = t;
		st[t].m = &m;
		st[t].res.msg[0] = 0;
		waiter_init(&st[t].w, ia, mode);
		st[t].dto = waiter_evd(&st[t].w, ia, 8, DAT_EVD_DTO_FLAG);
		st[t].conn = waiter_evd(&st[t].w, ia, 8, DAT_EVD_CONNECTION_FLAG);
		for (int e = 0; e < NEPS; e++) {
			check_ok(dat_ep_create(ia, pz, st[t].dto, st[t].dto, st[t].conn, NULL, &st[t].ep[e]));
			for (int s = 0; s < 2; s++) {
				server_post_recv(&st[t], e, s, &st[t].res);
				assert_string_equal(st[t].res.msg, "");
			}
		}
	}
	check_ok(dat_psp_create_any(ia, &qual, cr, DAT_PSP_CONSUMER_FLAG, &psp));
	pid_t pid = spawn_child("client", mode, qual, NULL);
	for (int t = 0; t < NTHREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, server_thread, &st[t]), 0);
	for (int k = 0; k < NTHREADS * NEPS; k++) {
		DAT_EVENT ev = expect_event(&w, cr, DAT_CONNECTION_REQUEST_EVENT, "connection request");
		DAT_CR_HANDLE h = ev.event_data.cr_arrival_event_data.cr_handle;
		DAT_CR_PARAM crp;
		int t = -1, e = -1;
		check_ok(dat_cr_query(h, DAT_CR_FIELD_ALL, &crp));
		assert_int_equal(sscanf((char *)crp.private_data, "%d %d", &t, &e), 2);
		assert_true(t >= 0 && t < NTHREADS && e >= 0 && e < NEPS);
		struct offer off = {.addr = (uint64_t)(uintptr_t)(m.buf + area_off(t, e)), .rmr_context = m.rctx,
				    .magic = OFFER_MAGIC};
		check_ok(dat_cr_accept(h, st[t].ep[e], sizeof off, &off));
	}
	for (int t = 0; t < NTHREADS; t++)
		assert_int_equal(pthread_join(th[t], NULL), 0);
	reap_child(pid, 120, "transactions client");
	for (int t = 0; t < NTHREADS; t++)
		if (st[t].res.msg[0])
			fail_msg("server thread %d: %s", t, st[t].res.msg);
	check_ok(dat_psp_free(psp));
	for (int t = 0; t < NTHREADS; t++) {
		for (int e = 0; e < NEPS; e++)
			check_ok(dat_ep_free(st[t].ep[e]));
		check_ok(dat_evd_free(st[t].dto));
		check_ok(dat_evd_free(st[t].conn));
		waiter_fini(&st[t].w);
	}
	mem_free(&m);
	check_ok(dat_evd_free(cr));
	check_ok(dat_pz_free(pz));
	waiter_fini(&w);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

static void test_wait(void **state)
{
	(void)state;
	server(MODE_WAIT);
}

static void test_dequeue(void **state)
{
	(void)state;
	server(MODE_DEQUEUE);
}

static void test_cno(void **state)
{
	(void)state;
	server(MODE_CNO);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest roles[] = {cmocka_unit_test(client)};
	int rc;
	if (pat_child_main(argc, argv, roles, 1, &rc))
		return rc;
	alarm(280);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_wait, pat_teardown),
		cmocka_unit_test_teardown(test_dequeue, pat_teardown),
		cmocka_unit_test_teardown(test_cno, pat_teardown),
	};
	return cmocka_run_group_tests_name("pattern: transactions", tests, NULL, NULL);
}
