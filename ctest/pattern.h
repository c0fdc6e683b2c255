/* Helpers for the consumer-pattern tests: client/server pairs in two
 * processes, each pattern run in three modes of taking events.
 *
 *   wait     dat_evd_wait on the EVD the caller expects the event on
 *   dequeue  dat_evd_dequeue polling
 *   cno      every EVD of a thread is attached to one CNO; the thread
 *            dequeues, and when the EVD is empty sleeps in dat_cno_wait
 *
 * The second process is the same program started with posix_spawn (it
 * execs: nothing runs in a forked copy of a process that loaded libdat).
 * Its command line is: <self> --child <role> <mode> <qualifier> [extra];
 * the child runs its role as a one-test cmocka group and exits with the
 * number of failures. Every wait is bounded. */
#ifndef GODAT_CTEST_PATTERN_H
#define GODAT_CTEST_PATTERN_H

#include "child.h"
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <sys/socket.h>

/* The bound on every wait, in microseconds. */
#define PAT_TMO 10000000L

enum pat_mode { MODE_WAIT, MODE_DEQUEUE, MODE_CNO, MODE_COUNT };

static const char *const pat_mode_names[MODE_COUNT] = {"wait", "dequeue", "cno"};

static inline enum pat_mode pat_mode_of(const char *s)
{
	for (int m = 0; m < MODE_COUNT; m++)
		if (strcmp(s, pat_mode_names[m]) == 0)
			return (enum pat_mode)m;
	fail_msg("unknown mode %s", s);
	return MODE_WAIT;
}

/* How one thread takes its events. In the CNO mode the waiter owns the CNO
 * that every EVD it creates is attached to. */
struct waiter {
	enum pat_mode mode;
	DAT_CNO_HANDLE cno;
};

static inline void waiter_init(struct waiter *w, DAT_IA_HANDLE ia, enum pat_mode m)
{
	w->mode = m;
	w->cno = DAT_HANDLE_NULL;
	if (m == MODE_CNO)
		check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &w->cno));
}

static inline void waiter_fini(struct waiter *w)
{
	if (w->cno != DAT_HANDLE_NULL)
		check_ok(dat_cno_free(w->cno));
	w->cno = DAT_HANDLE_NULL;
}

static inline DAT_EVD_HANDLE waiter_evd(struct waiter *w, DAT_IA_HANDLE ia, DAT_COUNT qlen, DAT_EVD_FLAGS flags)
{
	DAT_EVD_HANDLE e = DAT_HANDLE_NULL;
	check_ok(dat_evd_create(ia, qlen, w->cno, flags, &e));
	return e;
}

/* The next event of evd, taken the waiter's way, within tmo_us. Returns
 * DAT_SUCCESS or the failure (DAT_TIMEOUT_EXPIRED when nothing came). */
static inline DAT_RETURN pat_next(struct waiter *w, DAT_EVD_HANDLE evd, DAT_EVENT *ev, long tmo_us)
{
	long deadline = now_ns() + tmo_us * 1000L;
	DAT_COUNT n;
	DAT_RETURN r;
	switch (w->mode) {
	case MODE_WAIT:
		return dat_evd_wait(evd, (DAT_TIMEOUT)tmo_us, 1, ev, &n);
	case MODE_DEQUEUE:
		for (unsigned i = 0;; i++) {
			r = dat_evd_dequeue(evd, ev);
			if (DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY)
				return r;
			if (now_ns() > deadline)
				return DAT_TIMEOUT_EXPIRED;
			if ((i & 255) == 255)
				sched_yield(); /* the test machine is shared */
		}
	default:
		for (;;) {
			r = dat_evd_dequeue(evd, ev);
			if (DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY)
				return r;
			long left = (deadline - now_ns()) / 1000L;
			if (left <= 0)
				return DAT_TIMEOUT_EXPIRED;
			/* The EVD returned is a hint: the loop dequeues from the
			 * EVD it wants whatever the CNO names. */
			DAT_EVD_HANDLE hint = DAT_HANDLE_NULL;
			r = dat_cno_wait(w->cno, (DAT_TIMEOUT)left, &hint);
			if (r != DAT_SUCCESS && DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY)
				return r;
		}
	}
}

static inline const char *event_name(DAT_EVENT_NUMBER n)
{
	switch (n) {
	case DAT_DTO_COMPLETION_EVENT: return "DTO_COMPLETION";
	case DAT_RMR_BIND_COMPLETION_EVENT: return "RMR_BIND_COMPLETION";
	case DAT_CONNECTION_REQUEST_EVENT: return "CONNECTION_REQUEST";
	case DAT_CONNECTION_EVENT_ESTABLISHED: return "ESTABLISHED";
	case DAT_CONNECTION_EVENT_PEER_REJECTED: return "PEER_REJECTED";
	case DAT_CONNECTION_EVENT_NON_PEER_REJECTED: return "NON_PEER_REJECTED";
	case DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR: return "ACCEPT_COMPLETION_ERROR";
	case DAT_CONNECTION_EVENT_DISCONNECTED: return "DISCONNECTED";
	case DAT_CONNECTION_EVENT_BROKEN: return "BROKEN";
	case DAT_CONNECTION_EVENT_TIMED_OUT: return "TIMED_OUT";
	case DAT_CONNECTION_EVENT_UNREACHABLE: return "UNREACHABLE";
	case DAT_ASYNC_ERROR_EVD_OVERFLOW: return "EVD_OVERFLOW";
	case DAT_SOFTWARE_EVENT: return "SOFTWARE";
	default: return "other";
	}
}

/* The next event, which must be of kind want (any kind for want 0). */
static inline DAT_EVENT expect_event(struct waiter *w, DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want, const char *what)
{
	DAT_EVENT ev;
	memset(&ev, 0, sizeof ev);
	DAT_RETURN r = pat_next(w, evd, &ev, PAT_TMO);
	if (r != DAT_SUCCESS)
		fail_msg("%s (%s mode): no event: %s", what, pat_mode_names[w->mode], ret_name(r));
	if (want != 0 && ev.event_number != want)
		fail_msg("%s (%s mode): got %s (0x%x), want %s", what, pat_mode_names[w->mode],
			 event_name(ev.event_number), ev.event_number, event_name(want));
	return ev;
}

/* The next DTO completion: it must be for ep (unless NULL), successful
 * and, when len >= 0, of exactly len bytes. Returns the completion data. */
static inline DAT_DTO_COMPLETION_EVENT_DATA expect_dto(struct waiter *w, DAT_EVD_HANDLE evd, DAT_EP_HANDLE ep,
							 long len, const char *what)
{
	DAT_EVENT ev = expect_event(w, evd, DAT_DTO_COMPLETION_EVENT, what);
	DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
	if (d.status != DAT_DTO_SUCCESS)
		fail_msg("%s: DTO cookie %" PRIu64 " status %d", what, (uint64_t)d.user_cookie.as_64, d.status);
	if (ep != DAT_HANDLE_NULL)
		assert_ptr_equal(d.ep_handle, ep);
	if (len >= 0 && d.transfered_length != (DAT_VLEN)len)
		fail_msg("%s: cookie %" PRIu64 ": %" PRIu64 " bytes, want %ld", what, (uint64_t)d.user_cookie.as_64,
			 (uint64_t)d.transfered_length, len);
	return d;
}

/* The EVD holds no event now (a suppressed completion made none). */
static inline void expect_empty(DAT_EVD_HANDLE evd, const char *what)
{
	DAT_EVENT ev;
	DAT_RETURN r = dat_evd_dequeue(evd, &ev);
	if (DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY)
		fail_msg("%s: EVD not empty: %s, event %s cookie %" PRIu64, what, ret_name(r), event_name(ev.event_number),
			 (uint64_t)ev.event_data.dto_completion_event_data.user_cookie.as_64);
}

/* Registered memory. */
struct mem {
	char *buf;
	size_t len;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
};

static inline void mem_create(struct mem *m, DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, size_t len)
{
	DAT_REGION_DESCRIPTION rd;
	DAT_VLEN rlen;
	DAT_VADDR rva;
	m->len = len;
	assert_int_equal(posix_memalign((void **)&m->buf, 4096, len), 0);
	memset(m->buf, 0, len);
	rd.for_va = m->buf;
	check_ok(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, len, pz, DAT_MEM_PRIV_ALL_FLAG, &m->lmr, &m->lctx, &m->rctx,
				&rlen, &rva));
	assert_true(rlen >= len);
}

static inline void mem_free(struct mem *m)
{
	check_ok(dat_lmr_free(m->lmr));
	free(m->buf);
	m->buf = NULL;
}

static inline DAT_LMR_TRIPLET mem_seg(struct mem *m, size_t off, size_t len)
{
	DAT_LMR_TRIPLET t;
	assert_true(off + len <= m->len);
	t.lmr_context = m->lctx;
	t.pad = 0;
	t.virtual_address = (DAT_VADDR)(uintptr_t)(m->buf + off);
	t.segment_length = len;
	return t;
}

static inline DAT_RMR_TRIPLET rmr_seg(DAT_RMR_CONTEXT ctx, uint64_t addr, size_t len)
{
	DAT_RMR_TRIPLET t;
	t.rmr_context = ctx;
	t.pad = 0;
	t.target_address = addr;
	t.segment_length = len;
	return t;
}

/* The provider's default EP attributes for EPs on these EVDs, with room
 * for at least recvs receives and reqs requests outstanding. */
static inline DAT_EP_ATTR pat_deep_attr(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, DAT_EVD_HANDLE recv, DAT_EVD_HANDLE req,
					DAT_EVD_HANDLE conn, DAT_COUNT recvs, DAT_COUNT reqs)
{
	DAT_EP_HANDLE ep;
	DAT_EP_PARAM p;
	check_ok(dat_ep_create(ia, pz, recv, req, conn, NULL, &ep));
	check_ok(dat_ep_query(ep, DAT_EP_FIELD_ALL, &p));
	check_ok(dat_ep_free(ep));
	DAT_EP_ATTR a = p.ep_attr;
	if (a.max_recv_dtos < recvs)
		a.max_recv_dtos = recvs;
	if (a.max_request_dtos < reqs)
		a.max_request_dtos = reqs;
	return a;
}

static inline DAT_DTO_COOKIE cookie(uint64_t v)
{
	DAT_DTO_COOKIE c;
	c.as_64 = v;
	return c;
}

static inline struct sockaddr_in loopback_addr(void)
{
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sa;
}

static inline void connect_ep(DAT_EP_HANDLE ep, DAT_CONN_QUAL q, DAT_TIMEOUT tmo, const void *pd, DAT_COUNT pdlen)
{
	struct sockaddr_in sa = loopback_addr();
	check_ok(dat_ep_connect(ep, (DAT_IA_ADDRESS_PTR)&sa, q, tmo, pdlen, (DAT_PVOID)pd, DAT_QOS_BEST_EFFORT,
				DAT_CONNECT_DEFAULT_FLAG));
}

/* ---- the second process ---- */

/* Arguments of a child: role, mode, qualifier, extra (may be ""). */
struct child_args {
	const char *role;
	enum pat_mode mode;
	DAT_CONN_QUAL qual;
	const char *extra;
};

static struct child_args child_args;

/* The children started by the current test, killed by pat_teardown if
 * the test failed before reaping them. */
static pid_t pat_children[16];
static int pat_nchildren;

static inline pid_t spawn_child(const char *role, enum pat_mode m, DAT_CONN_QUAL q, const char *extra)
{
	char self[4096], qs[32];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	assert_true(n > 0);
	self[n] = 0;
	snprintf(qs, sizeof qs, "%#" PRIx64, (uint64_t)q);
	char *argv[] = {self, "--child", (char *)role, (char *)pat_mode_names[m], qs, (char *)(extra ? extra : ""), NULL};
	pid_t pid;
	int e = posix_spawn(&pid, self, NULL, NULL, argv, environ);
	if (e != 0)
		fail_msg("posix_spawn: %s", strerror(e));
	if (pat_nchildren < (int)(sizeof pat_children / sizeof pat_children[0]))
		pat_children[pat_nchildren++] = pid;
	return pid;
}

/* Waits (bounded) for a child and asserts that it passed. */
static inline void reap_child(pid_t pid, int limit_s, const char *what)
{
	int st = 0;
	if (wait_bounded(pid, limit_s, &st) != 0)
		fail_msg("%s: child %d did not finish within %d s (killed)", what, (int)pid, limit_s);
	for (int i = 0; i < pat_nchildren; i++)
		if (pat_children[i] == pid)
			pat_children[i] = 0;
	if (WIFSIGNALED(st))
		fail_msg("%s: child %d killed by signal %d (%s)", what, (int)pid, WTERMSIG(st), strsignal(WTERMSIG(st)));
	if (!WIFEXITED(st))
		fail_msg("%s: child %d failed (status 0x%x)", what, (int)pid, st);
	if (WEXITSTATUS(st) != 0)
		fail_msg("%s: child %d exited with status %d (its output above says why)", what, (int)pid,
			 WEXITSTATUS(st));
}

/* cmocka teardown: no child outlives a failed test. */
static inline int pat_teardown(void **state)
{
	(void)state;
	for (int i = 0; i < pat_nchildren; i++)
		if (pat_children[i] > 0) {
			kill(pat_children[i], SIGKILL);
			waitpid(pat_children[i], NULL, 0);
		}
	pat_nchildren = 0;
	return 0;
}

/* If argv asks for a child role, runs it (a cmocka group of one test) and
 * returns 1 with *rc set; returns 0 for the parent. */
static inline int pat_child_main(int argc, char **argv, const struct CMUnitTest *roles, size_t nroles, int *rc)
{
	if (argc < 6 || strcmp(argv[1], "--child") != 0)
		return 0;
	alarm(120); /* a hang is a failure, never a stuck run */
	child_args.role = argv[2];
	child_args.mode = pat_mode_of(argv[3]);
	child_args.qual = strtoull(argv[4], NULL, 0);
	child_args.extra = argv[5];
	for (size_t i = 0; i < nroles; i++)
		if (strcmp(roles[i].name, argv[2]) == 0) {
			*rc = _cmocka_run_group_tests(argv[2], &roles[i], 1, NULL, NULL);
			return 1;
		}
	fprintf(stderr, "unknown child role %s\n", argv[2]);
	*rc = 2;
	return 1;
}

#endif
