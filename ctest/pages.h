/* Helpers for the man-page tests (test_dat_<page>.c): event dispatchers and
 * software events, bounded waits on other threads, a connected endpoint
 * pair inside one process, memory registration, children started with
 * posix_spawn, and exhausting the handle table.
 *
 * Files that include this header define _GNU_SOURCE first. */
#ifndef GODAT_CTEST_PAGES_H
#define GODAT_CTEST_PAGES_H

#include "common.h"
#include "child.h"
#include "broken.h"
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <arpa/inet.h>

/* Bound of every wait that is expected to succeed (microseconds). */
#define TMO_US 5000000
/* Bound of a child process (seconds). */
#define CHILD_LIMIT_S 60

/* ---- event dispatchers -------------------------------------------------- */

static inline DAT_EVD_HANDLE make_evd(DAT_IA_HANDLE ia, DAT_COUNT qlen, DAT_CNO_HANDLE cno, DAT_EVD_FLAGS flags)
{
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL;
	check_ok(dat_evd_create(ia, qlen, cno, flags, &evd));
	assert_non_null(evd);
	return evd;
}

static inline DAT_EVENT software_event(uintptr_t pointer)
{
	DAT_EVENT ev;
	memset(&ev, 0, sizeof ev);
	ev.event_number = DAT_SOFTWARE_EVENT;
	ev.event_data.software_event_data.pointer = (DAT_PVOID)pointer;
	return ev;
}

static inline void post_se(DAT_EVD_HANDLE evd, uintptr_t pointer)
{
	DAT_EVENT ev = software_event(pointer);
	check_ok(dat_evd_post_se(evd, &ev));
}

/* Dequeues one software event and checks its pointer. */
static inline void dequeue_se(DAT_EVD_HANDLE evd, uintptr_t pointer)
{
	DAT_EVENT ev;
	memset(&ev, 0, sizeof ev);
	check_ok(dat_evd_dequeue(evd, &ev));
	assert_int_equal(ev.event_number, DAT_SOFTWARE_EVENT);
	assert_ptr_equal(ev.evd_handle, evd);
	assert_int_equal((uintptr_t)ev.event_data.software_event_data.pointer, pointer);
}

static inline void expect_empty(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;
	check_ret(dat_evd_dequeue(evd, &ev), DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
}

/* Waits (bounded) for the next event, which must be number. */
static inline DAT_EVENT wait_event(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER number)
{
	DAT_EVENT ev;
	DAT_COUNT n;
	memset(&ev, 0, sizeof ev);
	check_ok(dat_evd_wait(evd, TMO_US, 1, &ev, &n));
	if (ev.event_number != number)
		fail_msg("event 0x%x, want 0x%x", (unsigned)ev.event_number, (unsigned)number);
	return ev;
}

static inline DAT_EVD_STATE evd_state(DAT_EVD_HANDLE evd)
{
	DAT_EVD_PARAM p;
	check_ok(dat_evd_query(evd, DAT_EVD_FIELD_EVD_STATE, &p));
	return p.evd_state;
}

static inline DAT_COUNT evd_qlen(DAT_EVD_HANDLE evd)
{
	DAT_EVD_PARAM p;
	check_ok(dat_evd_query(evd, DAT_EVD_FIELD_EVD_QLEN, &p));
	return p.evd_qlen;
}

/* ---- threads that block in the library ----------------------------------- */

/* A call run on its own thread: dat_evd_wait or dat_cno_wait. */
struct blocked {
	pthread_t thread;
	pid_t tid;
	volatile int started;
	/* inputs */
	DAT_HANDLE h;
	DAT_TIMEOUT timeout;
	DAT_COUNT threshold;
	/* outputs */
	DAT_RETURN ret;
	DAT_EVENT ev;
	DAT_COUNT nmore;
	DAT_EVD_HANDLE evd_out;
};

static inline void *blocked_evd_main(void *arg)
{
	struct blocked *b = arg;
	b->tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&b->started, 1, __ATOMIC_SEQ_CST);
	b->ret = dat_evd_wait(b->h, b->timeout, b->threshold, &b->ev, &b->nmore);
	return NULL;
}

static inline void *blocked_cno_main(void *arg)
{
	struct blocked *b = arg;
	b->tid = (pid_t)syscall(SYS_gettid);
	__atomic_store_n(&b->started, 1, __ATOMIC_SEQ_CST);
	b->evd_out = (DAT_EVD_HANDLE)(uintptr_t)0x5a5a;
	b->ret = dat_cno_wait(b->h, b->timeout, &b->evd_out);
	return NULL;
}

static inline void blocked_start(struct blocked *b, void *(*fn)(void *), DAT_HANDLE h, DAT_TIMEOUT timeout,
				 DAT_COUNT threshold)
{
	memset(b, 0, sizeof *b);
	b->h = h;
	b->timeout = timeout;
	b->threshold = threshold;
	b->nmore = -1;
	assert_int_equal(pthread_create(&b->thread, NULL, fn, b), 0);
	long deadline = now_ns() + 5000000000L;
	while (!__atomic_load_n(&b->started, __ATOMIC_SEQ_CST)) {
		if (now_ns() > deadline)
			fail_msg("thread did not start");
		usleep(1000);
	}
}

/* Whether the thread is blocked where the library's blocking waits sleep:
 * a shared futex(2) wait, the doorbell of the software provider's waits
 * (peers wake it through their mapping, rdma/soft/futex_unsafe.go), or
 * ppoll(2), where the verbs backend's leading waiter sleeps on its
 * completion channel (its other waiters: a shared futex, rdma/verbs/chan.c),
 * or epoll_pwait2(2) (epoll_pwait(2) before Linux 5.11), where a waiter on
 * a software device whose connections are all TCP sleeps on its sockets
 * (rdma/soft/tcp_wait.go). The Go runtime, glibc and ASan
 * sleep on private futexes (FUTEX_PRIVATE_FLAG in the op, the second
 * argument /proc shows): a thread entering the library for the first time
 * may sleep on a runtime lock before it reaches the wait. */
static inline int thread_in_library_wait(pid_t tid)
{
	char path[64], buf[128] = "";
	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof buf, f))
		buf[0] = 0;
	fclose(f);
	long nr;
	unsigned long addr, op;
	if (sscanf(buf, "%ld %lx %lx", &nr, &addr, &op) != 3)
		return 0;
	if (nr == SYS_ppoll || nr == SYS_epoll_pwait || nr == SYS_epoll_pwait2)
		return 1;
	return nr == SYS_futex && (op & 128 /* FUTEX_PRIVATE_FLAG */) == 0;
}

/* Waits until the thread sleeps in a library wait (thread_in_library_wait),
 * seen on three reads in a row 10 ms apart. This is how a test knows a
 * waiter is really blocked in its wait before it acts. */
static inline void wait_until_sleeping(struct blocked *b)
{
	long deadline = now_ns() + 10000000000L;
	int seen = 0;
	while (seen < 3) {
		if (now_ns() > deadline)
			fail_msg("thread %d never slept in a shared futex(2), ppoll(2) or epoll_pwait(2) wait", (int)b->tid);
		seen = thread_in_library_wait(b->tid) ? seen + 1 : 0;
		usleep(10000);
	}
}

/* Joins the thread, failing the test if it does not return within limit_s. */
static inline void blocked_join(struct blocked *b, int limit_s)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += limit_s;
	int r = pthread_timedjoin_np(b->thread, NULL, &ts);
	if (r != 0)
		fail_msg("blocked call did not return within %d s", limit_s);
}

/* ---- memory ---------------------------------------------------------------- */

struct lmr {
	DAT_LMR_HANDLE h;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_VLEN size;
	DAT_VADDR addr;
};

static inline DAT_RETURN lmr_create_va(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, void *buf, DAT_VLEN len,
				       DAT_MEM_PRIV_FLAGS priv, struct lmr *out)
{
	DAT_REGION_DESCRIPTION rd;
	memset(&rd, 0, sizeof rd);
	rd.for_va = buf;
	return dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, len, pz, priv, &out->h, &out->lctx, &out->rctx,
			      &out->size, &out->addr);
}

static inline struct lmr make_lmr(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, void *buf, DAT_VLEN len,
				  DAT_MEM_PRIV_FLAGS priv)
{
	struct lmr l;
	memset(&l, 0, sizeof l);
	check_ok(lmr_create_va(ia, pz, buf, len, priv, &l));
	return l;
}

static inline DAT_LMR_TRIPLET triplet(const struct lmr *l, void *at, DAT_VLEN len)
{
	DAT_LMR_TRIPLET t;
	t.lmr_context = l->lctx;
	t.virtual_address = (DAT_VADDR)(uintptr_t)at;
	t.segment_length = len;
	return t;
}

static inline DAT_PZ_HANDLE make_pz(DAT_IA_HANDLE ia)
{
	DAT_PZ_HANDLE pz = DAT_HANDLE_NULL;
	check_ok(dat_pz_create(ia, &pz));
	return pz;
}

/* ---- a connected endpoint pair in one process ----------------------------- */

/* Side 0 listens and accepts, side 1 connects; each side has its own IA,
 * PZ and one EVD for DTO, RMR bind and connection events. */
struct pair {
	DAT_IA_HANDLE ia[2];
	DAT_EVD_HANDLE async[2], evd[2], cr;
	DAT_PZ_HANDLE pz[2];
	DAT_EP_HANDLE ep[2];
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
};

#define PAIR_EVD_FLAGS (DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG | DAT_EVD_CONNECTION_FLAG)

static inline struct sockaddr_in loopback_addr(void)
{
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sa;
}

/* Opens both sides with endpoints created with attr (NULL: defaults).
 * Side 1's IA is opened with async1 as its async EVD (DAT_HANDLE_NULL: its
 * own) and its EVD holds qlen1 events. */
static inline void pair_open_with(struct pair *p, const DAT_EP_ATTR *attr, DAT_EVD_HANDLE async1, DAT_COUNT qlen1)
{
	memset(p, 0, sizeof *p);
	for (int i = 0; i < 2; i++) {
		if (i == 1 && async1 != DAT_HANDLE_NULL) {
			p->async[1] = async1;
			check_ok(dat_ia_open(TEST_IA, 0, &p->async[1], &p->ia[1]));
		} else {
			p->ia[i] = open_ia(&p->async[i]);
		}
		p->evd[i] = make_evd(p->ia[i], i == 1 ? qlen1 : 64, DAT_HANDLE_NULL, PAIR_EVD_FLAGS);
		p->pz[i] = make_pz(p->ia[i]);
		check_ok(dat_ep_create(p->ia[i], p->pz[i], p->evd[i], p->evd[i], p->evd[i], (DAT_EP_ATTR *)attr,
				       &p->ep[i]));
	}
	p->cr = make_evd(p->ia[0], 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG);
	check_ok(dat_psp_create_any(p->ia[0], &p->qual, p->cr, DAT_PSP_CONSUMER_FLAG, &p->psp));
}

static inline void pair_open(struct pair *p, const DAT_EP_ATTR *attr)
{
	pair_open_with(p, attr, DAT_HANDLE_NULL, 64);
}

/* Connects endpoint ep1 (of side 1's IA) to ep0 (of side 0's IA) through
 * the pair's PSP, with private data pd (may be NULL), accepting with apd;
 * both endpoints' connection EVDs must be the pair's EVDs. Waits for the
 * established event on both sides and returns side 1's (the active
 * side's). */
static inline DAT_EVENT pair_connect_eps(struct pair *p, DAT_EP_HANDLE ep0, DAT_EP_HANDLE ep1, const char *pd,
					 const char *apd)
{
	struct sockaddr_in sa = loopback_addr();
	DAT_COUNT n = pd ? (DAT_COUNT)strlen(pd) + 1 : 0, an = apd ? (DAT_COUNT)strlen(apd) + 1 : 0;
	check_ok(dat_ep_connect(ep1, (DAT_IA_ADDRESS_PTR)&sa, p->qual, TMO_US, n, (DAT_PVOID)pd,
				DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	DAT_EVENT ev = wait_event(p->cr, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, ep0, an, (DAT_PVOID)apd));
	ev = wait_event(p->evd[0], DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, ep0);
	ev = wait_event(p->evd[1], DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, ep1);
	return ev;
}

static inline DAT_EVENT pair_connect_pd(struct pair *p, const char *pd, const char *apd)
{
	return pair_connect_eps(p, p->ep[0], p->ep[1], pd, apd);
}

static inline void pair_connect(struct pair *p)
{
	pair_connect_pd(p, NULL, NULL);
}

static inline void pair_close(struct pair *p)
{
	check_ok(dat_ia_close(p->ia[1], DAT_CLOSE_ABRUPT_FLAG));
	check_ok(dat_ia_close(p->ia[0], DAT_CLOSE_ABRUPT_FLAG));
}

/* An endpoint in DAT_EP_STATE_DISCONNECTED: connected, then disconnected
 * (abruptly) by the test, with the disconnect event consumed. */
static inline void pair_disconnect(struct pair *p, int side)
{
	check_ok(dat_ep_disconnect(p->ep[side], DAT_CLOSE_ABRUPT_FLAG));
	wait_event(p->evd[side], DAT_CONNECTION_EVENT_DISCONNECTED);
	DAT_EP_STATE st;
	check_ok(dat_ep_get_status(p->ep[side], &st, NULL, NULL));
	assert_int_equal(st, DAT_EP_STATE_DISCONNECTED);
}

/* The request with cookie bad, just posted on endpoint iep of side ini,
 * was a remote access violation at endpoint tep of the other side: the
 * connection breaks as broken.h describes, the events arriving on the
 * sides' EVDs and async EVDs. */
static inline void pair_expect_broken_eps_at(struct pair *p, int ini, DAT_EP_HANDLE iep, DAT_EP_HANDLE tep,
					     uint64_t bad, const char *file, int line)
{
	int tgt = 1 - ini;
	struct brk_end i = {iep, p->evd[ini], p->evd[ini], p->async[ini]};
	struct brk_end t = {tep, p->evd[tgt], p->evd[tgt], p->async[tgt]};
	expect_access_broken_at(i, bad, t, 0, file, line);
}
#define pair_expect_broken_eps(p, ini, iep, tep, bad)                                                             \
	pair_expect_broken_eps_at((p), (ini), (iep), (tep), (bad), __FILE__, __LINE__)
#define pair_expect_broken(p, ini, bad)                                                                           \
	pair_expect_broken_eps_at((p), (ini), (p)->ep[ini], (p)->ep[1 - (ini)], (bad), __FILE__, __LINE__)

/* ---- children ---------------------------------------------------------------- */

/* Runs this program again as `self mode` with env (NULL: ours), started
 * with posix_spawn (never fork once libdat is loaded); returns its exit
 * status, failing the test if it is killed or runs past CHILD_LIMIT_S. */
static inline int run_self(const char *mode, char **env)
{
	char self[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
	assert_true(k > 0);
	self[k] = 0;
	char *argv[] = {self, (char *)mode, NULL};
	pid_t pid;
	int status;
	fflush(NULL);
	int r = posix_spawn(&pid, self, NULL, NULL, argv, env ? env : environ);
	if (r != 0)
		fail_msg("posix_spawn %s: %s", self, strerror(r));
	if (wait_bounded(pid, CHILD_LIMIT_S, &status) != 0)
		fail_msg("%s child did not finish within %d s (killed)", mode, CHILD_LIMIT_S);
	if (WIFSIGNALED(status))
		fail_msg("%s child killed by signal %d", mode, WTERMSIG(status));
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* ---- the handle table ------------------------------------------------------ */

/* Creates PZs on ia until creation fails (every handle of the process is
 * in use; the library has a fixed-size handle table), and returns how many
 * were created; *pzs must be freed with release_pzs. The failure must be
 * DAT_INSUFFICIENT_RESOURCES. */
static inline size_t exhaust_handles(DAT_IA_HANDLE ia, DAT_PZ_HANDLE **pzs)
{
	size_t cap = 1u << 20, n = 0;
	DAT_PZ_HANDLE *v = calloc(cap, sizeof *v);
	assert_non_null(v);
	for (;;) {
		if (n == cap)
			fail_msg("created %zu PZs without running out of handles", n);
		DAT_RETURN r = dat_pz_create(ia, &v[n]);
		if (r != DAT_SUCCESS) {
			check_ret(r, DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
			break;
		}
		n++;
	}
	*pzs = v;
	return n;
}

static inline void release_pzs(DAT_PZ_HANDLE *pzs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		check_ok(dat_pz_free(pzs[i]));
	free(pzs);
}

/* ---- OS wait proxy agents and signals --------------------------------------- */

/* What a test agent saw: how often it ran, with which instance data and
 * EVD. */
struct agent_log {
	int calls;
	DAT_PVOID instance;
	DAT_EVD_HANDLE evd;
};

static inline void agent_record(DAT_PVOID instance, DAT_EVD_HANDLE evd)
{
	struct agent_log *log = instance;
	log->instance = instance;
	log->evd = evd;
	__atomic_add_fetch(&log->calls, 1, __ATOMIC_SEQ_CST);
}

static inline DAT_OS_WAIT_PROXY_AGENT test_agent(struct agent_log *log)
{
	memset(log, 0, sizeof *log);
	DAT_OS_WAIT_PROXY_AGENT a = {.instance_data = log, .proxy_agent_func = agent_record};
	return a;
}

/* Waits (bounded) until the agent has run n times in all. */
static inline void agent_wait_calls(struct agent_log *log, int n)
{
	long deadline = now_ns() + 5000000000L;
	while (__atomic_load_n(&log->calls, __ATOMIC_SEQ_CST) < n) {
		if (now_ns() > deadline)
			fail_msg("agent ran %d times, want %d", log->calls, n);
		usleep(1000);
	}
}

static volatile int signals_seen;

static inline void count_signal(int sig)
{
	(void)sig;
	signals_seen++;
}

/* Installs a SIGUSR1 handler without SA_RESTART, with SA_ONSTACK as the Go
 * runtime in the library requires of handlers. */
static inline void install_sigusr1(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = count_signal;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGUSR1, &sa, NULL), 0);
}

/* Signals the blocked thread until its call returns (bounded). */
static inline void interrupt_until_returned(struct blocked *b)
{
	wait_until_sleeping(b);
	long deadline = now_ns() + 10000000000L;
	for (;;) {
		pthread_kill(b->thread, SIGUSR1);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 50000000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_timedjoin_np(b->thread, NULL, &ts) == 0)
			return;
		if (now_ns() > deadline)
			fail_msg("a signal did not end the blocked call");
	}
}

/* ---- one object of every family --------------------------------------------- */

/* One live object of each of the ten DAT 1.2 handle types, a connection
 * request among them (on the pair's side 0, from side 1's connect). */
struct all_objs {
	struct pair p;
	DAT_CNO_HANDLE cno;
	DAT_RMR_HANDLE rmr;
	DAT_RSP_HANDLE rsp;
	DAT_EP_HANDLE rsp_ep;
	DAT_CR_HANDLE cr;
	struct lmr lmr;
	char buf[64];
	DAT_HANDLE h[10];
	DAT_HANDLE_TYPE t[10];
};

static inline void all_objs_open(struct all_objs *o)
{
	memset(o, 0, sizeof *o);
	pair_open(&o->p, NULL);
	DAT_IA_HANDLE ia = o->p.ia[0];
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &o->cno));
	check_ok(dat_rmr_create(o->p.pz[0], &o->rmr));
	o->lmr = make_lmr(ia, o->p.pz[0], o->buf, sizeof o->buf, DAT_MEM_PRIV_ALL_FLAG);
	check_ok(dat_ep_create(ia, o->p.pz[0], o->p.evd[0], o->p.evd[0], o->p.evd[0], NULL, &o->rsp_ep));
	check_ok(dat_rsp_create(ia, o->p.qual + 1, o->rsp_ep, o->p.cr, &o->rsp));
	struct sockaddr_in sa = loopback_addr();
	check_ok(dat_ep_connect(o->p.ep[1], (DAT_IA_ADDRESS_PTR)&sa, o->p.qual, TMO_US, 0, NULL, DAT_QOS_BEST_EFFORT,
				DAT_CONNECT_DEFAULT_FLAG));
	DAT_EVENT ev = wait_event(o->p.cr, DAT_CONNECTION_REQUEST_EVENT);
	o->cr = ev.event_data.cr_arrival_event_data.cr_handle;
	DAT_HANDLE h[10] = {ia, o->p.ep[0], o->p.evd[0], o->cr, o->rsp, o->p.psp, o->p.pz[0], o->lmr.h, o->rmr, o->cno};
	DAT_HANDLE_TYPE t[10] = {DAT_HANDLE_TYPE_IA,  DAT_HANDLE_TYPE_EP,  DAT_HANDLE_TYPE_EVD, DAT_HANDLE_TYPE_CR,
				 DAT_HANDLE_TYPE_RSP, DAT_HANDLE_TYPE_PSP, DAT_HANDLE_TYPE_PZ,  DAT_HANDLE_TYPE_LMR,
				 DAT_HANDLE_TYPE_RMR, DAT_HANDLE_TYPE_CNO};
	memcpy(o->h, h, sizeof h);
	memcpy(o->t, t, sizeof t);
}

static inline void all_objs_close(struct all_objs *o)
{
	pair_close(&o->p);
}

#endif
