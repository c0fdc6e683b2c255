/* Helpers of the SRQ and watermark tests: a "side" is an IA with its EVDs,
 * a PZ and one registered buffer; two sides in one process connect their
 * EPs over the software provider. Every wait is bounded. */
#ifndef GODAT_CTEST_SRQ_H
#define GODAT_CTEST_SRQ_H

#include "common.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#define TMO 5000000 /* every wait: 5 s, in microseconds */
#define SLOT 256    /* bytes per receive or send slot of a side's buffer */
#define NSLOT 4096  /* slots: the first half receives, the second sends */

struct side {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, dto, conn, cr;
	DAT_PZ_HANDLE pz;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	char *buf;
	DAT_EP_ATTR attr; /* the provider's defaults, srq_soft_hw = DAT_HW_DEFAULT */
};

static inline void side_open(struct side *s)
{
	DAT_REGION_DESCRIPTION rd;
	DAT_RMR_CONTEXT rctx;
	DAT_VLEN len;
	DAT_VADDR va;
	DAT_EP_HANDLE ep;
	DAT_EP_PARAM p;
	memset(s, 0, sizeof *s);
	s->ia = open_ia(&s->async);
	check_ok(dat_evd_create(s->ia, 1024, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->dto));
	check_ok(dat_evd_create(s->ia, 64, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &s->conn));
	check_ok(dat_evd_create(s->ia, 64, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &s->cr));
	check_ok(dat_pz_create(s->ia, &s->pz));
	assert_int_equal(posix_memalign((void **)&s->buf, 4096, (size_t)NSLOT * SLOT), 0);
	memset(s->buf, 0, (size_t)NSLOT * SLOT);
	rd.for_va = s->buf;
	check_ok(dat_lmr_create(s->ia, DAT_MEM_TYPE_VIRTUAL, rd, (DAT_VLEN)NSLOT * SLOT, s->pz, DAT_MEM_PRIV_ALL_FLAG,
				&s->lmr, &s->lctx, &rctx, &len, &va));
	check_ok(dat_ep_create(s->ia, s->pz, s->dto, s->dto, s->conn, NULL, &ep));
	check_ok(dat_ep_query(ep, DAT_EP_FIELD_ALL, &p));
	check_ok(dat_ep_free(ep));
	s->attr = p.ep_attr;
	s->attr.srq_soft_hw = DAT_HW_DEFAULT;
}

static inline void side_close(struct side *s)
{
	check_ok(dat_ia_close(s->ia, DAT_CLOSE_ABRUPT_FLAG));
	free(s->buf);
}

/* Receive slot i (len bytes) and send slot i of a side's buffer. */
static inline DAT_LMR_TRIPLET rslot(struct side *s, int i, DAT_VLEN len)
{
	DAT_LMR_TRIPLET t = {.lmr_context = s->lctx, .virtual_address = (DAT_VADDR)(uintptr_t)(s->buf + (size_t)i * SLOT),
			     .segment_length = len};
	return t;
}

static inline DAT_LMR_TRIPLET sslot(struct side *s, int i, DAT_VLEN len)
{
	return rslot(s, NSLOT / 2 + i % (NSLOT / 2), len);
}

static inline DAT_SRQ_HANDLE srq_make(struct side *s, DAT_COUNT n, DAT_COUNT lw)
{
	DAT_SRQ_ATTR a = {.max_recv_dtos = n, .max_recv_iov = 2, .low_watermark = lw};
	DAT_SRQ_HANDLE q;
	check_ok(dat_srq_create(s->ia, s->pz, &a, &q));
	return q;
}

static inline DAT_EP_HANDLE ep_make(struct side *s, DAT_SRQ_HANDLE srq)
{
	DAT_EP_HANDLE ep;
	if (srq)
		check_ok(dat_ep_create_with_srq(s->ia, s->pz, s->dto, s->dto, s->conn, srq, &s->attr, &ep));
	else
		check_ok(dat_ep_create(s->ia, s->pz, s->dto, s->dto, s->conn, &s->attr, &ep));
	return ep;
}

/* Posts receive slot i (SLOT bytes) to the SRQ with cookie i. */
static inline void srq_post(struct side *s, DAT_SRQ_HANDLE q, int i)
{
	DAT_LMR_TRIPLET t = rslot(s, i, SLOT);
	DAT_DTO_COOKIE c = {.as_64 = (DAT_UINT64)i};
	check_ok(dat_srq_post_recv(q, 1, &t, c));
}

static inline DAT_EVENT wait_ev(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;
	DAT_COUNT n;
	DAT_RETURN r = dat_evd_wait(evd, TMO, 1, &ev, &n);
	if (r != DAT_SUCCESS)
		fail_msg("dat_evd_wait: %s", ret_name(r));
	return ev;
}

/* The EVD holds no event now. */
static inline void expect_none(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;
	DAT_RETURN r = dat_evd_dequeue(evd, &ev);
	if (DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY)
		fail_msg("unexpected event 0x%x (%s)", ev.event_number, ret_name(r));
}

/* The next event is the SRQ or EP watermark event about h. DAT 1.2 has no
 * event number of its own for them: godat reports them as the queue-
 * affiliated DAT_ASYNC_ERROR_EP_BROKEN; dat_handle and reason say which. */
static inline void expect_watermark(struct side *s, DAT_HANDLE h, DAT_COUNT reason)
{
	DAT_EVENT ev = wait_ev(s->async);
	assert_int_equal(ev.event_number, DAT_ASYNC_ERROR_EP_BROKEN);
	assert_ptr_equal(ev.event_data.asynch_error_event_data.dat_handle, h);
	assert_int_equal(ev.event_data.asynch_error_event_data.reason, reason);
}

static inline DAT_EVENT expect_dto(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev = wait_ev(evd);
	assert_int_equal(ev.event_number, DAT_DTO_COMPLETION_EVENT);
	return ev;
}

/* The next receive completion on evd of a side whose peer c runs in this
 * thread too: while evd is empty, c's EVD is polled, which progresses c's
 * EPs (sends that waited for ring space go out). Successful send
 * completions found there are counted in *sends (any event fails the test
 * when sends is NULL). Bounded. */
static inline DAT_EVENT recv_ev(DAT_EVD_HANDLE evd, struct side *c, int *sends)
{
	struct timespec ts = {0, 100000};
	DAT_EVENT ev;
	for (int i = 0; i < 50000; i++) {
		if (dat_evd_dequeue(evd, &ev) == DAT_SUCCESS) {
			assert_int_equal(ev.event_number, DAT_DTO_COMPLETION_EVENT);
			return ev;
		}
		DAT_EVENT cev;
		while (dat_evd_dequeue(c->dto, &cev) == DAT_SUCCESS) {
			if (!sends || cev.event_number != DAT_DTO_COMPLETION_EVENT ||
			    cev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS)
				fail_msg("unexpected event 0x%x on the peer", cev.event_number);
			(*sends)++;
		}
		nanosleep(&ts, NULL);
	}
	fail_msg("no receive completion within 5 s");
	return ev;
}

/* Connects cep of side c to sep of side s. */
static inline void connect_eps(struct side *c, DAT_EP_HANDLE cep, struct side *s, DAT_EP_HANDLE sep)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	check_ok(dat_psp_create_any(s->ia, &q, s->cr, DAT_PSP_CONSUMER_FLAG, &psp));
	check_ok(dat_ep_connect(cep, (DAT_IA_ADDRESS_PTR)&sa, q, TMO, 0, NULL, DAT_QOS_BEST_EFFORT,
				DAT_CONNECT_DEFAULT_FLAG));
	DAT_EVENT ev = wait_ev(s->cr);
	assert_int_equal(ev.event_number, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, sep, 0, NULL));
	ev = wait_ev(s->conn);
	assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, sep);
	ev = wait_ev(c->conn);
	assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_ESTABLISHED);
	check_ok(dat_psp_free(psp));
}

/* Sends n messages of len bytes (len >= 8) on ep, each carrying (tag, seq
 * from first) in its first 8 bytes; completions suppressed. */
static inline void send_tagged(struct side *c, DAT_EP_HANDLE ep, uint32_t tag, int n, int first, DAT_VLEN len)
{
	static int next_slot;
	for (int i = 0; i < n; i++) {
		int k = next_slot++;
		DAT_LMR_TRIPLET t = sslot(c, k, len);
		uint32_t hdr[2] = {tag, (uint32_t)(first + i)};
		memcpy((char *)(uintptr_t)t.virtual_address, hdr, sizeof hdr);
		DAT_DTO_COOKIE ck = {.as_64 = (DAT_UINT64)(first + i)};
		check_ok(dat_ep_post_send(ep, 1, &t, ck, DAT_COMPLETION_SUPPRESS_FLAG));
	}
}

/* The (tag, seq) a receive completion's buffer holds. */
static inline void tag_of(struct side *s, const DAT_EVENT *ev, uint32_t *tag, uint32_t *seq)
{
	int i = (int)ev->event_data.dto_completion_event_data.user_cookie.as_64;
	uint32_t hdr[2];
	memcpy(hdr, s->buf + (size_t)i * SLOT, sizeof hdr);
	*tag = hdr[0];
	*seq = hdr[1];
}

static inline void srq_counts(DAT_SRQ_HANDLE q, DAT_COUNT *avail, DAT_COUNT *outst)
{
	DAT_SRQ_PARAM p;
	check_ok(dat_srq_query(q, DAT_SRQ_FIELD_AVAILABLE_DTO_COUNT | DAT_SRQ_FIELD_OUTSTANDING_DTO_COUNT, &p));
	*avail = p.available_dto_count;
	*outst = p.outstanding_dto_count;
}

/* Queries until the SRQ has at most avail buffers (arrivals are progressed
 * by the query itself); bounded. */
static inline void srq_until_avail(DAT_SRQ_HANDLE q, DAT_COUNT avail)
{
	struct timespec ts = {0, 1000000};
	DAT_COUNT a, o;
	for (int i = 0; i < 5000; i++) {
		srq_counts(q, &a, &o);
		if (a <= avail)
			return;
		nanosleep(&ts, NULL);
	}
	fail_msg("SRQ still has %d buffers, want %d", a, avail);
}

static inline DAT_EP_STATE ep_state(DAT_EP_HANDLE ep)
{
	DAT_EP_STATE st;
	check_ok(dat_ep_get_status(ep, &st, NULL, NULL));
	return st;
}

/* A freed handle of each family the tests use as a "bad handle". */
static inline DAT_HANDLE freed_pz(struct side *s)
{
	DAT_PZ_HANDLE pz;
	check_ok(dat_pz_create(s->ia, &pz));
	check_ok(dat_pz_free(pz));
	return pz;
}

#endif
