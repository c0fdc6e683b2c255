/*
 * verbs_smoke: prove that the kernel verbs stack in the VM does what the verbs
 * backend will ask of it, with the same calls: rdma_cm to find the device
 * behind an address and to connect, a protection domain, a completion queue
 * with a completion channel whose fd we sleep on, an RC QP, send/recv, RDMA
 * write and RDMA read, and a disconnect seen by both sides.
 *
 * Both ends live in this one process: a listener and a connecting id on one
 * rdma_cm event channel, each end with its own PD, CQ, channel and MR, as two
 * peers would have. The server's buffer address and rkey travel in the accept
 * private data. Every wait is bounded (-t).
 *
 *   verbs_smoke [-a ADDR] [-d DEVICE] [-n ITERATIONS] [-t TIMEOUT_MS]
 *
 * Prints one "ok"/"not ok" line per check and exits 0 only if all passed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

enum { SLOT = 4096, NSLOTS = 3, QDEPTH = 16 };
enum { S_MSG = 0, S_WRITE = 1, S_READ = 2 }; /* buffer slots */

static const uint32_t MAGIC = 0x676f6461; /* "goda" */

/* One end of the connection: what a peer process would own. */
struct end {
	const char *name;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	unsigned char *buf;
	unsigned unacked; /* CQ events to acknowledge before destroying the CQ */
};

/* What the server tells the client in its accept private data. */
struct hello {
	uint32_t magic;
	uint32_t rkey;
	uint64_t addr;
};

static int timeout_ms = 10000;
static int failures;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;
	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		failures++;
}

/* vdie: the check failed; with_errno adds what the failed call left in errno. */
static void vdie(int with_errno, const char *fmt, va_list ap)
{
	int e = errno;
	printf("not ok - ");
	vprintf(fmt, ap);
	if (with_errno)
		printf(" (errno %d: %s)", e, strerror(e));
	printf("\nverbs_smoke: FAIL\n");
	exit(1);
}

/* die: a library call failed. */
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vdie(1, fmt, ap);
}

/* wrong: a result is not what it must be. */
static void wrong(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vdie(0, fmt, ap);
}

/* The next rdma_cm event, copied and acknowledged; fails after timeout_ms. */
struct cm_ev {
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id;
	int status;
	struct hello hello;
	int has_hello;
};

static struct cm_ev next_event(struct rdma_event_channel *ec)
{
	struct pollfd p = { .fd = ec->fd, .events = POLLIN };
	struct rdma_cm_event *e;
	struct cm_ev r;
	int n;

	do
		n = poll(&p, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		wrong("no rdma_cm event within %d ms", timeout_ms);
	if (n < 0 || rdma_get_cm_event(ec, &e))
		die("rdma_get_cm_event");
	memset(&r, 0, sizeof r);
	r.type = e->event;
	r.id = e->id;
	r.status = e->status;
	if (e->param.conn.private_data && e->param.conn.private_data_len >= sizeof r.hello) {
		memcpy(&r.hello, e->param.conn.private_data, sizeof r.hello);
		r.has_hello = r.hello.magic == MAGIC;
	}
	rdma_ack_cm_event(e);
	return r;
}

static void expect_event(struct rdma_event_channel *ec, enum rdma_cm_event_type type,
			 struct rdma_cm_id *id, struct cm_ev *out)
{
	struct cm_ev e = next_event(ec);
	if (e.type != type || (id && e.id != id))
		wrong("expected rdma_cm event %s, got %s (status %d)", rdma_event_str(type),
		    rdma_event_str(e.type), e.status);
	if (out)
		*out = e;
}

/* PD, channel, CQ, MR and QP for one end, on the device its id is bound to. */
static void setup_end(struct end *s, int mr_access)
{
	struct ibv_qp_init_attr qa;

	s->pd = ibv_alloc_pd(s->id->verbs);
	if (!s->pd)
		die("%s: ibv_alloc_pd", s->name);
	s->ch = ibv_create_comp_channel(s->id->verbs);
	if (!s->ch)
		die("%s: ibv_create_comp_channel", s->name);
	s->cq = ibv_create_cq(s->id->verbs, 2 * QDEPTH, s, s->ch, 0);
	if (!s->cq)
		die("%s: ibv_create_cq", s->name);
	if (posix_memalign((void **)&s->buf, 4096, SLOT * NSLOTS))
		die("%s: posix_memalign", s->name);
	memset(s->buf, 0, SLOT * NSLOTS);
	s->mr = ibv_reg_mr(s->pd, s->buf, SLOT * NSLOTS, mr_access);
	if (!s->mr)
		die("%s: ibv_reg_mr", s->name);
	memset(&qa, 0, sizeof qa);
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 0;
	qa.cap.max_send_wr = QDEPTH;
	qa.cap.max_recv_wr = QDEPTH;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(s->id, s->pd, &qa))
		die("%s: rdma_create_qp", s->name);
}

static void teardown_end(struct end *s)
{
	int rc = 0;
	if (s->id && s->id->qp)
		rdma_destroy_qp(s->id);
	if (s->unacked)
		ibv_ack_cq_events(s->cq, s->unacked);
	rc |= s->mr ? ibv_dereg_mr(s->mr) : 0;
	rc |= s->cq ? ibv_destroy_cq(s->cq) : 0;
	rc |= s->ch ? ibv_destroy_comp_channel(s->ch) : 0;
	rc |= s->pd ? ibv_dealloc_pd(s->pd) : 0;
	rc |= s->id ? rdma_destroy_id(s->id) : 0;
	check(rc == 0, "%s: MR, CQ, channel, PD and id destroyed", s->name);
	free(s->buf);
}

/*
 * The next work completion of s, sleeping on the completion channel's fd
 * between polls (as the backend's EVD waits will), at most timeout_ms.
 */
static struct ibv_wc wait_wc(struct end *s)
{
	struct ibv_wc wc;
	struct pollfd p = { .fd = s->ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *ctx;
	int n;

	for (;;) {
		n = ibv_poll_cq(s->cq, 1, &wc);
		if (n < 0)
			die("%s: ibv_poll_cq", s->name);
		if (n == 1)
			return wc;
		if (ibv_req_notify_cq(s->cq, 0))
			die("%s: ibv_req_notify_cq", s->name);
		/* A completion may have arrived before the CQ was armed. */
		n = ibv_poll_cq(s->cq, 1, &wc);
		if (n == 1)
			return wc;
		do
			n = poll(&p, 1, timeout_ms);
		while (n < 0 && errno == EINTR);
		if (n == 0)
			wrong("%s: no completion event within %d ms", s->name, timeout_ms);
		if (n < 0 || ibv_get_cq_event(s->ch, &cq, &ctx))
			die("%s: ibv_get_cq_event", s->name);
		if (cq != s->cq || ctx != s)
			wrong("%s: completion event for another CQ", s->name);
		/* Acknowledged in batches: each ack takes a lock. */
		if (++s->unacked == 64) {
			ibv_ack_cq_events(s->cq, s->unacked);
			s->unacked = 0;
		}
	}
}

static void expect_wc(struct end *s, enum ibv_wc_opcode op, uint64_t wr_id, uint32_t len,
		      const char *what)
{
	struct ibv_wc wc = wait_wc(s);
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != op || wc.wr_id != wr_id ||
	    ((op & IBV_WC_RECV) && wc.byte_len != len))
		wrong("%s: %s completed with status %s, opcode %d, wr_id %" PRIu64 ", byte_len %u "
		    "(expected opcode %d, wr_id %" PRIu64 ", byte_len %u)",
		    s->name, what, ibv_wc_status_str(wc.status), wc.opcode, wc.wr_id, wc.byte_len,
		    op, wr_id, len);
}

static void post_recv(struct end *s, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf + S_MSG * SLOT, .length = SLOT, .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;
	if (ibv_post_recv(s->id->qp, &wr, &bad))
		die("%s: ibv_post_recv", s->name);
}

static void post_send(struct end *s, enum ibv_wr_opcode op, int slot, uint32_t len, uint64_t wr_id,
		      uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf + slot * SLOT, .length = len, .lkey = s->mr->lkey };
	struct ibv_send_wr wr, *bad;
	memset(&wr, 0, sizeof wr);
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(s->id->qp, &wr, &bad))
		die("%s: ibv_post_send opcode %d", s->name, op);
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 131 + seed * 7 + (i >> 8));
}

/* Index of the first byte of p that differs from fill(seed), or -1. */
static long differs(const unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(i * 131 + seed * 7 + (i >> 8)))
			return (long)i;
	return -1;
}

static void usage(void)
{
	fprintf(stderr, "usage: verbs_smoke [-a ADDR] [-d DEVICE] [-n ITERATIONS] [-t TIMEOUT_MS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *addr = "10.66.0.1", *want_dev = NULL;
	int iters = 20, opt;
	struct end cli = { .name = "client" }, srv = { .name = "server" };
	struct rdma_cm_id *listener;
	struct rdma_event_channel *ec;
	struct sockaddr_in sin;
	struct rdma_conn_param cp;
	struct cm_ev ev;
	struct hello hello;
	uint16_t port;
	int got_cli, got_srv;

	while ((opt = getopt(argc, argv, "a:d:n:t:")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'd': want_dev = optarg; break;
		case 'n': iters = atoi(optarg); break;
		case 't': timeout_ms = atoi(optarg); break;
		default: usage();
		}
	}
	if (optind != argc || iters < 1 || timeout_ms < 1)
		usage();

	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		usage();

	ec = rdma_create_event_channel();
	if (!ec)
		die("rdma_create_event_channel (is rdma_ucm loaded?)");

	/* The listener: bound to the address, port chosen by rdma_cm. */
	if (rdma_create_id(ec, &listener, NULL, RDMA_PS_TCP))
		die("rdma_create_id (listener)");
	if (rdma_bind_addr(listener, (struct sockaddr *)&sin))
		die("rdma_bind_addr %s", addr);
	if (!listener->verbs)
		wrong("no RDMA device behind %s", addr);
	const char *dev = ibv_get_device_name(listener->verbs->device);
	check(!want_dev || strcmp(dev, want_dev) == 0, "%s resolves to device %s%s%s", addr, dev,
	      want_dev ? ", expected " : "", want_dev ? want_dev : "");
	if (rdma_listen(listener, 4))
		die("rdma_listen");
	port = ntohs(rdma_get_src_port(listener));
	sin.sin_port = htons(port);

	/* The client: resolve address and route, then its own resources. */
	if (rdma_create_id(ec, &cli.id, &cli, RDMA_PS_TCP))
		die("rdma_create_id (client)");
	if (rdma_resolve_addr(cli.id, NULL, (struct sockaddr *)&sin, timeout_ms))
		die("rdma_resolve_addr");
	expect_event(ec, RDMA_CM_EVENT_ADDR_RESOLVED, cli.id, NULL);
	if (rdma_resolve_route(cli.id, timeout_ms))
		die("rdma_resolve_route");
	expect_event(ec, RDMA_CM_EVENT_ROUTE_RESOLVED, cli.id, NULL);
	setup_end(&cli, IBV_ACCESS_LOCAL_WRITE);

	memset(&hello, 0, sizeof hello);
	hello.magic = MAGIC;
	memset(&cp, 0, sizeof cp);
	cp.private_data = &hello;
	cp.private_data_len = sizeof hello;
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if (rdma_connect(cli.id, &cp))
		die("rdma_connect");

	/* The server: the request, its resources on the request's id, accept. */
	expect_event(ec, RDMA_CM_EVENT_CONNECT_REQUEST, NULL, &ev);
	check(ev.has_hello, "connect request carries the client's private data");
	srv.id = ev.id;
	srv.id->context = &srv;
	check(srv.id->verbs == listener->verbs, "the request arrives on the listener's device");
	setup_end(&srv, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	post_recv(&srv, 1000); /* before accept: the first send must find it */
	hello.rkey = srv.mr->rkey;
	hello.addr = (uintptr_t)srv.buf;
	memset(&cp, 0, sizeof cp);
	cp.private_data = &hello;
	cp.private_data_len = sizeof hello;
	cp.responder_resources = 1;
	cp.initiator_depth = 1;
	cp.rnr_retry_count = 7;
	if (rdma_accept(srv.id, &cp))
		die("rdma_accept");

	got_cli = got_srv = 0;
	while (!got_cli || !got_srv) {
		ev = next_event(ec);
		if (ev.type != RDMA_CM_EVENT_ESTABLISHED)
			wrong("expected ESTABLISHED, got %s (status %d)", rdma_event_str(ev.type), ev.status);
		if (ev.id == cli.id && !got_cli) {
			got_cli = 1;
			check(ev.has_hello && ev.hello.rkey == srv.mr->rkey &&
				      ev.hello.addr == (uintptr_t)srv.buf,
			      "client gets the server's rkey and address in the accept private data");
		} else if (ev.id == srv.id && !got_srv) {
			got_srv = 1;
		} else {
			wrong("ESTABLISHED for an unknown id");
		}
	}
	check(1, "connected through rdma_cm on %s, %s port %u", dev, addr, port);

	int sends = 0, writes = 0, reads = 0;
	for (int i = 0; i < iters; i++) {
		uint32_t len = 1 + (uint32_t)(i * 997) % SLOT;
		unsigned seed = 3 * (unsigned)i + 1;
		long at;

		/* send/recv of a varying length */
		fill(cli.buf + S_MSG * SLOT, len, seed);
		post_send(&cli, IBV_WR_SEND, S_MSG, len, 1, 0, 0);
		expect_wc(&cli, IBV_WC_SEND, 1, len, "send");
		expect_wc(&srv, IBV_WC_RECV, 1000 + 2 * i, len, "recv");
		at = differs(srv.buf + S_MSG * SLOT, len, seed);
		if (at >= 0)
			wrong("received message differs at byte %ld of %u", at, len);
		sends++;

		/* RDMA write, then a send behind it: once that send is received
		 * the write is in place at the server (RC ordering). */
		post_recv(&srv, 1000 + 2 * i + 1);
		fill(cli.buf + S_WRITE * SLOT, SLOT, seed + 1);
		post_send(&cli, IBV_WR_RDMA_WRITE, S_WRITE, SLOT, 2, hello.addr + S_WRITE * SLOT, hello.rkey);
		post_send(&cli, IBV_WR_SEND, S_MSG, 8, 3, 0, 0);
		expect_wc(&cli, IBV_WC_RDMA_WRITE, 2, SLOT, "RDMA write");
		expect_wc(&cli, IBV_WC_SEND, 3, 8, "send after the write");
		expect_wc(&srv, IBV_WC_RECV, 1000 + 2 * i + 1, 8, "recv after the write");
		at = differs(srv.buf + S_WRITE * SLOT, SLOT, seed + 1);
		if (at >= 0)
			wrong("RDMA-written data differs at byte %ld", at);
		writes++;

		/* RDMA read of what the server put in its buffer */
		post_recv(&srv, 1000 + 2 * (i + 1));
		fill(srv.buf + S_READ * SLOT, SLOT, seed + 2);
		memset(cli.buf + S_READ * SLOT, 0, SLOT);
		post_send(&cli, IBV_WR_RDMA_READ, S_READ, SLOT, 4, hello.addr + S_READ * SLOT, hello.rkey);
		expect_wc(&cli, IBV_WC_RDMA_READ, 4, SLOT, "RDMA read");
		at = differs(cli.buf + S_READ * SLOT, SLOT, seed + 2);
		if (at >= 0)
			wrong("RDMA-read data differs at byte %ld", at);
		reads++;
	}
	check(sends == iters, "%d sends of 1..4096 bytes received intact", sends);
	check(writes == iters, "%d RDMA writes of 4096 bytes placed intact", writes);
	check(reads == iters, "%d RDMA reads of 4096 bytes read intact", reads);

	/* Disconnect: both ends must hear of it. */
	if (rdma_disconnect(cli.id))
		die("rdma_disconnect");
	got_cli = got_srv = 0;
	while (!got_cli || !got_srv) {
		ev = next_event(ec);
		if (ev.type != RDMA_CM_EVENT_DISCONNECTED)
			wrong("expected DISCONNECTED, got %s", rdma_event_str(ev.type));
		if (ev.id == srv.id && !got_srv) {
			got_srv = 1;
			rdma_disconnect(srv.id);
		} else if (ev.id == cli.id && !got_cli) {
			got_cli = 1;
		} else {
			wrong("DISCONNECTED for an unknown id");
		}
	}
	check(1, "both ends see DISCONNECTED");

	teardown_end(&srv);
	teardown_end(&cli);
	check(rdma_destroy_id(listener) == 0, "listener destroyed");
	rdma_destroy_event_channel(ec);

	printf("verbs_smoke: %s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
