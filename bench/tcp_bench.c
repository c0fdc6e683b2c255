/*
 * tcp_bench: latency and bandwidth of godat over TCP beside plain TCP, on
 * the same path and with the same pattern.
 *
 *   tcp_bench plain [ADDR]     plain TCP sockets (TCP_NODELAY, blocking)
 *   tcp_bench dat IA [ADDR]    uDAPL over the IA (e.g. godat-tcp)
 *
 * Each run starts the server side itself (posix_spawn of this program) and
 * prints two rows:
 *   <name> lat8   <us per 8-byte round trip>
 *   <name> bw1m   <MB/s streaming 1 MiB messages one way>
 * Ping-pong: the client sends 8 bytes, the server answers 8 bytes, 20000
 * times after 2000 warm-up rounds; uDAPL waits with dat_evd_wait (sleeps).
 * Stream: 512 MiB in 1 MiB messages, 8 in flight for uDAPL, ended by an
 * 8-byte acknowledgement from the receiver. ADDR defaults to 127.0.0.1.
 * With TCP_BENCH_POLL=1 the uDAPL side polls with dat_evd_dequeue instead
 * of sleeping in dat_evd_wait (rows are then named "<IA>/poll").
 * The two processes are pinned to two CPUs as in datbench (bench_pin,
 * common.h), so that the library's threads share each process's CPU with
 * the application, as when an MPI pins its ranks (issue 17).
 */
#include "common.h"

#include <dat/udat.h>
#include <arpa/inet.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#define WARM 2000
#define ITERS 20000
#ifndef TOTALMB
#define TOTALMB 512
#endif
#define MSG (1u << 20)
#define TOTAL ((unsigned)TOTALMB << 20)
#define WIN 8

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static struct sockaddr_storage addr_of(const char *host, unsigned port, socklen_t *len)
{
	struct sockaddr_storage ss;
	struct addrinfo hints = {.ai_flags = AI_NUMERICHOST, .ai_socktype = SOCK_STREAM}, *ai;
	if (getaddrinfo(host, NULL, &hints, &ai) != 0) {
		fprintf(stderr, "tcp_bench: bad address %s\n", host);
		exit(1);
	}
	memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
	return ss;
}

/* Starts the other side (our own executable with args) on the other CPU:
 * the child pins itself to role 1, this process to role 0 once the child
 * has started with every CPU allowed (its Go runtime sizes itself then). */
static pid_t start_peer(char *const args[])
{
	char *argv[8] = {NULL};
	for (int i = 0; args[i] && i < 6; i++)
		argv[i + 1] = args[i];
	bench_cpus_fix();
	pid_t pid = spawn_self(argv);
	bench_pin(0);
	return pid;
}

/* ---- plain TCP ---- */

static void full(int fd, void *b, size_t n, int wr)
{
	char *p = b;
	while (n > 0) {
		ssize_t r = wr ? write(fd, p, n) : read(fd, p, n);
		if (r <= 0)
			die(wr ? "write" : "read");
		p += r;
		n -= (size_t)r;
	}
}

static void nodelay(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static int plain_client(const char *host, unsigned port)
{
	socklen_t len;
	struct sockaddr_storage ss = addr_of(host, port, &len);
	int fd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len) != 0)
		die("connect");
	nodelay(fd);
	char m[8] = {0};
	for (int i = 0; i < WARM + ITERS; i++) {
		full(fd, m, 8, 1);
		full(fd, m, 8, 0);
	}
	char *buf = malloc(MSG);
	memset(buf, 1, MSG);
	for (unsigned off = 0; off < TOTAL; off += MSG)
		full(fd, buf, MSG, 1);
	full(fd, m, 8, 0);
	close(fd);
	return 0;
}

static int plain(const char *host)
{
	socklen_t len;
	struct sockaddr_storage ss = addr_of(host, 0, &len);
	int ls = socket(ss.ss_family, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&ss, len) != 0 || listen(ls, 1) != 0)
		die("listen");
	getsockname(ls, (struct sockaddr *)&ss, &len);
	unsigned port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						      : ((struct sockaddr_in6 *)&ss)->sin6_port);
	char ps[16];
	snprintf(ps, sizeof ps, "%u", port);
	pid_t pid = start_peer((char *[]){"--plain-client", (char *)host, ps, NULL});
	int fd = accept(ls, NULL, NULL);
	if (fd < 0)
		die("accept");
	nodelay(fd);
	char m[8];
	double t0 = 0;
	for (int i = 0; i < WARM + ITERS; i++) {
		if (i == WARM)
			t0 = now_us();
		full(fd, m, 8, 0);
		full(fd, m, 8, 1);
	}
	double t1 = now_us();
	char *buf = malloc(MSG);
	full(fd, buf, MSG, 0); /* the first MiB starts the clock */
	double t2 = now_us();
	for (unsigned off = MSG; off < TOTAL; off += MSG)
		full(fd, buf, MSG, 0);
	double t3 = now_us();
	full(fd, m, 8, 1);
	printf("plain lat8 %.2f\n", (t1 - t0) / ITERS);
	printf("plain bw1m %.0f\n", (double)(TOTAL - MSG) / (t3 - t2));
	close(fd);
	return reap(pid, "tcp_bench plain");
}

/* ---- uDAPL ---- */

static char *ia_name;

static void ck(const char *what, DAT_RETURN r)
{
	if (r != DAT_SUCCESS) {
		const char *maj = "?", *min = "?";
		dat_strerror(r, &maj, &min);
		fprintf(stderr, "tcp_bench: %s: %s %s\n", what, maj, min);
		exit(1);
	}
}
#define CK(call) ck(#call, (call))

struct peer {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, sevd, revd, conn, cr;
	DAT_PZ_HANDLE pz;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_EP_HANDLE ep;
	char *buf; /* [0, WIN*MSG): receive slots; then the send buffer */
};

static void setup(struct peer *p)
{
	DAT_REGION_DESCRIPTION rd;
	DAT_RMR_CONTEXT rctx;
	DAT_VLEN len;
	DAT_VADDR va;
	size_t n = (size_t)(2 * WIN + 1) * MSG;
	p->async = DAT_HANDLE_NULL;
	CK(dat_ia_open(ia_name, 8, &p->async, &p->ia));
	CK(dat_pz_create(p->ia, &p->pz));
	CK(dat_evd_create(p->ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &p->sevd));
	CK(dat_evd_create(p->ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &p->revd));
	CK(dat_evd_create(p->ia, 4, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &p->conn));
	CK(dat_evd_create(p->ia, 4, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &p->cr));
	if (posix_memalign((void **)&p->buf, 4096, n))
		die("memalign");
	memset(p->buf, 0, n);
	rd.for_va = p->buf;
	CK(dat_lmr_create(p->ia, DAT_MEM_TYPE_VIRTUAL, rd, n, p->pz, DAT_MEM_PRIV_ALL_FLAG, &p->lmr, &p->lctx, &rctx, &len, &va));
	CK(dat_ep_create(p->ia, p->pz, p->revd, p->sevd, p->conn, NULL, &p->ep));
}

static void post_recv(struct peer *p, unsigned slot, size_t len)
{
	DAT_LMR_TRIPLET t = {.lmr_context = p->lctx, .virtual_address = (DAT_VADDR)(uintptr_t)(p->buf + (size_t)slot * MSG), .segment_length = len};
	DAT_DTO_COOKIE c = {.as_64 = slot};
	CK(dat_ep_post_recv(p->ep, 1, &t, c, DAT_COMPLETION_DEFAULT_FLAG));
}

static void post_send(struct peer *p, size_t len, DAT_COMPLETION_FLAGS fl)
{
	DAT_LMR_TRIPLET t = {.lmr_context = p->lctx, .virtual_address = (DAT_VADDR)(uintptr_t)(p->buf + (size_t)2 * WIN * MSG), .segment_length = len};
	DAT_DTO_COOKIE c = {.as_64 = 99};
	CK(dat_ep_post_send(p->ep, 1, &t, c, fl));
}

static int poll_mode;

static DAT_EVENT wait1(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;
	DAT_COUNT n;
	if (poll_mode) {
		double limit = now_us() + 10e6;
		DAT_RETURN r;
		while ((r = dat_evd_dequeue(evd, &ev)) != DAT_SUCCESS) {
			if (DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY || now_us() > limit)
				ck("dat_evd_dequeue", r);
		}
	} else {
		DAT_RETURN r;
		do /* a signal may wake the waiter: wait again */
			r = dat_evd_wait(evd, 10000000, 1, &ev, &n);
		while (DAT_GET_TYPE(r) == DAT_INTERRUPTED_CALL);
		ck("dat_evd_wait", r);
	}
	if (ev.event_number == DAT_DTO_COMPLETION_EVENT && ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS) {
		fprintf(stderr, "tcp_bench: DTO status %d\n", ev.event_data.dto_completion_event_data.status);
		exit(1);
	}
	return ev;
}

static int dat_client(const char *host, const char *qual)
{
	struct peer p;
	socklen_t len;
	struct sockaddr_storage ss = addr_of(host, 0, &len);
	setup(&p);
	/* Pinned once the library runs: its Go runtime starts on a thread of its
	 * own, beside main, and sizes itself for the CPUs allowed when it reads
	 * them (a child pinned first raced it, and in some runs started with one
	 * CPU: GOMAXPROCS 1, no spinning in waits). */
	bench_pin(1);
	post_recv(&p, 0, 8);
	CK(dat_ep_connect(p.ep, (DAT_IA_ADDRESS_PTR)&ss, strtoull(qual, NULL, 0), 10000000, 0, NULL, DAT_QOS_BEST_EFFORT,
			  DAT_CONNECT_DEFAULT_FLAG));
	if (wait1(p.conn).event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
		return 1;
	for (int i = 0; i < WARM + ITERS; i++) {
		post_send(&p, 8, DAT_COMPLETION_SUPPRESS_FLAG);
		wait1(p.revd);
		post_recv(&p, 0, 8);
	}
	/* stream: WIN sends in flight */
	int inflight = 0;
	for (unsigned off = 0; off < TOTAL; off += MSG) {
		while (inflight >= WIN) {
			wait1(p.sevd);
			inflight--;
		}
		post_send(&p, MSG, DAT_COMPLETION_DEFAULT_FLAG);
		inflight++;
	}
	wait1(p.revd); /* the receiver's acknowledgement */
	CK(dat_ep_disconnect(p.ep, DAT_CLOSE_GRACEFUL_FLAG));
	wait1(p.conn);
	return 0;
}

static int dat(const char *host)
{
	struct peer p;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	setup(&p);
	post_recv(&p, 0, 8);
	CK(dat_psp_create_any(p.ia, &qual, p.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	char qs[32];
	snprintf(qs, sizeof qs, "%" PRIu64, (uint64_t)qual);
	pid_t pid = start_peer((char *[]){"--dat-client", ia_name, (char *)host, qs, NULL});
	DAT_EVENT ev = wait1(p.cr);
	CK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, p.ep, 0, NULL));
	if (wait1(p.conn).event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
		return 1;
	double t0 = 0;
	for (int i = 0; i < WARM + ITERS; i++) {
		if (i == WARM)
			t0 = now_us();
		wait1(p.revd);
		if (i + 1 < WARM + ITERS)
			post_recv(&p, 0, 8);
		post_send(&p, 8, DAT_COMPLETION_SUPPRESS_FLAG);
	}
	double t1 = now_us();
	for (unsigned s = 0; s < 2 * WIN; s++)
		post_recv(&p, s, MSG);
	double t2 = 0;
	for (unsigned off = 0; off < TOTAL; off += MSG) {
		ev = wait1(p.revd);
		if (off == 0)
			t2 = now_us(); /* the first MiB starts the clock */
		post_recv(&p, (unsigned)ev.event_data.dto_completion_event_data.user_cookie.as_64, MSG);
	}
	double t3 = now_us();
	post_send(&p, 8, DAT_COMPLETION_SUPPRESS_FLAG);
	printf("%s%s lat8 %.2f\n", ia_name, poll_mode ? "/poll" : "", (t1 - t0) / ITERS);
	printf("%s%s bw1m %.0f\n", ia_name, poll_mode ? "/poll" : "", (double)(TOTAL - MSG) / (t3 - t2));
	wait1(p.conn);
	int r = reap(pid, "tcp_bench");
	CK(dat_psp_free(psp));
	return r;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(300);
	const char *pm = getenv("TCP_BENCH_POLL");
	poll_mode = pm && strcmp(pm, "1") == 0;
	if (argc == 4 && strcmp(argv[1], "--plain-client") == 0) {
		bench_pin(1);
		return plain_client(argv[2], (unsigned)atoi(argv[3]));
	}
	if (argc == 5 && strcmp(argv[1], "--dat-client") == 0) {
		ia_name = argv[2];
		return dat_client(argv[3], argv[4]);
	}
	if (argc >= 2 && strcmp(argv[1], "plain") == 0)
		return plain(argc >= 3 ? argv[2] : "127.0.0.1");
	if (argc >= 3 && strcmp(argv[1], "dat") == 0) {
		ia_name = argv[2];
		return dat(argc >= 4 ? argv[3] : "127.0.0.1");
	}
	fprintf(stderr, "usage: tcp_bench plain [ADDR] | tcp_bench dat IA [ADDR]\n");
	return 2;
}
