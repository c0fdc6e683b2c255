/*
 * pingpong: a real uDAPL client/server exchange between two processes.
 *
 * The server opens an IA, listens on a qualifier picked by
 * dat_psp_create_any, and starts the client as a separate program
 * (posix_spawn: the child execs, it never calls into the library of its
 * parent). The client connects with private data; the server accepts and
 * returns its buffer's RMR context in its private data. Then: a 2-segment
 * RDMA write with suppressed completion followed by a send notification,
 * 4 RDMA reads, a 100-message send/receive ping-pong, and a disconnect seen
 * on both sides.
 *
 * Usage: pingpong [ia-name]          (default godat-shm)
 */
#define _GNU_SOURCE
#include <dat/udat.h>
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define ROUNDS 100
#define MSG 64
#define BUF 65536
#define TMO 10000000 /* 10 s in microseconds: every wait is bounded */

static char *ia_name = "godat-shm"; /* DAT_NAME_PTR is char *, not const */
static const char *role = "server";

static void die(const char *what, DAT_RETURN r)
{
	const char *maj = "?", *min = "?";
	dat_strerror(r, &maj, &min);
	fprintf(stderr, "pingpong %s: %s: %s %s\n", role, what, maj, min);
	exit(1);
}
#define CHECK(call)                              \
	do {                                     \
		DAT_RETURN r_ = (call);          \
		if (r_ != DAT_SUCCESS)           \
			die(#call, r_);          \
	} while (0)

struct peer {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, dto, conn, cr;
	DAT_PZ_HANDLE pz;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_EP_HANDLE ep;
	char *buf; /* [0,BUF): RDMA target; then send and receive areas */
};

/* What the server tells the client in its accept private data. */
struct offer {
	uint64_t addr;
	uint32_t rmr_context;
};

static void setup(struct peer *p)
{
	DAT_REGION_DESCRIPTION rd;
	DAT_VLEN len;
	DAT_VADDR va;
	p->async = DAT_HANDLE_NULL;
	CHECK(dat_ia_open(ia_name, 8, &p->async, &p->ia));
	CHECK(dat_pz_create(p->ia, &p->pz));
	CHECK(dat_evd_create(p->ia, 256, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &p->dto));
	CHECK(dat_evd_create(p->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &p->conn));
	CHECK(dat_evd_create(p->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &p->cr));
	if (posix_memalign((void **)&p->buf, 4096, 3 * BUF))
		exit(1);
	memset(p->buf, 0, 3 * BUF);
	rd.for_va = p->buf;
	CHECK(dat_lmr_create(p->ia, DAT_MEM_TYPE_VIRTUAL, rd, 3 * BUF, p->pz, DAT_MEM_PRIV_ALL_FLAG,
			     &p->lmr, &p->lctx, &p->rctx, &len, &va));
	CHECK(dat_ep_create(p->ia, p->pz, p->dto, p->dto, p->conn, NULL, &p->ep));
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

static DAT_EVENT wait_event(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want, const char *what)
{
	DAT_EVENT ev;
	DAT_COUNT n;
	DAT_RETURN r = dat_evd_wait(evd, TMO, 1, &ev, &n);
	if (r != DAT_SUCCESS)
		die(what, r);
	if (ev.event_number != want) {
		fprintf(stderr, "pingpong %s: %s: got event 0x%x, want 0x%x\n", role, what, ev.event_number, want);
		exit(1);
	}
	if (want == DAT_DTO_COMPLETION_EVENT && ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS) {
		fprintf(stderr, "pingpong %s: %s: DTO status %d\n", role, what, ev.event_data.dto_completion_event_data.status);
		exit(1);
	}
	return ev;
}

static DAT_LMR_TRIPLET seg(struct peer *p, size_t off, size_t len)
{
	DAT_LMR_TRIPLET t = {.lmr_context = p->lctx, .virtual_address = (DAT_VADDR)(uintptr_t)(p->buf + off), .segment_length = len};
	return t;
}

static void post_recv(struct peer *p, uint64_t id)
{
	DAT_LMR_TRIPLET t = seg(p, 2 * BUF, BUF);
	DAT_DTO_COOKIE c = {.as_64 = id};
	CHECK(dat_ep_post_recv(p->ep, 1, &t, c, DAT_COMPLETION_DEFAULT_FLAG));
}

static void send_msg(struct peer *p, uint64_t id, size_t len)
{
	DAT_LMR_TRIPLET t = seg(p, BUF, len);
	DAT_DTO_COOKIE c = {.as_64 = id};
	CHECK(dat_ep_post_send(p->ep, 1, &t, c, DAT_COMPLETION_DEFAULT_FLAG));
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int client(const char *qual_s)
{
	struct peer p;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	const char hello[] = "hello from the client";
	struct offer off;
	setup(&p);
	post_recv(&p, 1); /* receives may be posted before the connection exists */
	CHECK(dat_ep_connect(p.ep, (DAT_IA_ADDRESS_PTR)&sa, strtoull(qual_s, NULL, 0), TMO, sizeof hello, (DAT_PVOID)hello,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	DAT_EVENT ev = wait_event(p.conn, DAT_CONNECTION_EVENT_ESTABLISHED, "connect");
	if (ev.event_data.connect_event_data.private_data_size < (DAT_COUNT)sizeof off) {
		fprintf(stderr, "pingpong client: accept private data too short\n");
		return 1;
	}
	memcpy(&off, ev.event_data.connect_event_data.private_data, sizeof off);

	/* 2-segment RDMA write, completion suppressed, then a send that tells
	 * the server the data is there (in-order delivery on one EP). */
	for (int i = 0; i < 8192; i++)
		p.buf[i] = (char)(i * 7 + 1);
	DAT_LMR_TRIPLET two[2] = {seg(&p, 0, 4096), seg(&p, 4096, 4096)};
	DAT_RMR_TRIPLET remote = {.rmr_context = off.rmr_context, .target_address = off.addr, .segment_length = 8192};
	DAT_DTO_COOKIE c = {.as_64 = 7};
	CHECK(dat_ep_post_rdma_write(p.ep, 2, two, c, &remote, DAT_COMPLETION_SUPPRESS_FLAG));
	send_msg(&p, 8, MSG);
	ev = wait_event(p.dto, DAT_DTO_COMPLETION_EVENT, "write notification send");
	if (ev.event_data.dto_completion_event_data.user_cookie.as_64 != 8) {
		fprintf(stderr, "pingpong client: the suppressed write produced a completion\n");
		return 1;
	}
	/* 4 RDMA reads of what was written, checked. */
	for (int k = 0; k < 4; k++) {
		DAT_LMR_TRIPLET into = seg(&p, BUF + 4096, 2048);
		DAT_RMR_TRIPLET from = {.rmr_context = off.rmr_context, .target_address = off.addr + k * 2048, .segment_length = 2048};
		c.as_64 = 100 + k;
		memset(p.buf + BUF + 4096, 0, 2048);
		CHECK(dat_ep_post_rdma_read(p.ep, 1, &into, c, &from, DAT_COMPLETION_DEFAULT_FLAG));
		ev = wait_event(p.dto, DAT_DTO_COMPLETION_EVENT, "rdma read");
		if (memcmp(p.buf + BUF + 4096, p.buf + k * 2048, 2048) != 0) {
			fprintf(stderr, "pingpong client: rdma read %d returned wrong data\n", k);
			return 1;
		}
	}
	/* Ping-pong: send, then wait for both the send and the echo. */
	double t0 = now_us();
	for (int i = 0; i < ROUNDS; i++) {
		snprintf(p.buf + BUF, MSG, "ping %d", i);
		send_msg(&p, 1000 + i, MSG);
		int got_send = 0, got_recv = 0;
		while (!got_send || !got_recv) {
			ev = wait_event(p.dto, DAT_DTO_COMPLETION_EVENT, "ping-pong");
			if (ev.event_data.dto_completion_event_data.user_cookie.as_64 == (uint64_t)(1000 + i))
				got_send = 1;
			else
				got_recv = 1;
		}
		char want[MSG];
		snprintf(want, MSG, "pong %d", i);
		if (strcmp(p.buf + 2 * BUF, want) != 0) {
			fprintf(stderr, "pingpong client: round %d: got '%s'\n", i, p.buf + 2 * BUF);
			return 1;
		}
		if (i + 1 < ROUNDS)
			post_recv(&p, 2000 + i);
	}
	double t1 = now_us();
	printf("client: %d round trips of %d bytes, %.2f us per round trip (dat_evd_wait mode)\n", ROUNDS, MSG, (t1 - t0) / ROUNDS);
	wait_event(p.conn, DAT_CONNECTION_EVENT_DISCONNECTED, "disconnect");
	printf("client: disconnected\n");
	teardown(&p);
	return 0;
}

static int server(void)
{
	struct peer p;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	char qs[32];
	pid_t pid;
	int status;
	setup(&p);
	post_recv(&p, 1);
	CHECK(dat_psp_create_any(p.ia, &qual, p.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	printf("server: listening on qualifier %#" PRIx64 "\n", (uint64_t)qual);
	fflush(stdout);
	snprintf(qs, sizeof qs, "%#" PRIx64, (uint64_t)qual);
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n < 0)
		return 1;
	self[n] = 0;
	char *argv[] = {self, "--client", qs, ia_name, NULL};
	if (posix_spawn(&pid, self, NULL, NULL, argv, environ) != 0) {
		perror("posix_spawn");
		return 1;
	}
	DAT_EVENT ev = wait_event(p.cr, DAT_CONNECTION_REQUEST_EVENT, "connection request");
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	DAT_CR_PARAM crp;
	CHECK(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	printf("server: request with %d bytes of private data: \"%.*s\"\n", crp.private_data_size,
	       crp.private_data_size, (char *)crp.private_data);
	struct offer off = {.addr = (uint64_t)(uintptr_t)p.buf, .rmr_context = p.rctx};
	CHECK(dat_cr_accept(cr, p.ep, sizeof off, &off));
	wait_event(p.conn, DAT_CONNECTION_EVENT_ESTABLISHED, "accept");
	/* The RDMA write lands before the notification send is delivered. */
	ev = wait_event(p.dto, DAT_DTO_COMPLETION_EVENT, "write notification");
	for (int i = 0; i < 8192; i++)
		if (p.buf[i] != (char)(i * 7 + 1)) {
			fprintf(stderr, "pingpong server: RDMA write data wrong at %d\n", i);
			return 1;
		}
	printf("server: 2-segment RDMA write visible before the send that followed it\n");
	post_recv(&p, 2);
	/* Pings and the completions of our pongs share one EVD, and the next
	 * ping may complete before the pong that provoked it (over TCP a send
	 * completes once the kernel has taken it): take them as they come. */
	int pings = 0, pongs = 0;
	while (pings < ROUNDS || pongs < ROUNDS) {
		ev = wait_event(p.dto, DAT_DTO_COMPLETION_EVENT, "ping or pong send");
		if (ev.event_data.dto_completion_event_data.user_cookie.as_64 >= 1000) {
			pongs++; /* a send of ours completed */
			continue;
		}
		if (ev.event_data.dto_completion_event_data.transfered_length != MSG) {
			fprintf(stderr, "pingpong server: got %" PRIu64 " bytes\n", (uint64_t)ev.event_data.dto_completion_event_data.transfered_length);
			return 1;
		}
		if (pings + 1 < ROUNDS)
			post_recv(&p, 3 + pings);
		snprintf(p.buf + BUF, MSG, "pong %d", pings);
		send_msg(&p, 1000 + pings, MSG);
		pings++;
	}
	CHECK(dat_ep_disconnect(p.ep, DAT_CLOSE_GRACEFUL_FLAG));
	wait_event(p.conn, DAT_CONNECTION_EVENT_DISCONNECTED, "disconnect");
	printf("server: disconnected\n");
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "pingpong server: client failed\n");
		return 1;
	}
	CHECK(dat_psp_free(psp));
	teardown(&p);
	printf("pingpong: OK\n");
	return 0;
}

int main(int argc, char **argv)
{
	alarm(60); /* a hang is a failure, never a stuck terminal */
	if (argc >= 3 && strcmp(argv[1], "--client") == 0) {
		role = "client";
		if (argc >= 4)
			ia_name = argv[3];
		return client(argv[2]);
	}
	if (argc >= 2)
		ia_name = argv[1];
	return server();
}
