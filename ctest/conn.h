/* Helpers for the EP, PSP, RSP and CR page tests: an "end" is an IA with
 * its own PZ, EVDs and one EP; a pair is two ends in this process connected
 * over 127.0.0.1 through a PSP. Every wait is bounded (CONN_TMO). */
#ifndef GODAT_CTEST_CONN_H
#define GODAT_CTEST_CONN_H

#include "common.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

/* Bound of every wait for an event, in microseconds. */
#define CONN_TMO 5000000

struct end {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async;
	DAT_EVD_HANDLE req, recv, conn, cr; /* one EVD per stream */
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep;
};

struct pair {
	struct end a, p; /* active and passive side */
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
};

/* Registered memory: a malloc'd buffer and its LMR. */
struct mem {
	unsigned char *buf;
	DAT_VLEN len;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lc;
	DAT_RMR_CONTEXT rc;
};

static inline DAT_EVD_HANDLE make_evd(DAT_IA_HANDLE ia, DAT_EVD_FLAGS flags)
{
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL;
	check_ok(dat_evd_create(ia, 64, DAT_HANDLE_NULL, flags, &evd));
	return evd;
}

/* Opens an end on the IA called name; attr NULL gives the EP provider
 * defaults. */
static inline void end_open_ia(struct end *e, const char *name, const DAT_EP_ATTR *attr)
{
	memset(e, 0, sizeof *e);
	check_ok(dat_ia_open((char *)name, 16, &e->async, &e->ia));
	e->req = make_evd(e->ia, DAT_EVD_DTO_FLAG);
	e->recv = make_evd(e->ia, DAT_EVD_DTO_FLAG);
	e->conn = make_evd(e->ia, DAT_EVD_CONNECTION_FLAG);
	e->cr = make_evd(e->ia, DAT_EVD_CR_FLAG);
	check_ok(dat_pz_create(e->ia, &e->pz));
	check_ok(dat_ep_create(e->ia, e->pz, e->recv, e->req, e->conn, (DAT_EP_ATTR *)attr, &e->ep));
}

/* Opens an end on the IA under test. */
static inline void end_open(struct end *e, const DAT_EP_ATTR *attr)
{
	end_open_ia(e, TEST_IA, attr);
}

/* Closes the IA abruptly, which destroys every object of the end. */
static inline void end_close(struct end *e)
{
	check_ok(dat_ia_close(e->ia, DAT_CLOSE_ABRUPT_FLAG));
}

static inline struct sockaddr_in loopback(void)
{
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sa;
}

/* dat_ep_connect to 127.0.0.1:q with NUL-terminated private data pd (or
 * none when pd is NULL). */
static inline DAT_RETURN connect_ep(DAT_EP_HANDLE ep, DAT_CONN_QUAL q, DAT_TIMEOUT tmo, const char *pd)
{
	struct sockaddr_in sa = loopback();
	return dat_ep_connect(ep, (DAT_IA_ADDRESS_PTR)&sa, q, tmo, pd ? (DAT_COUNT)strlen(pd) + 1 : 0,
			      (DAT_PVOID)pd, DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG);
}

/* The waits below report a failure at their caller's line, so a failing
 * case names the wait that failed, not this header. */

/* The next event of evd; fails the test after CONN_TMO. */
static inline DAT_EVENT wait_ev_at(DAT_EVD_HANDLE evd, const char *file, int line)
{
	DAT_EVENT ev;
	DAT_COUNT n = 0;
	memset(&ev, 0, sizeof ev);
	DAT_RETURN r = dat_evd_wait(evd, CONN_TMO, 1, &ev, &n);
	if (r != DAT_SUCCESS) {
		print_error("ERROR: no event within %d us: %s\n", CONN_TMO, ret_name(r));
		_fail(file, line);
	}
	return ev;
}
#define wait_ev(evd) wait_ev_at((evd), __FILE__, __LINE__)

/* The next event of evd, which must be number n. */
static inline DAT_EVENT expect_ev_at(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER n, const char *file, int line)
{
	DAT_EVENT ev = wait_ev_at(evd, file, line);
	if (ev.event_number != n) {
		print_error("ERROR: event 0x%x, want 0x%x\n", (unsigned)ev.event_number, (unsigned)n);
		_fail(file, line);
	}
	return ev;
}
#define expect_ev(evd, n) expect_ev_at((evd), (n), __FILE__, __LINE__)

/* The next event of evd is a DTO completion of ep with this cookie and
 * status; returns the transferred length. */
static inline DAT_VLEN expect_dto_at(DAT_EVD_HANDLE evd, DAT_EP_HANDLE ep, uint64_t cookie,
				     DAT_DTO_COMPLETION_STATUS st, const char *file, int line)
{
	DAT_EVENT ev = expect_ev_at(evd, DAT_DTO_COMPLETION_EVENT, file, line);
	const DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
	if (d->ep_handle != ep || d->user_cookie.as_64 != cookie || d->status != st) {
		print_error("ERROR: DTO of EP %p cookie %llu status %d, want EP %p cookie %llu status %d\n",
			    (void *)d->ep_handle, (unsigned long long)d->user_cookie.as_64, (int)d->status, (void *)ep,
			    (unsigned long long)cookie, (int)st);
		_fail(file, line);
	}
	return d->transfered_length;
}
#define expect_dto(evd, ep, cookie, st) expect_dto_at((evd), (ep), (cookie), (st), __FILE__, __LINE__)

/* No event is queued on evd right now. */
static inline void expect_empty(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;
	check_type(dat_evd_dequeue(evd, &ev), DAT_QUEUE_EMPTY);
}

static inline DAT_EP_STATE ep_state(DAT_EP_HANDLE ep)
{
	DAT_EP_STATE st = (DAT_EP_STATE)-1;
	check_ok(dat_ep_get_status(ep, &st, NULL, NULL));
	return st;
}

/* Opens both ends on the IA called name and a PSP on the passive one. */
static inline void pair_open_ia(struct pair *x, const char *name, const DAT_EP_ATTR *attr)
{
	end_open_ia(&x->a, name, attr);
	end_open_ia(&x->p, name, attr);
	check_ok(dat_psp_create_any(x->p.ia, &x->q, x->p.cr, DAT_PSP_CONSUMER_FLAG, &x->psp));
}

/* Opens both ends on the IA under test and a PSP on the passive one. */
static inline void pair_open(struct pair *x, const DAT_EP_ATTR *attr)
{
	pair_open_ia(x, TEST_IA, attr);
}

/* Connects a.ep to p.ep: request, accept, both established. */
static inline void pair_connect(struct pair *x)
{
	check_ok(connect_ep(x->a.ep, x->q, CONN_TMO, NULL));
	DAT_EVENT ev = expect_ev(x->p.cr, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, x->p.ep, 0, NULL));
	expect_ev(x->a.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
	expect_ev(x->p.conn, DAT_CONNECTION_EVENT_ESTABLISHED);
}

static inline void pair_up(struct pair *x, const DAT_EP_ATTR *attr)
{
	pair_open(x, attr);
	pair_connect(x);
}

static inline void pair_close(struct pair *x)
{
	end_close(&x->a);
	end_close(&x->p);
}

/* Disconnects a.ep and waits for both sides' disconnect events. */
static inline void pair_disconnect(struct pair *x)
{
	check_ok(dat_ep_disconnect(x->a.ep, DAT_CLOSE_ABRUPT_FLAG));
	expect_ev(x->a.conn, DAT_CONNECTION_EVENT_DISCONNECTED);
	expect_ev(x->p.conn, DAT_CONNECTION_EVENT_DISCONNECTED);
}

static inline DAT_IA_ATTR ia_attr(DAT_IA_HANDLE ia)
{
	DAT_IA_ATTR a;
	DAT_EVD_HANDLE async;
	check_ok(dat_ia_query(ia, &async, DAT_IA_FIELD_ALL, &a, 0, NULL));
	return a;
}

/* The attributes of e's EP (the provider defaults when e was opened with
 * NULL attributes). */
static inline DAT_EP_ATTR ep_attr_of(const struct end *e)
{
	DAT_EP_PARAM p;
	check_ok(dat_ep_query(e->ep, DAT_EP_FIELD_ALL, &p));
	return p.ep_attr;
}

/* The provider's default EP attributes, to start custom ones from. */
static inline DAT_EP_ATTR provider_defaults(void)
{
	struct end e;
	end_open(&e, NULL);
	DAT_EP_ATTR a = ep_attr_of(&e);
	end_close(&e);
	return a;
}

/* Registers len zeroed bytes in pz with privileges priv. */
static inline void mem_reg(struct mem *m, DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, DAT_VLEN len, DAT_MEM_PRIV_FLAGS priv)
{
	DAT_REGION_DESCRIPTION rd;
	DAT_VLEN rl;
	DAT_VADDR ra;
	memset(m, 0, sizeof *m);
	m->buf = calloc(1, len);
	assert_non_null(m->buf);
	m->len = len;
	rd.for_va = m->buf;
	check_ok(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, len, pz, priv, &m->lmr, &m->lc, &m->rc, &rl, &ra));
}

/* Frees the buffer; the LMR goes with its IA unless freed here. */
static inline void mem_free(struct mem *m, int free_lmr)
{
	if (free_lmr)
		check_ok(dat_lmr_free(m->lmr));
	free(m->buf);
	m->buf = NULL;
}

static inline DAT_LMR_TRIPLET iov_at(const struct mem *m, DAT_VLEN off, DAT_VLEN len)
{
	DAT_LMR_TRIPLET t;
	memset(&t, 0, sizeof t);
	t.lmr_context = m->lc;
	t.virtual_address = (DAT_VADDR)(uintptr_t)(m->buf + off);
	t.segment_length = len;
	return t;
}

static inline DAT_RMR_TRIPLET rmr_at(const struct mem *m, DAT_VLEN off, DAT_VLEN len)
{
	DAT_RMR_TRIPLET t;
	memset(&t, 0, sizeof t);
	t.rmr_context = m->rc;
	t.target_address = (DAT_VADDR)(uintptr_t)(m->buf + off);
	t.segment_length = len;
	return t;
}

static inline DAT_DTO_COOKIE cookie(uint64_t v)
{
	DAT_DTO_COOKIE c;
	c.as_64 = v;
	return c;
}

/* Lowers the open-file limit to 0 so that any call needing a new file
 * descriptor fails with EMFILE: the provider's reachable resource limit.
 * Returns the limit to restore with fds_restore. */
static inline struct rlimit fds_exhaust(void)
{
	struct rlimit old, none;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	none = old;
	none.rlim_cur = 0;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &none), 0);
	return old;
}

static inline void fds_restore(struct rlimit old)
{
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
}

/* A handle value that names no object: a freed EP of a closed IA. */
static inline DAT_EP_HANDLE dead_ep(void)
{
	struct end e;
	end_open(&e, NULL);
	DAT_EP_HANDLE ep = e.ep;
	end_close(&e);
	return ep;
}

#endif
