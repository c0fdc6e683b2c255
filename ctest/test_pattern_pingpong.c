/* Consumer pattern: connect, RDMA write, RDMA reads, ping-pong, disconnect,
 * between two processes, in the wait, dequeue and CNO modes.
 *
 * The server (this process) listens on a qualifier from dat_psp_create_any
 * and spawns the client. The client connects with private data; the server
 * checks it with dat_cr_query and accepts with its buffer's address and RMR
 * context as private data. The client then does a 2-segment RDMA write with
 * suppressed completion followed by a send that tells the server the data
 * is there (the write must be visible when the send is delivered), 4 RDMA
 * reads of the written data, a 100-message send/receive ping-pong, and a
 * disconnect that both sides see as DISCONNECTED naming their EP. */
#define _GNU_SOURCE
#include "pattern.h"

#define ROUNDS 100
#define MSG 64
#define BUF 65536
#define WLEN 8192

/* What the server tells the client in its accept private data. */
struct offer {
	uint64_t addr;
	uint32_t rmr_context;
	uint32_t magic;
};
#define OFFER_MAGIC 0x0FFE4u

struct peer {
	struct waiter w;
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, dto, conn, cr;
	DAT_PZ_HANDLE pz;
	struct mem m; /* [0,BUF): RDMA target; [BUF,2BUF): sends; [2BUF,3BUF): receives */
	DAT_EP_HANDLE ep;
};

static void peer_open(struct peer *p, enum pat_mode mode)
{
	p->async = DAT_HANDLE_NULL;
	check_ok(dat_ia_open(TEST_IA, 8, &p->async, &p->ia));
	waiter_init(&p->w, p->ia, mode);
	check_ok(dat_pz_create(p->ia, &p->pz));
	p->dto = waiter_evd(&p->w, p->ia, 64, DAT_EVD_DTO_FLAG);
	p->conn = waiter_evd(&p->w, p->ia, 8, DAT_EVD_CONNECTION_FLAG);
	p->cr = waiter_evd(&p->w, p->ia, 8, DAT_EVD_CR_FLAG);
	mem_create(&p->m, p->ia, p->pz, 3 * BUF);
	/* NULL attributes: the provider's defaults. */
	check_ok(dat_ep_create(p->ia, p->pz, p->dto, p->dto, p->conn, NULL, &p->ep));
}

static void peer_close(struct peer *p)
{
	check_ok(dat_ep_free(p->ep));
	mem_free(&p->m);
	check_ok(dat_evd_free(p->cr));
	check_ok(dat_evd_free(p->conn));
	check_ok(dat_evd_free(p->dto));
	check_ok(dat_pz_free(p->pz));
	waiter_fini(&p->w);
	check_ok(dat_ia_close(p->ia, DAT_CLOSE_GRACEFUL_FLAG));
}

static void post_recv(struct peer *p, uint64_t id)
{
	DAT_LMR_TRIPLET t = mem_seg(&p->m, 2 * BUF, BUF);
	check_ok(dat_ep_post_recv(p->ep, 1, &t, cookie(id), DAT_COMPLETION_DEFAULT_FLAG));
}

static void send_msg(struct peer *p, uint64_t id, const char *text)
{
	snprintf(p->m.buf + BUF, MSG, "%s", text);
	DAT_LMR_TRIPLET t = mem_seg(&p->m, BUF, MSG);
	check_ok(dat_ep_post_send(p->ep, 1, &t, cookie(id), DAT_COMPLETION_DEFAULT_FLAG));
}

static void hello_of(char *buf, size_t n, enum pat_mode m)
{
	snprintf(buf, n, "hello from the client, %s mode", pat_mode_names[m]);
}

/* Waits for the send with cookie send_id and the receive with cookie
 * recv_id, in whichever order they complete (both on one EVD). */
static void expect_send_and_recv(struct peer *p, uint64_t send_id, uint64_t recv_id, const char *what)
{
	int got_send = 0, got_recv = 0;
	while (!got_send || !got_recv) {
		DAT_DTO_COMPLETION_EVENT_DATA d = expect_dto(&p->w, p->dto, p->ep, MSG, what);
		if (d.user_cookie.as_64 == send_id && !got_send)
			got_send = 1;
		else if (d.user_cookie.as_64 == recv_id && !got_recv)
			got_recv = 1;
		else
			fail_msg("%s: unexpected completion cookie %" PRIu64, what, (uint64_t)d.user_cookie.as_64);
	}
}

static void client(void **state)
{
	(void)state;
	struct peer p;
	char hello[80];
	peer_open(&p, child_args.mode);
	hello_of(hello, sizeof hello, child_args.mode);
	post_recv(&p, 1); /* receives may be posted before the connection exists */
	connect_ep(p.ep, child_args.qual, PAT_TMO, hello, (DAT_COUNT)strlen(hello) + 1);
	DAT_EVENT ev = expect_event(&p.w, p.conn, DAT_CONNECTION_EVENT_ESTABLISHED, "connect");
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, p.ep);
	assert_int_equal(ev.event_data.connect_event_data.private_data_size, sizeof(struct offer));
	struct offer off;
	memcpy(&off, ev.event_data.connect_event_data.private_data, sizeof off);
	assert_int_equal(off.magic, OFFER_MAGIC);

	/* The connected EP reports its peer. */
	DAT_EP_PARAM epp;
	check_ok(dat_ep_query(p.ep, DAT_EP_FIELD_ALL, &epp));
	assert_int_equal(epp.ep_state, DAT_EP_STATE_CONNECTED);
	assert_int_equal(epp.remote_port_qual, child_args.qual);
	assert_non_null(epp.remote_ia_address_ptr);
	assert_int_equal(epp.remote_ia_address_ptr->sa_family, AF_INET);
	assert_int_equal(((struct sockaddr_in *)epp.remote_ia_address_ptr)->sin_addr.s_addr, htonl(INADDR_LOOPBACK));

	/* 2-segment RDMA write with its completion suppressed, then a send
	 * telling the server the data is there. */
	for (int i = 0; i < WLEN; i++)
		p.m.buf[i] = (char)(i * 7 + 1);
	DAT_LMR_TRIPLET two[2] = {mem_seg(&p.m, 0, WLEN / 2), mem_seg(&p.m, WLEN / 2, WLEN / 2)};
	DAT_RMR_TRIPLET remote = rmr_seg(off.rmr_context, off.addr, WLEN);
	check_ok(dat_ep_post_rdma_write(p.ep, 2, two, cookie(7), &remote, DAT_COMPLETION_SUPPRESS_FLAG));
	send_msg(&p, 8, "written");
	DAT_DTO_COMPLETION_EVENT_DATA d = expect_dto(&p.w, p.dto, p.ep, MSG, "notification send");
	assert_int_equal(d.user_cookie.as_64, 8); /* not 7: the write's completion was suppressed */
	expect_empty(p.dto, "after the suppressed write and its send");

	/* 4 RDMA reads of what was written, each checked. */
	for (int k = 0; k < 4; k++) {
		DAT_LMR_TRIPLET into = mem_seg(&p.m, BUF + 4096, 2048);
		DAT_RMR_TRIPLET from = rmr_seg(off.rmr_context, off.addr + k * 2048, 2048);
		memset(p.m.buf + BUF + 4096, 0, 2048);
		check_ok(dat_ep_post_rdma_read(p.ep, 1, &into, cookie(100 + k), &from, DAT_COMPLETION_DEFAULT_FLAG));
		d = expect_dto(&p.w, p.dto, p.ep, 2048, "rdma read");
		assert_int_equal(d.user_cookie.as_64, 100 + k);
		assert_memory_equal(p.m.buf + BUF + 4096, p.m.buf + k * 2048, 2048);
	}

	/* Ping-pong: a send, then both its completion and the echo. */
	long t0 = now_ns();
	for (int i = 0; i < ROUNDS; i++) {
		char text[MSG], want[MSG];
		snprintf(text, sizeof text, "ping %d", i);
		send_msg(&p, 1000 + i, text);
		expect_send_and_recv(&p, 1000 + i, i == 0 ? 1 : 2000 + i - 1, "ping-pong");
		snprintf(want, sizeof want, "pong %d", i);
		assert_string_equal(p.m.buf + 2 * BUF, want);
		if (i + 1 < ROUNDS)
			post_recv(&p, 2000 + i);
	}
	long t1 = now_ns();
	printf("client (%s mode): %d round trips of %d bytes, %.2f us each\n", pat_mode_names[child_args.mode], ROUNDS,
	       MSG, (t1 - t0) / 1e3 / ROUNDS);

	/* The client ends the connection; both sides see DISCONNECTED. */
	check_ok(dat_ep_disconnect(p.ep, DAT_CLOSE_GRACEFUL_FLAG));
	ev = expect_event(&p.w, p.conn, DAT_CONNECTION_EVENT_DISCONNECTED, "disconnect");
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, p.ep);
	DAT_EP_STATE st;
	check_ok(dat_ep_get_status(p.ep, &st, NULL, NULL));
	assert_int_equal(st, DAT_EP_STATE_DISCONNECTED);
	expect_empty(p.dto, "after disconnect: every receive was used");
	peer_close(&p);
}

static void server(enum pat_mode mode)
{
	struct peer p;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	char hello[80];
	peer_open(&p, mode);
	post_recv(&p, 1);
	check_ok(dat_psp_create_any(p.ia, &qual, p.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	pid_t pid = spawn_child("client", mode, qual, NULL);

	DAT_EVENT ev = expect_event(&p.w, p.cr, DAT_CONNECTION_REQUEST_EVENT, "connection request");
	assert_int_equal(ev.event_data.cr_arrival_event_data.conn_qual, qual);
	assert_ptr_equal(ev.event_data.cr_arrival_event_data.sp_handle.psp_handle, psp);
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	DAT_CR_PARAM crp;
	check_ok(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	hello_of(hello, sizeof hello, mode);
	assert_int_equal(crp.private_data_size, strlen(hello) + 1);
	assert_string_equal((char *)crp.private_data, hello);
	assert_non_null(crp.remote_ia_address_ptr);
	struct offer off = {.addr = (uint64_t)(uintptr_t)p.m.buf, .rmr_context = p.m.rctx, .magic = OFFER_MAGIC};
	check_ok(dat_cr_accept(cr, p.ep, sizeof off, &off));
	ev = expect_event(&p.w, p.conn, DAT_CONNECTION_EVENT_ESTABLISHED, "accept");
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, p.ep);

	/* The server's view of the connection: the local qualifier is the
	 * one it listens on (64 bits). */
	DAT_EP_PARAM epp;
	check_ok(dat_ep_query(p.ep, DAT_EP_FIELD_ALL, &epp));
	assert_int_equal(epp.ep_state, DAT_EP_STATE_CONNECTED);
	assert_int_equal(epp.local_port_qual, qual);
	assert_non_null(epp.remote_ia_address_ptr);
	assert_non_null(epp.local_ia_address_ptr);

	/* The RDMA write is visible once the send that followed it arrives. */
	expect_dto(&p.w, p.dto, p.ep, MSG, "write notification");
	assert_string_equal(p.m.buf + 2 * BUF, "written");
	for (int i = 0; i < WLEN; i++)
		if (p.m.buf[i] != (char)(i * 7 + 1))
			fail_msg("RDMA write data wrong at %d", i);
	post_recv(&p, 2);
	/* The next ping may complete before the pong that provoked it does at
	 * this end (a send's completion and a receive's are on different
	 * queues; over TCP the send completes when the kernel has taken it),
	 * so pong i's send and ping i+1 are taken in either order. */
	for (int i = 0; i < ROUNDS; i++) {
		char want[MSG], text[MSG];
		if (i == 0) {
			DAT_DTO_COMPLETION_EVENT_DATA d = expect_dto(&p.w, p.dto, p.ep, MSG, "ping");
			assert_int_equal(d.user_cookie.as_64, 2);
		} else {
			expect_send_and_recv(&p, 1000 + i - 1, 3000 + i - 1, "pong send and ping");
		}
		snprintf(want, sizeof want, "ping %d", i);
		assert_string_equal(p.m.buf + 2 * BUF, want);
		if (i + 1 < ROUNDS)
			post_recv(&p, 3000 + i);
		snprintf(text, sizeof text, "pong %d", i);
		send_msg(&p, 1000 + i, text);
	}
	DAT_DTO_COMPLETION_EVENT_DATA d = expect_dto(&p.w, p.dto, p.ep, MSG, "last pong send");
	assert_int_equal(d.user_cookie.as_64, 1000 + ROUNDS - 1);
	ev = expect_event(&p.w, p.conn, DAT_CONNECTION_EVENT_DISCONNECTED, "disconnect");
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, p.ep);
	reap_child(pid, 60, "pingpong client");
	expect_empty(p.dto, "server after disconnect");
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
	return cmocka_run_group_tests_name("pattern: pingpong", tests, NULL, NULL);
}
