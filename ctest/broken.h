/* What a remote access violation does to a connection, checked from both
 * ends: a request with a bad key, out of bounds, without the right, of
 * another PZ, or through a freed or unbound LMR or RMR breaks the
 * connection, as on verbs (a QP access error). dat_lmr_free(3DAT): "The use
 * of rmr_context of the destroyed LMR by a remote peer for an RDMA DTO
 * results in an error and broken connection on which it was used."
 * dat_rmr_free(3DAT): "If it fails, DAT_DTO_ERR_REMOTE_ACCESS is reported in
 * DAT_DTO_COMPLETION_STATUS for the remote RDMA DTO and the connection is
 * broken."
 *
 * So, after the initiator posts the bad request:
 *   - it completes with DAT_DTO_ERR_REMOTE_ACCESS on the initiator's
 *     request EVD, and every later request of that EP with
 *     DAT_DTO_ERR_FLUSHED, in post order;
 *   - both EPs get DAT_CONNECTION_EVENT_BROKEN on their connect EVDs and
 *     are DAT_EP_STATE_DISCONNECTED;
 *   - the target gets DAT_ASYNC_ERROR_EP_BROKEN (DAT_EP_TRANSFER_TO_ERROR)
 *     for its EP on its async EVD (verbs: IBV_EVENT_QP_ACCESS_ERR at the
 *     responder only), the initiator none;
 *   - a request posted once the EP is disconnected is "immediately flushed"
 *     (dat_ep_post_send(3DAT) and the RDMA pages).
 * Nothing is written at the target: each test checks its own memory.
 *
 * Events of different streams on one EVD (a connection event and DTO
 * completions) come in no order DAT promises, so they are matched in any
 * order; completions of one EP's requests are matched in post order. Every
 * wait is bounded (BRK_TMO_US). */
#ifndef GODAT_CTEST_BROKEN_H
#define GODAT_CTEST_BROKEN_H

#include "common.h"
#include <inttypes.h>
#include <time.h>

/* Bound of the wait for all the events of one break, in microseconds. */
#define BRK_TMO_US 10000000L

/* One end of the broken connection: its EP, the EVD its DTO completions go
 * to (the request EVD at the initiator; the receive EVD at the target, for
 * receives it had posted), its connect EVD and its IA's async EVD
 * (DAT_HANDLE_NULL: not checked). Several may be the same EVD. */
struct brk_end {
	DAT_EP_HANDLE ep;
	DAT_EVD_HANDLE dto, conn, async;
};

static inline long brk_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

/* The zero-size send dat_ep_post_send(3DAT) allows ("Can be 0 for 0 size
 * message"): a later request that needs no memory. */
static inline void brk_post_empty_send(DAT_EP_HANDLE ep, uint64_t cookie)
{
	DAT_DTO_COOKIE c;
	c.as_64 = cookie;
	check_ok(dat_ep_post_send(ep, 0, NULL, c, DAT_COMPLETION_DEFAULT_FLAG));
}

/* What is still expected, and what has been seen. */
struct brk_state {
	struct brk_end ini, tgt;
	const uint64_t *icookies; /* initiator: the bad request, then the flushed ones */
	int ni, gi;               /* how many, how many seen */
	int nt, gt;               /* target receives to be flushed, how many seen */
	int ibroken, tbroken, tasync;
	const char *file;
	int line;
};

static inline void brk_fail(const struct brk_state *s, const char *why, const DAT_EVENT *ev)
{
	print_error("ERROR: after a remote access violation: %s (event 0x%x)\n"
		    "  seen: %d of %d initiator completions, %d of %d flushed target receives, "
		    "initiator BROKEN %d, target BROKEN %d, target EP_BROKEN %d\n",
		    why, ev ? (unsigned)ev->event_number : 0u, s->gi, s->ni, s->gt, s->nt, s->ibroken, s->tbroken,
		    s->tasync);
	_fail(s->file, s->line);
}

static inline int brk_done(const struct brk_state *s)
{
	return s->gi == s->ni && s->gt == s->nt && s->ibroken && s->tbroken &&
	       (s->tgt.async == DAT_HANDLE_NULL || s->tasync);
}

/* Matches one event taken from evd against what is expected there. */
static inline void brk_match(struct brk_state *s, DAT_EVD_HANDLE evd, const DAT_EVENT *ev)
{
	char why[256];
	if (ev->event_number == DAT_DTO_COMPLETION_EVENT) {
		const DAT_DTO_COMPLETION_EVENT_DATA *d = &ev->event_data.dto_completion_event_data;
		if (evd == s->ini.dto && d->ep_handle == s->ini.ep && s->gi < s->ni) {
			DAT_DTO_COMPLETION_STATUS want = s->gi == 0 ? DAT_DTO_ERR_REMOTE_ACCESS : DAT_DTO_ERR_FLUSHED;
			if (d->user_cookie.as_64 != s->icookies[s->gi] || d->status != want) {
				snprintf(why, sizeof why,
					 "initiator completion cookie %" PRIu64 " status %d, want cookie %" PRIu64
					 " status %d (%s)",
					 (uint64_t)d->user_cookie.as_64, (int)d->status, s->icookies[s->gi], (int)want,
					 s->gi == 0 ? "REMOTE_ACCESS" : "FLUSHED");
				brk_fail(s, why, ev);
			}
			s->gi++;
			return;
		}
		if (evd == s->tgt.dto && d->ep_handle == s->tgt.ep && s->gt < s->nt) {
			if (d->status != DAT_DTO_ERR_FLUSHED) {
				snprintf(why, sizeof why, "target receive cookie %" PRIu64 " status %d, want FLUSHED (%d)",
					 (uint64_t)d->user_cookie.as_64, (int)d->status, (int)DAT_DTO_ERR_FLUSHED);
				brk_fail(s, why, ev);
			}
			s->gt++;
			return;
		}
		snprintf(why, sizeof why, "unexpected DTO completion: EP %p cookie %" PRIu64 " status %d",
			 (void *)d->ep_handle, (uint64_t)d->user_cookie.as_64, (int)d->status);
		brk_fail(s, why, ev);
	}
	if (ev->event_number == DAT_CONNECTION_EVENT_BROKEN) {
		DAT_EP_HANDLE ep = ev->event_data.connect_event_data.ep_handle;
		if (evd == s->ini.conn && ep == s->ini.ep && !s->ibroken) {
			s->ibroken = 1;
			return;
		}
		if (evd == s->tgt.conn && ep == s->tgt.ep && !s->tbroken) {
			s->tbroken = 1;
			return;
		}
		brk_fail(s, "unexpected or repeated BROKEN", ev);
	}
	if (ev->event_number == DAT_ASYNC_ERROR_EP_BROKEN && evd == s->tgt.async && !s->tasync) {
		const DAT_ASYNCH_ERROR_EVENT_DATA *a = &ev->event_data.asynch_error_event_data;
		if (a->dat_handle != (DAT_HANDLE)s->tgt.ep || a->reason != DAT_EP_TRANSFER_TO_ERROR) {
			snprintf(why, sizeof why, "target EP_BROKEN for handle %p reason %d, want EP %p reason %d",
				 (void *)a->dat_handle, (int)a->reason, (void *)s->tgt.ep, (int)DAT_EP_TRANSFER_TO_ERROR);
			brk_fail(s, why, ev);
		}
		s->tasync = 1;
		return;
	}
	if (ev->event_number == DAT_CONNECTION_EVENT_DISCONNECTED)
		brk_fail(s, "DISCONNECTED where BROKEN is due", ev);
	brk_fail(s, "unexpected event", ev);
}

/* Takes events from the EVDs of both ends until everything expected came
 * (bounded); anything else fails. */
static inline void brk_collect(struct brk_state *s)
{
	DAT_EVD_HANDLE set[8];
	int n = 0;
	DAT_EVD_HANDLE all[8] = {s->ini.dto, s->ini.conn, s->tgt.dto, s->tgt.conn, s->tgt.async};
	for (int i = 0; i < 5; i++) {
		int dup = all[i] == DAT_HANDLE_NULL;
		for (int j = 0; j < n && !dup; j++)
			dup = set[j] == all[i];
		if (!dup)
			set[n++] = all[i];
	}
	long deadline = brk_now_us() + BRK_TMO_US;
	while (!brk_done(s)) {
		int got = 0;
		for (int i = 0; i < n; i++) {
			DAT_EVENT ev;
			memset(&ev, 0, sizeof ev);
			DAT_RETURN r = dat_evd_dequeue(set[i], &ev);
			if (r == DAT_SUCCESS) {
				brk_match(s, set[i], &ev);
				got = 1;
			} else if (DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY) {
				print_error("ERROR: dat_evd_dequeue: %s\n", ret_name(r));
				brk_fail(s, "dequeue failed", NULL);
			}
		}
		if (got)
			continue;
		long left = deadline - brk_now_us();
		if (left <= 0)
			brk_fail(s, "not everything came within the bound", NULL);
		/* Sleep in the library on one EVD still owed an event, a short
		 * while, then look at all of them again. */
		DAT_EVD_HANDLE w = s->gi < s->ni ? s->ini.dto : !s->ibroken ? s->ini.conn : !s->tbroken ? s->tgt.conn :
				   s->gt < s->nt ? s->tgt.dto : s->tgt.async;
		DAT_EVENT ev;
		DAT_COUNT more;
		memset(&ev, 0, sizeof ev);
		DAT_RETURN r = dat_evd_wait(w, (DAT_TIMEOUT)(left < 20000 ? left : 20000), 1, &ev, &more);
		if (r == DAT_SUCCESS)
			brk_match(s, w, &ev);
		else if (DAT_GET_TYPE(r) != DAT_TIMEOUT_EXPIRED) {
			print_error("ERROR: dat_evd_wait: %s\n", ret_name(r));
			brk_fail(s, "wait failed", NULL);
		}
	}
}

static inline void brk_expect_disconnected(const struct brk_state *s, DAT_EP_HANDLE ep, const char *which)
{
	DAT_EP_STATE st = (DAT_EP_STATE)-1;
	check_ok(dat_ep_get_status(ep, &st, NULL, NULL));
	if (st != DAT_EP_STATE_DISCONNECTED) {
		char why[128];
		snprintf(why, sizeof why, "%s EP in state %d, want DAT_EP_STATE_DISCONNECTED (%d)", which, (int)st,
			 (int)DAT_EP_STATE_DISCONNECTED);
		brk_fail(s, why, NULL);
	}
}

/* The request with cookie bad, just posted on ini.ep, was a remote access
 * violation at tgt.ep: checks everything above. A zero-size send (cookie
 * bad + 1) is posted at once behind it and must be flushed, and so must one
 * (cookie bad + 2) posted once the EP is disconnected. tgt_flushed
 * receives posted at the target must come back flushed. The EVDs hold
 * nothing more afterwards. */
static inline void expect_access_broken_at(struct brk_end ini, uint64_t bad, struct brk_end tgt, int tgt_flushed,
					   const char *file, int line)
{
	uint64_t cookies[2] = {bad, bad + 1};
	struct brk_state s;
	memset(&s, 0, sizeof s);
	s.ini = ini;
	s.tgt = tgt;
	s.icookies = cookies;
	s.ni = 2;
	s.nt = tgt_flushed;
	s.file = file;
	s.line = line;
	brk_post_empty_send(ini.ep, bad + 1);
	brk_collect(&s);
	brk_expect_disconnected(&s, ini.ep, "initiator");
	brk_expect_disconnected(&s, tgt.ep, "target");

	/* Posted now, on a disconnected EP: flushed. */
	cookies[0] = 0;
	cookies[1] = bad + 2;
	s.gi = 1; /* only the flush is owed */
	brk_post_empty_send(ini.ep, bad + 2);
	brk_collect(&s);

	DAT_EVD_HANDLE all[6] = {ini.dto, ini.conn, ini.async, tgt.dto, tgt.conn, tgt.async};
	for (int i = 0; i < 6; i++) {
		DAT_EVENT ev;
		memset(&ev, 0, sizeof ev);
		if (all[i] == DAT_HANDLE_NULL)
			continue;
		DAT_RETURN r = dat_evd_dequeue(all[i], &ev);
		if (DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY) {
			print_error("ERROR: EVD %p: %s\n", (void *)all[i], ret_name(r));
			brk_fail(&s, i == 2 ? "an async event at the initiator" : "an event too many", &ev);
		}
	}
}
#define expect_access_broken(ini, bad, tgt, tgt_flushed)                                                          \
	expect_access_broken_at((ini), (bad), (tgt), (tgt_flushed), __FILE__, __LINE__)

#endif
