/* Data transfer and event semantics seen from C, two IAs in one process:
 * completion flags (suppress, solicited wait, per-post notification,
 * barrier fence), an RDMA write visible before a later send is delivered,
 * posted DTOs not limited by the EVD length (overflow is an async event),
 * dat_ep_get_status idleness, free with receives posted, EVD and CNO waits
 * that time out, DAT_QUEUE_EMPTY, a CNO trigger that comes before the
 * wait, and the waiter rules of dat_evd_wait. */
#define _GNU_SOURCE
#include "pattern.h"

struct side {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, evd, cr;
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep;
	struct mem m;
};

static struct waiter wt = {MODE_WAIT, DAT_HANDLE_NULL};

#define MEMSZ (4u << 20)

static void side_open(struct side *s, DAT_COUNT qlen, DAT_EP_ATTR *attr)
{
	s->ia = open_ia(&s->async);
	check_ok(dat_evd_create(s->ia, qlen, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &s->evd));
	check_ok(dat_evd_create(s->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &s->cr));
	check_ok(dat_pz_create(s->ia, &s->pz));
	check_ok(dat_ep_create(s->ia, s->pz, s->evd, s->evd, s->evd, attr, &s->ep));
	mem_create(&s->m, s->ia, s->pz, MEMSZ);
}

static void side_close(struct side *s)
{
	check_ok(dat_ia_close(s->ia, DAT_CLOSE_ABRUPT_FLAG));
	free(s->m.buf);
}

static void connect_sides(struct side *c, struct side *s)
{
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	check_ok(dat_psp_create_any(s->ia, &q, s->cr, DAT_PSP_CONSUMER_FLAG, &psp));
	connect_ep(c->ep, q, PAT_TMO, NULL, 0);
	DAT_EVENT ev = expect_event(&wt, s->cr, DAT_CONNECTION_REQUEST_EVENT, "request");
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, s->ep, 0, NULL));
	expect_event(&wt, s->evd, DAT_CONNECTION_EVENT_ESTABLISHED, "accept");
	expect_event(&wt, c->evd, DAT_CONNECTION_EVENT_ESTABLISHED, "connect");
	check_ok(dat_psp_free(psp));
}

/* Default EP attributes with the given completion flags. */
static DAT_EP_ATTR attr_with(DAT_COMPLETION_FLAGS recv, DAT_COMPLETION_FLAGS req)
{
	DAT_EVD_HANDLE async, evd;
	DAT_IA_HANDLE ia = open_ia(&async);
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep;
	DAT_EP_PARAM p;
	check_ok(dat_pz_create(ia, &pz));
	check_ok(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &evd));
	check_ok(dat_ep_create(ia, pz, evd, evd, evd, NULL, &ep));
	check_ok(dat_ep_query(ep, DAT_EP_FIELD_ALL, &p));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	p.ep_attr.recv_completion_flags = recv;
	p.ep_attr.request_completion_flags = req;
	return p.ep_attr;
}

static void post_recv(struct side *s, size_t off, size_t len, uint64_t id)
{
	DAT_LMR_TRIPLET t = mem_seg(&s->m, off, len);
	check_ok(dat_ep_post_recv(s->ep, 1, &t, cookie(id), DAT_COMPLETION_DEFAULT_FLAG));
}

static void post_send(struct side *s, size_t off, size_t len, uint64_t id, DAT_COMPLETION_FLAGS f)
{
	DAT_LMR_TRIPLET t = mem_seg(&s->m, off, len);
	check_ok(dat_ep_post_send(s->ep, 1, &t, cookie(id), f));
}

static uint64_t cookie_of(const DAT_EVENT *ev)
{
	return ev->event_data.dto_completion_event_data.user_cookie.as_64;
}

/* A 1 MiB RDMA write with its completion suppressed, then a send: the
 * receive of the send sees the whole write, and the writer sees only the
 * send's completion. */
static void test_write_visible_before_send(void **state)
{
	(void)state;
	struct side s, c;
	side_open(&s, 16, NULL);
	side_open(&c, 16, NULL);
	connect_sides(&c, &s);
	const size_t W = 1u << 20;
	for (size_t i = 0; i < W; i++)
		c.m.buf[i] = (char)(i * 31 + 7);
	post_recv(&s, W, 64, 1);
	DAT_LMR_TRIPLET src[2] = {mem_seg(&c.m, 0, W / 4), mem_seg(&c.m, W / 4, W - W / 4)};
	DAT_RMR_TRIPLET dst = rmr_seg(s.m.rctx, (uint64_t)(uintptr_t)s.m.buf, W);
	check_ok(dat_ep_post_rdma_write(c.ep, 2, src, cookie(10), &dst, DAT_COMPLETION_SUPPRESS_FLAG));
	post_send(&c, W, 64, 11, DAT_COMPLETION_DEFAULT_FLAG);
	expect_dto(&wt, s.evd, s.ep, 64, "notification");
	assert_memory_equal(s.m.buf, c.m.buf, W);
	DAT_EVENT ev = expect_event(&wt, c.evd, DAT_DTO_COMPLETION_EVENT, "send");
	assert_int_equal(cookie_of(&ev), 11);
	expect_empty(c.evd, "the suppressed write");
	side_close(&c);
	side_close(&s);
}

/* Solicited wait: unsolicited arrivals are queued without waking the
 * waiter; a solicited one wakes it. */
static void test_solicited_wait(void **state)
{
	(void)state;
	struct side s, c;
	DAT_EP_ATTR sa = attr_with(DAT_COMPLETION_SOLICITED_WAIT_FLAG, DAT_COMPLETION_DEFAULT_FLAG);
	side_open(&s, 16, &sa);
	side_open(&c, 16, NULL);
	connect_sides(&c, &s);
	post_recv(&s, 0, 64, 1);
	post_recv(&s, 64, 64, 2);
	post_send(&c, 0, 64, 10, DAT_COMPLETION_DEFAULT_FLAG);
	expect_dto(&wt, c.evd, c.ep, 64, "unsolicited send");
	DAT_EVENT ev;
	DAT_COUNT n = -1;
	check_type(dat_evd_wait(s.evd, 100000, 1, &ev, &n), DAT_TIMEOUT_EXPIRED);
	assert_int_equal(n, 1); /* the unsolicited receive is there, not notified */
	/* Consumer-controlled notification: the threshold must be 1. */
	check_type(dat_evd_wait(s.evd, 0, 2, &ev, &n), DAT_INVALID_STATE);
	post_send(&c, 0, 64, 11, DAT_COMPLETION_SOLICITED_WAIT_FLAG);
	check_ok(dat_evd_wait(s.evd, PAT_TMO, 1, &ev, &n));
	assert_int_equal(cookie_of(&ev), 1); /* woken, the waiter takes the first event */
	assert_int_equal(n, 1);
	check_ok(dat_evd_dequeue(s.evd, &ev));
	assert_int_equal(cookie_of(&ev), 2);
	side_close(&c);
	side_close(&s);
}

/* Per-post DAT_COMPLETION_UNSIGNALLED_FLAG: refused unless the EP is
 * configured for it; then its completion wakes neither an EVD waiter nor
 * the CNO, and is dequeued like any other. */
static void test_unsignalled(void **state)
{
	(void)state;
	struct side s, c;
	side_open(&s, 16, NULL);
	side_open(&c, 16, NULL);
	connect_sides(&c, &s);
	DAT_LMR_TRIPLET t = mem_seg(&c.m, 0, 64);
	check_type(dat_ep_post_send(c.ep, 1, &t, cookie(1), DAT_COMPLETION_UNSIGNALLED_FLAG), DAT_INVALID_PARAMETER);
	check_type(dat_ep_post_recv(c.ep, 1, &t, cookie(1), DAT_COMPLETION_UNSIGNALLED_FLAG), DAT_INVALID_PARAMETER);
	side_close(&c);
	side_close(&s);

	DAT_EP_ATTR ua = attr_with(DAT_COMPLETION_UNSIGNALLED_FLAG, DAT_COMPLETION_UNSIGNALLED_FLAG);
	side_open(&s, 16, NULL);
	side_open(&c, 16, &ua);
	DAT_CNO_HANDLE cno;
	check_ok(dat_cno_create(c.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ok(dat_evd_modify_cno(c.evd, cno));
	connect_sides(&c, &s);
	DAT_EVD_HANDLE hint = (DAT_EVD_HANDLE)1;
	/* The connection events triggered the CNO; take those triggers. */
	while (dat_cno_wait(cno, 0, &hint) == DAT_SUCCESS)
		;
	post_recv(&s, 0, 64, 1);
	post_send(&c, 0, 64, 2, DAT_COMPLETION_UNSIGNALLED_FLAG);
	DAT_EVENT ev;
	DAT_COUNT n = -1;
	check_type(dat_evd_wait(c.evd, 100000, 1, &ev, &n), DAT_TIMEOUT_EXPIRED);
	assert_int_equal(n, 1);
	check_type(dat_cno_wait(cno, 100000, &hint), DAT_QUEUE_EMPTY);
	assert_null(hint);
	check_ok(dat_evd_dequeue(c.evd, &ev));
	assert_int_equal(cookie_of(&ev), 2);
	assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	/* A default post on the same EP notifies. */
	post_recv(&s, 64, 64, 3);
	post_send(&c, 0, 64, 4, DAT_COMPLETION_DEFAULT_FLAG);
	check_ok(dat_cno_wait(cno, PAT_TMO, &hint));
	assert_ptr_equal(hint, c.evd);
	check_ok(dat_evd_modify_cno(c.evd, DAT_HANDLE_NULL));
	check_ok(dat_cno_free(cno));
	side_close(&c);
	side_close(&s);
}

/* A fenced send after an RDMA read: the read has completed, with its
 * data, before the send goes; completions come in post order. */
static void test_barrier_fence(void **state)
{
	(void)state;
	struct side s, c;
	side_open(&s, 16, NULL);
	side_open(&c, 16, NULL);
	connect_sides(&c, &s);
	for (int i = 0; i < 65536; i++)
		s.m.buf[i] = (char)(i ^ 0x5C);
	post_recv(&s, 65536, 64, 1);
	DAT_LMR_TRIPLET into = mem_seg(&c.m, 0, 65536);
	DAT_RMR_TRIPLET from = rmr_seg(s.m.rctx, (uint64_t)(uintptr_t)s.m.buf, 65536);
	check_ok(dat_ep_post_rdma_read(c.ep, 1, &into, cookie(10), &from, DAT_COMPLETION_DEFAULT_FLAG));
	post_send(&c, 65536, 64, 11, DAT_COMPLETION_BARRIER_FENCE_FLAG);
	DAT_EVENT ev = expect_event(&wt, c.evd, DAT_DTO_COMPLETION_EVENT, "read");
	assert_int_equal(cookie_of(&ev), 10);
	ev = expect_event(&wt, c.evd, DAT_DTO_COMPLETION_EVENT, "fenced send");
	assert_int_equal(cookie_of(&ev), 11);
	assert_memory_equal(c.m.buf, s.m.buf, 65536);
	expect_dto(&wt, s.evd, s.ep, 64, "fenced receive");
	side_close(&c);
	side_close(&s);
}

/* An EVD of length 4 takes the completions of 50 sends and 50 receives;
 * the excursion over its length is reported as an overflow on the async
 * EVD, and no completion is lost. */
static void test_dtos_beyond_evd_length(void **state)
{
	(void)state;
	struct side s, c;
	side_open(&s, 4, NULL);
	side_open(&c, 4, NULL);
	connect_sides(&c, &s);
	for (int i = 0; i < 50; i++)
		post_recv(&s, (size_t)i * 64, 64, 100 + i);
	for (int i = 0; i < 50; i++)
		post_send(&c, (size_t)i * 64, 64, 200 + i, DAT_COMPLETION_DEFAULT_FLAG);
	for (int i = 0; i < 50; i++) {
		DAT_EVENT ev = expect_event(&wt, c.evd, DAT_DTO_COMPLETION_EVENT, "send");
		assert_int_equal(cookie_of(&ev), 200 + i); /* in post order */
	}
	for (int i = 0; i < 50; i++) {
		DAT_EVENT ev = expect_event(&wt, s.evd, DAT_DTO_COMPLETION_EVENT, "receive");
		assert_int_equal(cookie_of(&ev), 100 + i);
	}
	DAT_EVENT ev = expect_event(&wt, c.async, DAT_ASYNC_ERROR_EVD_OVERFLOW, "overflow");
	assert_ptr_equal(ev.event_data.asynch_error_event_data.dat_handle, c.evd);
	side_close(&c);
	side_close(&s);
}

/* dat_ep_get_status: idle flags follow posted work; free with receives. */
static void test_status_and_free_with_receives(void **state)
{
	(void)state;
	struct side s, c;
	side_open(&s, 16, NULL);
	side_open(&c, 16, NULL);
	connect_sides(&c, &s);
	DAT_EP_STATE st;
	DAT_BOOLEAN ri, qi;
	check_ok(dat_ep_get_status(s.ep, &st, &ri, &qi));
	assert_int_equal(st, DAT_EP_STATE_CONNECTED);
	assert_true(ri == DAT_TRUE && qi == DAT_TRUE);
	post_recv(&s, 0, 64, 1);
	post_recv(&s, 64, 64, 2);
	check_ok(dat_ep_get_status(s.ep, &st, &ri, &qi));
	assert_true(ri == DAT_FALSE && qi == DAT_TRUE);
	post_send(&c, 0, 64, 3, DAT_COMPLETION_DEFAULT_FLAG);
	expect_dto(&wt, c.evd, c.ep, 64, "send");
	check_ok(dat_ep_get_status(c.ep, &st, &ri, &qi));
	assert_int_equal(qi, DAT_TRUE);
	expect_dto(&wt, s.evd, s.ep, 64, "receive");
	check_ok(dat_ep_get_status(s.ep, &st, &ri, &qi));
	assert_int_equal(ri, DAT_FALSE); /* one receive still posted */
	/* Free a connected EP with a receive posted: the peer sees the end. */
	check_ok(dat_ep_free(s.ep));
	DAT_EVENT ev = expect_event(&wt, c.evd, 0, "peer freed");
	if (ev.event_number != DAT_CONNECTION_EVENT_DISCONNECTED && ev.event_number != DAT_CONNECTION_EVENT_BROKEN)
		fail_msg("got %s", event_name(ev.event_number));
	side_close(&c);
	side_close(&s);
}

/* Waits that time out, empty queues, and the waiter rules. */
struct wait_arg {
	DAT_EVD_HANDLE evd;
	DAT_RETURN r;
};

static void *blocked_waiter(void *p)
{
	struct wait_arg *a = p;
	DAT_EVENT ev;
	DAT_COUNT n;
	a->r = dat_evd_wait(a->evd, PAT_TMO, 1, &ev, &n);
	return NULL;
}

static void test_timeouts_and_empty(void **state)
{
	(void)state;
	DAT_EVD_HANDLE async, evd, evd2;
	DAT_CNO_HANDLE cno;
	DAT_IA_HANDLE ia = open_ia(&async);
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ok(dat_evd_create(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG, &evd));
	check_ok(dat_evd_create(ia, 4, cno, DAT_EVD_SOFTWARE_FLAG, &evd2));
	DAT_EVENT ev;
	DAT_COUNT n = -1;
	check_type(dat_evd_wait(evd, 0, 1, &ev, &n), DAT_TIMEOUT_EXPIRED);
	assert_int_equal(n, 0);
	n = -1;
	long t0 = now_ns();
	check_type(dat_evd_wait(evd, 50000, 1, &ev, &n), DAT_TIMEOUT_EXPIRED);
	assert_true(now_ns() - t0 >= 50000000L);
	assert_int_equal(n, 0);
	check_type(dat_evd_dequeue(evd, &ev), DAT_QUEUE_EMPTY);
	check_type(dat_evd_wait(evd, 0, 5, &ev, &n), DAT_INVALID_PARAMETER); /* threshold > qlen */
	check_type(dat_evd_wait(evd, 0, 0, &ev, &n), DAT_INVALID_PARAMETER);
	DAT_EVD_HANDLE hint = (DAT_EVD_HANDLE)1;
	check_type(dat_cno_wait(cno, 0, &hint), DAT_QUEUE_EMPTY);
	assert_null(hint);
	hint = (DAT_EVD_HANDLE)1;
	check_type(dat_cno_wait(cno, 30000, &hint), DAT_QUEUE_EMPTY);
	assert_null(hint);

	/* A trigger before the wait is not lost. */
	DAT_EVENT se;
	memset(&se, 0, sizeof se);
	se.event_number = DAT_SOFTWARE_EVENT;
	se.event_data.software_event_data.pointer = (DAT_PVOID)0x1234;
	check_ok(dat_evd_post_se(evd2, &se));
	check_ok(dat_cno_wait(cno, 0, &hint));
	assert_ptr_equal(hint, evd2);
	check_ok(dat_evd_dequeue(evd2, &ev));
	assert_int_equal(ev.event_number, DAT_SOFTWARE_EVENT);
	assert_ptr_equal(ev.event_data.software_event_data.pointer, (DAT_PVOID)0x1234);
	assert_ptr_equal(ev.evd_handle, evd2);

	/* One waiter owns the EVD: a second wait and a dequeue are refused;
	 * making the EVD unwaitable releases the waiter with INVALID_STATE. */
	struct wait_arg a = {.evd = evd};
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, blocked_waiter, &a), 0);
	long deadline = now_ns() + PAT_TMO * 1000L;
	DAT_RETURN r;
	/* Until the thread is in its wait, a dequeue finds the queue empty. */
	while ((r = dat_evd_dequeue(evd, &ev)) != DAT_SUCCESS && DAT_GET_TYPE(r) == DAT_QUEUE_EMPTY &&
	       now_ns() < deadline)
		usleep(1000);
	assert_int_equal(DAT_GET_TYPE(r), DAT_INVALID_STATE);
	check_type(dat_evd_wait(evd, 0, 1, &ev, &n), DAT_INVALID_STATE);
	check_ok(dat_evd_set_unwaitable(evd));
	pthread_join(th, NULL);
	assert_int_equal(DAT_GET_TYPE(a.r), DAT_INVALID_STATE);
	check_type(dat_evd_wait(evd, 0, 1, &ev, &n), DAT_INVALID_STATE);
	check_ok(dat_evd_clear_unwaitable(evd));
	check_type(dat_evd_wait(evd, 0, 1, &ev, &n), DAT_TIMEOUT_EXPIRED);

	check_ok(dat_evd_free(evd2));
	check_ok(dat_evd_free(evd));
	check_ok(dat_cno_free(cno));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	alarm(250);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_visible_before_send),
		cmocka_unit_test(test_solicited_wait),
		cmocka_unit_test(test_unsignalled),
		cmocka_unit_test(test_barrier_fence),
		cmocka_unit_test(test_dtos_beyond_evd_length),
		cmocka_unit_test(test_status_and_free_with_receives),
		cmocka_unit_test(test_timeouts_and_empty),
	};
	return cmocka_run_group_tests_name("dto semantics", tests, NULL, NULL);
}
