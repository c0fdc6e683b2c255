/*
 * xfer: a uDAPL client/server pair for the transport tests (TCP on
 * loopback, across network namespaces, and under SIGKILL). Every scenario
 * takes the IA name, so the same program runs over any transport.
 *
 *   xfer server IA QUAL|any NCONN
 *       Prints "ADDR <address>", the IA address dat_ia_query reports,
 *       listens (dat_psp_create or dat_psp_create_any), prints
 *       "QUAL <qualifier>", and serves NCONN connections one after the
 *       other on one EP (dat_ep_reset between them); for each it prints
 *       "PEER <address>", the requester's address dat_cr_query reports. It
 *       accepts with an
 *       offer (address, RMR context and size of its registered buffer) and
 *       echoes every message it receives. At the end of each connection it
 *       prints "END DISCONNECTED" or "END BROKEN"; "END BROKEN ACCESS" for
 *       a connection the client announced (private data "xfer-break") it
 *       would break with a remote access violation, which must end BROKEN
 *       with DAT_ASYNC_ERROR_EP_BROKEN for the EP on the async EVD (not
 *       awaited with XFER_NO_ACCESS_EVENT=1, for a device that raises no
 *       QP access-error event, Soft-RoCE). No other connection may raise
 *       an async event.
 *
 *   Every client prints "ADDR <address>" (its IA's, dat_ia_query) first,
 *   and "LOCAL <address>" (its EP's local address, dat_ep_query) on every
 *   connection established.
 *
 *   xfer client IA ADDR QUAL basic
 *       Three connections (the server counts each). The first: private
 *       data both ways; a 2-segment RDMA write then a send (the write is
 *       visible when the send's echo returns), checked by RDMA read; then a
 *       write with a bad RMR context. The second: a read out of bounds.
 *       Each of those fails with DAT_DTO_ERR_REMOTE_ACCESS and breaks the
 *       connection, as on verbs: later requests are flushed, the client
 *       sees BROKEN (the server END BROKEN ACCESS). The third: the refused
 *       write changed nothing at the target (read back); 100 ping-pongs;
 *       8 echoes of 1 MiB; graceful disconnect.
 *
 *   xfer client IA ADDR QUAL stream
 *       Streams 256 KiB echoes and prints "STREAMING" once 20 came back,
 *       until the connection ends ("EVENT BROKEN"/"EVENT DISCONNECTED",
 *       exit 0) or 60 s pass (exit 1).
 *
 *   xfer client IA ADDR QUAL survive
 *       stream; then, once the connection is gone, reconnects to the same
 *       address and qualifier (retrying for 30 s: the peer is restarting)
 *       and runs basic on the same EP (its three connections). Prints
 *       "RECONNECTED" and exits 0.
 *
 * Every wait is bounded; any failure prints why and exits 1.
 */
#define _GNU_SOURCE
#include <dat/udat.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TGT (4u << 20)         /* RDMA target region */
#define MSGMAX (1u << 20)      /* largest message */
#define NRECV 8                /* receive slots of MSGMAX bytes */
#define SENDOFF TGT            /* send area: MSGMAX bytes */
#define RECVOFF (TGT + MSGMAX) /* receive slots */
#define BUFLEN (RECVOFF + NRECV * MSGMAX)
#define TMO 10000000 /* 10 s, in microseconds */

static char *ia_name;
static const char *role = "?";

static void die(const char *what, DAT_RETURN r)
{
	const char *maj = "?", *min = "?";
	dat_strerror(r, &maj, &min);
	fprintf(stderr, "xfer %s: %s: %s %s\n", role, what, maj, min);
	exit(1);
}
static void fail(const char *what)
{
	fprintf(stderr, "xfer %s: %s\n", role, what);
	exit(1);
}
#define CHECK(call)                              \
	do {                                     \
		DAT_RETURN r_ = (call);          \
		if (r_ != DAT_SUCCESS)           \
			die(#call, r_);          \
	} while (0)

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct peer {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, dto, conn, cr;
	DAT_PZ_HANDLE pz;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_EP_HANDLE ep;
	char *buf;
};

/* The server's accept private data. */
struct offer {
	uint64_t addr;
	uint64_t len;
	uint32_t rmr_context;
};

/* addr_str formats an IPv4 or IPv6 socket address's host part. */
static const char *addr_str(const struct sockaddr *sa)
{
	static char host[NI_MAXHOST];
	socklen_t len = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	if (getnameinfo(sa, len, host, sizeof host, NULL, 0, NI_NUMERICHOST) != 0)
		return "?";
	return host;
}

static void setup(struct peer *p)
{
	DAT_REGION_DESCRIPTION rd;
	DAT_VLEN len;
	DAT_VADDR va;
	p->async = DAT_HANDLE_NULL;
	CHECK(dat_ia_open(ia_name, 8, &p->async, &p->ia));
	CHECK(dat_pz_create(p->ia, &p->pz));
	CHECK(dat_evd_create(p->ia, 1024, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &p->dto));
	CHECK(dat_evd_create(p->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &p->conn));
	CHECK(dat_evd_create(p->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &p->cr));
	if (posix_memalign((void **)&p->buf, 4096, BUFLEN))
		fail("out of memory");
	memset(p->buf, 0, BUFLEN);
	rd.for_va = p->buf;
	CHECK(dat_lmr_create(p->ia, DAT_MEM_TYPE_VIRTUAL, rd, BUFLEN, p->pz, DAT_MEM_PRIV_ALL_FLAG, &p->lmr, &p->lctx,
			     &p->rctx, &len, &va));
	CHECK(dat_ep_create(p->ia, p->pz, p->dto, p->dto, p->conn, NULL, &p->ep));
}

/* print_ia_addr prints "ADDR <address>": the IA address dat_ia_query
 * reports. */
static void print_ia_addr(struct peer *p)
{
	DAT_IA_ATTR a;
	memset(&a, 0, sizeof a);
	CHECK(dat_ia_query(p->ia, NULL, DAT_IA_FIELD_IA_ADDRESS_PTR, &a, 0, NULL));
	printf("ADDR %s\n", addr_str(a.ia_address_ptr));
}

static void teardown(struct peer *p)
{
	CHECK(dat_ep_free(p->ep));
	CHECK(dat_lmr_free(p->lmr));
	CHECK(dat_evd_free(p->cr));
	CHECK(dat_evd_free(p->conn));
	CHECK(dat_evd_free(p->dto));
	CHECK(dat_pz_free(p->pz));
	CHECK(dat_ia_close(p->ia, DAT_CLOSE_GRACEFUL_FLAG));
	free(p->buf);
}

static const char *conn_name(DAT_EVENT_NUMBER n)
{
	switch (n) {
	case DAT_CONNECTION_EVENT_ESTABLISHED: return "ESTABLISHED";
	case DAT_CONNECTION_EVENT_PEER_REJECTED: return "PEER_REJECTED";
	case DAT_CONNECTION_EVENT_NON_PEER_REJECTED: return "NON_PEER_REJECTED";
	case DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR: return "ACCEPT_COMPLETION_ERROR";
	case DAT_CONNECTION_EVENT_DISCONNECTED: return "DISCONNECTED";
	case DAT_CONNECTION_EVENT_BROKEN: return "BROKEN";
	case DAT_CONNECTION_EVENT_TIMED_OUT: return "TIMED_OUT";
	case DAT_CONNECTION_EVENT_UNREACHABLE: return "UNREACHABLE";
	default: return "OTHER";
	}
}

/* evd_wait is dat_evd_wait restarted after DAT_INTERRUPTED_CALL (a signal
 * woke the waiter: a consumer waits again). */
static DAT_RETURN evd_wait(DAT_EVD_HANDLE evd, DAT_TIMEOUT tmo, DAT_EVENT *ev)
{
	DAT_COUNT n;
	DAT_RETURN r;
	do
		r = dat_evd_wait(evd, tmo, 1, ev, &n);
	while (DAT_GET_TYPE(r) == DAT_INTERRUPTED_CALL);
	return r;
}

static DAT_EVENT wait_ev(DAT_EVD_HANDLE evd, const char *what)
{
	DAT_EVENT ev;
	DAT_RETURN r = evd_wait(evd, TMO, &ev);
	if (r != DAT_SUCCESS)
		die(what, r);
	return ev;
}

static void want_conn(struct peer *p, DAT_EVENT_NUMBER want, DAT_EVENT *out, const char *what)
{
	DAT_EVENT ev = wait_ev(p->conn, what);
	if (ev.event_number != want) {
		fprintf(stderr, "xfer %s: %s: got %s, want %s\n", role, what, conn_name(ev.event_number), conn_name(want));
		exit(1);
	}
	if (out)
		*out = ev;
}

/* The next DTO completion; it must succeed unless ok_status says which
 * error is expected. */
static DAT_DTO_COMPLETION_EVENT_DATA dto(struct peer *p, const char *what, DAT_DTO_COMPLETION_STATUS want)
{
	DAT_EVENT ev = wait_ev(p->dto, what);
	if (ev.event_number != DAT_DTO_COMPLETION_EVENT)
		fail("unexpected event on the DTO EVD");
	DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
	if (d.status != want) {
		fprintf(stderr, "xfer %s: %s: DTO status %d, want %d\n", role, what, d.status, want);
		exit(1);
	}
	return d;
}

static DAT_LMR_TRIPLET seg(struct peer *p, size_t off, size_t len)
{
	DAT_LMR_TRIPLET t = {.lmr_context = p->lctx, .virtual_address = (DAT_VADDR)(uintptr_t)(p->buf + off), .segment_length = len};
	return t;
}

static void post_recv(struct peer *p, unsigned slot)
{
	DAT_LMR_TRIPLET t = seg(p, RECVOFF + (size_t)slot * MSGMAX, MSGMAX);
	DAT_DTO_COOKIE c = {.as_64 = slot};
	CHECK(dat_ep_post_recv(p->ep, 1, &t, c, DAT_COMPLETION_DEFAULT_FLAG));
}

static void post_send(struct peer *p, size_t off, size_t len, uint64_t cookie)
{
	DAT_LMR_TRIPLET t = seg(p, off, len);
	DAT_DTO_COOKIE c = {.as_64 = cookie};
	CHECK(dat_ep_post_send(p->ep, 1, &t, c, DAT_COMPLETION_DEFAULT_FLAG));
}

static void fill(char *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (char)(i * 31 + seed * 7 + (i >> 12));
}

/* ---- server ---- */

static int server(const char *qual_s, int nconn)
{
	struct peer p;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual = 0;
	setup(&p);
	print_ia_addr(&p);
	if (strcmp(qual_s, "any") == 0)
		CHECK(dat_psp_create_any(p.ia, &qual, p.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	else {
		qual = strtoull(qual_s, NULL, 0);
		CHECK(dat_psp_create(p.ia, qual, p.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	}
	printf("QUAL %" PRIu64 "\n", (uint64_t)qual);
	for (int k = 0; k < nconn; k++) {
		for (unsigned s = 0; s < NRECV; s++)
			post_recv(&p, s); /* before the connection exists */
		DAT_EVENT ev;
		/* a restarting client may take a while: wait up to 60 s */
		DAT_RETURN r = evd_wait(p.cr, 60000000, &ev);
		if (r != DAT_SUCCESS)
			die("connection request", r);
		DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
		DAT_CR_PARAM crp;
		CHECK(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
		printf("PEER %s\n", addr_str(crp.remote_ia_address_ptr));
		int breaks = crp.private_data_size == 10 && memcmp(crp.private_data, "xfer-break", 10) == 0;
		if (!breaks && (crp.private_data_size != 10 || memcmp(crp.private_data, "xfer-hello", 10) != 0))
			fail("request private data wrong");
		struct offer off = {.addr = (uint64_t)(uintptr_t)p.buf, .len = BUFLEN, .rmr_context = p.rctx};
		CHECK(dat_cr_accept(cr, p.ep, sizeof off, &off));
		want_conn(&p, DAT_CONNECTION_EVENT_ESTABLISHED, NULL, "accept");
		const char *end = NULL;
		while (!end) {
			r = evd_wait(p.dto, 200000, &ev);
			if (r == DAT_SUCCESS) {
				DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
				if (d.status != DAT_DTO_SUCCESS)
					continue; /* flushed at the end of the connection */
				uint64_t c = d.user_cookie.as_64;
				if (c < NRECV) /* a message: echo it from its slot */
					post_send(&p, RECVOFF + c * MSGMAX, d.transfered_length, 1000 + c);
				else if (c >= 1000 && c < 1000 + NRECV)
					post_recv(&p, (unsigned)(c - 1000));
			} else if (DAT_GET_TYPE(r) != DAT_TIMEOUT_EXPIRED) {
				die("dto wait", r);
			}
			if (dat_evd_dequeue(p.conn, &ev) == DAT_SUCCESS)
				end = conn_name(ev.event_number);
		}
		if (breaks) {
			/* The client's remote access violation broke the
			 * connection at this end too: BROKEN, and the EP's
			 * asynchronous error (verbs: IBV_EVENT_QP_ACCESS_ERR at
			 * the responder). */
			if (strcmp(end, "BROKEN") != 0) {
				fprintf(stderr, "xfer server: a connection broken by an access violation ended %s\n", end);
				exit(1);
			}
			/* XFER_NO_ACCESS_EVENT=1: the device raises no QP
			 * access-error event (Soft-RoCE: vm/pairs.sh, and
			 * vm/verbs-xfail.txt's QPAccessErr), so none is awaited;
			 * none may be queued either (checked below). */
			const char *noev = getenv("XFER_NO_ACCESS_EVENT");
			if (noev == NULL || strcmp(noev, "1") != 0) {
				ev = wait_ev(p.async, "the async event of the access violation");
				if (ev.event_number != DAT_ASYNC_ERROR_EP_BROKEN ||
				    ev.event_data.asynch_error_event_data.dat_handle != (DAT_HANDLE)p.ep ||
				    ev.event_data.asynch_error_event_data.reason != DAT_EP_TRANSFER_TO_ERROR)
					fail("the access violation's async event is not EP_BROKEN for the EP");
			}
			end = "BROKEN ACCESS";
		}
		if (dat_evd_dequeue(p.async, &ev) == DAT_SUCCESS) {
			fprintf(stderr, "xfer server: async event 0x%x at the end of a connection (END %s)\n",
				(unsigned)ev.event_number, end);
			exit(1);
		}
		printf("END %s\n", end);
		/* Drain the flushes, then make the EP reusable. */
		while (evd_wait(p.dto, 100000, &ev) == DAT_SUCCESS)
			;
		CHECK(dat_ep_reset(p.ep));
		while (dat_evd_dequeue(p.dto, &ev) == DAT_SUCCESS)
			;
	}
	CHECK(dat_psp_free(psp));
	teardown(&p);
	return 0;
}

/* ---- client ---- */

static struct sockaddr_storage peer_addr;
static DAT_CONN_QUAL peer_qual;

/* connect_retry connects with private data hello (10 bytes: "xfer-hello",
 * or "xfer-break" for a connection the client will break), retrying for
 * limit_ms while the peer is not there yet; it returns the server's
 * offer. */
static struct offer connect_retry(struct peer *p, double limit_ms, const char *hello)
{
	double t0 = now_ms();
	for (;;) {
		for (unsigned s = 0; s < NRECV; s++)
			post_recv(p, s);
		CHECK(dat_ep_connect(p->ep, (DAT_IA_ADDRESS_PTR)&peer_addr, peer_qual, TMO, 10, (DAT_PVOID)hello,
				     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
		DAT_EVENT ev = wait_ev(p->conn, "connect");
		if (ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED) {
			struct offer off;
			if (ev.event_data.connect_event_data.private_data_size < (DAT_COUNT)sizeof off)
				fail("accept private data too short");
			memcpy(&off, ev.event_data.connect_event_data.private_data, sizeof off);
			DAT_EP_PARAM ep;
			CHECK(dat_ep_query(p->ep, DAT_EP_FIELD_ALL, &ep));
			printf("LOCAL %s\n", addr_str(ep.local_ia_address_ptr));
			return off;
		}
		if (now_ms() - t0 > limit_ms) {
			fprintf(stderr, "xfer client: connect: %s\n", conn_name(ev.event_number));
			exit(1);
		}
		while (evd_wait(p->dto, 0, &ev) == DAT_SUCCESS)
			;
		CHECK(dat_ep_reset(p->ep));
		while (dat_evd_dequeue(p->dto, &ev) == DAT_SUCCESS)
			; /* the flushed receives */
		usleep(100000);
	}
}

static void echo(struct peer *p, size_t len, unsigned seed, const char *what)
{
	fill(p->buf + SENDOFF, len, seed);
	post_send(p, SENDOFF, len, 1000);
	int got_send = 0, got_recv = 0;
	while (!got_send || !got_recv) {
		DAT_DTO_COMPLETION_EVENT_DATA d = dto(p, what, DAT_DTO_SUCCESS);
		if (d.user_cookie.as_64 == 1000) {
			got_send = 1;
			continue;
		}
		unsigned s = (unsigned)d.user_cookie.as_64;
		if (d.transfered_length != len || memcmp(p->buf + RECVOFF + (size_t)s * MSGMAX, p->buf + SENDOFF, len) != 0)
			fail("echo came back wrong");
		post_recv(p, s);
		got_recv = 1;
	}
}

/* The request with cookie bad, just posted, is a remote access violation.
 * It completes with DAT_DTO_ERR_REMOTE_ACCESS and breaks the connection,
 * as on verbs (dat_lmr_free(3DAT): "results in an error and broken
 * connection"): a send posted right behind it and the receives posted are
 * flushed, the connection event is BROKEN, the EP is disconnected, a send
 * posted then is flushed at once, and this end gets no async event. The EP
 * is then reset for the next connection. */
static void refused(struct peer *p, uint64_t bad, const char *what)
{
	DAT_DTO_COOKIE c = {.as_64 = 2000};
	CHECK(dat_ep_post_send(p->ep, 0, NULL, c, DAT_COMPLETION_DEFAULT_FLAG));
	uint64_t want[2] = {bad, 2000};
	int got = 0;
	unsigned recvs = 0;
	while (got < 2 || recvs != (1u << NRECV) - 1) {
		DAT_EVENT ev = wait_ev(p->dto, what);
		if (ev.event_number != DAT_DTO_COMPLETION_EVENT)
			fail("unexpected event on the DTO EVD");
		DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
		uint64_t ck = d.user_cookie.as_64;
		if (ck < NRECV && !(recvs & (1u << ck)) && d.status == DAT_DTO_ERR_FLUSHED) {
			recvs |= 1u << ck; /* a receive, flushed */
			continue;
		}
		DAT_DTO_COMPLETION_STATUS st = got == 0 ? DAT_DTO_ERR_REMOTE_ACCESS : DAT_DTO_ERR_FLUSHED;
		if (got == 2 || ck != want[got] || d.status != st) {
			fprintf(stderr, "xfer client: %s: DTO cookie %" PRIu64 " status %d, want cookie %" PRIu64 " status %d\n",
				what, ck, d.status, got < 2 ? want[got] : 0, st);
			exit(1);
		}
		got++;
	}
	want_conn(p, DAT_CONNECTION_EVENT_BROKEN, NULL, what);
	DAT_EP_STATE st;
	CHECK(dat_ep_get_status(p->ep, &st, NULL, NULL));
	if (st != DAT_EP_STATE_DISCONNECTED)
		fail("the EP is not disconnected after the connection broke");
	c.as_64 = 2001;
	CHECK(dat_ep_post_send(p->ep, 0, NULL, c, DAT_COMPLETION_DEFAULT_FLAG));
	DAT_DTO_COMPLETION_EVENT_DATA d = dto(p, "a send on the disconnected EP", DAT_DTO_ERR_FLUSHED);
	if (d.user_cookie.as_64 != 2001)
		fail("a send on the disconnected EP: wrong cookie");
	DAT_EVENT ev;
	if (dat_evd_dequeue(p->async, &ev) == DAT_SUCCESS)
		fail("an async event at the initiator of an access violation");
	CHECK(dat_ep_reset(p->ep));
	if (dat_evd_dequeue(p->dto, &ev) == DAT_SUCCESS)
		fail("a DTO event after the broken connection's flushes");
}

static void basic(struct peer *p, double limit_ms)
{
	DAT_DTO_COOKIE c;
	struct offer off = connect_retry(p, limit_ms, "xfer-break");
	/* 2-segment RDMA write, completion suppressed, then a send: its echo
	 * comes back after the write is in place. */
	fill(p->buf, 8192, 3);
	DAT_LMR_TRIPLET two[2] = {seg(p, 0, 4096), seg(p, 4096, 4096)};
	DAT_RMR_TRIPLET remote = {.rmr_context = off.rmr_context, .target_address = off.addr, .segment_length = 8192};
	c.as_64 = 7;
	CHECK(dat_ep_post_rdma_write(p->ep, 2, two, c, &remote, DAT_COMPLETION_SUPPRESS_FLAG));
	echo(p, 64, 1, "write notification");
	/* Read it back into another place. */
	DAT_LMR_TRIPLET into = seg(p, SENDOFF, 8192);
	c.as_64 = 8;
	CHECK(dat_ep_post_rdma_read(p->ep, 1, &into, c, &remote, DAT_COMPLETION_DEFAULT_FLAG));
	dto(p, "rdma read", DAT_DTO_SUCCESS);
	if (memcmp(p->buf, p->buf + SENDOFF, 8192) != 0)
		fail("RDMA read returned other data than was written");
	/* A bad RMR context and an out-of-bounds read: errors, nothing
	 * changes, and each breaks its connection (so the read gets a
	 * connection of its own, and a third one checks the target). */
	memset(p->buf + 8192, 0xee, 4096);
	DAT_LMR_TRIPLET junk = seg(p, 8192, 4096);
	DAT_RMR_TRIPLET bad = remote;
	bad.rmr_context ^= 0x5555;
	c.as_64 = 9;
	CHECK(dat_ep_post_rdma_write(p->ep, 1, &junk, c, &bad, DAT_COMPLETION_DEFAULT_FLAG));
	refused(p, 9, "write with a bad rmr context");
	off = connect_retry(p, 0, "xfer-break");
	DAT_RMR_TRIPLET oob = {.rmr_context = off.rmr_context, .target_address = off.addr + off.len - 8, .segment_length = 64};
	c.as_64 = 10;
	CHECK(dat_ep_post_rdma_read(p->ep, 1, &junk, c, &oob, DAT_COMPLETION_DEFAULT_FLAG));
	refused(p, 10, "read out of bounds");
	for (size_t i = 8192; i < 8192 + 4096; i++)
		if ((unsigned char)p->buf[i] != 0xee)
			fail("the refused read changed the local buffer");
	off = connect_retry(p, 0, "xfer-hello");
	remote.rmr_context = off.rmr_context;
	remote.target_address = off.addr;
	c.as_64 = 11;
	CHECK(dat_ep_post_rdma_read(p->ep, 1, &into, c, &remote, DAT_COMPLETION_DEFAULT_FLAG));
	dto(p, "read back", DAT_DTO_SUCCESS);
	if (memcmp(p->buf, p->buf + SENDOFF, 8192) != 0)
		fail("the refused write changed the target");
	/* Ping-pong and large echoes. */
	double t0 = now_ms();
	for (int i = 0; i < 100; i++)
		echo(p, 64, (unsigned)i, "ping-pong");
	double t1 = now_ms();
	for (int i = 0; i < 8; i++)
		echo(p, MSGMAX, (unsigned)i, "1 MiB echo");
	double t2 = now_ms();
	printf("client: %.1f us per 64-byte round trip, %.0f MB/s in 1 MiB echoes\n", (t1 - t0) * 10.0,
	       16.0 * MSGMAX / 1e6 / ((t2 - t1) / 1e3));
	CHECK(dat_ep_disconnect(p->ep, DAT_CLOSE_GRACEFUL_FLAG));
	want_conn(p, DAT_CONNECTION_EVENT_DISCONNECTED, NULL, "disconnect");
}

/* stream keeps 4 sends of 256 KiB in flight until the connection ends. */
static void stream(struct peer *p)
{
	const size_t len = 256u << 10;
	int inflight = 0, echoes = 0, said = 0;
	double deadline = now_ms() + 60000;
	fill(p->buf + SENDOFF, len, 5);
	while (now_ms() < deadline) {
		while (inflight < 4) {
			post_send(p, SENDOFF, len, 1000);
			inflight++;
		}
		DAT_EVENT ev;
		DAT_RETURN r = evd_wait(p->dto, 200000, &ev);
		if (r == DAT_SUCCESS) {
			DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
			if (d.status == DAT_DTO_SUCCESS && d.user_cookie.as_64 == 1000) {
				inflight--;
			} else if (d.status == DAT_DTO_SUCCESS) {
				post_recv(p, (unsigned)d.user_cookie.as_64);
				if (++echoes == 20 && !said) {
					printf("STREAMING\n");
					said = 1;
				}
			}
		} else if (DAT_GET_TYPE(r) != DAT_TIMEOUT_EXPIRED) {
			die("dto wait", r);
		}
		if (dat_evd_dequeue(p->conn, &ev) == DAT_SUCCESS) {
			printf("EVENT %s\n", conn_name(ev.event_number));
			if (ev.event_number != DAT_CONNECTION_EVENT_BROKEN && ev.event_number != DAT_CONNECTION_EVENT_DISCONNECTED)
				exit(1);
			while (evd_wait(p->dto, 100000, &ev) == DAT_SUCCESS)
				;
			CHECK(dat_ep_reset(p->ep));
			while (dat_evd_dequeue(p->dto, &ev) == DAT_SUCCESS)
				;
			return;
		}
	}
	fail("stream: the connection did not end within 60 s");
}

static int client(const char *addr, const char *qual_s, const char *scenario)
{
	struct peer p;
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST, .ai_socktype = SOCK_STREAM}, *ai;
	if (getaddrinfo(addr, NULL, &hints, &ai) != 0)
		fail("bad address");
	memcpy(&peer_addr, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	peer_qual = strtoull(qual_s, NULL, 0);
	setup(&p);
	print_ia_addr(&p);
	if (strcmp(scenario, "basic") == 0) {
		basic(&p, 0);
	} else if (strcmp(scenario, "stream") == 0) {
		connect_retry(&p, 0, "xfer-hello");
		stream(&p);
	} else if (strcmp(scenario, "survive") == 0) {
		connect_retry(&p, 0, "xfer-hello");
		stream(&p);
		basic(&p, 30000);
		printf("RECONNECTED\n");
	} else {
		fail("unknown scenario");
	}
	teardown(&p);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(120); /* a hang is a failure, never a stuck test run */
	if (argc == 5 && strcmp(argv[1], "server") == 0) {
		role = "server";
		ia_name = argv[2];
		return server(argv[3], atoi(argv[4]));
	}
	if (argc == 6 && strcmp(argv[1], "client") == 0) {
		role = "client";
		ia_name = argv[2];
		return client(argv[3], argv[4], argv[5]);
	}
	fprintf(stderr, "usage: xfer server IA QUAL|any NCONN | xfer client IA ADDR QUAL basic|stream|survive\n");
	return 2;
}
