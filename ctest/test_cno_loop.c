/* A CNO fed by two DTO EVDs, waited on in a loop, never loses a trigger.
 *
 * The consumer is the loop dat_cno_wait(3DAT) describes: wake on the CNO,
 * then poll every EVD feeding it ("The Consumer is responsible for ensuring
 * that all EVDs feeding this CNO are polled regardless of whether they are
 * identified as the immediate cause of the CNO unblocking"), starting with
 * the one the wait returned, until each is empty; then wait again. Both
 * EVDs stay enabled (dat_evd_enable(3DAT): "the arrival of an event can
 * trigger the associated CNO") and nobody waits on them directly (a direct
 * waiter would preempt the CNO), so every arrival may trigger the CNO. A
 * wakeup that finds nothing is legal (the returned EVD "is only a hint",
 * and an event the consumer drained before it waited may have triggered the
 * CNO); a wait that reaches its timeout (10 s) while a completion is queued
 * on either EVD, or is owed to it, is a lost trigger and fails the test.
 * The run stops after CYCLES successful waits (trigger/wait cycles).
 *
 * Two ways of feeding the EVDs, one test each:
 *
 *   writes    two producer threads of this process each post RDMA writes
 *             on their own EP, at most DEPTH outstanding (posted and not
 *             yet reaped by the consumer); each EP's request completions
 *             go to its own EVD. The writes target a second IA of this
 *             process, which takes no part once connected.
 *   receives  a peer process sends on two connections; each connection's
 *             receive completions go to its own EVD. The consumer reposts
 *             each receive and answers each message with a credit (sent on
 *             a third EVD, not on the CNO); the peer sends the next message
 *             of a connection when it has the credit, so each connection
 *             has one message in flight and the consumer sleeps between
 *             arrivals most of the time.
 *
 * Per EP the completions must come in post order, each successful and of
 * its EP. */
#define _GNU_SOURCE
#include "pattern.h"
#include <stdatomic.h>

#define CYCLES 100000L
#define DEPTH 2
#define WAIT_US 10000000 /* the bound of every dat_cno_wait: 10 s */
#define NSRC 2
#define MSG 8

/* One EVD feeding the CNO and the EP whose completions it gets. */
struct src {
	DAT_EP_HANDLE ep;
	DAT_EVD_HANDLE evd;
	DAT_LMR_TRIPLET seg;
	DAT_RMR_TRIPLET dst;
	atomic_long posted, reaped; /* writes: by the producer and the consumer */
	atomic_int done;
	int ended; /* receives: the peer was told to stop and will close */
	char err[256];
	pthread_t th;
};

/* How the consumer handles one completion of src i (cookie order and
 * status already checked); returns nothing, fails the test on error. */
typedef void (*on_dto)(struct src *s, int i, const DAT_DTO_COMPLETION_EVENT_DATA *d);

/* For a failure report: the connection EVD of the consumer's EPs and the
 * peer process (receives test only). */
static DAT_EVD_HANDLE diag_conn;
static pid_t diag_peer;

/* What happened to the connections and the peer, for a failure message. */
static const char *diagnosis(void)
{
	static char buf[256];
	size_t n = 0;
	buf[0] = 0;
	DAT_EVENT ev;
	while (diag_conn != DAT_HANDLE_NULL && n < sizeof buf - 64 && dat_evd_dequeue(diag_conn, &ev) == DAT_SUCCESS)
		n += (size_t)snprintf(buf + n, sizeof buf - n, " connection event %s;", event_name(ev.event_number));
	int st;
	if (diag_peer > 0 && n < sizeof buf - 64) {
		/* The peer may be about to say what it saw: a few seconds. */
		pid_t w = wait_bounded(diag_peer, 3, &st) == 0 ? diag_peer : 0;
		if (w == 0)
			snprintf(buf + n, sizeof buf - n, " the peer process was alive 3 s later (killed)");
		else if (w == diag_peer && WIFSIGNALED(st))
			snprintf(buf + n, sizeof buf - n, " the peer process was killed by signal %d", WTERMSIG(st));
		else if (w == diag_peer)
			snprintf(buf + n, sizeof buf - n, " the peer process exited with status %d", WEXITSTATUS(st));
	}
	return buf;
}

/* Takes every event of s's EVD; returns how many. */
static long drain(struct src *s, int i, on_dto fn)
{
	DAT_EVENT ev;
	long n = 0;
	for (;;) {
		DAT_RETURN r = dat_evd_dequeue(s->evd, &ev);
		if (DAT_GET_TYPE(r) == DAT_QUEUE_EMPTY)
			return n;
		if (r != DAT_SUCCESS)
			fail_msg("dat_evd_dequeue(EVD %c): %s", 'A' + i, ret_name(r));
		if (ev.event_number != DAT_DTO_COMPLETION_EVENT)
			fail_msg("EVD %c: event %s, want a DTO completion", 'A' + i, event_name(ev.event_number));
		DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
		/* Once told to stop, the peer closes: the receives still posted
		 * are flushed, as a disconnect does. */
		if (s->ended && d.status == DAT_DTO_ERR_FLUSHED && d.ep_handle == s->ep)
			continue;
		long want = atomic_load(&s->reaped) + 1;
		if (d.ep_handle != s->ep || d.status != DAT_DTO_SUCCESS || d.user_cookie.as_64 != (uint64_t)want ||
		    d.transfered_length != MSG)
			fail_msg("EVD %c: completion of cookie %" PRIu64 " status %d length %" PRIu64
				 " (EP %s), want cookie %ld, success, %d bytes, its own EP;%s",
				 'A' + i, (uint64_t)d.user_cookie.as_64, d.status, (uint64_t)d.transfered_length,
				 d.ep_handle == s->ep ? "its own" : "another", want, MSG, diagnosis());
		atomic_store(&s->reaped, want);
		fn(s, i, &d);
		n++;
	}
}

/* The consumer loop. outstanding() says how many completions are owed (0
 * when the feeders are idle); stop() is called once CYCLES waits have
 * succeeded and returns when the feeders will post nothing more. */
struct feeders {
	on_dto fn;
	long (*outstanding)(struct src *s);
	void (*stop)(struct src *s);
	int (*failed)(struct src *s);
};

static void consume(DAT_CNO_HANDLE cno, struct src *s, const struct feeders *f)
{
	long cycles = 0, empty_wakeups = 0, events = 0;
	int stopped = 0, woke = 0;
	for (;;) {
		long got, round = 0;
		do {
			got = 0;
			for (int i = 0; i < NSRC; i++)
				got += drain(&s[i], i, f->fn);
			round += got;
		} while (got > 0);
		events += round;
		if (woke && round == 0)
			empty_wakeups++;
		woke = 0;
		if (cycles >= CYCLES && !stopped) {
			f->stop(s);
			stopped = 1;
		}
		if (f->failed(s) || (stopped && f->outstanding(s) == 0))
			break;
		DAT_EVD_HANDLE hint = DAT_HANDLE_NULL;
		DAT_RETURN r = dat_cno_wait(cno, WAIT_US, &hint);
		if (r == DAT_SUCCESS) {
			cycles++;
			woke = 1;
			if (hint != s[0].evd && hint != s[1].evd)
				fail_msg("wait %ld returned EVD %p, which does not feed the CNO", cycles, (void *)hint);
			continue;
		}
		/* A timeout (or an error): what was owed is looked for at once. */
		long owed = f->outstanding(s), queued[NSRC];
		for (int i = 0; i < NSRC; i++) {
			DAT_EVENT ev;
			queued[i] = 0;
			while (dat_evd_dequeue(s[i].evd, &ev) == DAT_SUCCESS)
				queued[i]++;
		}
		fail_msg("dat_cno_wait after %ld successful waits (%ld completions reaped) returned %s (hint %p) "
			 "with %ld completions owed; dequeue right after found %ld on EVD A and %ld on EVD B;%s",
			 cycles, events, ret_name(r), (void *)hint, owed, queued[0], queued[1], diagnosis());
	}
	print_message("%ld successful dat_cno_wait calls (%ld found both EVDs empty), %ld completions over %s\n", cycles,
		      empty_wakeups, events, TEST_IA);
	assert_true(cycles >= CYCLES);
}

/* ---- writes: two producer threads ---- */

static atomic_int stop_writes;

static void *produce(void *arg)
{
	struct src *p = arg;
	long deadline = now_ns() + 60L * 1000000000L;
	while (!atomic_load(&stop_writes)) {
		if (atomic_load(&p->posted) - atomic_load(&p->reaped) >= DEPTH) {
			/* The consumer reaps within the bound of its wait. */
			if (now_ns() > deadline) {
				snprintf(p->err, sizeof p->err, "the consumer reaped nothing for 60 s");
				break;
			}
			sched_yield();
			continue;
		}
		deadline = now_ns() + 60L * 1000000000L;
		long n = atomic_load(&p->posted) + 1;
		DAT_RETURN r = dat_ep_post_rdma_write(p->ep, 1, &p->seg, cookie((uint64_t)n), &p->dst,
						      DAT_COMPLETION_DEFAULT_FLAG);
		if (r != DAT_SUCCESS) {
			snprintf(p->err, sizeof p->err, "dat_ep_post_rdma_write #%ld: %s", n, ret_name(r));
			break;
		}
		atomic_store(&p->posted, n);
	}
	atomic_store(&p->done, 1);
	return NULL;
}

static void write_done(struct src *s, int i, const DAT_DTO_COMPLETION_EVENT_DATA *d)
{
	(void)s, (void)i, (void)d;
}

static long writes_outstanding(struct src *s)
{
	long n = 0;
	for (int i = 0; i < NSRC; i++)
		n += atomic_load(&s[i].posted) - atomic_load(&s[i].reaped);
	return n;
}

static void writes_stop(struct src *s)
{
	atomic_store(&stop_writes, 1);
	for (int i = 0; i < NSRC; i++)
		assert_int_equal(pthread_join(s[i].th, NULL), 0);
	for (int i = 0; i < NSRC; i++)
		if (s[i].err[0])
			fail_msg("producer %d: %s", i, s[i].err);
}

static int writes_failed(struct src *s)
{
	for (int i = 0; i < NSRC; i++)
		if (!atomic_load(&stop_writes) && atomic_load(&s[i].done)) {
			writes_stop(s);
			return 1;
		}
	return 0;
}

static void test_cno_loop_writes(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia, tia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, tasync = DAT_HANDLE_NULL, conn, tconn, tdto, tcr;
	DAT_PZ_HANDLE pz, tpz;
	DAT_CNO_HANDLE cno;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	DAT_EP_HANDLE tep[NSRC];
	struct mem m, tm;
	static struct src s[NSRC];

	check_ok(dat_ia_open(TEST_IA, 8, &async, &ia));
	check_ok(dat_ia_open(TEST_IA, 8, &tasync, &tia));
	check_ok(dat_pz_create(ia, &pz));
	check_ok(dat_pz_create(tia, &tpz));
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ok(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &conn));
	check_ok(dat_evd_create(tia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &tconn));
	check_ok(dat_evd_create(tia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &tdto));
	check_ok(dat_evd_create(tia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &tcr));
	mem_create(&m, ia, pz, 4096);
	mem_create(&tm, tia, tpz, 4096);
	check_ok(dat_psp_create_any(tia, &q, tcr, DAT_PSP_CONSUMER_FLAG, &psp));
	for (int i = 0; i < NSRC; i++) {
		struct src *p = &s[i];
		memset(p, 0, sizeof *p);
		check_ok(dat_evd_create(ia, 16, cno, DAT_EVD_DTO_FLAG, &p->evd));
		check_ok(dat_evd_enable(p->evd));
		/* The receive EVD is the request EVD too: it stays empty. */
		check_ok(dat_ep_create(ia, pz, p->evd, p->evd, conn, NULL, &p->ep));
		check_ok(dat_ep_create(tia, tpz, tdto, tdto, tconn, NULL, &tep[i]));
		connect_ep(p->ep, q, PAT_TMO, NULL, 0);
		DAT_EVENT ev;
		DAT_COUNT n;
		check_ok(dat_evd_wait(tcr, PAT_TMO, 1, &ev, &n));
		assert_int_equal(ev.event_number, DAT_CONNECTION_REQUEST_EVENT);
		check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, tep[i], 0, NULL));
		check_ok(dat_evd_wait(tconn, PAT_TMO, 1, &ev, &n));
		assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_ESTABLISHED);
		check_ok(dat_evd_wait(conn, PAT_TMO, 1, &ev, &n));
		assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_ESTABLISHED);
		p->seg = mem_seg(&m, (size_t)i * 64, MSG);
		p->dst = rmr_seg(tm.rctx, (uint64_t)(uintptr_t)(tm.buf + i * 64), MSG);
	}

	atomic_store(&stop_writes, 0);
	for (int i = 0; i < NSRC; i++)
		assert_int_equal(pthread_create(&s[i].th, NULL, produce, &s[i]), 0);
	const struct feeders f = {write_done, writes_outstanding, writes_stop, writes_failed};
	consume(cno, s, &f);

	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	check_ok(dat_ia_close(tia, DAT_CLOSE_ABRUPT_FLAG));
	free(m.buf);
	free(tm.buf);
}

/* ---- receives: a peer process sends on two connections ---- */

/* A message carries its sequence number on its connection; a credit the
 * sequence number it answers, or STOP. */
#define STOP UINT64_MAX
#define NRECV 4 /* receives kept posted per connection */

static struct mem rm;           /* receive slots, then credit send slots */
static DAT_EVD_HANDLE credit_evd; /* the credits' send completions */
static long credits_sent[NSRC], credits_reaped;
static int stopping, stop_sent[NSRC];

static DAT_LMR_TRIPLET recv_slot(int i, long k)
{
	return mem_seg(&rm, ((size_t)i * NRECV + (size_t)(k % NRECV)) * 64, MSG);
}

static DAT_LMR_TRIPLET credit_slot(int i, long k)
{
	return mem_seg(&rm, 4096 + ((size_t)i * 2 + (size_t)(k % 2)) * 64, MSG);
}

static void reap_credits(void)
{
	DAT_EVENT ev;
	while (dat_evd_dequeue(credit_evd, &ev) == DAT_SUCCESS) {
		if (ev.event_number != DAT_DTO_COMPLETION_EVENT ||
		    ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS)
			fail_msg("credit send: event %s status %d", event_name(ev.event_number),
				 ev.event_data.dto_completion_event_data.status);
		credits_reaped++;
	}
}

static void send_credit(struct src *s, int i, uint64_t v)
{
	DAT_LMR_TRIPLET t = credit_slot(i, credits_sent[i]);
	memcpy((void *)(uintptr_t)t.virtual_address, &v, sizeof v);
	check_ok(dat_ep_post_send(s->ep, 1, &t, cookie(((uint64_t)i << 32) | (uint64_t)credits_sent[i]),
				  DAT_COMPLETION_DEFAULT_FLAG));
	credits_sent[i]++;
}

/* A message arrived: check it, repost its receive, send its credit. */
static void message_in(struct src *s, int i, const DAT_DTO_COMPLETION_EVENT_DATA *d)
{
	long k = (long)d->user_cookie.as_64; /* receive k took message k */
	uint64_t v;
	memcpy(&v, (void *)(uintptr_t)recv_slot(i, k - 1).virtual_address, sizeof v);
	if (v != (uint64_t)k)
		fail_msg("connection %c: receive %ld holds message %" PRIu64, 'A' + i, k, v);
	DAT_LMR_TRIPLET t = recv_slot(i, k - 1 + NRECV);
	check_ok(dat_ep_post_recv(s->ep, 1, &t, cookie((uint64_t)(k + NRECV)), DAT_COMPLETION_DEFAULT_FLAG));
	reap_credits();
	send_credit(s, i, stopping ? STOP : (uint64_t)k);
	stop_sent[i] |= stopping;
	s->ended |= stopping;
}

/* One message is in flight per connection until the stop. */
static long receives_outstanding(struct src *s)
{
	long n = 0;
	for (int i = 0; i < NSRC; i++)
		n += !stop_sent[i];
	(void)s;
	return n;
}

/* From now on every message is answered with STOP; the peer sends one more
 * message per connection at most (the one in flight), so the loop ends
 * once each connection's last message has been answered. */
static void receives_stop(struct src *s)
{
	stopping = 1;
	(void)s;
}

static int receives_failed(struct src *s)
{
	(void)s;
	return 0;
}

/* The peer: two connections, one thread, one EVD for both. */
static void sender(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, evd, conn;
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep[NSRC];
	struct mem m;
	long sent[NSRC] = {0}, got[NSRC] = {0};
	int stopped[NSRC] = {0};
	check_ok(dat_ia_open(TEST_IA, 8, &async, &ia));
	check_ok(dat_pz_create(ia, &pz));
	check_ok(dat_evd_create(ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &evd));
	check_ok(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &conn));
	mem_create(&m, ia, pz, 4096);
	for (int i = 0; i < NSRC; i++) {
		check_ok(dat_ep_create(ia, pz, evd, evd, conn, NULL, &ep[i]));
		DAT_LMR_TRIPLET t = mem_seg(&m, (size_t)i * 128, MSG);
		check_ok(dat_ep_post_recv(ep[i], 1, &t, cookie(((uint64_t)i << 32) | 1), DAT_COMPLETION_DEFAULT_FLAG));
		char pd[4] = {(char)('A' + i), 0};
		connect_ep(ep[i], child_args.qual, PAT_TMO, pd, 2);
	}
	for (int i = 0; i < NSRC; i++) {
		DAT_EVENT ev;
		DAT_COUNT n;
		check_ok(dat_evd_wait(conn, PAT_TMO, 1, &ev, &n));
		assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_ESTABLISHED);
	}
	/* Message k of connection i from slot (i, k%2): a slot is reused only
	 * after the credit for the message two before it came back. */
	for (int i = 0; i < NSRC; i++) {
		uint64_t v = (uint64_t)++sent[i];
		DAT_LMR_TRIPLET t = mem_seg(&m, 2048 + ((size_t)i * 2 + (size_t)(v % 2)) * 64, MSG);
		memcpy((void *)(uintptr_t)t.virtual_address, &v, sizeof v);
		check_ok(dat_ep_post_send(ep[i], 1, &t, cookie(((uint64_t)i << 32) | (1ull << 31) | v),
					  DAT_COMPLETION_SUPPRESS_FLAG));
	}
	while (!stopped[0] || !stopped[1]) {
		DAT_EVENT ev;
		DAT_COUNT n;
		check_ok(dat_evd_wait(evd, PAT_TMO, 1, &ev, &n));
		assert_int_equal(ev.event_number, DAT_DTO_COMPLETION_EVENT);
		DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
		assert_int_equal(d.status, DAT_DTO_SUCCESS);
		int i = (int)(d.user_cookie.as_64 >> 32);
		assert_true(i >= 0 && i < NSRC && d.ep_handle == ep[i]);
		uint64_t credit;
		DAT_LMR_TRIPLET t = mem_seg(&m, (size_t)i * 128, MSG);
		memcpy(&credit, (void *)(uintptr_t)t.virtual_address, sizeof credit);
		got[i]++;
		if (credit == STOP) {
			stopped[i] = 1;
			continue;
		}
		assert_int_equal(credit, sent[i]);
		check_ok(dat_ep_post_recv(ep[i], 1, &t, cookie(((uint64_t)i << 32) | (uint64_t)(got[i] + 1)),
					  DAT_COMPLETION_DEFAULT_FLAG));
		uint64_t v = (uint64_t)++sent[i];
		DAT_LMR_TRIPLET st = mem_seg(&m, 2048 + ((size_t)i * 2 + (size_t)(v % 2)) * 64, MSG);
		memcpy((void *)(uintptr_t)st.virtual_address, &v, sizeof v);
		check_ok(dat_ep_post_send(ep[i], 1, &st, cookie(((uint64_t)i << 32) | (1ull << 31) | v),
					  DAT_COMPLETION_SUPPRESS_FLAG));
	}
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	free(m.buf);
}

static void test_cno_loop_receives(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, conn, cr;
	DAT_PZ_HANDLE pz;
	DAT_CNO_HANDLE cno;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	static struct src s[NSRC];

	stopping = 0;
	credits_reaped = 0;
	check_ok(dat_ia_open(TEST_IA, 8, &async, &ia));
	check_ok(dat_pz_create(ia, &pz));
	check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	check_ok(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &conn));
	check_ok(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr));
	check_ok(dat_evd_create(ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &credit_evd));
	mem_create(&rm, ia, pz, 8192);
	for (int i = 0; i < NSRC; i++) {
		memset(&s[i], 0, sizeof s[i]);
		credits_sent[i] = 0;
		stop_sent[i] = 0;
		check_ok(dat_evd_create(ia, 16, cno, DAT_EVD_DTO_FLAG, &s[i].evd));
		check_ok(dat_evd_enable(s[i].evd));
		check_ok(dat_ep_create(ia, pz, s[i].evd, credit_evd, conn, NULL, &s[i].ep));
		for (long k = 1; k <= NRECV; k++) {
			DAT_LMR_TRIPLET t = recv_slot(i, k - 1);
			check_ok(dat_ep_post_recv(s[i].ep, 1, &t, cookie((uint64_t)k), DAT_COMPLETION_DEFAULT_FLAG));
		}
	}
	check_ok(dat_psp_create_any(ia, &q, cr, DAT_PSP_CONSUMER_FLAG, &psp));
	pid_t pid = spawn_child("sender", MODE_WAIT, q, NULL);
	for (int k = 0; k < NSRC; k++) {
		DAT_EVENT ev = expect_event(&(struct waiter){MODE_WAIT, DAT_HANDLE_NULL}, cr, DAT_CONNECTION_REQUEST_EVENT,
					    "connection request");
		DAT_CR_HANDLE h = ev.event_data.cr_arrival_event_data.cr_handle;
		DAT_CR_PARAM crp;
		check_ok(dat_cr_query(h, DAT_CR_FIELD_ALL, &crp));
		int i = ((char *)crp.private_data)[0] - 'A';
		assert_true(i >= 0 && i < NSRC);
		check_ok(dat_cr_accept(h, s[i].ep, 0, NULL));
	}
	for (int k = 0; k < NSRC; k++)
		expect_event(&(struct waiter){MODE_WAIT, DAT_HANDLE_NULL}, conn, DAT_CONNECTION_EVENT_ESTABLISHED,
			     "accept");
	const struct feeders f = {message_in, receives_outstanding, receives_stop, receives_failed};
	diag_conn = conn;
	diag_peer = pid;
	consume(cno, s, &f);
	diag_conn = DAT_HANDLE_NULL;
	diag_peer = 0;
	reap_child(pid, 60, "sender");
	check_ok(dat_psp_free(psp));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	free(rm.buf);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest roles[] = {cmocka_unit_test(sender)};
	int rc;
	if (pat_child_main(argc, argv, roles, 1, &rc))
		return rc;
	alarm(280);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cno_loop_writes),
		cmocka_unit_test_teardown(test_cno_loop_receives, pat_teardown),
	};
	return cmocka_run_group_tests_name("CNO loop over two DTO EVDs", tests, NULL, NULL);
}
