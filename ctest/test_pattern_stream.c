/* The streaming workload of an MPI library's rendezvous protocol: large
 * RDMA writes and sends on several endpoints that share their EVDs, posted
 * by one thread while another takes the completions.
 *
 * A streamer (the same program, started with posix_spawn) has NEP
 * endpoints to this process (the receiver), all on one request EVD and one
 * receive EVD. Its posting thread posts, round after round on every
 * endpoint, an RDMA write of 160 KiB to 2 MiB (odd sizes among them) into
 * the receiver's memory, an RDMA read of 80 KiB to 1 MiB from it, on odd
 * rounds a large send, and then a small "announce" send naming the round. Its main thread takes the completions
 * of both EVDs as a progress loop does: it checks every request completion
 * (status, endpoint, length, per endpoint the post order, and the bytes
 * each read brought) and takes the receiver's acknowledgements. So posts come from one thread while the
 * other takes events, and over TCP a polling thread's calls are what
 * carries writes too large for the post to write itself (DESIGN.md
 * section 7).
 *
 * The receiver takes its receive completions; at each announce it checks
 * the written bytes of that round (and that nothing was written past them),
 * clears them, and sends an acknowledgement. Each endpoint's target is two
 * halves, round k writing half k % 2: round k + 2 is posted only after
 * round k is acknowledged and its own completions are seen (its source
 * buffers are reused then). The streamer ends the connections once it has
 * every acknowledgement.
 *
 * Four ways, one test each, both processes taking events the same way:
 *   poll  busy-polling dat_evd_dequeue (the streamer both EVDs in turn)
 *   wait  dat_evd_wait (the streamer with a 1 ms timeout on its request
 *         EVD, dequeuing its receive EVD between waits)
 *   cno   every EVD of a process on one CNO, dat_cno_wait when all are empty
 *   srq   polling, the receiver's endpoints on one SRQ with fewer receives
 *         than messages in flight (messages wait for one), and large sends
 *         of over 4 MiB (over TCP a helper goroutine reads those)
 * Every wait is bounded. */
#define _GNU_SOURCE
#include "pattern.h"

#define NEP 4
#define ROUNDS 16
#define HALF (2u << 20)              /* a target or source half */
#define BIG ((384u << 10) + 7)       /* the large send of odd rounds */
#define RBUF (512u << 10)            /* a receive buffer at the receiver */
#define RDEPTH 4                     /* receives per endpoint at the receiver */
#define SRQ_BIG ((4u << 20) + 4096 + 7) /* the large send of the srq way */
#define SRQ_RBUF ((4u << 20) + (8u << 10))
#define SRQ_N 6                      /* the SRQ's receives: fewer than in flight */
#define ADEPTH 4                     /* acknowledgement receives per endpoint at the streamer */
#define SMALL 64                     /* an announce or acknowledgement slot */
#define MAGIC 0x57AEu

/* The write sizes, taken in turn by (round + endpoint). */
static const uint32_t wsizes[] = {(160u << 10) + 3, (1u << 20) + 4097, HALF, 600u << 10};
#define NSIZES (sizeof wsizes / sizeof wsizes[0])

static uint32_t wsize(int e, uint32_t k) { return wsizes[(k + (uint32_t)e) % NSIZES]; }

/* The read sizes: about half a write, odd. */
static uint32_t rsize(int e, uint32_t k) { return wsizes[(k + (uint32_t)e + 1) % NSIZES] / 2 + 1; }

/* The "round" of the bytes the receiver offers for reading. */
#define READK 0xFFFFu

/* An announce (streamer to receiver) or acknowledgement (back). */
struct note {
	uint32_t magic, ep, round, wsize, bsize;
};

/* The way of the run (the child's extra argument says srq). */
static int use_srq;
static uint32_t big_len(void) { return use_srq ? SRQ_BIG : BIG; }
static uint32_t rbuf_len(void) { return use_srq ? SRQ_RBUF : RBUF; }

/* The target the receiver offers in its accept's private data. */
struct offer {
	uint64_t addr;  /* the two halves written */
	uint64_t raddr; /* HALF bytes to read */
	uint32_t rmr;
	uint32_t pad;
};

/* The bytes of round k of endpoint e (tag 0: the write, 1: the large
 * send, 2: the receiver's bytes to read, round READK), byte i being byte
 * i % 8 of word i / 8. */
static uint64_t word_of(int e, uint32_t k, int tag, size_t w)
{
	uint64_t seed = ((uint64_t)e << 40) ^ ((uint64_t)k << 20) ^ ((uint64_t)tag << 60) ^ 0x5EEDu;
	return seed ^ (w + 1) * 0x9E3779B97F4A7C15ull;
}

static void fill(char *b, size_t n, int e, uint32_t k, int tag)
{
	size_t w = 0;
	for (; (w + 1) * 8 <= n; w++) {
		uint64_t v = word_of(e, k, tag, w);
		memcpy(b + w * 8, &v, 8);
	}
	uint64_t v = word_of(e, k, tag, w);
	for (size_t i = w * 8; i < n; i++)
		b[i] = (char)(v >> (8 * (i % 8)));
}

/* The offset of the first byte of b[0, n) that is not as fill made it, or
 * -1. */
static long first_wrong(const char *b, size_t n, int e, uint32_t k, int tag)
{
	size_t w = 0;
	for (; (w + 1) * 8 <= n; w++) {
		uint64_t v = word_of(e, k, tag, w), got;
		memcpy(&got, b + w * 8, 8);
		if (got != v)
			for (size_t i = 0; i < 8; i++)
				if ((char)(v >> (8 * i)) != b[w * 8 + i])
					return (long)(w * 8 + i);
	}
	uint64_t v = word_of(e, k, tag, w);
	for (size_t i = w * 8; i < n; i++)
		if (b[i] != (char)(v >> (8 * (i % 8))))
			return (long)i;
	return -1;
}

/* Room for two rounds of requests and the receives per endpoint. */
#define deep_attr(ia, pz, recv, req, conn) pat_deep_attr(ia, pz, recv, req, conn, 8, 16)

/* ---- the streamer ---- */

/* Request kinds, in the cookie's top byte. */
enum { K_WRITE = 1, K_READ = 2, K_BIG = 3, K_ANNOUNCE = 4 };

static uint64_t req_cookie(int kind, int e, uint32_t k) { return (uint64_t)kind << 56 | (uint64_t)e << 32 | k; }

struct streamer {
	DAT_EP_HANDLE ep[NEP];
	struct offer peer[NEP];
	struct mem src;            /* per endpoint: two halves for writes, two large send areas, ROUNDS
				    * announce slots, two halves for reads */
	/* Written by the polling thread, read by the poster. */
	uint32_t acked[NEP];       /* rounds acknowledged by the receiver */
	uint32_t done[NEP];        /* rounds whose announce completed here */
	int stop;                  /* the polling thread failed: the poster gives up */
	/* The poster's failure, reported by the main thread. */
	int failures;
	char first[256];
};

static size_t src_write(int e, uint32_t k) { return ((size_t)e * 2 + k % 2) * HALF; }
static size_t src_big(int e, uint32_t k) { return (size_t)NEP * 2 * HALF + ((size_t)e * 2 + k % 2) * rbuf_len(); }
static size_t src_note(int e, uint32_t k)
{
	return (size_t)NEP * 2 * HALF + (size_t)NEP * 2 * rbuf_len() + ((size_t)e * ROUNDS + k) * SMALL;
}
static size_t src_read(int e, uint32_t k) { return src_note(NEP, 0) + ((size_t)e * 2 + k % 2) * HALF; }
static size_t src_len(void) { return src_read(NEP, 0); }

static void poster_fail(struct streamer *s, const char *what, DAT_RETURN r)
{
	if (s->failures++ == 0)
		snprintf(s->first, sizeof s->first, "%s: %s", what, ret_name(r));
}

/* Waits until v reaches want: 0 on time, -1 when the run ends first. */
static int await_count(struct streamer *s, uint32_t *v, uint32_t want, long deadline)
{
	while (__atomic_load_n(v, __ATOMIC_ACQUIRE) < want) {
		if (__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE) || now_ns() > deadline)
			return -1;
		sched_yield();
	}
	return 0;
}

static void *poster(void *p)
{
	struct streamer *s = p;
	long deadline = now_ns() + 6 * PAT_TMO * 1000L;
	for (uint32_t k = 0; k < ROUNDS; k++)
		for (int e = 0; e < NEP; e++) {
			/* Round k - 2 used these halves: the receiver has read its
			 * target, and its requests have completed here. */
			if (k >= 2 && (await_count(s, &s->acked[e], k - 1, deadline) != 0 ||
				       await_count(s, &s->done[e], k - 1, deadline) != 0)) {
				if (s->failures++ == 0)
					snprintf(s->first, sizeof s->first, "EP %d round %u: round %u never acknowledged", e,
						 k, k - 2);
				return NULL;
			}
			uint32_t n = wsize(e, k);
			fill(s->src.buf + src_write(e, k), n, e, k, 0);
			DAT_LMR_TRIPLET l = mem_seg(&s->src, src_write(e, k), n);
			DAT_RMR_TRIPLET r = rmr_seg(s->peer[e].rmr, s->peer[e].addr + (uint64_t)(k % 2) * HALF, n);
			DAT_RETURN rc = dat_ep_post_rdma_write(s->ep[e], 1, &l, cookie(req_cookie(K_WRITE, e, k)), &r,
							       DAT_COMPLETION_DEFAULT_FLAG);
			if (rc != DAT_SUCCESS) {
				poster_fail(s, "dat_ep_post_rdma_write", rc);
				return NULL;
			}
			uint32_t rn = rsize(e, k);
			memset(s->src.buf + src_read(e, k), 0xA5, rn); /* a read must bring every byte */
			l = mem_seg(&s->src, src_read(e, k), rn);
			r = rmr_seg(s->peer[e].rmr, s->peer[e].raddr, rn);
			rc = dat_ep_post_rdma_read(s->ep[e], 1, &l, cookie(req_cookie(K_READ, e, k)), &r,
						   DAT_COMPLETION_DEFAULT_FLAG);
			if (rc != DAT_SUCCESS) {
				poster_fail(s, "dat_ep_post_rdma_read", rc);
				return NULL;
			}
			uint32_t b = k % 2 ? big_len() : 0;
			if (b) {
				fill(s->src.buf + src_big(e, k), b, e, k, 1);
				l = mem_seg(&s->src, src_big(e, k), b);
				rc = dat_ep_post_send(s->ep[e], 1, &l, cookie(req_cookie(K_BIG, e, k)),
						      DAT_COMPLETION_DEFAULT_FLAG);
				if (rc != DAT_SUCCESS) {
					poster_fail(s, "dat_ep_post_send (large)", rc);
					return NULL;
				}
			}
			struct note a = {MAGIC, (uint32_t)e, k, n, b};
			memcpy(s->src.buf + src_note(e, k), &a, sizeof a);
			l = mem_seg(&s->src, src_note(e, k), sizeof a);
			rc = dat_ep_post_send(s->ep[e], 1, &l, cookie(req_cookie(K_ANNOUNCE, e, k)),
					      DAT_COMPLETION_DEFAULT_FLAG);
			if (rc != DAT_SUCCESS) {
				poster_fail(s, "dat_ep_post_send (announce)", rc);
				return NULL;
			}
		}
	return NULL;
}

/* The next request completion of endpoint e, in post order: the write of
 * round k, its read, its large send on odd rounds, then its announce. */
struct expect {
	uint32_t round;
	int kind;
};

static void expect_next(struct expect *x)
{
	switch (x->kind) {
	case K_WRITE:
		x->kind = K_READ;
		break;
	case K_READ:
		x->kind = x->round % 2 ? K_BIG : K_ANNOUNCE;
		break;
	case K_BIG:
		x->kind = K_ANNOUNCE;
		break;
	default:
		x->kind = K_WRITE;
		x->round++;
	}
}

/* The streamer's main thread: checks request completion d. Returns 0, or
 * 1 with why filled. */
static int take_request(struct streamer *s, struct expect *next, const DAT_EVENT *ev, uint32_t *done, char *why,
			size_t wl)
{
	DAT_DTO_COMPLETION_EVENT_DATA d = ev->event_data.dto_completion_event_data;
	uint64_t c = d.user_cookie.as_64;
	int kind = (int)(c >> 56), e = (int)(c >> 32 & 0xff);
	uint32_t k = (uint32_t)c;
	long bad = -1;
	if (ev->event_number != DAT_DTO_COMPLETION_EVENT || d.status != DAT_DTO_SUCCESS)
		snprintf(why, wl, "request cookie %#" PRIx64 ": event %#x status %d", c, ev->event_number, d.status);
	else if (e >= NEP || d.ep_handle != s->ep[e])
		snprintf(why, wl, "request cookie %#" PRIx64 " on the wrong EP", c);
	else if (kind != next[e].kind || k != next[e].round)
		snprintf(why, wl, "EP %d: completion of kind %d round %u, want kind %d round %u", e, kind, k,
			 next[e].kind, next[e].round);
	else if (d.transfered_length != (kind == K_WRITE	 ? wsize(e, k)
					 : kind == K_READ ? rsize(e, k)
					 : kind == K_BIG  ? big_len()
							  : sizeof(struct note)))
		snprintf(why, wl, "EP %d round %u kind %d: %" PRIu64 " bytes", e, k, kind, (uint64_t)d.transfered_length);
	else if (kind == K_READ && (bad = first_wrong(s->src.buf + src_read(e, k), rsize(e, k), e, READK, 2)) >= 0)
		snprintf(why, wl, "EP %d round %u: the read brought wrong bytes at %ld of %u", e, k, bad, rsize(e, k));
	else {
		expect_next(&next[e]);
		if (kind == K_ANNOUNCE) {
			__atomic_store_n(&s->done[e], k + 1, __ATOMIC_RELEASE);
			(*done)++;
		}
		return 0;
	}
	return 1;
}

/* The streamer's main thread: takes acknowledgement d (receive slot i of
 * acks) and posts its receive again. Returns 0, or 1 with why filled. */
static int take_ack(struct streamer *s, struct mem *acks, const DAT_EVENT *ev, uint32_t *acked, char *why, size_t wl)
{
	DAT_DTO_COMPLETION_EVENT_DATA d = ev->event_data.dto_completion_event_data;
	int e = (int)(d.user_cookie.as_64 >> 32), i = (int)(uint32_t)d.user_cookie.as_64;
	struct note a;
	if (ev->event_number != DAT_DTO_COMPLETION_EVENT || d.status != DAT_DTO_SUCCESS || e >= NEP || i >= ADEPTH ||
	    d.ep_handle != s->ep[e] || d.transfered_length != sizeof a) {
		snprintf(why, wl, "acknowledgement cookie %#" PRIx64 ": event %#x status %d, %" PRIu64 " bytes",
			 (uint64_t)d.user_cookie.as_64, ev->event_number, d.status, (uint64_t)d.transfered_length);
		return 1;
	}
	size_t off = ((size_t)e * ADEPTH + (size_t)i) * SMALL;
	memcpy(&a, acks->buf + off, sizeof a);
	if (a.magic != MAGIC || a.ep != (uint32_t)e || a.round != s->acked[e]) {
		snprintf(why, wl, "EP %d: acknowledgement of round %u (magic %#x), want round %u", e, a.round, a.magic,
			 s->acked[e]);
		return 1;
	}
	__atomic_store_n(&s->acked[e], a.round + 1, __ATOMIC_RELEASE);
	(*acked)++;
	DAT_LMR_TRIPLET t = mem_seg(acks, off, SMALL);
	DAT_RETURN r = dat_ep_post_recv(s->ep[e], 1, &t, d.user_cookie, DAT_COMPLETION_DEFAULT_FLAG);
	if (r != DAT_SUCCESS) {
		snprintf(why, wl, "dat_ep_post_recv: %s", ret_name(r));
		return 1;
	}
	return 0;
}

/* One look for an event of evd: DAT_SUCCESS, DAT_QUEUE_EMPTY, or the
 * failure (a dequeue's, or in the wait way a wait's of up to 1 ms on
 * the request EVD). */
static DAT_RETURN look(enum pat_mode m, DAT_EVD_HANDLE evd, int is_req, DAT_EVENT *ev)
{
	DAT_COUNT n;
	if (m == MODE_WAIT && is_req) {
		DAT_RETURN r = dat_evd_wait(evd, 1000, 1, ev, &n);
		return DAT_GET_TYPE(r) == DAT_TIMEOUT_EXPIRED ? DAT_QUEUE_EMPTY : r;
	}
	DAT_RETURN r = dat_evd_dequeue(evd, ev);
	return DAT_GET_TYPE(r) == DAT_QUEUE_EMPTY ? DAT_QUEUE_EMPTY : r;
}

static void streamer(void **state)
{
	(void)state;
	static struct streamer S;
	struct streamer *s = &S;
	struct waiter w;
	enum pat_mode m = child_args.mode;
	use_srq = strcmp(child_args.extra, "srq") == 0;
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, req, recv, conn;
	DAT_PZ_HANDLE pz;
	struct mem acks; /* ADEPTH acknowledgement receives per endpoint */
	check_ok(dat_ia_open(TEST_IA, 8, &async, &ia));
	waiter_init(&w, ia, m);
	check_ok(dat_pz_create(ia, &pz));
	req = waiter_evd(&w, ia, NEP * 16 + 64, DAT_EVD_DTO_FLAG);
	recv = waiter_evd(&w, ia, NEP * ADEPTH + 16, DAT_EVD_DTO_FLAG);
	conn = waiter_evd(&w, ia, 2 * NEP, DAT_EVD_CONNECTION_FLAG);
	mem_create(&s->src, ia, pz, src_len());
	mem_create(&acks, ia, pz, (size_t)NEP * ADEPTH * SMALL);
	DAT_EP_ATTR attr = deep_attr(ia, pz, recv, req, conn);
	for (int e = 0; e < NEP; e++) {
		check_ok(dat_ep_create(ia, pz, recv, req, conn, &attr, &s->ep[e]));
		for (int i = 0; i < ADEPTH; i++) {
			DAT_LMR_TRIPLET t = mem_seg(&acks, ((size_t)e * ADEPTH + (size_t)i) * SMALL, SMALL);
			check_ok(dat_ep_post_recv(s->ep[e], 1, &t, cookie((uint64_t)e << 32 | (uint64_t)i),
						  DAT_COMPLETION_DEFAULT_FLAG));
		}
		uint32_t pd = (uint32_t)e;
		connect_ep(s->ep[e], child_args.qual, PAT_TMO, &pd, sizeof pd);
	}
	for (int n = 0; n < NEP; n++) {
		DAT_EVENT ev = expect_event(&w, conn, DAT_CONNECTION_EVENT_ESTABLISHED, "connect");
		DAT_CONNECTION_EVENT_DATA *c = &ev.event_data.connect_event_data;
		int e = -1;
		for (int i = 0; i < NEP; i++)
			if (c->ep_handle == s->ep[i])
				e = i;
		assert_true(e >= 0);
		assert_true(c->private_data_size >= (DAT_COUNT)sizeof(struct offer));
		memcpy(&s->peer[e], c->private_data, sizeof(struct offer));
	}

	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, poster, s), 0);
	struct expect next[NEP];
	for (int e = 0; e < NEP; e++)
		next[e] = (struct expect){0, K_WRITE};
	uint32_t acked = 0, done = 0;
	long deadline = now_ns() + 6 * PAT_TMO * 1000L;
	char why[256] = "";
	for (unsigned idle = 0; acked < NEP * ROUNDS || done < NEP * ROUNDS; idle++) {
		if (now_ns() > deadline || s->failures) {
			snprintf(why, sizeof why, "stalled with %u of %u rounds complete and %u acknowledged", done,
				 NEP * ROUNDS, acked);
			break;
		}
		DAT_EVENT ev;
		int got = 0;
		DAT_RETURN r = look(m, req, 1, &ev);
		if (r == DAT_SUCCESS) {
			got = 1;
			if (take_request(s, next, &ev, &done, why, sizeof why))
				break;
		} else if (r != DAT_QUEUE_EMPTY) {
			snprintf(why, sizeof why, "request EVD: %s", ret_name(r));
			break;
		}
		r = look(m, recv, 0, &ev);
		if (r == DAT_SUCCESS) {
			got = 1;
			if (take_ack(s, &acks, &ev, &acked, why, sizeof why))
				break;
		} else if (r != DAT_QUEUE_EMPTY) {
			snprintf(why, sizeof why, "receive EVD: %s", ret_name(r));
			break;
		}
		if (got)
			idle = 0;
		else if (m == MODE_CNO) {
			/* Both empty: sleep until one of them has an event (the CNO
			 * names one, a hint: the loop looks at both). */
			DAT_EVD_HANDLE hint;
			r = dat_cno_wait(w.cno, 10000, &hint);
			if (r != DAT_SUCCESS && DAT_GET_TYPE(r) != DAT_TIMEOUT_EXPIRED && DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY) {
				snprintf(why, sizeof why, "dat_cno_wait: %s", ret_name(r));
				break;
			}
		} else if ((idle & 255) == 255)
			sched_yield(); /* the test machine is shared */
	}
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	if (s->failures)
		fail_msg("posting thread: %s", s->first);
	if (why[0])
		fail_msg("%s (%s way)", why, use_srq ? "srq" : pat_mode_names[m]);
	expect_empty(req, "no request completion twice");
	/* Only the streamer knows when both sides are done: it has every
	 * acknowledgement, so the receiver has every announce. */
	for (int e = 0; e < NEP; e++)
		check_ok(dat_ep_disconnect(s->ep[e], DAT_CLOSE_GRACEFUL_FLAG));
	for (int e = 0; e < NEP; e++)
		expect_event(&w, conn, DAT_CONNECTION_EVENT_DISCONNECTED, "disconnect");
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	free(s->src.buf);
	free(acks.buf);
}

/* ---- the receiver ---- */

/* The receiver's endpoint state: the round expected next, whether its
 * large send has come, and (without an SRQ) the next of its receives to
 * complete (they complete in post order). */
struct rx {
	uint32_t round;
	int got_big, slot;
};

static void stream(enum pat_mode m)
{
	struct waiter w;
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, recv, req, conn, cr;
	DAT_PZ_HANDLE pz;
	DAT_PSP_HANDLE psp;
	DAT_SRQ_HANDLE srq = DAT_HANDLE_NULL;
	DAT_CONN_QUAL q;
	DAT_EP_HANDLE ep[NEP];
	/* tgt: two halves written per EP, then a read area per EP; rbuf: the
	 * receives; out: the acknowledgements. */
	struct mem tgt, rbuf, out;
	/* Receive buffers: RDEPTH per EP, or SRQ_N on the SRQ. */
	int nbuf = use_srq ? SRQ_N : NEP * RDEPTH;
	check_ok(dat_ia_open(TEST_IA, 8, &async, &ia));
	waiter_init(&w, ia, m);
	check_ok(dat_pz_create(ia, &pz));
	recv = waiter_evd(&w, ia, NEP * RDEPTH + 16, DAT_EVD_DTO_FLAG);
	req = waiter_evd(&w, ia, NEP * ROUNDS + 16, DAT_EVD_DTO_FLAG);
	conn = waiter_evd(&w, ia, 2 * NEP, DAT_EVD_CONNECTION_FLAG);
	cr = waiter_evd(&w, ia, 2 * NEP, DAT_EVD_CR_FLAG);
	mem_create(&tgt, ia, pz, (size_t)NEP * 3 * HALF);
	for (int e = 0; e < NEP; e++)
		fill(tgt.buf + ((size_t)NEP * 2 + (size_t)e) * HALF, HALF, e, READK, 2);
	mem_create(&rbuf, ia, pz, (size_t)nbuf * rbuf_len());
	mem_create(&out, ia, pz, (size_t)NEP * ROUNDS * SMALL);
	DAT_EP_ATTR attr = deep_attr(ia, pz, recv, req, conn);
	if (use_srq) {
		DAT_SRQ_ATTR sa = {.max_recv_dtos = SRQ_N, .max_recv_iov = 1, .low_watermark = DAT_SRQ_LW_DEFAULT};
		check_ok(dat_srq_create(ia, pz, &sa, &srq));
		for (int i = 0; i < SRQ_N; i++) {
			DAT_LMR_TRIPLET t = mem_seg(&rbuf, (size_t)i * rbuf_len(), rbuf_len());
			check_ok(dat_srq_post_recv(srq, 1, &t, cookie((uint64_t)i)));
		}
		attr.srq_soft_hw = DAT_HW_DEFAULT;
	}
	for (int e = 0; e < NEP; e++) {
		if (use_srq) {
			check_ok(dat_ep_create_with_srq(ia, pz, recv, req, conn, srq, &attr, &ep[e]));
			continue;
		}
		check_ok(dat_ep_create(ia, pz, recv, req, conn, &attr, &ep[e]));
		for (int i = 0; i < RDEPTH; i++) {
			DAT_LMR_TRIPLET t = mem_seg(&rbuf, ((size_t)e * RDEPTH + (size_t)i) * RBUF, RBUF);
			check_ok(dat_ep_post_recv(ep[e], 1, &t, cookie((uint64_t)e * RDEPTH + (uint64_t)i),
						  DAT_COMPLETION_DEFAULT_FLAG));
		}
	}
	check_ok(dat_psp_create_any(ia, &q, cr, DAT_PSP_CONSUMER_FLAG, &psp));
	pid_t pid = spawn_child("streamer", m, q, use_srq ? "srq" : NULL);
	for (int n = 0; n < NEP; n++) {
		DAT_EVENT ev = expect_event(&w, cr, DAT_CONNECTION_REQUEST_EVENT, "connection request");
		DAT_CR_HANDLE h = ev.event_data.cr_arrival_event_data.cr_handle;
		DAT_CR_PARAM crp;
		uint32_t e;
		check_ok(dat_cr_query(h, DAT_CR_FIELD_ALL, &crp));
		assert_true(crp.private_data_size >= (DAT_COUNT)sizeof e);
		memcpy(&e, crp.private_data, sizeof e);
		assert_true(e < NEP);
		struct offer o = {(uint64_t)(uintptr_t)(tgt.buf + (size_t)e * 2 * HALF),
				  (uint64_t)(uintptr_t)(tgt.buf + ((size_t)NEP * 2 + e) * HALF), tgt.rctx, 0};
		check_ok(dat_cr_accept(h, ep[e], sizeof o, &o));
	}
	for (int e = 0; e < NEP; e++)
		expect_event(&w, conn, DAT_CONNECTION_EVENT_ESTABLISHED, "accept");

	struct rx rx[NEP];
	memset(rx, 0, sizeof rx);
	uint32_t rounds = 0, acks = 0;
	while (rounds < NEP * ROUNDS || acks < NEP * ROUNDS) {
		char what[96];
		snprintf(what, sizeof what, "after %u of %u rounds", rounds, NEP * ROUNDS);
		DAT_EVENT ev;
		if (acks < rounds) {
			DAT_RETURN r = dat_evd_dequeue(req, &ev);
			if (r == DAT_SUCCESS) {
				DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
				if (d.status != DAT_DTO_SUCCESS || d.transfered_length != sizeof(struct note))
					fail_msg("acknowledgement %" PRIu64 ": status %d, %" PRIu64 " bytes",
						 (uint64_t)d.user_cookie.as_64, d.status, (uint64_t)d.transfered_length);
				acks++;
				continue;
			}
			assert_int_equal(DAT_GET_TYPE(r), DAT_QUEUE_EMPTY);
			if (rounds == NEP * ROUNDS) {
				expect_dto(&w, req, DAT_HANDLE_NULL, sizeof(struct note), what);
				acks++;
				continue;
			}
		}
		DAT_DTO_COMPLETION_EVENT_DATA d = expect_dto(&w, recv, DAT_HANDLE_NULL, -1, what);
		int e = -1, i = (int)d.user_cookie.as_64;
		for (int j = 0; j < NEP; j++)
			if (d.ep_handle == ep[j])
				e = j;
		if (e < 0 || i < 0 || i >= nbuf)
			fail_msg("receive cookie %d of no endpoint of ours", i);
		struct rx *x = &rx[e];
		if (!use_srq) {
			if (i != e * RDEPTH + x->slot)
				fail_msg("EP %d: receive %d completed, want %d (post order)", e, i, e * RDEPTH + x->slot);
			x->slot = (x->slot + 1) % RDEPTH;
		}
		uint32_t k = x->round;
		char *msg = rbuf.buf + (size_t)i * rbuf_len();
		if (k % 2 && !x->got_big) {
			/* The large send of an odd round. */
			if (d.transfered_length != big_len())
				fail_msg("EP %d round %u: %" PRIu64 " bytes, want the large send", e, k,
					 (uint64_t)d.transfered_length);
			long bad = first_wrong(msg, big_len(), e, k, 1);
			if (bad >= 0)
				fail_msg("EP %d round %u: large send wrong at byte %ld", e, k, bad);
			x->got_big = 1;
		} else {
			struct note a;
			if (d.transfered_length != sizeof a)
				fail_msg("EP %d round %u: %" PRIu64 " bytes, want the announce", e, k,
					 (uint64_t)d.transfered_length);
			memcpy(&a, msg, sizeof a);
			if (a.magic != MAGIC || a.ep != (uint32_t)e || a.round != k || a.wsize != wsize(e, k) ||
			    a.bsize != (k % 2 ? big_len() : 0))
				fail_msg("EP %d: announce of EP %u round %u (magic %#x, %u bytes), want round %u", e, a.ep,
					 a.round, a.magic, a.wsize, k);
			/* The write came before its announce; nothing past it. */
			char *t = tgt.buf + ((size_t)e * 2 + k % 2) * HALF;
			long bad = first_wrong(t, a.wsize, e, k, 0);
			if (bad >= 0)
				fail_msg("EP %d round %u: written bytes wrong at %ld of %u", e, k, bad, a.wsize);
			for (size_t j = a.wsize; j < HALF && j < a.wsize + 4096u; j++)
				if (t[j] != 0)
					fail_msg("EP %d round %u: byte %zu written, past the %u of the write", e, k, j,
						 a.wsize);
			memset(t, 0, a.wsize);
			struct note ack = {MAGIC, (uint32_t)e, k, 0, 0};
			size_t off = ((size_t)e * ROUNDS + k) * SMALL;
			memcpy(out.buf + off, &ack, sizeof ack);
			DAT_LMR_TRIPLET l = mem_seg(&out, off, sizeof ack);
			check_ok(dat_ep_post_send(ep[e], 1, &l, cookie(off), DAT_COMPLETION_DEFAULT_FLAG));
			x->round++;
			x->got_big = 0;
			rounds++;
		}
		DAT_LMR_TRIPLET t = mem_seg(&rbuf, (size_t)i * rbuf_len(), rbuf_len());
		if (use_srq)
			check_ok(dat_srq_post_recv(srq, 1, &t, d.user_cookie));
		else
			check_ok(dat_ep_post_recv(ep[e], 1, &t, d.user_cookie, DAT_COMPLETION_DEFAULT_FLAG));
	}
	print_message("%s way over %s: %d endpoints, %d rounds of writes up to %u KiB, reads up to %u KiB and sends "
		      "of %u KiB: every byte in place\n",
		      use_srq ? "srq" : pat_mode_names[m], TEST_IA, NEP, ROUNDS, HALF >> 10, (HALF / 2 + 1) >> 10,
		      big_len() >> 10);
	/* The streamer ends the connections once it has every acknowledgement. */
	for (int e = 0; e < NEP; e++)
		expect_event(&w, conn, DAT_CONNECTION_EVENT_DISCONNECTED, "disconnect");
	reap_child(pid, 60, "streamer");
	check_ok(dat_psp_free(psp));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	free(tgt.buf);
	free(rbuf.buf);
	free(out.buf);
}

static void test_stream_poll(void **state)
{
	(void)state;
	use_srq = 0;
	stream(MODE_DEQUEUE);
}

static void test_stream_wait(void **state)
{
	(void)state;
	use_srq = 0;
	stream(MODE_WAIT);
}

static void test_stream_cno(void **state)
{
	(void)state;
	use_srq = 0;
	stream(MODE_CNO);
}

static void test_stream_srq(void **state)
{
	(void)state;
	use_srq = 1;
	stream(MODE_DEQUEUE);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest roles[] = {cmocka_unit_test(streamer)};
	int rc;
	if (pat_child_main(argc, argv, roles, 1, &rc))
		return rc;
	alarm(280);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_stream_poll, pat_teardown),
		cmocka_unit_test_teardown(test_stream_wait, pat_teardown),
		cmocka_unit_test_teardown(test_stream_cno, pat_teardown),
		cmocka_unit_test_teardown(test_stream_srq, pat_teardown),
	};
	return cmocka_run_group_tests_name("streaming: large writes and sends on shared EVDs, posted beside the events' "
					   "taker",
					   tests, NULL, NULL);
}
