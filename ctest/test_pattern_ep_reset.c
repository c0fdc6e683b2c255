/* Consumer pattern: a server that serves clients one after another on one
 * EP, reusing it through dat_ep_reset, in the wait, dequeue and CNO modes.
 *
 * The server spawns NCLIENTS clients at once; their requests queue on the
 * PSP and are served in turn. Before each connection the server posts
 * three receives on the unconnected EP; two are used by the client's two
 * messages (each echoed back), the third is flushed with
 * DAT_DTO_ERR_FLUSHED when the connection ends. A receive and a send posted
 * on the disconnected EP are flushed at once. dat_ep_get_status reports
 * whether receives and requests are outstanding. dat_ep_reset makes the EP
 * unconnected again; the last set of receives is still posted when the EP
 * is freed. Clients with an odd id are disconnected by the server, the
 * others disconnect themselves: both sides see DISCONNECTED either way. */
#define _GNU_SOURCE
#include "pattern.h"

#define NCLIENTS 4
#define MSG 64
#define NRECV 3

struct peer {
	struct waiter w;
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, recv, req, conn, cr;
	DAT_PZ_HANDLE pz;
	struct mem m; /* [0, 4*MSG): sends; then NRECV receive slots */
	DAT_EP_HANDLE ep;
};

static void peer_open(struct peer *p, enum pat_mode mode)
{
	p->async = DAT_HANDLE_NULL;
	check_ok(dat_ia_open(TEST_IA, 8, &p->async, &p->ia));
	waiter_init(&p->w, p->ia, mode);
	check_ok(dat_pz_create(p->ia, &p->pz));
	/* Separate receive and request EVDs: completions of each stream are
	 * checked on their own. */
	p->recv = waiter_evd(&p->w, p->ia, 16, DAT_EVD_DTO_FLAG);
	p->req = waiter_evd(&p->w, p->ia, 16, DAT_EVD_DTO_FLAG);
	p->conn = waiter_evd(&p->w, p->ia, 8, DAT_EVD_CONNECTION_FLAG);
	p->cr = waiter_evd(&p->w, p->ia, 8, DAT_EVD_CR_FLAG);
	mem_create(&p->m, p->ia, p->pz, (4 + NRECV) * MSG);
	check_ok(dat_ep_create(p->ia, p->pz, p->recv, p->req, p->conn, NULL, &p->ep));
}

static void peer_close(struct peer *p)
{
	check_ok(dat_ep_free(p->ep));
	mem_free(&p->m);
	check_ok(dat_evd_free(p->cr));
	check_ok(dat_evd_free(p->conn));
	check_ok(dat_evd_free(p->req));
	check_ok(dat_evd_free(p->recv));
	check_ok(dat_pz_free(p->pz));
	waiter_fini(&p->w);
	check_ok(dat_ia_close(p->ia, DAT_CLOSE_GRACEFUL_FLAG));
}

static char *slot(struct peer *p, int i)
{
	return p->m.buf + (4 + i) * MSG;
}

static void post_recv(struct peer *p, int i, uint64_t id)
{
	DAT_LMR_TRIPLET t = mem_seg(&p->m, (size_t)(4 + i) * MSG, MSG);
	memset(slot(p, i), 0, MSG);
	check_ok(dat_ep_post_recv(p->ep, 1, &t, cookie(id), DAT_COMPLETION_DEFAULT_FLAG));
}

static void send_text(struct peer *p, uint64_t id, const char *text)
{
	snprintf(p->m.buf, MSG, "%s", text);
	DAT_LMR_TRIPLET t = mem_seg(&p->m, 0, MSG);
	check_ok(dat_ep_post_send(p->ep, 1, &t, cookie(id), DAT_COMPLETION_DEFAULT_FLAG));
}

static void expect_flushed(struct peer *p, DAT_EVD_HANDLE evd, uint64_t id, const char *what)
{
	DAT_EVENT ev = expect_event(&p->w, evd, DAT_DTO_COMPLETION_EVENT, what);
	DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
	assert_int_equal(d.status, DAT_DTO_ERR_FLUSHED);
	assert_int_equal(d.user_cookie.as_64, id);
	assert_ptr_equal(d.ep_handle, p->ep);
}

static void expect_status(struct peer *p, DAT_EP_STATE want, DAT_BOOLEAN recv_idle, DAT_BOOLEAN req_idle)
{
	DAT_EP_STATE st;
	DAT_BOOLEAN ri = 7, qi = 7;
	check_ok(dat_ep_get_status(p->ep, &st, &ri, &qi));
	assert_int_equal(st, want);
	assert_int_equal(ri, recv_idle);
	assert_int_equal(qi, req_idle);
}

static void client(void **state)
{
	(void)state;
	struct peer p;
	int id = atoi(child_args.extra);
	char text[MSG], want[MSG];
	peer_open(&p, child_args.mode);
	post_recv(&p, 0, 1);
	post_recv(&p, 1, 2);
	snprintf(text, sizeof text, "client %d", id);
	connect_ep(p.ep, child_args.qual, PAT_TMO, text, (DAT_COUNT)strlen(text) + 1);
	DAT_EVENT ev = expect_event(&p.w, p.conn, DAT_CONNECTION_EVENT_ESTABLISHED, "connect");
	snprintf(want, sizeof want, "welcome %d", id);
	assert_int_equal(ev.event_data.connect_event_data.private_data_size, strlen(want) + 1);
	assert_string_equal((char *)ev.event_data.connect_event_data.private_data, want);
	for (int j = 0; j < 2; j++) {
		snprintf(text, sizeof text, "msg %d.%d", id, j);
		send_text(&p, 10 + j, text);
		DAT_DTO_COMPLETION_EVENT_DATA d = expect_dto(&p.w, p.req, p.ep, MSG, "client send");
		assert_int_equal(d.user_cookie.as_64, 10 + j);
		d = expect_dto(&p.w, p.recv, p.ep, MSG, "echo");
		assert_int_equal(d.user_cookie.as_64, 1 + j);
		snprintf(want, sizeof want, "echo msg %d.%d", id, j);
		assert_string_equal(slot(&p, j), want);
	}
	if (id % 2 == 0)
		check_ok(dat_ep_disconnect(p.ep, DAT_CLOSE_GRACEFUL_FLAG));
	ev = expect_event(&p.w, p.conn, DAT_CONNECTION_EVENT_DISCONNECTED, "client disconnect");
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, p.ep);
	expect_empty(p.recv, "client receives");
	expect_empty(p.req, "client requests");
	peer_close(&p);
}

static void server(enum pat_mode mode)
{
	struct peer p;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	pid_t pids[NCLIENTS];
	int served[NCLIENTS] = {0};
	peer_open(&p, mode);
	check_ok(dat_psp_create_any(p.ia, &qual, p.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	expect_status(&p, DAT_EP_STATE_UNCONNECTED, DAT_TRUE, DAT_TRUE);
	for (int i = 0; i < NCLIENTS; i++) {
		char id[16];
		snprintf(id, sizeof id, "%d", i);
		pids[i] = spawn_child("client", mode, qual, id);
	}
	for (int k = 0; k < NCLIENTS; k++) {
		uint64_t base = 100 * (k + 1);
		/* Receives posted before the connection exists. */
		for (int i = 0; i < NRECV; i++)
			post_recv(&p, i, base + i);
		expect_status(&p, DAT_EP_STATE_UNCONNECTED, DAT_FALSE, DAT_TRUE);

		DAT_EVENT ev = expect_event(&p.w, p.cr, DAT_CONNECTION_REQUEST_EVENT, "connection request");
		DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
		DAT_CR_PARAM crp;
		check_ok(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
		int id = -1;
		assert_int_equal(sscanf((char *)crp.private_data, "client %d", &id), 1);
		assert_true(id >= 0 && id < NCLIENTS && !served[id]);
		served[id] = 1;
		char text[MSG];
		snprintf(text, sizeof text, "welcome %d", id);
		check_ok(dat_cr_accept(cr, p.ep, (DAT_COUNT)strlen(text) + 1, text));
		ev = expect_event(&p.w, p.conn, DAT_CONNECTION_EVENT_ESTABLISHED, "accept");
		assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, p.ep);

		for (int j = 0; j < 2; j++) {
			DAT_DTO_COMPLETION_EVENT_DATA d = expect_dto(&p.w, p.recv, p.ep, MSG, "server receive");
			assert_int_equal(d.user_cookie.as_64, base + j);
			char want[32];
			snprintf(want, sizeof want, "msg %d.%d", id, j);
			assert_string_equal(slot(&p, j), want);
			snprintf(text, sizeof text, "echo %s", want);
			send_text(&p, base + 50 + j, text);
			d = expect_dto(&p.w, p.req, p.ep, MSG, "echo send");
			assert_int_equal(d.user_cookie.as_64, base + 50 + j);
		}
		if (id % 2 == 1)
			check_ok(dat_ep_disconnect(p.ep, DAT_CLOSE_GRACEFUL_FLAG));
		ev = expect_event(&p.w, p.conn, DAT_CONNECTION_EVENT_DISCONNECTED, "server disconnect");
		assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, p.ep);

		/* The unused receive is flushed by the end of the connection. */
		expect_flushed(&p, p.recv, base + 2, "unused receive");
		expect_status(&p, DAT_EP_STATE_DISCONNECTED, DAT_TRUE, DAT_TRUE);
		/* Posting on a disconnected EP flushes at once. */
		post_recv(&p, 2, base + 9);
		expect_flushed(&p, p.recv, base + 9, "receive on a disconnected EP");
		send_text(&p, base + 99, "late");
		expect_flushed(&p, p.req, base + 99, "send on a disconnected EP");
		expect_empty(p.recv, "server receives");
		expect_empty(p.req, "server requests");

		/* A disconnected EP is not connectable until reset. */
		struct sockaddr_in sa = loopback_addr();
		check_type(dat_ep_connect(p.ep, (DAT_IA_ADDRESS_PTR)&sa, qual, PAT_TMO, 0, NULL, DAT_QOS_BEST_EFFORT,
					  DAT_CONNECT_DEFAULT_FLAG),
			   DAT_INVALID_STATE);
		check_ok(dat_ep_reset(p.ep));
		expect_status(&p, DAT_EP_STATE_UNCONNECTED, DAT_TRUE, DAT_TRUE);
		check_ok(dat_ep_reset(p.ep)); /* a no-op on an unconnected EP */
		DAT_EP_PARAM epp;
		check_ok(dat_ep_query(p.ep, DAT_EP_FIELD_ALL, &epp));
		assert_int_equal(epp.ep_state, DAT_EP_STATE_UNCONNECTED);
	}
	for (int i = 0; i < NCLIENTS; i++)
		reap_child(pids[i], 60, "ep_reset client");
	for (int i = 0; i < NCLIENTS; i++)
		assert_true(served[i]);
	/* Free with receives posted. */
	post_recv(&p, 0, 7);
	post_recv(&p, 1, 8);
	check_ok(dat_psp_free(psp));
	peer_close(&p);
}

static void test_wait(void **state)
{
	(void)state;
	server(MODE_WAIT);
}

static void test_dequeue(void **state)
{
	(void)state;
	server(MODE_DEQUEUE);
}

static void test_cno(void **state)
{
	(void)state;
	server(MODE_CNO);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest roles[] = {cmocka_unit_test(client)};
	int rc;
	if (pat_child_main(argc, argv, roles, 1, &rc))
		return rc;
	alarm(250);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_wait, pat_teardown),
		cmocka_unit_test_teardown(test_dequeue, pat_teardown),
		cmocka_unit_test_teardown(test_cno, pat_teardown),
	};
	return cmocka_run_group_tests_name("pattern: ep_reset", tests, NULL, NULL);
}
