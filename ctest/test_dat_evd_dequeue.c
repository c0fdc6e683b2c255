/* dat_evd_dequeue(3DAT): every return value; event order and exactly-once
 * delivery; what connection events carry. */
#define _GNU_SOURCE
#include "pages.h"

/* Dequeues (polling, bounded) the next event, which must be number. */
static DAT_EVENT dequeue_next(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER number)
{
	DAT_EVENT ev;
	long deadline = now_ns() + 5000000000L;
	for (;;) {
		memset(&ev, 0, sizeof ev);
		DAT_RETURN r = dat_evd_dequeue(evd, &ev);
		if (r == DAT_SUCCESS)
			break;
		check_ret(r, DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
		if (now_ns() > deadline)
			fail_msg("no event 0x%x within 5 s", (unsigned)number);
		usleep(100);
	}
	if (ev.event_number != number)
		fail_msg("event 0x%x, want 0x%x", (unsigned)ev.event_number, (unsigned)number);
	return ev;
}

/* DAT_SUCCESS: "The dat_evd_dequeue() function removes the first event
 * from the Event Dispatcher event queue and fills the Consumer allocated
 * event structure with event data. The first element in this structure
 * provides the type of the event; the rest provides the
 * event-type-specific parameters." */
static void test_evd_dequeue_success(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 8, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	post_se(evd, 0x1111);
	post_se(evd, 0x2222);
	post_se(evd, 0x3333);
	DAT_EVENT ev;
	memset(&ev, 0xA5, sizeof ev);
	check_ok(dat_evd_dequeue(evd, &ev));
	assert_int_equal(ev.event_number, DAT_SOFTWARE_EVENT);
	assert_ptr_equal(ev.evd_handle, evd);
	assert_int_equal((uintptr_t)ev.event_data.software_event_data.pointer, 0x1111);
	dequeue_se(evd, 0x2222);
	dequeue_se(evd, 0x3333);
	expect_empty(evd);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_QUEUE_EMPTY: "There are no entries on the Event Dispatcher queue";
 * the event structure is left alone. */
static void test_evd_dequeue_queue_empty(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 8, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVENT ev;
	memset(&ev, 0xA5, sizeof ev);
	check_ret(dat_evd_dequeue(evd, &ev), DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	assert_int_equal(((unsigned char *)&ev)[0], 0xA5);
	post_se(evd, 1);
	dequeue_se(evd, 1);
	check_ret(dat_evd_dequeue(evd, &ev), DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_STATE: "There is already a waiter on the EVD"
 * (DAT_INVALID_STATE_EVD_WAITER); the event then goes to the waiter. */
static void test_evd_dequeue_invalid_state(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 8, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	struct blocked w;
	DAT_EVENT ev;
	blocked_start(&w, blocked_evd_main, evd, 20 * 1000000, 1);
	wait_until_sleeping(&w);
	check_ret(dat_evd_dequeue(evd, &ev), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_WAITER);
	post_se(evd, 5);
	blocked_join(&w, 10);
	check_ok(w.ret);
	assert_int_equal((uintptr_t)w.ev.event_data.software_event_data.pointer, 5);
	expect_empty(evd);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_HANDLE: "evd_handle is invalid" (DAT_NO_SUBTYPE). */
static void test_evd_dequeue_invalid_handle(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVENT ev;
	check_ok(dat_evd_free(evd));
	check_ret(dat_evd_dequeue(DAT_HANDLE_NULL, &ev), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_dequeue(evd, &ev), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ret(dat_evd_dequeue(ia, &ev), DAT_INVALID_HANDLE, DAT_NO_SUBTYPE);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

#define NTHREADS 4
#define NEVENTS 4000

struct dq_thread {
	pthread_t t;
	DAT_EVD_HANDLE evd;
	volatile int *stop;
	unsigned char *seen; /* per pointer value, how many times */
	int got, bad;
};

static void *dq_main(void *arg)
{
	struct dq_thread *d = arg;
	long deadline = now_ns() + 20000000000L;
	while (!*d->stop && now_ns() < deadline) {
		DAT_EVENT ev;
		DAT_RETURN r = dat_evd_dequeue(d->evd, &ev);
		if (r == DAT_SUCCESS) {
			uintptr_t p = (uintptr_t)ev.event_data.software_event_data.pointer;
			if (p < 1 || p > NEVENTS)
				d->bad++;
			else
				__atomic_add_fetch(&d->seen[p], 1, __ATOMIC_SEQ_CST);
			d->got++;
		} else if (r != (DAT_RETURN)(DAT_CLASS_ERROR | DAT_QUEUE_EMPTY)) {
			d->bad++;
		}
	}
	return NULL;
}

/* USAGE: "No matter how many contexts attempt to dequeue from an Event
 * Dispatcher, each event is delivered exactly once." Four threads dequeue
 * while the main thread posts; every event arrives once. */
static void test_evd_dequeue_exactly_once(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, NEVENTS, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	static unsigned char seen[NEVENTS + 1];
	volatile int stop = 0;
	struct dq_thread th[NTHREADS];
	memset(seen, 0, sizeof seen);
	for (int i = 0; i < NTHREADS; i++) {
		th[i] = (struct dq_thread){.evd = evd, .stop = &stop, .seen = seen};
		assert_int_equal(pthread_create(&th[i].t, NULL, dq_main, &th[i]), 0);
	}
	for (uintptr_t p = 1; p <= NEVENTS; p++)
		post_se(evd, p);
	long deadline = now_ns() + 20000000000L;
	for (;;) {
		int total = 0;
		for (int i = 0; i < NTHREADS; i++)
			total += __atomic_load_n(&th[i].got, __ATOMIC_SEQ_CST);
		if (total >= NEVENTS || now_ns() > deadline)
			break;
		usleep(1000);
	}
	stop = 1;
	int total = 0, bad = 0;
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(th[i].t, NULL);
		total += th[i].got;
		bad += th[i].bad;
	}
	assert_int_equal(bad, 0);
	assert_int_equal(total, NEVENTS);
	for (int p = 1; p <= NEVENTS; p++)
		if (seen[p] != 1)
			fail_msg("event %d delivered %d times", p, seen[p]);
	expect_empty(evd);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

struct poster {
	DAT_EVD_HANDLE evd;
	int n;
};

static void *post_main(void *arg)
{
	struct poster *p = arg;
	for (int i = 1; i <= p->n; i++) {
		DAT_EVENT ev = software_event((uintptr_t)i);
		while (dat_evd_post_se(p->evd, &ev) != DAT_SUCCESS)
			sched_yield(); /* queue full: let the consumer catch up */
	}
	return NULL;
}

/* "The returned event that was posted from an Event Stream guarantees
 * Consumers that all events that were posted from the same Event Stream
 * prior to the returned event were already returned to a Consumer";
 * USAGE: "The Event ordering is preserved when dequeueing is serialized."
 * One thread posts 1..N while this one dequeues: strictly increasing. */
static void test_evd_dequeue_order(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 64, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	struct poster p = {evd, NEVENTS};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, post_main, &p), 0);
	uintptr_t last = 0;
	long deadline = now_ns() + 20000000000L;
	while (last < NEVENTS) {
		DAT_EVENT ev;
		DAT_RETURN r = dat_evd_dequeue(evd, &ev);
		if (r == DAT_SUCCESS) {
			uintptr_t v = (uintptr_t)ev.event_data.software_event_data.pointer;
			if (v != last + 1)
				fail_msg("event %lu after %lu", (unsigned long)v, (unsigned long)last);
			last = v;
		} else {
			check_ret(r, DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
			if (now_ns() > deadline)
				fail_msg("stuck after event %lu", (unsigned long)last);
		}
	}
	pthread_join(t, NULL);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* Connection events: "For DAT_CONNECTION_EVENT_ESTABLISHED for the Active
 * side of connection establishment, the Provider returns the pointer for
 * private_data and the private_data_size. For the Passive side,
 * DAT_CONNECTION_EVENT_ESTABLISHED event private_data is not defined and
 * private_data_size returns zero." "Provider must pass to the Consumer the
 * entire Private Data that the remote Consumer provided for ...
 * dat_cr_accept()": max_private_data_size bytes arrive whole. "The
 * private_data is valid until the Active side Consumer destroys the
 * connected Endpoint ... So while the Endpoint is in Connected,
 * Disconnect Pending, or Disconnected state, the private_data ... is still
 * valid". "For DAT_CONNECTION_REQUEST_EVENT, the Provider creates a
 * Connection Request whose cr_handle is returned to the Consumer in
 * DAT_CR_ARRIVAL_EVENT_DATA. That object is destroyed by the Provider as
 * part of dat_cr_accept(3DAT)". */
static void test_evd_dequeue_connection_events(void **state)
{
	(void)state;
	struct pair p;
	DAT_PROVIDER_ATTR pa;
	pair_open(&p, NULL);
	check_ok(dat_ia_query(p.ia[0], NULL, 0, NULL, DAT_PROVIDER_FIELD_MAX_PRIVATE_DATA_SIZE, &pa));
	DAT_COUNT max = pa.max_private_data_size;
	unsigned char *apd = malloc((size_t)max);
	assert_non_null(apd);
	for (DAT_COUNT i = 0; i < max; i++)
		apd[i] = (unsigned char)(i * 7 + 1);
	struct sockaddr_in sa = loopback_addr();
	check_ok(dat_ep_connect(p.ep[1], (DAT_IA_ADDRESS_PTR)&sa, p.qual, TMO_US, 6, "hello", DAT_QOS_BEST_EFFORT,
				DAT_CONNECT_DEFAULT_FLAG));
	DAT_EVENT ev = dequeue_next(p.cr, DAT_CONNECTION_REQUEST_EVENT);
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	assert_ptr_equal(ev.evd_handle, p.cr);
	assert_ptr_equal(ev.event_data.cr_arrival_event_data.sp_handle.psp_handle, p.psp);
	assert_int_equal(ev.event_data.cr_arrival_event_data.conn_qual, p.qual);
	DAT_CR_PARAM crp;
	check_ok(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	assert_int_equal(crp.private_data_size, 6);
	assert_string_equal((char *)crp.private_data, "hello");
	check_ok(dat_cr_accept(cr, p.ep[0], max, apd));
	check_type(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp), DAT_INVALID_HANDLE);

	ev = dequeue_next(p.evd[0], DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, p.ep[0]);
	assert_int_equal(ev.event_data.connect_event_data.private_data_size, 0);
	ev = dequeue_next(p.evd[1], DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, p.ep[1]);
	assert_int_equal(ev.event_data.connect_event_data.private_data_size, max);
	const unsigned char *pd = ev.event_data.connect_event_data.private_data;
	assert_non_null(pd);
	assert_memory_equal(pd, apd, (size_t)max);
	/* Still valid after more traffic and after the disconnect. */
	DAT_EVD_HANDLE sw = make_evd(p.ia[1], 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	post_se(sw, 1);
	dequeue_se(sw, 1);
	assert_memory_equal(pd, apd, (size_t)max);
	check_ok(dat_ep_disconnect(p.ep[1], DAT_CLOSE_GRACEFUL_FLAG));
	dequeue_next(p.evd[1], DAT_CONNECTION_EVENT_DISCONNECTED);
	assert_memory_equal(pd, apd, (size_t)max);
	free(apd);
	pair_close(&p);
}

/* A NULL event structure is a parameter error (argument 2). */
/* Polls evd n times into *ev, as an application's progress loop does:
 * each dequeue returns DAT_QUEUE_EMPTY itself, the whole DAT_RETURN, and
 * leaves the event alone. */
static void poll_empty(DAT_EVD_HANDLE evd, DAT_EVENT *ev, int n)
{
	DAT_EVENT was;
	memset(ev, 0xA5, sizeof *ev);
	memcpy(&was, ev, sizeof was);
	for (int i = 0; i < n; i++) {
		DAT_RETURN r = dat_evd_dequeue(evd, ev);
		if (r != DAT_ERROR(DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE))
			fail_msg("empty dequeue %d of %d returned 0x%x", i, n, (unsigned)r);
	}
	assert_memory_equal(ev, &was, sizeof was);
}

/* Dequeues evd into *ev until an event comes, with no pause between looks
 * (bounded: 5 s); the first look must find it when now is set. */
static void spin_next(DAT_EVD_HANDLE evd, DAT_EVENT *ev, int now)
{
	long deadline = now_ns() + 5000000000L;
	DAT_RETURN r;
	while ((r = dat_evd_dequeue(evd, ev)) != DAT_SUCCESS) {
		check_ret(r, DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
		if (now)
			fail_msg("an event posted before the dequeue was not found");
		if (now_ns() > deadline)
			fail_msg("no event within 5 s");
	}
}

/* The polling loop real programs run (an MPI library's uDAPL transport
 * polls its DTO EVDs over and over, into one event structure): whatever
 * came between two empty dequeues is the next dequeue's: a software event
 * posted by the poller itself at once, a message from the peer, the
 * peer's disconnection. The library answers most empty dequeues of a DTO
 * EVD without entering Go (DESIGN.md section 9); none of these may be
 * missed by that answer. */
static void test_evd_dequeue_polling_loop(void **state)
{
	(void)state;
	DAT_EVENT ev;
	DAT_IA_HANDLE ia = open_ia(NULL);
	/* With a completion queue behind it and without. */
	DAT_EVD_FLAGS flags[] = {DAT_EVD_DTO_FLAG | DAT_EVD_SOFTWARE_FLAG, DAT_EVD_SOFTWARE_FLAG};
	for (int f = 0; f < 2; f++) {
		DAT_EVD_HANDLE evd = make_evd(ia, 8, DAT_HANDLE_NULL, flags[f]);
		for (int i = 0; i < 3; i++) {
			poll_empty(evd, &ev, 1000);
			post_se(evd, 0x5150 + i);
			spin_next(evd, &ev, 1);
			assert_int_equal(ev.event_number, DAT_SOFTWARE_EVENT);
			assert_int_equal((uintptr_t)ev.event_data.software_event_data.pointer, 0x5150 + i);
		}
		poll_empty(evd, &ev, 10);
		check_ok(dat_evd_free(evd));
		DAT_RETURN r = dat_evd_dequeue(evd, &ev);
		check_ret(r, DAT_INVALID_HANDLE, DAT_NO_SUBTYPE); /* not "empty": the fast answer ended with the EVD */
	}
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));

	struct pair p;
	pair_open(&p, NULL);
	pair_connect(&p);
	static char sbuf[64], rbuf[64];
	struct lmr sl = make_lmr(p.ia[0], p.pz[0], sbuf, sizeof sbuf, DAT_MEM_PRIV_ALL_FLAG);
	struct lmr rl = make_lmr(p.ia[1], p.pz[1], rbuf, sizeof rbuf, DAT_MEM_PRIV_ALL_FLAG);
	for (int i = 0; i < 3; i++) {
		poll_empty(p.evd[1], &ev, 1000);
		DAT_LMR_TRIPLET r = triplet(&rl, rbuf, sizeof rbuf);
		check_ok(dat_ep_post_recv(p.ep[1], 1, &r, (DAT_DTO_COOKIE){.as_64 = 100 + i}, DAT_COMPLETION_DEFAULT_FLAG));
		poll_empty(p.evd[1], &ev, 100); /* a receive posted is no event */
		sbuf[0] = (char)('a' + i);
		DAT_LMR_TRIPLET s = triplet(&sl, sbuf, 8);
		check_ok(dat_ep_post_send(p.ep[0], 1, &s, (DAT_DTO_COOKIE){.as_64 = i}, DAT_COMPLETION_DEFAULT_FLAG));
		spin_next(p.evd[1], &ev, 0);
		assert_int_equal(ev.event_number, DAT_DTO_COMPLETION_EVENT);
		assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
		assert_int_equal(ev.event_data.dto_completion_event_data.user_cookie.as_64, 100 + i);
		assert_int_equal(rbuf[0], 'a' + i);
		spin_next(p.evd[0], &ev, 0);
		assert_int_equal(ev.event_number, DAT_DTO_COMPLETION_EVENT);
		assert_int_equal(ev.event_data.dto_completion_event_data.user_cookie.as_64, i);
	}
	poll_empty(p.evd[1], &ev, 1000);
	check_ok(dat_ep_disconnect(p.ep[0], DAT_CLOSE_ABRUPT_FLAG));
	spin_next(p.evd[1], &ev, 0);
	assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_DISCONNECTED);
	check_ok(dat_lmr_free(sl.h));
	check_ok(dat_lmr_free(rl.h));
	pair_close(&p);
}

static void test_evd_dequeue_null_event(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_EVD_HANDLE evd = make_evd(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	post_se(evd, 1);
	check_ret(dat_evd_dequeue(evd, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	dequeue_se(evd, 1); /* not lost */
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_evd_dequeue_success),
		cmocka_unit_test(test_evd_dequeue_queue_empty),
		cmocka_unit_test(test_evd_dequeue_invalid_state),
		cmocka_unit_test(test_evd_dequeue_invalid_handle),
		cmocka_unit_test(test_evd_dequeue_exactly_once),
		cmocka_unit_test(test_evd_dequeue_order),
		cmocka_unit_test(test_evd_dequeue_connection_events),
		cmocka_unit_test(test_evd_dequeue_null_event),
		cmocka_unit_test(test_evd_dequeue_polling_loop),
	};
	return cmocka_run_group_tests_name("dat_evd_dequeue", tests, NULL, NULL);
}
