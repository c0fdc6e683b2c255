/*
 * apppat: the ways an application (an MPI library's uDAPL transport) uses
 * godat, each beside a plain anchor written the same way (issue 17).
 *
 *   apppat dat IA [pp]   the DAT patterns over IA (godat-shm, godat-tcp);
 *                        with "pp" only the two ping-pongs:
 *     pp          8-byte send/recv ping-pong; each side busy-polls
 *                 dat_evd_dequeue on its receive EVD and its request EVD
 *                 in turn (sends are signalled and reaped in that loop);
 *                 one-way us (round trip / 2)
 *     eager       "eager RDMA" ping-pong: each side RDMA-writes 8 bytes,
 *                 the last one a flag, into a ring slot of the other and
 *                 polls its own ring in memory for the reply, dequeuing
 *                 both EVDs between looks; one-way us
 *     threads_server, threads_client
 *                 threads in each process besides the application's, after
 *                 the runs
 *     post_write_med, post_write_p99, post_read_med, post_read_p99
 *                 time inside one dat_ep_post_rdma_write / _read of 4 KiB,
 *                 64 KiB and 4 MiB (us), posted on an idle EP (the previous
 *                 one completed), while the target busy-polls its EVDs
 *   apppat plain-tcp     8-byte ping-pong over non-blocking TCP sockets
 *                        (TCP_NODELAY) polled with recv(MSG_DONTWAIT)
 *   apppat plain-shm     8-byte ping-pong through shared memory: the
 *                        message with its flag in the last byte stored
 *                        into the other's ring slot, which it polls
 *   apppat idle IA [N]   threads per process and the CPU they burn while
 *                        the application sleeps, with N (100) connections
 *                        between the two processes:
 *     idle_threads   threads in the process besides the application's one
 *     idle_cpu       % of one CPU used by the process over IDLE_S seconds
 *                    of sleep (getrusage, less the sleeping main thread)
 *
 * Each run starts its second process itself (posix_spawn of this program);
 * the two are pinned to two CPUs as in datbench (bench_pin, common.h), so
 * the library's threads share each process's CPU with the polling
 * application. Output lines: "<tool> <row> <size> <value>", the tool being
 * the IA name, plain-tcp or plain-shm; ping-pongs print one line per
 * measurement window (common.h). A DAT ping-pong whose rounds are slow
 * (tens of ms when the library's progress waits for the Go scheduler) is
 * cut short after about a second, its last round marked in the message,
 * and then prints one figure. Every run is bounded by alarm().
 *
 * APPPAT_SUFFIX (environment) is appended to the tool name of the DAT
 * lines: run.sh runs the ping-pongs a second time with both processes
 * pinned before they start (taskset, as mpirun --bind-to core does), so
 * that the Go runtime in each sizes itself for one CPU (GOMAXPROCS 1), and
 * names those lines "<IA>/taskset".
 */
#include "common.h"

#include <dat/udat.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>

#define TMO 20000000         /* us: every DAT wait is bounded */
#define SLOT 64              /* bytes per ring slot (one cache line) */
#define RING 256             /* slots per ring */
#define MSG 8                /* ping-pong message: 7 bytes and the flag */
#define LAST 1               /* message byte that marks a run's last round */
#define BIG (4 * MiB)        /* largest RDMA post measured */
#define DEPTH 8              /* receives kept posted */
#define MAXOUT 64            /* signalled requests in flight at most */
#define IDLE_S 3.0           /* seconds of idle measured */
#define MAXCONN 256

static const char *role = "server";
static char *ia_name = "godat-shm";
static char tool[64] = "godat-shm"; /* ia_name and APPPAT_SUFFIX */
static int only_pp;                 /* the ping-pongs only */

static void die(const char *what, DAT_RETURN r)
{
	const char *maj = "?", *min = "?";
	dat_strerror(r, &maj, &min);
	fprintf(stderr, "apppat %s %s: %s: %s %s\n", ia_name, role, what, maj, min);
	exit(1);
}

static void fail(const char *what)
{
	fprintf(stderr, "apppat %s %s: %s\n", ia_name, role, what);
	exit(1);
}

#define CHECK(call)                              \
	do {                                     \
		DAT_RETURN r_ = (call);          \
		if (r_ != DAT_SUCCESS)           \
			die(#call, r_);          \
	} while (0)

static void report_lat(const char *tool, const char *row, const struct windows *w)
{
	for (unsigned i = 0; i < w->got; i++)
		printf("%s %s %d %.3f\n", tool, row, MSG, w->t[i] / 2 * 1e6);
	fflush(stdout);
}

/* The flag a round puts in the last byte of its message: never 0, which
 * marks a free slot. */
static inline uint8_t flag_of(uint64_t i)
{
	return (uint8_t)(i % 255 + 1);
}

/* Spins until the flag of slot p is f, then frees the slot. */
static inline void await_flag(volatile uint8_t *p, uint8_t f)
{
	while (__atomic_load_n(&p[MSG - 1], __ATOMIC_ACQUIRE) != f)
		__builtin_ia32_pause();
	__atomic_store_n(&p[MSG - 1], 0, __ATOMIC_RELAXED);
}

/* ---- plain shared memory ---- */

struct shm {
	_Alignas(64) _Atomic uint32_t go;   /* parent: count of the run, or ~0 to end */
	_Alignas(64) _Atomic uint32_t done; /* child: count of the runs finished */
	uint64_t count;
	_Alignas(4096) uint8_t ring[2][RING * SLOT]; /* [0]: parent's, [1]: child's */
};

/* Stores msg (its last byte the flag) into a slot, flag last. */
static inline void shm_put(uint8_t *slot, const uint8_t *msg)
{
	memcpy(slot, msg, MSG - 1);
	__atomic_store_n(&slot[MSG - 1], msg[MSG - 1], __ATOMIC_RELEASE);
}

static int shm_child(int fd)
{
	role = "client";
	bench_pin(1);
	struct shm *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED)
		fail("mmap");
	uint8_t msg[MSG] = {0};
	for (uint32_t run = 1;; run++) {
		uint32_t g;
		while ((g = atomic_load(&sh->go)) != run && g != ~0u)
			__builtin_ia32_pause();
		if (g == ~0u)
			return 0;
		for (uint64_t i = 0; i < sh->count; i++) {
			await_flag(&sh->ring[1][i % RING * SLOT], flag_of(i));
			msg[MSG - 1] = flag_of(i);
			shm_put(&sh->ring[0][i % RING * SLOT], msg);
		}
		atomic_store(&sh->done, run);
	}
}

static void shm_run(struct shm *sh, uint32_t run, struct windows *w, uint64_t count)
{
	uint8_t msg[MSG] = {0};
	sh->count = count;
	atomic_store(&sh->go, run);
	win_start(w, count, 0);
	for (uint64_t i = 0; i < count; i++) {
		msg[MSG - 1] = flag_of(i);
		shm_put(&sh->ring[1][i % RING * SLOT], msg);
		await_flag(&sh->ring[0][i % RING * SLOT], flag_of(i));
		win_tick(w);
	}
	while (atomic_load(&sh->done) != run)
		__builtin_ia32_pause();
}

static int plain_shm(void)
{
	ia_name = "plain-shm";
	int fd = memfd_create("apppat", 0);
	if (fd < 0 || ftruncate(fd, sizeof(struct shm)) != 0)
		fail("memfd");
	struct shm *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED)
		fail("mmap");
	char fds[16];
	snprintf(fds, sizeof fds, "%d", fd);
	bench_cpus_fix();
	pid_t kid = spawn_self((char *[]){NULL, "--shm-child", fds, NULL});
	bench_pin(0);
	struct windows w;
	shm_run(sh, 1, &w, 10000);
	shm_run(sh, 2, &w, fill_time(1, win_best(&w), 1000, 50000000));
	report_lat("plain-shm", "pp", &w);
	atomic_store(&sh->go, ~0u);
	return reap(kid, "apppat plain-shm");
}

/* ---- plain TCP, busy-polled ---- */

static void tcp_opts(int fd)
{
	int one = 1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
		fail("TCP_NODELAY");
}

/* Sends all n bytes on a non-blocking socket, spinning when it is full. */
static void tcp_send(int fd, const uint8_t *b, size_t n)
{
	while (n > 0) {
		ssize_t r = send(fd, b, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0)
			fail("send");
		b += r;
		n -= (size_t)r;
	}
}

/* Receives n bytes, polling the socket with non-blocking recv. */
static void tcp_recv(int fd, uint8_t *b, size_t n)
{
	while (n > 0) {
		ssize_t r = recv(fd, b, n, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0)
			fail("recv");
		b += r;
		n -= (size_t)r;
	}
}

/* Both sides: an 8-byte count announces each run, then count rounds. */
static int tcp_child(const char *port)
{
	role = "client";
	bench_pin(1);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)atoi(port))};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
		fail("connect");
	tcp_opts(fd);
	for (;;) {
		uint64_t count;
		uint8_t m[MSG];
		tcp_recv(fd, (uint8_t *)&count, sizeof count);
		if (count == 0)
			return 0;
		for (uint64_t i = 0; i < count; i++) {
			tcp_recv(fd, m, MSG);
			tcp_send(fd, m, MSG);
		}
	}
}

static void tcp_run(int fd, struct windows *w, uint64_t count)
{
	uint8_t m[MSG] = {0};
	tcp_send(fd, (uint8_t *)&count, sizeof count);
	win_start(w, count, 0);
	for (uint64_t i = 0; i < count; i++) {
		m[MSG - 1] = flag_of(i);
		tcp_send(fd, m, MSG);
		tcp_recv(fd, m, MSG);
		if (m[MSG - 1] != flag_of(i))
			fail("plain-tcp: wrong reply");
		win_tick(w);
	}
}

static int plain_tcp(void)
{
	ia_name = "plain-tcp";
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof sa;
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, len) != 0 || listen(ls, 1) != 0 ||
	    getsockname(ls, (struct sockaddr *)&sa, &len) != 0)
		fail("listen");
	char ps[16];
	snprintf(ps, sizeof ps, "%u", ntohs(sa.sin_port));
	bench_cpus_fix();
	pid_t kid = spawn_self((char *[]){NULL, "--tcp-child", ps, NULL});
	bench_pin(0);
	int fd = accept(ls, NULL, NULL);
	if (fd < 0)
		fail("accept");
	tcp_opts(fd);
	struct windows w;
	tcp_run(fd, &w, 1000);
	tcp_run(fd, &w, fill_time(1, win_best(&w), 500, 10000000));
	report_lat("plain-tcp", "pp", &w);
	uint64_t zero = 0;
	tcp_send(fd, (uint8_t *)&zero, sizeof zero);
	int r = reap(kid, "apppat plain-tcp");
	close(fd);
	close(ls);
	return r;
}

/* ---- DAT ---- */

/* Each side's registered memory: send area, receive area, its own ring
 * (the peer writes it), ring sources (its writes into the peer's ring),
 * and the RDMA area the post-cost test reads and writes. */
#define OFF_SEND 0
#define OFF_RECV (64 * KiB)
#define OFF_RING (128 * KiB)
#define OFF_RSRC (OFF_RING + RING * SLOT)
#define OFF_RDMA (2 * MiB)
#define MEMLEN (OFF_RDMA + BIG)

/* What each side tells the other in its connect / accept private data. */
struct offer {
	uint64_t ring, rdma;
	uint32_t rmr_context;
};

enum { T_PP = 1, T_EAGER, T_POST, T_END };

struct ctrl {
	uint32_t test;
	uint64_t count;
};

struct side {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, rcv, req, conn, cr;
	DAT_PZ_HANDLE pz;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_EP_HANDLE ep;
	char *mem;
	struct offer peer;
	uint64_t out; /* signalled requests not yet reaped */
	uint64_t got; /* receive completions reaped and not yet consumed */
	uint64_t posted, taken; /* receives posted, receives consumed */
	struct ctrl last; /* the start of the last message consumed */
	uint8_t stop;     /* its LAST byte */
};

static struct side S;

static int count_threads(void);

static void setup(struct side *s)
{
	DAT_REGION_DESCRIPTION rd;
	DAT_VLEN len;
	DAT_VADDR va;
	DAT_EP_PARAM par;
	s->async = DAT_HANDLE_NULL;
	CHECK(dat_ia_open(ia_name, 8, &s->async, &s->ia));
	CHECK(dat_pz_create(s->ia, &s->pz));
	CHECK(dat_evd_create(s->ia, 512, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->rcv));
	CHECK(dat_evd_create(s->ia, 512, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->req));
	CHECK(dat_evd_create(s->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &s->conn));
	CHECK(dat_evd_create(s->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &s->cr));
	s->mem = alloc_buf(MEMLEN);
	memset(s->mem + OFF_RING, 0, RING * SLOT);
	memset(s->mem + OFF_SEND, 0, 256);
	s->mem[OFF_SEND + 128 + LAST] = 1; /* the last ping of a run */
	rd.for_va = s->mem;
	CHECK(dat_lmr_create(s->ia, DAT_MEM_TYPE_VIRTUAL, rd, MEMLEN, s->pz, DAT_MEM_PRIV_ALL_FLAG, &s->lmr, &s->lctx,
			     &s->rctx, &len, &va));
	CHECK(dat_ep_create(s->ia, s->pz, s->rcv, s->req, s->conn, NULL, &s->ep));
	CHECK(dat_ep_query(s->ep, DAT_EP_FIELD_ALL, &par));
	if (par.ep_attr.max_recv_dtos < 2 * DEPTH || par.ep_attr.max_request_dtos < 2 * MAXOUT) {
		DAT_EP_ATTR attr = par.ep_attr;
		attr.max_recv_dtos = 2 * DEPTH;
		attr.max_request_dtos = 2 * MAXOUT;
		CHECK(dat_ep_modify(s->ep, DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS | DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS,
				    &(DAT_EP_PARAM){.ep_attr = attr}));
	}
}

static struct offer my_offer(struct side *s)
{
	struct offer o = {.ring = (uint64_t)(uintptr_t)(s->mem + OFF_RING),
			  .rdma = (uint64_t)(uintptr_t)(s->mem + OFF_RDMA),
			  .rmr_context = s->rctx};
	return o;
}

static DAT_LMR_TRIPLET seg(struct side *s, uint64_t off, uint64_t len)
{
	DAT_LMR_TRIPLET t = {.lmr_context = s->lctx, .virtual_address = (DAT_VADDR)(uintptr_t)(s->mem + off),
			     .segment_length = len};
	return t;
}

/* Receives complete in the order they were posted: the n-th one posted
 * takes slot n % DEPTH of the receive area, and a slot is posted again only
 * after its message has been read. */
static void post_recv(struct side *s)
{
	DAT_LMR_TRIPLET t = seg(s, OFF_RECV + s->posted++ % DEPTH * SLOT, SLOT);
	CHECK(dat_ep_post_recv(s->ep, 1, &t, (DAT_DTO_COOKIE){.as_64 = 1}, DAT_COMPLETION_DEFAULT_FLAG));
}

/* A dequeued event must be a successful DTO completion. */
static void check_dto(const DAT_EVENT *ev, const char *what)
{
	if (ev->event_number != DAT_DTO_COMPLETION_EVENT) {
		fprintf(stderr, "apppat %s %s: %s: event 0x%x\n", ia_name, role, what, ev->event_number);
		exit(1);
	}
	if (ev->event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS) {
		fprintf(stderr, "apppat %s %s: %s: DTO status %d\n", ia_name, role, what,
			ev->event_data.dto_completion_event_data.status);
		exit(1);
	}
}

/* One turn of the application's progress loop: one dequeue on the receive
 * EVD, one on the request EVD. Returns whether a receive completed. */
static inline int poll_evds(struct side *s)
{
	DAT_EVENT ev;
	DAT_RETURN r;
	int got = 0;
	if ((r = dat_evd_dequeue(s->rcv, &ev)) == DAT_SUCCESS) {
		check_dto(&ev, "receive");
		s->got++;
		got = 1;
	} else if (DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY)
		die("dat_evd_dequeue(receive)", r);
	if ((r = dat_evd_dequeue(s->req, &ev)) == DAT_SUCCESS) {
		check_dto(&ev, "request");
		if (s->out == 0)
			fail("request completion without a request");
		s->out--;
	} else if (DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY)
		die("dat_evd_dequeue(request)", r);
	return got;
}

/* Polls both EVDs until a receive has completed; consumes it and posts
 * its replacement. */
static void await_recv(struct side *s)
{
	while (s->got == 0)
		poll_evds(s);
	s->got--;
	const char *m = s->mem + OFF_RECV + s->taken++ % DEPTH * SLOT;
	memcpy(&s->last, m, sizeof s->last);
	s->stop = (uint8_t)m[LAST];
	post_recv(s);
}

/* Room for one more signalled request. */
static void make_room(struct side *s)
{
	while (s->out >= MAXOUT)
		poll_evds(s);
}

static void drain(struct side *s)
{
	while (s->out > 0)
		poll_evds(s);
}

static void post_send(struct side *s, uint64_t off, uint64_t len)
{
	make_room(s);
	DAT_LMR_TRIPLET t = seg(s, off, len);
	CHECK(dat_ep_post_send(s->ep, 1, &t, (DAT_DTO_COOKIE){.as_64 = 2}, DAT_COMPLETION_DEFAULT_FLAG));
	s->out++;
}

static void send_ctrl(struct side *s, uint32_t test, uint64_t count)
{
	struct ctrl c = {.test = test, .count = count};
	memcpy(s->mem + OFF_SEND + 64, &c, sizeof c);
	post_send(s, OFF_SEND + 64, sizeof c);
}

/* Writes the 8-byte message of round i (flag last) into slot i of the
 * peer's ring; last: the run's last round. */
static void eager_put(struct side *s, uint64_t i, int last)
{
	uint64_t off = OFF_RSRC + i % RING * SLOT;
	make_room(s);
	s->mem[off + LAST] = (char)last;
	s->mem[off + MSG - 1] = (char)flag_of(i);
	DAT_LMR_TRIPLET l = seg(s, off, MSG);
	DAT_RMR_TRIPLET r = {.rmr_context = s->peer.rmr_context, .target_address = s->peer.ring + i % RING * SLOT,
			     .segment_length = MSG};
	CHECK(dat_ep_post_rdma_write(s->ep, 1, &l, (DAT_DTO_COOKIE){.as_64 = 3}, &r, DAT_COMPLETION_DEFAULT_FLAG));
	s->out++;
}

/* Polls the own ring slot of round i, dequeuing both EVDs between looks;
 * returns whether it was the run's last round. */
static int eager_get(struct side *s, uint64_t i)
{
	volatile uint8_t *p = (volatile uint8_t *)s->mem + OFF_RING + i % RING * SLOT;
	uint8_t f = flag_of(i);
	while (__atomic_load_n(&p[MSG - 1], __ATOMIC_ACQUIRE) != f) {
		poll_evds(s);
		if (s->got)
			fail("a receive completed during the eager ping-pong");
	}
	int last = p[LAST];
	p[MSG - 1] = 0;
	return last;
}

/* The server's side of a test announced by ctrl. */
static void serve(struct side *s, const struct ctrl *c)
{
	switch (c->test) {
	case T_PP: /* the client ends a run when it likes: its LAST ping */
		do {
			await_recv(s);
			post_send(s, OFF_SEND, MSG);
		} while (!s->stop);
		break;
	case T_EAGER:
		for (uint64_t i = 0;; i++) {
			int last = eager_get(s, i);
			eager_put(s, i, 0);
			if (last)
				break;
		}
		break;
	case T_POST: /* the initiator posts; the target polls until it is told */
		await_recv(s);
		break;
	default:
		fail("unknown control message");
	}
	drain(s);
}

static int dat_server(void)
{
	struct side *s = &S;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	DAT_EVENT ev;
	DAT_COUNT n;
	DAT_CR_PARAM crp;
	setup(s);
	for (int i = 0; i < DEPTH; i++)
		post_recv(s);
	CHECK(dat_psp_create_any(s->ia, &qual, s->cr, DAT_PSP_CONSUMER_FLAG, &psp));
	char qs[32];
	snprintf(qs, sizeof qs, "%#" PRIx64, (uint64_t)qual);
	bench_cpus_fix();
	pid_t kid = spawn_self((char *[]){NULL, "--dat-client", ia_name, qs, only_pp ? "pp" : "all", NULL});
	bench_pin(0);
	CHECK(dat_evd_wait(s->cr, TMO, 1, &ev, &n));
	if (ev.event_number != DAT_CONNECTION_REQUEST_EVENT)
		fail("expected a connection request");
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	CHECK(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	if (crp.private_data_size < (DAT_COUNT)sizeof s->peer)
		fail("connect private data too short");
	memcpy(&s->peer, crp.private_data, sizeof s->peer);
	struct offer o = my_offer(s);
	CHECK(dat_cr_accept(cr, s->ep, sizeof o, &o));
	CHECK(dat_evd_wait(s->conn, TMO, 1, &ev, &n));
	if (ev.event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
		fail("accept: not established");
	for (;;) {
		struct ctrl c;
		await_recv(s);
		c = s->last;
		if (c.test == T_END)
			break;
		serve(s, &c);
	}
	drain(s);
	printf("%s threads_server 0 %d\n", tool, count_threads() - 1);
	fflush(stdout);
	CHECK(dat_evd_wait(s->conn, TMO, 1, &ev, &n)); /* the client disconnects */
	int r = reap(kid, "apppat server");
	CHECK(dat_psp_free(psp));
	return r;
}

/* A run of round trips ends after count rounds or, when a round is slow
 * (a process starved of its CPU), after about RUN_MAX_S seconds: whether
 * round i is the last. The clock is read every round only when rounds are
 * slow, so that it does not weigh on fast ones. */
#define RUN_MAX_S 1.0
static int last_round(uint64_t i, uint64_t count, double t0, int slow)
{
	if (i + 1 >= count)
		return 1;
	if (!slow && (i & 255) != 0)
		return 0;
	return now_s() - t0 > RUN_MAX_S;
}

/* The windows of a run cut short: one window of the rounds done, when none
 * was complete. */
static void cut_short(struct windows *w, uint64_t rounds, double t0)
{
	if (w->got == 0 && rounds > 0) {
		w->t[0] = (now_s() - t0) / (double)rounds;
		w->got = 1;
	}
}

static void pp_run(struct side *s, struct windows *w, uint64_t count, int slow)
{
	uint64_t i = 0;
	int last;
	send_ctrl(s, T_PP, count);
	double t0 = now_s();
	win_start(w, count, 0);
	do {
		last = last_round(i, count, t0, slow);
		post_send(s, last ? OFF_SEND + 128 : OFF_SEND, MSG);
		await_recv(s);
		win_tick(w);
		i++;
	} while (!last);
	cut_short(w, i, t0);
	drain(s);
}

static void eager_run(struct side *s, struct windows *w, uint64_t count, int slow)
{
	uint64_t i = 0;
	int last;
	send_ctrl(s, T_EAGER, count);
	double t0 = now_s();
	win_start(w, count, 0);
	do {
		last = last_round(i, count, t0, slow);
		eager_put(s, i, last);
		eager_get(s, i);
		win_tick(w);
		i++;
	} while (!last);
	cut_short(w, i, t0);
	drain(s);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* count posts of size bytes, each on an idle EP; prints median and p99. */
static void post_cost(struct side *s, int write, uint64_t size, unsigned count)
{
	static double t[4000];
	DAT_LMR_TRIPLET l = seg(s, OFF_RDMA, size);
	DAT_RMR_TRIPLET r = {.rmr_context = s->peer.rmr_context, .target_address = s->peer.rdma, .segment_length = size};
	unsigned warm = 5;
	if (count > sizeof t / sizeof *t)
		count = sizeof t / sizeof *t;
	for (unsigned i = 0; i < warm + count; i++) {
		double t0 = now_s();
		if (write)
			CHECK(dat_ep_post_rdma_write(s->ep, 1, &l, (DAT_DTO_COOKIE){.as_64 = 4}, &r, DAT_COMPLETION_DEFAULT_FLAG));
		else
			CHECK(dat_ep_post_rdma_read(s->ep, 1, &l, (DAT_DTO_COOKIE){.as_64 = 5}, &r, DAT_COMPLETION_DEFAULT_FLAG));
		double t1 = now_s();
		s->out++;
		drain(s);
		if (i >= warm)
			t[i - warm] = (t1 - t0) * 1e6;
	}
	qsort(t, count, sizeof *t, cmp_double);
	const char *op = write ? "write" : "read";
	printf("%s post_%s_med %" PRIu64 " %.3f\n", tool, op, size, t[count / 2]);
	unsigned k = (unsigned)((count * 99 + 99) / 100) - 1; /* the 99th percentile, nearest rank */
	printf("%s post_%s_p99 %" PRIu64 " %.3f\n", tool, op, size, t[k]);
	fflush(stdout);
}

static int dat_client(const char *qual)
{
	struct side *s = &S;
	DAT_EVENT ev;
	DAT_COUNT n;
	role = "client";
	setup(s);
	/* Pinned once the library runs: its Go runtime starts on a thread of its
	 * own, beside main, and sizes itself for the CPUs allowed when it reads
	 * them (a child pinned first raced it, and in some runs started with one
	 * CPU: GOMAXPROCS 1, no spinning in waits). */
	bench_pin(1);
	for (int i = 0; i < DEPTH; i++)
		post_recv(s);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct offer o = my_offer(s);
	CHECK(dat_ep_connect(s->ep, (DAT_IA_ADDRESS_PTR)&sa, strtoull(qual, NULL, 0), TMO, sizeof o, &o,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	CHECK(dat_evd_wait(s->conn, TMO, 1, &ev, &n));
	if (ev.event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
		fail("connect: not established");
	if (ev.event_data.connect_event_data.private_data_size < (DAT_COUNT)sizeof s->peer)
		fail("accept private data too short");
	memcpy(&s->peer, ev.event_data.connect_event_data.private_data, sizeof s->peer);

	struct windows w;
	pp_run(s, &w, 60, 1); /* a probe, and the warm-up */
	pp_run(s, &w, fill_time(1, win_best(&w), 20, 10000000), win_best(&w) > 10e-6);
	report_lat(tool, "pp", &w);
	eager_run(s, &w, 60, 1);
	eager_run(s, &w, fill_time(1, win_best(&w), 20, 10000000), win_best(&w) > 10e-6);
	report_lat(tool, "eager", &w);
	if (only_pp)
		goto end;

	static const uint64_t sizes[] = {4 * KiB, 64 * KiB, BIG};
	static const unsigned counts[] = {2000, 1000, 200};
	send_ctrl(s, T_POST, 0);
	for (int write = 1; write >= 0; write--)
		for (int i = 0; i < 3; i++)
			post_cost(s, write, sizes[i], counts[i]);
	send_ctrl(s, T_POST, 0); /* tells the target the posts are done */
	drain(s);
end:
	printf("%s threads_client 0 %d\n", tool, count_threads() - 1);
	fflush(stdout);
	send_ctrl(s, T_END, 0);
	drain(s);
	CHECK(dat_ep_disconnect(s->ep, DAT_CLOSE_GRACEFUL_FLAG));
	CHECK(dat_evd_wait(s->conn, TMO, 1, &ev, &n));
	return 0;
}

/* ---- idle: threads and CPU with N connections ---- */

static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	struct dirent *e;
	if (!d)
		fail("opendir /proc/self/task");
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static double cpu_s(int who)
{
	struct rusage ru;
	if (getrusage(who, &ru) != 0)
		fail("getrusage");
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* Sleeps IDLE_S seconds in the application's thread and prints what the
 * rest of the process used meanwhile. */
static void idle_measure(int conns)
{
	struct timespec settle = {0, 300000000};
	nanosleep(&settle, NULL);
	double p0 = cpu_s(RUSAGE_SELF), m0 = cpu_s(RUSAGE_THREAD), t0 = now_s();
	struct timespec ts = {(time_t)IDLE_S, (long)((IDLE_S - (time_t)IDLE_S) * 1e9)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	double p1 = cpu_s(RUSAGE_SELF), m1 = cpu_s(RUSAGE_THREAD), t1 = now_s();
	double cpu = ((p1 - p0) - (m1 - m0)) / (t1 - t0) * 100;
	printf("%s idle_threads_%s %d %d\n", tool, role, conns, count_threads() - 1);
	printf("%s idle_cpu_%s %d %.3f\n", tool, role, conns, cpu > 0 ? cpu : 0);
	fflush(stdout);
}

struct idle {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, rcv, req, conn, cr;
	DAT_PZ_HANDLE pz;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_EP_HANDLE ep[MAXCONN];
	char *mem;
};

static void idle_setup(struct idle *s, int conns)
{
	DAT_REGION_DESCRIPTION rd;
	DAT_VLEN len;
	DAT_VADDR va;
	s->async = DAT_HANDLE_NULL;
	CHECK(dat_ia_open(ia_name, 8, &s->async, &s->ia));
	CHECK(dat_pz_create(s->ia, &s->pz));
	CHECK(dat_evd_create(s->ia, 4 * conns, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->rcv));
	CHECK(dat_evd_create(s->ia, 4 * conns, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->req));
	CHECK(dat_evd_create(s->ia, 2 * conns, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &s->conn));
	CHECK(dat_evd_create(s->ia, 2 * conns, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &s->cr));
	s->mem = alloc_buf((size_t)conns * 4096);
	rd.for_va = s->mem;
	CHECK(dat_lmr_create(s->ia, DAT_MEM_TYPE_VIRTUAL, rd, (DAT_VLEN)conns * 4096, s->pz, DAT_MEM_PRIV_ALL_FLAG,
			     &s->lmr, &s->lctx, &s->rctx, &len, &va));
	for (int i = 0; i < conns; i++) {
		CHECK(dat_ep_create(s->ia, s->pz, s->rcv, s->req, s->conn, NULL, &s->ep[i]));
		DAT_LMR_TRIPLET t = {.lmr_context = s->lctx, .virtual_address = (DAT_VADDR)(uintptr_t)(s->mem + i * 4096),
				     .segment_length = 4096};
		CHECK(dat_ep_post_recv(s->ep[i], 1, &t, (DAT_DTO_COOKIE){.as_64 = (uint64_t)i}, DAT_COMPLETION_DEFAULT_FLAG));
	}
}

static void await_established(struct idle *s, int conns)
{
	for (int i = 0; i < conns; i++) {
		DAT_EVENT ev;
		DAT_COUNT n;
		CHECK(dat_evd_wait(s->conn, TMO, 1, &ev, &n));
		if (ev.event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
			fail("connection not established");
	}
}

static int idle_client(const char *qual, int conns)
{
	static struct idle s;
	role = "client";
	idle_setup(&s, conns);
	/* Pinned once the library runs: its Go runtime starts on a thread of its
	 * own, beside main, and sizes itself for the CPUs allowed when it reads
	 * them (see dat_client). */
	bench_pin(1);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	for (int i = 0; i < conns; i++)
		CHECK(dat_ep_connect(s.ep[i], (DAT_IA_ADDRESS_PTR)&sa, strtoull(qual, NULL, 0), TMO, 0, NULL,
				     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	await_established(&s, conns);
	idle_measure(conns);
	/* Tell the server this side is done, and stay (connected, idle) until
	 * it is done too. */
	DAT_LMR_TRIPLET t = {.lmr_context = s.lctx, .virtual_address = (DAT_VADDR)(uintptr_t)s.mem, .segment_length = 1};
	CHECK(dat_ep_post_send(s.ep[0], 1, &t, (DAT_DTO_COOKIE){.as_64 = 0}, DAT_COMPLETION_SUPPRESS_FLAG));
	DAT_EVENT ev;
	DAT_COUNT n;
	CHECK(dat_evd_wait(s.conn, TMO, 1, &ev, &n));
	if (ev.event_number != DAT_CONNECTION_EVENT_DISCONNECTED)
		fail("expected the server's disconnect");
	return 0;
}

static int idle_server(int conns)
{
	static struct idle s;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	role = "server";
	if (conns < 1 || conns > MAXCONN)
		fail("connections: 1 to 256");
	idle_setup(&s, conns);
	CHECK(dat_psp_create_any(s.ia, &qual, s.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	char qs[32], ns[16];
	snprintf(qs, sizeof qs, "%#" PRIx64, (uint64_t)qual);
	snprintf(ns, sizeof ns, "%d", conns);
	bench_cpus_fix();
	pid_t kid = spawn_self((char *[]){NULL, "--idle-client", ia_name, qs, ns, NULL});
	bench_pin(0);
	for (int i = 0; i < conns; i++) {
		DAT_EVENT ev;
		DAT_COUNT n;
		CHECK(dat_evd_wait(s.cr, TMO, 1, &ev, &n));
		if (ev.event_number != DAT_CONNECTION_REQUEST_EVENT)
			fail("expected a connection request");
		CHECK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, s.ep[i], 0, NULL));
	}
	await_established(&s, conns);
	idle_measure(conns);
	DAT_EVENT ev;
	DAT_COUNT n;
	CHECK(dat_evd_wait(s.rcv, TMO, 1, &ev, &n)); /* the client is done */
	check_dto(&ev, "the client's done message");
	CHECK(dat_ep_disconnect(s.ep[0], DAT_CLOSE_ABRUPT_FLAG));
	return reap(kid, "apppat idle");
}

static void set_ia(char *name)
{
	const char *suf = getenv("APPPAT_SUFFIX");
	ia_name = name;
	snprintf(tool, sizeof tool, "%s%s", name, suf ? suf : "");
}

int main(int argc, char **argv)
{
	alarm(100); /* a hang is a failure, never a stuck run */
	if (argc == 3 && strcmp(argv[1], "--shm-child") == 0)
		return shm_child(atoi(argv[2]));
	if (argc == 3 && strcmp(argv[1], "--tcp-child") == 0)
		return tcp_child(argv[2]);
	if (argc == 5 && strcmp(argv[1], "--dat-client") == 0) {
		set_ia(argv[2]);
		only_pp = strcmp(argv[4], "pp") == 0;
		return dat_client(argv[3]);
	}
	if (argc == 5 && strcmp(argv[1], "--idle-client") == 0) {
		set_ia(argv[2]);
		return idle_client(argv[3], atoi(argv[4]));
	}
	if (argc == 2 && strcmp(argv[1], "plain-shm") == 0)
		return plain_shm();
	if (argc == 2 && strcmp(argv[1], "plain-tcp") == 0)
		return plain_tcp();
	if ((argc == 3 || (argc == 4 && strcmp(argv[3], "pp") == 0)) && strcmp(argv[1], "dat") == 0) {
		set_ia(argv[2]);
		only_pp = argc == 4;
		return dat_server();
	}
	if ((argc == 3 || argc == 4) && strcmp(argv[1], "idle") == 0) {
		set_ia(argv[2]);
		return idle_server(argc == 4 ? atoi(argv[3]) : 100);
	}
	fprintf(stderr, "usage: apppat dat IA [pp] | plain-tcp | plain-shm | idle IA [N]\n");
	return 2;
}
