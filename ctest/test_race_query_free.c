/* Queries racing frees (issue 15): a query of an object another thread is
 * freeing returns either the object's data or DAT_INVALID_HANDLE, and
 * never writes into memory the library has freed. The calls that write
 * into C memory an object owns, and whose pointers they hand out, are the
 * ones raced: dat_ep_query (the EP's socket addresses), dat_ia_query (the
 * IA's address), dat_cr_query (the CR's address and private data) and the
 * connection events whose private data lands in the EP's memory
 * (dat_evd_dequeue of CONNECTION_EVENT_ESTABLISHED) and whose local
 * address is the IA's (CONNECTION_REQUEST).
 *
 * Eight threads race; 10^5 EPs are created, queried and freed (plus the
 * IA and CR rounds), or as many as EP_BUDGET_S seconds allow (about 5 s
 * natively; under TCG, where an ibv_create_qp takes milliseconds, 10^5
 * would outlive the program's alarm). The test proves itself under ASan
 * (make sanitize): with the C block freed while a query still wrote into it (the handle
 * table before its per-entry hold), ASan reports a heap-use-after-free in
 * the first of these phases. The pointers a successful query returns are
 * never read here: the object may be gone by then, and so may they.
 *
 * Threads never call cmocka; they count failures that the test asserts. */
#define _GNU_SOURCE
#include "common.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* The counts may be changed at build time (-DEP_ITERS=...) to try one
 * phase alone. */
#define NTH 8
#ifndef EP_ITERS
#define EP_ITERS 100000 /* EPs freed under queries, all threads together */
#endif
#ifndef IA_ROUNDS
#define IA_ROUNDS 8 /* per thread: IAs closed under queries */
#endif
#ifndef CR_ROUNDS
#define CR_ROUNDS 200 /* CRs freed (half rejected, half accepted) under queries */
#endif
#ifndef EP_BUDGET_S
#define EP_BUDGET_S 120 /* the EP phase ends after this many seconds */
#endif
#define TMO 5000000 /* bound of every wait, microseconds */

struct tally {
	long ok, invalid, failures;
	char first[256];
};

/* A return that is neither success nor DAT_INVALID_HANDLE with the family's
 * subtype is a failure; the first is kept for the message. */
static void tally(struct tally *t, DAT_RETURN r, DAT_RETURN sub, const char *what)
{
	if (r == DAT_SUCCESS)
		t->ok++;
	else if (DAT_GET_TYPE(r) == DAT_INVALID_HANDLE && DAT_GET_SUBTYPE(r) == sub)
		t->invalid++;
	else if (t->failures++ == 0)
		snprintf(t->first, sizeof t->first, "%s: %s", what, ret_name(r));
}

static void bad(struct tally *t, const char *msg)
{
	if (t->failures++ == 0)
		snprintf(t->first, sizeof t->first, "%s", msg);
}

static void sum(struct tally *all, const struct tally *t)
{
	all->ok += t->ok;
	all->invalid += t->invalid;
	if (t->failures && all->failures == 0)
		memcpy(all->first, t->first, sizeof all->first);
	all->failures += t->failures;
}

static double secs_since(struct timespec t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
}

static struct timespec now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t;
}

/* ---- EPs: each thread replaces the EP of its own slot and frees the old
 * one while the others query every slot ---- */

struct ep_shared {
	DAT_IA_HANDLE ia;
	DAT_PZ_HANDLE pz;
	DAT_EVD_HANDLE evd;
	_Atomic(DAT_EP_HANDLE) slot[NTH];
	struct timespec t0; /* the phase's start */
};

struct ep_worker {
	struct ep_shared *s;
	int id;
	long created;
	struct tally t;
};

static void *ep_worker(void *p)
{
	struct ep_worker *w = p;
	struct ep_shared *s = w->s;
	for (int i = 0; i < EP_ITERS / NTH && secs_since(s->t0) < EP_BUDGET_S; i++) {
		DAT_EP_HANDLE ep;
		DAT_RETURN r = dat_ep_create(s->ia, s->pz, s->evd, s->evd, s->evd, NULL, &ep);
		if (r != DAT_SUCCESS) {
			tally(&w->t, r, 0, "dat_ep_create");
			continue;
		}
		w->created++;
		DAT_EP_HANDLE old = atomic_exchange(&s->slot[w->id], ep);
		for (int k = 1; k < NTH; k++) {
			DAT_EP_HANDLE h = atomic_load(&s->slot[(w->id + k) % NTH]);
			if (h == DAT_HANDLE_NULL)
				continue;
			DAT_EP_PARAM pp;
			r = dat_ep_query(h, DAT_EP_FIELD_ALL, &pp);
			tally(&w->t, r, DAT_INVALID_HANDLE_EP, "dat_ep_query");
			if (r == DAT_SUCCESS && (pp.ia_handle != s->ia || pp.ep_state != DAT_EP_STATE_UNCONNECTED))
				bad(&w->t, "dat_ep_query: the data of another EP");
			if (k == 3 && old != DAT_HANDLE_NULL) {
				/* Free mid-way, so the others' queries run
				 * against it. */
				r = dat_ep_free(old);
				if (r != DAT_SUCCESS)
					tally(&w->t, r, 0, "dat_ep_free");
				old = DAT_HANDLE_NULL;
			}
		}
	}
	return NULL;
}

static void test_ep_query_against_free(void **state)
{
	(void)state;
	struct ep_shared s = {0};
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	check_ok(dat_ia_open(TEST_IA, 16, &async, &s.ia));
	check_ok(dat_pz_create(s.ia, &s.pz));
	check_ok(dat_evd_create(s.ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &s.evd));
	struct ep_worker w[NTH];
	pthread_t th[NTH];
	s.t0 = now();
	for (int i = 0; i < NTH; i++) {
		w[i] = (struct ep_worker){.s = &s, .id = i};
		assert_int_equal(pthread_create(&th[i], NULL, ep_worker, &w[i]), 0);
	}
	struct tally all = {0};
	long created = 0;
	for (int i = 0; i < NTH; i++) {
		pthread_join(th[i], NULL);
		sum(&all, &w[i].t);
		created += w[i].created;
	}
	print_message("EPs over %s: %ld of %d created and freed by %d threads in %.1f s; %ld queries answered, %ld "
		      "DAT_INVALID_HANDLE (freed under the query)\n",
		      TEST_IA, created, EP_ITERS, NTH, secs_since(s.t0), all.ok, all.invalid);
	if (all.failures)
		fail_msg("%ld failures; first: %s", all.failures, all.first);
	assert_true(all.ok > 0);
	for (int i = 0; i < NTH; i++)
		check_ok(dat_ep_free(s.slot[i]));
	check_ok(dat_ia_close(s.ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* ---- IAs: each thread opens an IA into its slot and closes it while the
 * others query it ---- */

static _Atomic(DAT_IA_HANDLE) ia_slot[NTH];

struct ia_worker {
	int id;
	struct tally t;
};

static void *ia_worker(void *p)
{
	struct ia_worker *w = p;
	for (int i = 0; i < IA_ROUNDS; i++) {
		DAT_IA_HANDLE ia;
		DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
		DAT_RETURN r = dat_ia_open(TEST_IA, 8, &async, &ia);
		if (r != DAT_SUCCESS) {
			tally(&w->t, r, 0, "dat_ia_open");
			continue;
		}
		atomic_store(&ia_slot[w->id], ia);
		/* Query the others' IAs (one of which may be closing) until this
		 * one has been seen by a query of its own, then close it. */
		for (int k = 0; k < 4 * NTH; k++) {
			DAT_IA_HANDLE h = atomic_load(&ia_slot[k % NTH]);
			if (h == DAT_HANDLE_NULL)
				continue;
			DAT_IA_ATTR a;
			DAT_PROVIDER_ATTR pa;
			DAT_EVD_HANDLE ae = DAT_HANDLE_NULL;
			r = dat_ia_query(h, &ae, DAT_IA_ALL, &a, DAT_PROVIDER_FIELD_ALL, &pa);
			tally(&w->t, r, DAT_INVALID_HANDLE_IA, "dat_ia_query");
			if (r == DAT_SUCCESS && (a.ia_address_ptr == NULL || ae == DAT_HANDLE_NULL))
				bad(&w->t, "dat_ia_query: success without an address or async EVD");
		}
		r = dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
		if (r != DAT_SUCCESS)
			tally(&w->t, r, 0, "dat_ia_close");
	}
	return NULL;
}

static void test_ia_query_against_close(void **state)
{
	(void)state;
	struct ia_worker w[NTH];
	pthread_t th[NTH];
	struct timespec t0 = now();
	for (int i = 0; i < NTH; i++) {
		w[i] = (struct ia_worker){.id = i};
		assert_int_equal(pthread_create(&th[i], NULL, ia_worker, &w[i]), 0);
	}
	struct tally all = {0};
	for (int i = 0; i < NTH; i++) {
		pthread_join(th[i], NULL);
		sum(&all, &w[i].t);
	}
	print_message("IAs over %s: %d opened and closed by %d threads in %.1f s; %ld queries answered, %ld "
		      "DAT_INVALID_HANDLE\n",
		      TEST_IA, IA_ROUNDS * NTH, NTH, secs_since(t0), all.ok, all.invalid);
	if (all.failures)
		fail_msg("%ld failures; first: %s", all.failures, all.first);
	assert_true(all.ok > 0);
}

/* ---- CRs and connection events: the main thread connects an EP to its
 * own PSP, takes the request, publishes the CR and rejects or accepts it
 * (which frees the CR) while six threads query the CR; accepted, the
 * client EP is freed while a seventh thread dequeues its
 * CONNECTION_EVENT_ESTABLISHED, whose private data goes into that EP's
 * memory ---- */

#define CR_PD "cr-race"  /* the connect's private data, 8 bytes */
#define ACC_PD "accept!" /* the accept's */

struct cr_shared {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE cconn;
	_Atomic(DAT_CR_HANDLE) cr;
	atomic_int stop;
	struct tally dq;
	long established;
};

struct cr_worker {
	struct cr_shared *s;
	struct tally t;
};

static void *cr_querier(void *p)
{
	struct cr_worker *w = p;
	DAT_CR_HANDLE dead = DAT_HANDLE_NULL; /* the last CR seen freed */
	while (!atomic_load(&w->s->stop)) {
		DAT_CR_HANDLE h = atomic_load(&w->s->cr);
		if (h == DAT_HANDLE_NULL || h == dead) {
			/* Nothing new to race: wait for the next CR
			 * without taking the CPU the connection needs. */
			nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
			continue;
		}
		DAT_CR_PARAM cp;
		DAT_RETURN r = dat_cr_query(h, DAT_CR_FIELD_ALL, &cp);
		tally(&w->t, r, DAT_INVALID_HANDLE_CR, "dat_cr_query");
		if (r != DAT_SUCCESS)
			dead = h;
		if (r == DAT_SUCCESS && (cp.private_data_size != sizeof CR_PD || cp.remote_ia_address_ptr == NULL))
			bad(&w->t, "dat_cr_query: not the request's private data");
	}
	return NULL;
}

/* Takes the client side's connection events as they come; an event of an
 * EP freed meanwhile is still an event (its pointers are not read). */
static void *cr_dequeuer(void *p)
{
	struct cr_shared *s = p;
	while (!atomic_load(&s->stop)) {
		DAT_EVENT ev;
		DAT_RETURN r = dat_evd_dequeue(s->cconn, &ev);
		if (r == DAT_SUCCESS) {
			s->dq.ok++;
			if (ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED) {
				s->established++;
				DAT_COUNT n = ev.event_data.connect_event_data.private_data_size;
				if (n != 0 && n != sizeof ACC_PD)
					bad(&s->dq, "ESTABLISHED: private data of the wrong size");
			}
		} else if (DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY) {
			bad(&s->dq, ret_name(r));
		} else {
			nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
		}
	}
	return NULL;
}

/* What the connecting (main) thread works with. */
struct cr_main {
	DAT_PZ_HANDLE pz;
	DAT_EVD_HANDLE crevd, sconn, dto;
	DAT_CONN_QUAL q;
};

/* Records a failure of the main thread and ends its round: it must not
 * leave the test while the other threads still run. */
#define M_OK(expr)                                                          \
	do {                                                                \
		DAT_RETURN r_ = (expr);                                     \
		if (r_ != DAT_SUCCESS) {                                    \
			tally(mt, r_, 0, #expr);                            \
			return;                                             \
		}                                                           \
	} while (0)
#define M_TRUE(cond, msg)                                                   \
	do {                                                                \
		if (!(cond)) {                                              \
			bad(mt, msg);                                       \
			return;                                             \
		}                                                           \
	} while (0)

/* One round: a client EP connects, its request is published, then
 * rejected (even rounds) or accepted (odd), and both EPs are freed. */
static void cr_round(struct cr_shared *s, const struct cr_main *m, int i, struct tally *mt, long *accepted)
{
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	DAT_EP_HANDLE ce, se = DAT_HANDLE_NULL;
	DAT_EVENT ev;
	DAT_COUNT n;
	M_OK(dat_ep_create(s->ia, m->pz, m->dto, m->dto, s->cconn, NULL, &ce));
	M_OK(dat_ep_connect(ce, (DAT_IA_ADDRESS_PTR)&sa, m->q, TMO, sizeof CR_PD, CR_PD, DAT_QOS_BEST_EFFORT,
			    DAT_CONNECT_DEFAULT_FLAG));
	M_OK(dat_evd_wait(m->crevd, TMO, 1, &ev, &n));
	M_TRUE(ev.event_number == DAT_CONNECTION_REQUEST_EVENT, "not a connection request");
	/* The request's local address lives in the IA's memory; it is the
	 * IA's address even when no dat_ia_query wrote it there. */
	const DAT_SOCK_ADDR *la = ev.event_data.cr_arrival_event_data.local_ia_address_ptr;
	M_TRUE(la != NULL && la->sa_family == AF_INET, "a request without the IA's address");
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	atomic_store(&s->cr, cr);
	sched_yield(); /* let the queriers at it */
	if (i % 2 == 0) {
		M_OK(dat_cr_reject(cr));
	} else {
		M_OK(dat_ep_create(s->ia, m->pz, m->dto, m->dto, m->sconn, NULL, &se));
		M_OK(dat_cr_accept(cr, se, sizeof ACC_PD, ACC_PD));
		/* Earlier server EPs, freed right after their clients, may
		 * have left their DISCONNECTED or BROKEN behind. */
		do {
			M_OK(dat_evd_wait(m->sconn, TMO, 1, &ev, &n));
			M_TRUE(ev.event_data.connect_event_data.ep_handle == se ||
				       ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED ||
				       ev.event_number == DAT_CONNECTION_EVENT_BROKEN,
			       "server side: an unexpected event of an older EP");
		} while (ev.event_data.connect_event_data.ep_handle != se);
		M_TRUE(ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED, "server side: not ESTABLISHED");
		(*accepted)++;
	}
	/* The client EP goes while the dequeuer may be filling its
	 * ESTABLISHED (or REJECTED) event. The CR handle stays published
	 * (freed): the queriers query the dead handle until the next one. */
	M_OK(dat_ep_free(ce));
	if (se != DAT_HANDLE_NULL)
		M_OK(dat_ep_free(se));
}

static void test_cr_query_against_free(void **state)
{
	(void)state;
	struct cr_shared s = {0};
	struct cr_main cr;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_PSP_HANDLE psp;
	check_ok(dat_ia_open(TEST_IA, 16, &async, &s.ia));
	check_ok(dat_pz_create(s.ia, &cr.pz));
	check_ok(dat_evd_create(s.ia, 64, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr.crevd));
	check_ok(dat_evd_create(s.ia, 256, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &s.cconn));
	check_ok(dat_evd_create(s.ia, 256, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &cr.sconn));
	check_ok(dat_evd_create(s.ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &cr.dto));
	check_ok(dat_psp_create_any(s.ia, &cr.q, cr.crevd, DAT_PSP_CONSUMER_FLAG, &psp));

	struct cr_worker w[NTH - 2];
	pthread_t th[NTH - 1];
	for (int i = 0; i < NTH - 2; i++) {
		w[i] = (struct cr_worker){.s = &s};
		assert_int_equal(pthread_create(&th[i], NULL, cr_querier, &w[i]), 0);
	}
	assert_int_equal(pthread_create(&th[NTH - 2], NULL, cr_dequeuer, &s), 0);

	struct timespec t0 = now();
	long accepted = 0;
	struct tally mt = {0}; /* this thread's failures: the loop stops, the threads are joined */
	int rounds = 0;
	for (; rounds < CR_ROUNDS && mt.failures == 0; rounds++)
		cr_round(&s, &cr, rounds, &mt, &accepted);
	atomic_store(&s.stop, 1);
	struct tally all = {0};
	for (int i = 0; i < NTH - 1; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NTH - 2; i++)
		sum(&all, &w[i].t);
	print_message("CRs over %s: %d freed (%ld accepted) in %.1f s; %ld queries answered, %ld "
		      "DAT_INVALID_HANDLE; %ld client events dequeued (%ld ESTABLISHED)\n",
		      TEST_IA, rounds, accepted, secs_since(t0), all.ok, all.invalid, s.dq.ok, s.established);
	if (mt.failures)
		fail_msg("the connecting thread: %s", mt.first);
	if (all.failures)
		fail_msg("%ld query failures; first: %s", all.failures, all.first);
	if (s.dq.failures)
		fail_msg("%ld dequeue failures; first: %s", s.dq.failures, s.dq.first);
	assert_true(all.ok > 0);
	assert_true(all.invalid > 0); /* every CR is queried until the next: its freed handle too */
	check_ok(dat_psp_free(psp));
	check_ok(dat_ia_close(s.ia, DAT_CLOSE_ABRUPT_FLAG));
}

int main(void)
{
	alarm(280);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ep_query_against_free),
		cmocka_unit_test(test_ia_query_against_close),
		cmocka_unit_test(test_cr_query_against_free),
	};
	return cmocka_run_group_tests_name("queries racing frees", tests, NULL, NULL);
}
