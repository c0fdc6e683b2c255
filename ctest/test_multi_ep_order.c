/* The multi-endpoint transaction workload: completions on a shared receive
 * EVD come in the order the messages arrived.
 *
 * A receiver (this process) has NEP endpoints whose receives all complete
 * on one receive EVD. A sender (the same program, started with
 * posix_spawn) posts round k on every endpoint, endpoint 0 first, before
 * round k+1: ROUNDS rounds back to back, one message per endpoint and
 * round, its payload naming (run, endpoint, round). A CQ-based provider
 * completes receives in the order the messages arrive, and the messages
 * arrive in the order they were sent (one sender, which sends a round's
 * message on every endpoint before it sends any of the next round), so the
 * receiver reaps NEP completions per round and each endpoint must appear
 * exactly once in each round: every round's NEP completions before any of
 * the next round's. (The software provider keeps that order; over a verbs
 * IA the device decides the order across QPs, and rxe does not keep it:
 * vm/ctest-verbs-xfail.txt.) Data and cookies are checked too: receive k of an
 * endpoint holds that endpoint's message of round k.
 *
 * Flow control must not reorder the rounds: before each run the receiver
 * posts a receive for every message of the run (ROUNDS per endpoint) and
 * only then tells the sender, with a "go" message on every endpoint, to
 * start; so no send ever waits for a receive (or for the credit that
 * announces one) while a later one goes ahead. The sender waits for all
 * NEP "go" messages, posts the run, and reaps its send completions after
 * the whole run is posted. RUNS runs on the same connections; a run fails
 * at the first completion out of place, naming it. */
#define _GNU_SOURCE
#include "pattern.h"

#define NEP 16
#define ROUNDS 200
#define RUNS 50
#define MSG 64
#define GO 0xF00D

struct payload {
	uint32_t magic, run, ep, round;
};
#define MAGIC 0x0DE12u

/* Connection setup shared by both sides: EP attributes with room for a
 * whole run of receives (receiver) and sends (sender) per endpoint. */
#define deep_attr(ia, pz, recv, req, conn) pat_deep_attr(ia, pz, recv, req, conn, ROUNDS + 1, ROUNDS + 1)

/* ---- the sender ---- */

static void sender(void **state)
{
	(void)state;
	struct waiter w = {MODE_WAIT, DAT_HANDLE_NULL};
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, req, recv, conn;
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep[NEP];
	struct mem m; /* [0, NEP*MSG): "go" receives; then one slot per (ep, round) */
	check_ok(dat_ia_open(TEST_IA, 8, &async, &ia));
	check_ok(dat_pz_create(ia, &pz));
	check_ok(dat_evd_create(ia, NEP * ROUNDS + 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &req));
	check_ok(dat_evd_create(ia, 2 * NEP, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &recv));
	check_ok(dat_evd_create(ia, 2 * NEP, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &conn));
	mem_create(&m, ia, pz, (size_t)NEP * MSG * (ROUNDS + 1));
	DAT_EP_ATTR attr = deep_attr(ia, pz, recv, req, conn);
	for (int e = 0; e < NEP; e++) {
		check_ok(dat_ep_create(ia, pz, recv, req, conn, &attr, &ep[e]));
		DAT_LMR_TRIPLET t = mem_seg(&m, (size_t)e * MSG, MSG);
		check_ok(dat_ep_post_recv(ep[e], 1, &t, cookie((uint64_t)e), DAT_COMPLETION_DEFAULT_FLAG));
		uint32_t pd = (uint32_t)e;
		connect_ep(ep[e], child_args.qual, PAT_TMO, &pd, sizeof pd);
	}
	for (int e = 0; e < NEP; e++)
		expect_event(&w, conn, DAT_CONNECTION_EVENT_ESTABLISHED, "connect");

	for (uint32_t run = 0; run < RUNS; run++) {
		/* "go" on every endpoint: the receiver's receives are posted. */
		for (int k = 0; k < NEP; k++) {
			DAT_DTO_COMPLETION_EVENT_DATA d = expect_dto(&w, recv, DAT_HANDLE_NULL, sizeof(struct payload), "go");
			int e = (int)d.user_cookie.as_64;
			assert_true(e >= 0 && e < NEP);
			assert_ptr_equal(d.ep_handle, ep[e]);
			struct payload g;
			memcpy(&g, m.buf + (size_t)e * MSG, sizeof g);
			if (g.magic != GO || g.run != run || g.ep != (uint32_t)e)
				fail_msg("go on EP %d: magic %#x run %u ep %u, want run %u", e, g.magic, g.run, g.ep, run);
			DAT_LMR_TRIPLET t = mem_seg(&m, (size_t)e * MSG, MSG);
			check_ok(dat_ep_post_recv(ep[e], 1, &t, cookie((uint64_t)e), DAT_COMPLETION_DEFAULT_FLAG));
		}
		for (uint32_t k = 0; k < ROUNDS; k++)
			for (int e = 0; e < NEP; e++) {
				size_t off = ((size_t)(k + 1) * NEP + (size_t)e) * MSG;
				struct payload p = {MAGIC, run, (uint32_t)e, k};
				memcpy(m.buf + off, &p, sizeof p);
				DAT_LMR_TRIPLET t = mem_seg(&m, off, MSG);
				check_ok(dat_ep_post_send(ep[e], 1, &t, cookie(((uint64_t)e << 32) | k),
							  DAT_COMPLETION_DEFAULT_FLAG));
			}
		/* Per endpoint the sends complete in post order. */
		uint32_t next[NEP] = {0};
		for (int n = 0; n < NEP * ROUNDS; n++) {
			DAT_DTO_COMPLETION_EVENT_DATA d = expect_dto(&w, req, DAT_HANDLE_NULL, MSG, "send");
			int e = (int)(d.user_cookie.as_64 >> 32);
			uint32_t k = (uint32_t)d.user_cookie.as_64;
			assert_true(e >= 0 && e < NEP);
			assert_ptr_equal(d.ep_handle, ep[e]);
			if (k != next[e])
				fail_msg("run %u: send completion of EP %d round %u, want round %u", run, e, k, next[e]);
			next[e]++;
		}
	}
	/* The receiver ends the connections. */
	for (int e = 0; e < NEP; e++)
		expect_event(&w, conn, DAT_CONNECTION_EVENT_DISCONNECTED, "disconnect");
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	free(m.buf);
}

/* ---- the receiver ---- */

static void test_multi_ep_order(void **state)
{
	(void)state;
	struct waiter w = {MODE_WAIT, DAT_HANDLE_NULL};
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, recv, req, conn, cr;
	DAT_PZ_HANDLE pz;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	DAT_EP_HANDLE ep[NEP];
	struct mem m; /* one slot per (ep, round), then NEP "go" send slots */
	check_ok(dat_ia_open(TEST_IA, 8, &async, &ia));
	check_ok(dat_pz_create(ia, &pz));
	/* The one receive EVD holds a whole run. */
	check_ok(dat_evd_create(ia, NEP * ROUNDS + 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &recv));
	check_ok(dat_evd_create(ia, 2 * NEP, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &req));
	check_ok(dat_evd_create(ia, 2 * NEP, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &conn));
	check_ok(dat_evd_create(ia, 2 * NEP, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr));
	mem_create(&m, ia, pz, (size_t)NEP * MSG * (ROUNDS + 1));
	DAT_EP_ATTR attr = deep_attr(ia, pz, recv, req, conn);
	for (int e = 0; e < NEP; e++)
		check_ok(dat_ep_create(ia, pz, recv, req, conn, &attr, &ep[e]));
	check_ok(dat_psp_create_any(ia, &q, cr, DAT_PSP_CONSUMER_FLAG, &psp));
	pid_t pid = spawn_child("sender", MODE_WAIT, q, NULL);
	for (int k = 0; k < NEP; k++) {
		DAT_EVENT ev = expect_event(&w, cr, DAT_CONNECTION_REQUEST_EVENT, "connection request");
		DAT_CR_HANDLE h = ev.event_data.cr_arrival_event_data.cr_handle;
		DAT_CR_PARAM crp;
		uint32_t e;
		check_ok(dat_cr_query(h, DAT_CR_FIELD_ALL, &crp));
		assert_int_equal(crp.private_data_size >= (DAT_COUNT)sizeof e, 1);
		memcpy(&e, crp.private_data, sizeof e);
		assert_true(e < NEP);
		check_ok(dat_cr_accept(h, ep[e], 0, NULL));
	}
	for (int e = 0; e < NEP; e++)
		expect_event(&w, conn, DAT_CONNECTION_EVENT_ESTABLISHED, "accept");

	for (uint32_t run = 0; run < RUNS; run++) {
		for (uint32_t k = 0; k < ROUNDS; k++)
			for (int e = 0; e < NEP; e++) {
				DAT_LMR_TRIPLET t = mem_seg(&m, ((size_t)k * NEP + (size_t)e) * MSG, MSG);
				memset(m.buf + ((size_t)k * NEP + (size_t)e) * MSG, 0, MSG);
				check_ok(dat_ep_post_recv(ep[e], 1, &t, cookie(((uint64_t)e << 32) | k),
							  DAT_COMPLETION_DEFAULT_FLAG));
			}
		for (int e = 0; e < NEP; e++) {
			size_t off = (size_t)ROUNDS * NEP * MSG + (size_t)e * MSG;
			struct payload g = {GO, run, (uint32_t)e, 0};
			memcpy(m.buf + off, &g, sizeof g);
			DAT_LMR_TRIPLET t = mem_seg(&m, off, sizeof g);
			check_ok(dat_ep_post_send(ep[e], 1, &t, cookie(e), DAT_COMPLETION_DEFAULT_FLAG));
		}
		for (uint32_t k = 0; k < ROUNDS; k++) {
			int seen[NEP] = {0};
			for (int n = 0; n < NEP; n++) {
				char what[64];
				snprintf(what, sizeof what, "run %u round %u receive %d", run, k, n);
				DAT_DTO_COMPLETION_EVENT_DATA d = expect_dto(&w, recv, DAT_HANDLE_NULL, MSG, what);
				int e = (int)(d.user_cookie.as_64 >> 32);
				uint32_t rk = (uint32_t)d.user_cookie.as_64;
				assert_true(e >= 0 && e < NEP);
				assert_ptr_equal(d.ep_handle, ep[e]);
				struct payload p;
				memcpy(&p, m.buf + ((size_t)rk * NEP + (size_t)e) * MSG, sizeof p);
				/* Receive rk of EP e holds EP e's message of round rk. */
				if (p.magic != MAGIC || p.run != run || p.ep != (uint32_t)e || p.round != rk)
					fail_msg("run %u: receive %u of EP %d holds magic %#x run %u EP %u round %u", run, rk,
						 e, p.magic, p.run, p.ep, p.round);
				if (rk != k || seen[e])
					fail_msg("run %u, round %u, completion %d of %d: EP %d round %u, before EPs "
						 "of round %u that have not completed yet (%s)",
						 run, k, n + 1, NEP, e, rk, k,
						 rk > k ? "a later round overtook this one" : "second in this round");
				seen[e] = 1;
			}
		}
		/* The "go" sends. */
		for (int e = 0; e < NEP; e++)
			expect_dto(&w, req, DAT_HANDLE_NULL, sizeof(struct payload), "go send");
	}
	print_message("%d runs of %d rounds on %d endpoints over %s: every round complete before the next\n", RUNS,
		      ROUNDS, NEP, TEST_IA);
	for (int e = 0; e < NEP; e++)
		check_ok(dat_ep_disconnect(ep[e], DAT_CLOSE_ABRUPT_FLAG));
	for (int e = 0; e < NEP; e++)
		expect_event(&w, conn, DAT_CONNECTION_EVENT_DISCONNECTED, "disconnect");
	reap_child(pid, 60, "sender");
	check_ok(dat_psp_free(psp));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	free(m.buf);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest roles[] = {cmocka_unit_test(sender)};
	int rc;
	if (pat_child_main(argc, argv, roles, 1, &rc))
		return rc;
	alarm(280);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_multi_ep_order, pat_teardown),
	};
	return cmocka_run_group_tests_name("multi-endpoint transactions: completion order on a shared EVD", tests, NULL,
					   NULL);
}
