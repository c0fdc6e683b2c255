/*
 * datbench: godat's side of `make bench`, over the DAT API only.
 *
 * The server opens an IA, listens on a qualifier from dat_psp_create_any
 * and starts the client as a second process (posix_spawn of this program;
 * the library is never used across a fork). The client connects, learns
 * the server's RDMA buffer from the accept private data, and drives every
 * measurement; the server only answers. Each measurement is announced by
 * a small control send, so both sides agree on size, mode and count.
 *
 * Measurements (client prints one line each: "godat <row> <size> <value>"):
 *   lat_poll, lat_wait  send/receive ping-pong, one-way latency in us
 *                       (round trip / 2). Sends carry
 *                       DAT_COMPLETION_SUPPRESS_FLAG; a few receives stay
 *                       posted ahead (each side replenishes one after its
 *                       next send); the receive is reaped by spinning on
 *                       dat_evd_dequeue (poll) or by dat_evd_wait (wait).
 *                       Both sides use the same mode.
 *   bw_send             streaming sends from the server, a window of
 *                       signalled sends in flight and as many receives
 *                       posted; GB/s (1e9 B/s) of messages received,
 *                       measured at the receiver.
 *   bw_write, bw_read   streaming RDMA writes / reads into / from the
 *                       server's buffer, a window in flight; GB/s of
 *                       completed operations.
 * The two processes run on two different CPUs (bench_cpu in common.h).
 * Every count is sized from a short probe to take about BENCH_TIME seconds,
 * split into BENCH_WINDOWS windows with one line each (common.h).
 *
 * Usage: datbench [-i IA] [-o ROWS] [-s SIZE]
 *        ROWS: comma list of row names to run; SIZE: only this size
 */
#include "common.h"

#include <dat/udat.h>
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>

#define AREA (16 * MiB)   /* largest message; size of each buffer area */
#define TMO 20000000      /* 20 s (us): every wait is bounded */

enum { T_LAT = 1, T_SENDBW, T_END };
enum { M_POLL = 0, M_WAIT = 1 };

/* The control message that announces a measurement. */
struct ctrl {
	uint32_t test, mode;
	uint64_t size, count, window;
};

/* What the server tells the client in its accept private data. */
struct offer {
	uint64_t addr;
	uint32_t rmr_context;
};

static char *ia_name = "godat-shm";
static const char *role = "server";

static void die(const char *what, DAT_RETURN r)
{
	const char *maj = "?", *min = "?";
	dat_strerror(r, &maj, &min);
	fprintf(stderr, "datbench %s: %s: %s %s\n", role, what, maj, min);
	exit(1);
}

static void fail(const char *what)
{
	fprintf(stderr, "datbench %s: %s\n", role, what);
	exit(1);
}

#define CHECK(call)                              \
	do {                                     \
		DAT_RETURN r_ = (call);          \
		if (r_ != DAT_SUCCESS)           \
			die(#call, r_);          \
	} while (0)

struct side {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, rcv, req, conn, cr;
	DAT_PZ_HANDLE pz;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_EP_HANDLE ep;
	char *buf; /* send area, receive area, RDMA area: AREA bytes each */
};

#define SEND_AREA(s) ((s)->buf)
#define RECV_AREA(s) ((s)->buf + AREA)
#define RDMA_AREA(s) ((s)->buf + 2 * AREA)

static void setup(struct side *s)
{
	DAT_REGION_DESCRIPTION rd;
	DAT_VLEN len;
	DAT_VADDR va;
	DAT_EP_ATTR attr;
	DAT_EP_PARAM par;
	s->async = DAT_HANDLE_NULL;
	CHECK(dat_ia_open(ia_name, 8, &s->async, &s->ia));
	CHECK(dat_pz_create(s->ia, &s->pz));
	CHECK(dat_evd_create(s->ia, 512, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->rcv));
	CHECK(dat_evd_create(s->ia, 512, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->req));
	CHECK(dat_evd_create(s->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &s->conn));
	CHECK(dat_evd_create(s->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &s->cr));
	s->buf = alloc_buf(3 * AREA);
	rd.for_va = s->buf;
	CHECK(dat_lmr_create(s->ia, DAT_MEM_TYPE_VIRTUAL, rd, 3 * AREA, s->pz, DAT_MEM_PRIV_ALL_FLAG,
			     &s->lmr, &s->lctx, &s->rctx, &len, &va));
	CHECK(dat_ep_create(s->ia, s->pz, s->rcv, s->req, s->conn, NULL, &s->ep));
	/* Start from the defaults and ask for deep enough queues. */
	CHECK(dat_ep_query(s->ep, DAT_EP_FIELD_ALL, &par));
	attr = par.ep_attr;
	if (attr.max_recv_dtos < 128 || attr.max_request_dtos < 128) {
		attr.max_recv_dtos = attr.max_request_dtos = 128;
		CHECK(dat_ep_modify(s->ep, DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS | DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS,
				    &(DAT_EP_PARAM){.ep_attr = attr}));
	}
}

static void teardown(struct side *s)
{
	CHECK(dat_ep_free(s->ep));
	CHECK(dat_lmr_free(s->lmr));
	CHECK(dat_evd_free(s->cr));
	CHECK(dat_evd_free(s->conn));
	CHECK(dat_evd_free(s->req));
	CHECK(dat_evd_free(s->rcv));
	CHECK(dat_pz_free(s->pz));
	CHECK(dat_ia_close(s->ia, DAT_CLOSE_GRACEFUL_FLAG));
	free(s->buf);
}

/* One event from evd, by spinning on dat_evd_dequeue or by dat_evd_wait. */
static void get_event(DAT_EVD_HANDLE evd, int mode, DAT_EVENT *ev, const char *what)
{
	DAT_RETURN r;
	if (mode == M_WAIT) {
		DAT_COUNT n;
		r = dat_evd_wait(evd, TMO, 1, ev, &n);
	} else {
		while ((r = dat_evd_dequeue(evd, ev)) != DAT_SUCCESS && DAT_GET_TYPE(r) == DAT_QUEUE_EMPTY)
			;
	}
	if (r != DAT_SUCCESS)
		die(what, r);
}

/* A DTO completion of the expected length (0: any), successful. */
static void get_dto(DAT_EVD_HANDLE evd, int mode, uint64_t len, const char *what)
{
	DAT_EVENT ev;
	get_event(evd, mode, &ev, what);
	if (ev.event_number != DAT_DTO_COMPLETION_EVENT) {
		fprintf(stderr, "datbench %s: %s: event 0x%x\n", role, what, ev.event_number);
		exit(1);
	}
	DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
	if (d->status != DAT_DTO_SUCCESS) {
		fprintf(stderr, "datbench %s: %s: DTO status %d\n", role, what, d->status);
		exit(1);
	}
	if (len && d->transfered_length != len) {
		fprintf(stderr, "datbench %s: %s: %" PRIu64 " bytes, want %" PRIu64 "\n", role, what,
			(uint64_t)d->transfered_length, len);
		exit(1);
	}
}

static DAT_LMR_TRIPLET seg(struct side *s, char *p, uint64_t len)
{
	DAT_LMR_TRIPLET t = {.lmr_context = s->lctx, .virtual_address = (DAT_VADDR)(uintptr_t)p, .segment_length = len};
	return t;
}

static void post_recv(struct side *s)
{
	DAT_LMR_TRIPLET t = seg(s, RECV_AREA(s), AREA);
	DAT_DTO_COOKIE c = {.as_64 = 1};
	CHECK(dat_ep_post_recv(s->ep, 1, &t, c, DAT_COMPLETION_DEFAULT_FLAG));
}

static void post_send(struct side *s, uint64_t len, DAT_COMPLETION_FLAGS fl)
{
	DAT_LMR_TRIPLET t = seg(s, SEND_AREA(s), len);
	DAT_DTO_COOKIE c = {.as_64 = 2};
	CHECK(dat_ep_post_send(s->ep, 1, &t, c, fl));
}

/* ---- server ---- */

/* Receives kept posted ahead in the latency test, so that replenishing one
 * is off the critical path (after the reply is sent). */
#define LAT_DEPTH 8

static void serve_lat(struct side *s, struct ctrl *c)
{
	for (uint64_t i = 0; i < LAT_DEPTH && i < c->count; i++)
		post_recv(s);
	for (uint64_t i = 0; i < c->count; i++) {
		get_dto(s->rcv, c->mode, c->size, "ping");
		post_send(s, c->size, DAT_COMPLETION_SUPPRESS_FLAG);
		if (i + LAT_DEPTH < c->count)
			post_recv(s);
	}
	post_recv(s); /* the next control message */
}

/* The server streams; the client receives and measures. */
static void serve_sendbw(struct side *s, struct ctrl *c)
{
	uint64_t sent = 0, done = 0;
	post_recv(s); /* the next control message */
	while (done < c->count) {
		while (sent < c->count && sent - done < c->window) {
			post_send(s, c->size, DAT_COMPLETION_DEFAULT_FLAG);
			sent++;
		}
		get_dto(s->req, M_POLL, c->size, "streamed send completion");
		done++;
	}
}

static int server(void)
{
	struct side s;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	DAT_EVENT ev;
	char qs[32];
	setup(&s);
	post_recv(&s); /* the first control message */
	CHECK(dat_psp_create_any(s.ia, &qual, s.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	snprintf(qs, sizeof qs, "%#" PRIx64, (uint64_t)qual);
	char *argv[] = {NULL, "--client", qs, ia_name, NULL};
	pid_t pid = spawn_self(argv);
	/* Only now: the client must start with every CPU allowed, or its Go
	 * runtime would size itself for one. */
	bench_pin(0);

	get_event(s.cr, M_WAIT, &ev, "connection request");
	if (ev.event_number != DAT_CONNECTION_REQUEST_EVENT)
		fail("expected a connection request");
	struct offer off = {.addr = (uint64_t)(uintptr_t)RDMA_AREA(&s), .rmr_context = s.rctx};
	CHECK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, s.ep, sizeof off, &off));
	get_event(s.conn, M_WAIT, &ev, "accept");
	if (ev.event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
		fail("accept: not established");

	for (;;) {
		struct ctrl c;
		get_dto(s.rcv, M_WAIT, sizeof c, "control message");
		memcpy(&c, RECV_AREA(&s), sizeof c);
		if (c.test == T_END)
			break;
		if (c.test == T_LAT)
			serve_lat(&s, &c);
		else if (c.test == T_SENDBW)
			serve_sendbw(&s, &c);
		else
			fail("unknown control message");
	}
	CHECK(dat_ep_disconnect(s.ep, DAT_CLOSE_GRACEFUL_FLAG));
	get_event(s.conn, M_WAIT, &ev, "disconnect");
	if (reap(pid, "datbench server"))
		return 1;
	CHECK(dat_psp_free(psp));
	teardown(&s);
	return 0;
}

/* ---- client ---- */

static struct side cs;
static struct offer peer;
static const char *only; /* comma list of rows to run; NULL: all */
static uint64_t only_size; /* 0: all */

static int wanted(const char *row, uint64_t size)
{
	if (only_size && size != only_size)
		return 0;
	if (!only)
		return 1;
	size_t n = strlen(row);
	for (const char *p = only; (p = strstr(p, row)) != NULL; p += n)
		if ((p == only || p[-1] == ',') && (p[n] == 0 || p[n] == ','))
			return 1;
	return 0;
}

static void announce(struct ctrl *c)
{
	memcpy(SEND_AREA(&cs), c, sizeof *c);
	post_send(&cs, sizeof *c, DAT_COMPLETION_SUPPRESS_FLAG);
}

/* count round trips of size bytes, timed in windows. */
static void lat_run(struct windows *w, int mode, uint64_t size, uint64_t count)
{
	struct ctrl c = {.test = T_LAT, .mode = mode, .size = size, .count = count};
	for (uint64_t i = 0; i < LAT_DEPTH && i < count; i++)
		post_recv(&cs);
	announce(&c);
	win_start(w, count, 0);
	for (uint64_t i = 0; i < count; i++) {
		post_send(&cs, size, DAT_COMPLETION_SUPPRESS_FLAG);
		/* Replenish the receive the previous pong used, while this ping
		 * travels (as the server does after its pong). */
		if (i > 0 && i - 1 + LAT_DEPTH < count)
			post_recv(&cs);
		get_dto(cs.rcv, mode, size, "pong");
		win_tick(w);
	}
}

/* One line per window: "godat ROW SIZE VALUE"; scale turns seconds per
 * operation into the row's unit. */
static void report(const char *row, uint64_t size, const struct windows *w, double (*unit)(double, uint64_t))
{
	for (unsigned i = 0; i < w->got; i++)
		printf("godat %s %" PRIu64 " %.3f\n", row, size, unit(w->t[i], size));
	fflush(stdout);
}

static double one_way_us(double rtt, uint64_t size)
{
	(void)size;
	return rtt / 2 * 1e6;
}

static double gbps(double per_op, uint64_t size)
{
	return (double)size / per_op / 1e9;
}

static void lat(int mode, uint64_t size)
{
	const char *row = mode == M_POLL ? "lat_poll" : "lat_wait";
	if (!wanted(row, size))
		return;
	uint64_t probe = size >= MiB ? 20 : 200;
	struct windows w;
	lat_run(&w, mode, size, probe); /* also the warm-up */
	lat_run(&w, mode, size, fill_time(1, win_best(&w), 100, 2000000));
	report(row, size, &w, one_way_us);
}

static uint64_t window_for(uint64_t size)
{
	return size >= 16 * MiB ? 4 : 16;
}

/* Receives count streamed sends from the server, timed in windows at the
 * receiver (bytes placed). The first window (the ring filling while the
 * receives were being posted) is not counted. */
static void sendbw_run(struct windows *win, uint64_t size, uint64_t count)
{
	uint64_t w = window_for(size), posted = 0;
	struct ctrl c = {.test = T_SENDBW, .size = size, .count = count, .window = w};
	for (; posted < w && posted < count; posted++)
		post_recv(&cs);
	announce(&c);
	win_start(win, count, 1);
	for (uint64_t got = 0; got < count; got++) {
		get_dto(cs.rcv, M_POLL, size, "streamed send");
		if (posted < count) {
			post_recv(&cs);
			posted++;
		}
		win_tick(win);
	}
}

/* Streams count RDMA writes or reads, timed in windows. */
static void rdma_run(struct windows *win, int write, uint64_t size, uint64_t count)
{
	uint64_t w = window_for(size), sent = 0, done = 0;
	DAT_LMR_TRIPLET l = seg(&cs, write ? SEND_AREA(&cs) : RECV_AREA(&cs), size);
	DAT_RMR_TRIPLET r = {.rmr_context = peer.rmr_context, .target_address = peer.addr, .segment_length = size};
	DAT_DTO_COOKIE ck = {.as_64 = 3};
	win_start(win, count, 0);
	while (done < count) {
		while (sent < count && sent - done < w) {
			if (write)
				CHECK(dat_ep_post_rdma_write(cs.ep, 1, &l, ck, &r, DAT_COMPLETION_DEFAULT_FLAG));
			else
				CHECK(dat_ep_post_rdma_read(cs.ep, 1, &l, ck, &r, DAT_COMPLETION_DEFAULT_FLAG));
			sent++;
		}
		get_dto(cs.req, M_POLL, size, write ? "rdma write" : "rdma read");
		done++;
		win_tick(win);
	}
}

static void bw(const char *row, uint64_t size)
{
	if (!wanted(row, size))
		return;
	int kind = strcmp(row, "bw_send") == 0 ? 0 : strcmp(row, "bw_write") == 0 ? 1 : 2;
	uint64_t probe = 8 * window_for(size);
	struct windows w;
	for (int pass = 0; pass < 2; pass++) { /* a probe (and warm-up), then the run */
		uint64_t n = pass == 0 ? probe : fill_time(1, win_best(&w), probe, 10000000);
		if (kind == 0)
			sendbw_run(&w, size, n);
		else
			rdma_run(&w, kind == 1, size, n);
	}
	report(row, size, &w, gbps);
}

static int client(const char *qual_s)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	DAT_EVENT ev;
	static const uint64_t lat_sizes[] = {8, 64, 4 * KiB, 64 * KiB, MiB};
	static const uint64_t bw_sizes[] = {4 * KiB, 64 * KiB, MiB, 16 * MiB};
	setup(&cs);
	/* Pinned once the library runs: its Go runtime starts on a thread of its
	 * own, beside main, and sizes itself for the CPUs allowed when it reads
	 * them (a child pinned first raced it, and in some runs started with one
	 * CPU: GOMAXPROCS 1, no spinning in waits). */
	bench_pin(1);
	CHECK(dat_ep_connect(cs.ep, (DAT_IA_ADDRESS_PTR)&sa, strtoull(qual_s, NULL, 0), TMO, 0, NULL,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	get_event(cs.conn, M_WAIT, &ev, "connect");
	if (ev.event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
		fail("connect: not established");
	if (ev.event_data.connect_event_data.private_data_size < (DAT_COUNT)sizeof peer)
		fail("accept private data too short");
	memcpy(&peer, ev.event_data.connect_event_data.private_data, sizeof peer);

	for (int m = M_POLL; m <= M_WAIT; m++)
		for (size_t i = 0; i < sizeof lat_sizes / sizeof *lat_sizes; i++)
			lat(m, lat_sizes[i]);
	for (size_t i = 0; i < sizeof bw_sizes / sizeof *bw_sizes; i++)
		bw("bw_send", bw_sizes[i]);
	for (size_t i = 0; i < sizeof bw_sizes / sizeof *bw_sizes; i++)
		bw("bw_write", bw_sizes[i]);
	for (size_t i = 0; i < sizeof bw_sizes / sizeof *bw_sizes; i++)
		bw("bw_read", bw_sizes[i]);

	struct ctrl end = {.test = T_END};
	announce(&end);
	get_event(cs.conn, M_WAIT, &ev, "disconnect");
	if (ev.event_number != DAT_CONNECTION_EVENT_DISCONNECTED)
		fail("expected the disconnect");
	teardown(&cs);
	return 0;
}

int main(int argc, char **argv)
{
	alarm(150); /* a hang is a failure, never a stuck run */
	if (argc >= 4 && strcmp(argv[1], "--client") == 0) {
		role = "client";
		ia_name = argv[3];
		only = getenv("DATBENCH_ROWS");
		if (getenv("DATBENCH_SIZE"))
			only_size = strtoull(getenv("DATBENCH_SIZE"), NULL, 0);
		return client(argv[2]);
	}
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-i") == 0 && i + 1 < argc)
			ia_name = argv[++i];
		else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			setenv("DATBENCH_ROWS", argv[++i], 1);
		else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			setenv("DATBENCH_SIZE", argv[++i], 1);
		else {
			fprintf(stderr, "usage: datbench [-i IA] [-o ROWS] [-s SIZE]\n");
			return 2;
		}
	}
	bench_cpus_fix();
	return server();
}
