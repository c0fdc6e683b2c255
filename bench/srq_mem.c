/*
 * srq_mem: receive-buffer memory of N connections, with and without a
 * shared receive queue.
 *
 * For N = 1, 10, 100 connections the receiving side is set up both ways:
 *   rq   every EP has its own receive queue with DEPTH buffers posted, the
 *        most one connection may have in flight;
 *   srq  the EPs share one SRQ holding min(N * DEPTH, BOUND) buffers, BOUND
 *        being the consumer's bound on messages in flight over all
 *        connections (dat_srq_create(3DAT), Usage).
 * Each configuration runs in a fresh receiver process (spawned, never
 * forked after libdat loads) against a fresh sender process; they connect
 * and exchange ROUNDS bursts of BURST messages per connection, so every
 * buffer arrangement is shown to work. Reported per configuration:
 *   buffers   receive buffers posted by the consumer
 *   buf MiB   their memory (buffers x MSG bytes)
 *   rss MiB   growth of the receiver's resident memory from before the EPs
 *             were created to after the traffic: the buffers plus what the
 *             library holds per EP and connection (receive queues, rings)
 *
 * Usage: srq_mem [ia-name]        (default godat-shm; DAT_OVERRIDE as usual)
 */
#define _GNU_SOURCE
#include <dat/udat.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MSG 4096      /* bytes per message and per receive buffer */
#define DEPTH 64      /* buffers one connection may need (its largest burst) */
#define BOUND 256     /* messages in flight over all connections */
#define BURST 8       /* messages per connection per round of traffic */
#define ROUNDS 3
#define TMO 20000000  /* every wait: 20 s */
#define MAXN 100

static char *ia_name = "godat-shm";
static const char *role = "srq_mem";

static void die(const char *what, DAT_RETURN r)
{
	const char *maj = "?", *min = "?";
	dat_strerror(r, &maj, &min);
	fprintf(stderr, "%s: %s: %s %s\n", role, what, maj, min);
	exit(1);
}
#define CHECK(call)                              \
	do {                                     \
		DAT_RETURN r_ = (call);          \
		if (r_ != DAT_SUCCESS)           \
			die(#call, r_);          \
	} while (0)

static long rss_bytes(void)
{
	long size, res;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f || fscanf(f, "%ld %ld", &size, &res) != 2) {
		fprintf(stderr, "%s: cannot read /proc/self/statm\n", role);
		exit(1);
	}
	fclose(f);
	return res * sysconf(_SC_PAGESIZE);
}

struct node {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, dto, conn, cr;
	DAT_PZ_HANDLE pz;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_SRQ_HANDLE srq;
	DAT_EP_HANDLE ep[MAXN];
	char *buf;
	size_t nbuf;
};

static void node_open(struct node *n)
{
	memset(n, 0, sizeof *n);
	n->async = DAT_HANDLE_NULL;
	CHECK(dat_ia_open(ia_name, 16, &n->async, &n->ia));
	CHECK(dat_evd_create(n->ia, 4 * MAXN * DEPTH, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &n->dto));
	CHECK(dat_evd_create(n->ia, 2 * MAXN, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &n->conn));
	CHECK(dat_evd_create(n->ia, 2 * MAXN, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &n->cr));
	CHECK(dat_pz_create(n->ia, &n->pz));
}

/* Allocates, touches and registers nbuf buffers of MSG bytes. */
static void node_buffers(struct node *n, size_t nbuf)
{
	DAT_REGION_DESCRIPTION rd;
	DAT_RMR_CONTEXT rctx;
	DAT_VLEN len;
	DAT_VADDR va;
	n->nbuf = nbuf;
	if (posix_memalign((void **)&n->buf, 4096, nbuf * MSG)) {
		fprintf(stderr, "%s: out of memory\n", role);
		exit(1);
	}
	memset(n->buf, 0, nbuf * MSG);
	rd.for_va = n->buf;
	CHECK(dat_lmr_create(n->ia, DAT_MEM_TYPE_VIRTUAL, rd, nbuf * MSG, n->pz, DAT_MEM_PRIV_ALL_FLAG, &n->lmr,
			     &n->lctx, &rctx, &len, &va));
}

static DAT_LMR_TRIPLET slot(struct node *n, size_t i)
{
	DAT_LMR_TRIPLET t = {.lmr_context = n->lctx, .virtual_address = (DAT_VADDR)(uintptr_t)(n->buf + i * MSG),
			     .segment_length = MSG};
	return t;
}

static DAT_EP_ATTR ep_attr(int depth)
{
	DAT_EP_ATTR a;
	memset(&a, 0, sizeof a);
	a.max_message_size = MSG;
	a.max_recv_dtos = depth;
	a.max_request_dtos = BURST * 2;
	a.max_recv_iov = 1;
	a.max_request_iov = 1;
	a.srq_soft_hw = DAT_HW_DEFAULT;
	return a;
}

static DAT_EVENT wait1(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want)
{
	DAT_EVENT ev;
	DAT_COUNT k;
	CHECK(dat_evd_wait(evd, TMO, 1, &ev, &k));
	if (ev.event_number != want) {
		fprintf(stderr, "%s: event 0x%x, want 0x%x\n", role, ev.event_number, want);
		exit(1);
	}
	return ev;
}

/* The sender: N plain EPs, connects them, sends the bursts, leaves. */
static int sender(int n, const char *qual)
{
	struct node s;
	struct sockaddr_in sa = {.sin_family = AF_INET};
	role = "srq_mem sender";
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	node_open(&s);
	node_buffers(&s, BURST);
	DAT_EP_ATTR a = ep_attr(0);
	for (int i = 0; i < n; i++) {
		CHECK(dat_ep_create(s.ia, s.pz, s.dto, s.dto, s.conn, &a, &s.ep[i]));
		CHECK(dat_ep_connect(s.ep[i], (DAT_IA_ADDRESS_PTR)&sa, strtoull(qual, NULL, 0), TMO, 0, NULL,
				     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	}
	for (int i = 0; i < n; i++)
		wait1(s.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < n; i++)
			for (int b = 0; b < BURST; b++) {
				DAT_LMR_TRIPLET t = slot(&s, b);
				DAT_DTO_COOKIE ck = {.as_64 = (DAT_UINT64)b};
				CHECK(dat_ep_post_send(s.ep[i], 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG));
			}
		for (int k = 0; k < n * BURST; k++)
			wait1(s.dto, DAT_DTO_COMPLETION_EVENT);
	}
	/* The receiver disconnects once it has everything. */
	for (int i = 0; i < n; i++)
		wait1(s.conn, DAT_CONNECTION_EVENT_DISCONNECTED);
	CHECK(dat_ia_close(s.ia, DAT_CLOSE_ABRUPT_FLAG));
	return 0;
}

static pid_t spawn(char **argv)
{
	pid_t pid;
	if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ) != 0) {
		fprintf(stderr, "%s: posix_spawn failed\n", role);
		exit(1);
	}
	return pid;
}

static int reap(pid_t pid, int limit_s)
{
	struct timespec ts = {0, 10000000};
	int st;
	for (int i = 0; i < limit_s * 100; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return 1;
}

/* The receiver of one configuration; prints its line. */
static int receiver(int n, int use_srq)
{
	struct node r;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	role = "srq_mem receiver";
	node_open(&r);
	CHECK(dat_psp_create_any(r.ia, &q, r.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	long before = rss_bytes();
	size_t nbuf = use_srq ? (size_t)(n * DEPTH < BOUND ? n * DEPTH : BOUND) : (size_t)n * DEPTH;
	node_buffers(&r, nbuf);
	if (use_srq) {
		DAT_SRQ_ATTR sa = {.max_recv_dtos = (DAT_COUNT)nbuf, .max_recv_iov = 1, .low_watermark = DAT_SRQ_LW_DEFAULT};
		CHECK(dat_srq_create(r.ia, r.pz, &sa, &r.srq));
	}
	DAT_EP_ATTR a = ep_attr(use_srq ? 0 : DEPTH);
	for (int i = 0; i < n; i++) {
		if (use_srq)
			CHECK(dat_ep_create_with_srq(r.ia, r.pz, r.dto, r.dto, r.conn, r.srq, &a, &r.ep[i]));
		else
			CHECK(dat_ep_create(r.ia, r.pz, r.dto, r.dto, r.conn, &a, &r.ep[i]));
	}
	for (size_t k = 0; k < nbuf; k++) {
		DAT_LMR_TRIPLET t = slot(&r, k);
		DAT_DTO_COOKIE ck = {.as_64 = k};
		if (use_srq)
			CHECK(dat_srq_post_recv(r.srq, 1, &t, ck));
		else
			CHECK(dat_ep_post_recv(r.ep[k / DEPTH], 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG));
	}
	char ns[16], qs[32];
	snprintf(ns, sizeof ns, "%d", n);
	snprintf(qs, sizeof qs, "0x%llx", (unsigned long long)q);
	char *argv[] = {"srq_mem", "--sender", ns, qs, ia_name, NULL};
	pid_t pid = spawn(argv);
	for (int i = 0; i < n; i++) {
		DAT_EVENT ev = wait1(r.cr, DAT_CONNECTION_REQUEST_EVENT);
		CHECK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, r.ep[i], 0, NULL));
	}
	for (int i = 0; i < n; i++)
		wait1(r.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	for (int k = 0; k < ROUNDS * n * BURST; k++) {
		DAT_EVENT ev = wait1(r.dto, DAT_DTO_COMPLETION_EVENT);
		DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
		if (d->status != DAT_DTO_SUCCESS) {
			fprintf(stderr, "%s: receive status %d\n", role, d->status);
			return 1;
		}
		DAT_LMR_TRIPLET t = slot(&r, d->user_cookie.as_64);
		if (use_srq)
			CHECK(dat_srq_post_recv(r.srq, 1, &t, d->user_cookie));
		else
			CHECK(dat_ep_post_recv(d->ep_handle, 1, &t, d->user_cookie, DAT_COMPLETION_DEFAULT_FLAG));
	}
	long after = rss_bytes();
	for (int i = 0; i < n; i++)
		CHECK(dat_ep_disconnect(r.ep[i], DAT_CLOSE_ABRUPT_FLAG));
	if (reap(pid, 60) != 0) {
		fprintf(stderr, "%s: the sender failed\n", role);
		return 1;
	}
	printf("%5d  %-4s %8zu %9.2f %9.2f\n", n, use_srq ? "srq" : "rq", nbuf, nbuf * (double)MSG / (1 << 20),
	       (after - before) / (double)(1 << 20));
	fflush(stdout);
	CHECK(dat_ia_close(r.ia, DAT_CLOSE_ABRUPT_FLAG));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--sender") == 0) {
		ia_name = argv[4];
		return sender(atoi(argv[2]), argv[3]);
	}
	if (argc == 5 && strcmp(argv[1], "--receiver") == 0) {
		ia_name = argv[4];
		return receiver(atoi(argv[2]), strcmp(argv[3], "srq") == 0);
	}
	if (argc > 1)
		ia_name = argv[1];
	printf("receive-buffer memory, %d-byte messages: rq = %d buffers per connection, "
	       "srq = min(N x %d, %d) shared\n", MSG, DEPTH, DEPTH, BOUND);
	printf("%5s  %-4s %8s %9s %9s\n", "conns", "mode", "buffers", "buf MiB", "rss MiB");
	fflush(stdout);
	const int ns[] = {1, 10, 100};
	int fails = 0;
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
		for (int use = 0; use < 2; use++) {
			char nstr[16];
			snprintf(nstr, sizeof nstr, "%d", ns[i]);
			char *args[] = {"srq_mem", "--receiver", nstr, use ? "srq" : "rq", ia_name, NULL};
			fails += reap(spawn(args), 120) != 0;
		}
	return fails != 0;
}
