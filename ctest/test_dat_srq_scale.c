/* 100 connections sharing one SRQ on each side, client and server in
 * separate processes (the server starts this same program again with
 * posix_spawn; the child execs, nothing runs between fork and exec).
 *
 * dat_srq_create(3DAT), Usage: "SRQ allows the Consumer to use fewer Recv
 * buffers then posting the maximum number of buffers for each connection.
 * If the Consumer can upper bound the number of incoming messages over all
 * connections whose local EP is using SRQ, then instead of posting this
 * maximum for each connection the Consumer can post them for all
 * connections on SRQ."
 *
 * Each side posts SRQ_LEN (256) buffers for CONNS (100) connections that
 * each receive bursts of BURST (8) messages: 800 messages per burst into
 * 256 buffers, reposted as completions are reaped; messages that find the
 * SRQ empty wait for a buffer. Every message is checked: the connection it
 * belongs to, and its place in that connection's order. */
#define _GNU_SOURCE
#include "srq.h"
#include "child.h"
#include <spawn.h>

#define CONNS 100
#define BURST 8
#define ROUNDS 5
#define SRQ_LEN 256
#define MSG 64

struct node {
	struct side sd;
	DAT_SRQ_HANDLE srq;
	DAT_EP_HANDLE ep[CONNS];
	int peer_tag[CONNS]; /* the tag each EP's peer sends, -1 until known */
	uint32_t next_seq[CONNS];
	int received;
};

/* The client runs outside cmocka: failures print and exit. */
static int in_client;

#define CK(call)                                                                              \
	do {                                                                                  \
		DAT_RETURN r_ = (call);                                                       \
		if (r_ != DAT_SUCCESS) {                                                      \
			if (!in_client)                                                       \
				fail_msg("%s: %s", #call, ret_name(r_));                      \
			fprintf(stderr, "scale client: %s: %s\n", #call, ret_name(r_));       \
			exit(1);                                                              \
		}                                                                             \
	} while (0)

static void die(const char *what)
{
	if (!in_client)
		fail_msg("%s", what);
	fprintf(stderr, "scale client: %s\n", what);
	exit(1);
}

static DAT_EVENT wait1(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;
	DAT_COUNT n;
	CK(dat_evd_wait(evd, 20 * TMO, 1, &ev, &n));
	return ev;
}

/* Opens a node: an IA, an SRQ of SRQ_LEN buffers posted, CONNS EPs on it. */
static void node_open(struct node *n)
{
	DAT_REGION_DESCRIPTION rd;
	DAT_RMR_CONTEXT rctx;
	DAT_VLEN len;
	DAT_VADDR va;
	struct side *s = &n->sd;
	memset(n, 0, sizeof *n);
	s->async = DAT_HANDLE_NULL;
	CK(dat_ia_open(TEST_IA, 16, &s->async, &s->ia));
	CK(dat_evd_create(s->ia, 4 * SRQ_LEN, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->dto));
	CK(dat_evd_create(s->ia, 2 * CONNS, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &s->conn));
	CK(dat_evd_create(s->ia, 2 * CONNS, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &s->cr));
	CK(dat_pz_create(s->ia, &s->pz));
	if (posix_memalign((void **)&s->buf, 4096, (size_t)NSLOT * SLOT))
		die("posix_memalign");
	memset(s->buf, 0, (size_t)NSLOT * SLOT);
	rd.for_va = s->buf;
	CK(dat_lmr_create(s->ia, DAT_MEM_TYPE_VIRTUAL, rd, (DAT_VLEN)NSLOT * SLOT, s->pz, DAT_MEM_PRIV_ALL_FLAG, &s->lmr,
			  &s->lctx, &rctx, &len, &va));
	DAT_SRQ_ATTR a = {.max_recv_dtos = SRQ_LEN, .max_recv_iov = 1, .low_watermark = DAT_SRQ_LW_DEFAULT};
	CK(dat_srq_create(s->ia, s->pz, &a, &n->srq));
	DAT_EP_ATTR ea;
	memset(&ea, 0, sizeof ea);
	ea.max_message_size = MSG;
	ea.max_rdma_size = 0;
	ea.max_request_dtos = 2 * BURST;
	ea.max_request_iov = 1;
	ea.srq_soft_hw = DAT_HW_DEFAULT;
	for (int i = 0; i < CONNS; i++) {
		CK(dat_ep_create_with_srq(s->ia, s->pz, s->dto, s->dto, s->conn, n->srq, &ea, &n->ep[i]));
		n->peer_tag[i] = -1;
	}
	for (int i = 0; i < SRQ_LEN; i++) {
		DAT_LMR_TRIPLET t = rslot(s, i, MSG);
		DAT_DTO_COOKIE ck = {.as_64 = (DAT_UINT64)i};
		CK(dat_srq_post_recv(n->srq, 1, &t, ck));
	}
}

static int ep_index(struct node *n, DAT_EP_HANDLE ep)
{
	for (int i = 0; i < CONNS; i++)
		if (n->ep[i] == ep)
			return i;
	die("completion for an unknown EP");
	return -1;
}

/* Receives want messages: each must continue its connection's sequence;
 * its buffer goes back to the SRQ at once. */
static void receive(struct node *n, int want)
{
	DAT_SRQ_PARAM p;
	for (int k = 0; k < want; k++) {
		DAT_EVENT ev = wait1(n->sd.dto);
		DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
		if (ev.event_number != DAT_DTO_COMPLETION_EVENT || d->status != DAT_DTO_SUCCESS || d->transfered_length != MSG)
			die("bad receive completion");
		int i = ep_index(n, d->ep_handle);
		int slot = (int)d->user_cookie.as_64;
		uint32_t hdr[2];
		memcpy(hdr, n->sd.buf + (size_t)slot * SLOT, sizeof hdr);
		if (n->peer_tag[i] < 0)
			n->peer_tag[i] = (int)hdr[0];
		if ((int)hdr[0] != n->peer_tag[i])
			die("a message of another connection");
		if (hdr[1] != n->next_seq[i])
			die("a connection's messages out of order");
		n->next_seq[i]++;
		memset(n->sd.buf + (size_t)slot * SLOT, 0, MSG);
		DAT_LMR_TRIPLET t = rslot(&n->sd, slot, MSG);
		CK(dat_srq_post_recv(n->srq, 1, &t, d->user_cookie));
		n->received++;
	}
	CK(dat_srq_query(n->srq, DAT_SRQ_FIELD_ALL, &p));
	if (p.outstanding_dto_count > SRQ_LEN || p.available_dto_count > p.outstanding_dto_count)
		die("SRQ counts out of bounds");
}

/* Sends a burst on every connection: (tag = EP index, seq). */
static void send_burst(struct node *n, int round)
{
	for (int i = 0; i < CONNS; i++)
		for (int b = 0; b < BURST; b++) {
			int k = i * BURST + b;
			DAT_LMR_TRIPLET t = sslot(&n->sd, k, MSG);
			uint32_t hdr[2] = {(uint32_t)i, (uint32_t)(round * BURST + b)};
			memcpy((char *)(uintptr_t)t.virtual_address, hdr, sizeof hdr);
			DAT_DTO_COOKIE ck = {.as_64 = (DAT_UINT64)k};
			CK(dat_ep_post_send(n->ep[i], 1, &t, ck, DAT_COMPLETION_SUPPRESS_FLAG));
		}
}

static int client(const char *qual)
{
	struct node n;
	struct sockaddr_in sa = {.sin_family = AF_INET};
	in_client = 1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	node_open(&n);
	for (int i = 0; i < CONNS; i++)
		CK(dat_ep_connect(n.ep[i], (DAT_IA_ADDRESS_PTR)&sa, strtoull(qual, NULL, 0), 20 * TMO, 0, NULL,
				  DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	for (int i = 0; i < CONNS; i++)
		if (wait1(n.sd.conn).event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
			die("connect failed");
	for (int r = 0; r < ROUNDS; r++) {
		send_burst(&n, r);
		receive(&n, CONNS * BURST);
	}
	for (int i = 0; i < CONNS; i++)
		CK(dat_ep_disconnect(n.ep[i], DAT_CLOSE_GRACEFUL_FLAG));
	for (int i = 0; i < CONNS; i++)
		if (wait1(n.sd.conn).event_number != DAT_CONNECTION_EVENT_DISCONNECTED)
			die("disconnect failed");
	CK(dat_ia_close(n.sd.ia, DAT_CLOSE_ABRUPT_FLAG));
	return 0;
}

static void dat_srq_create__hundred_connections(void **state)
{
	(void)state;
	struct node *n = calloc(1, sizeof *n);
	assert_non_null(n);
	node_open(n);
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	CK(dat_psp_create_any(n->sd.ia, &q, n->sd.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	char qs[32];
	snprintf(qs, sizeof qs, "0x%llx", (unsigned long long)q);
	char *argv[] = {"test_dat_srq_scale", "--client", qs, NULL};
	pid_t pid;
	assert_int_equal(posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ), 0);
	long t0 = now_ns();
	for (int i = 0; i < CONNS; i++) {
		DAT_EVENT ev = wait1(n->sd.cr);
		assert_int_equal(ev.event_number, DAT_CONNECTION_REQUEST_EVENT);
		CK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, n->ep[i], 0, NULL));
	}
	for (int i = 0; i < CONNS; i++)
		assert_int_equal(wait1(n->sd.conn).event_number, DAT_CONNECTION_EVENT_ESTABLISHED);
	long t1 = now_ns();
	for (int r = 0; r < ROUNDS; r++) {
		receive(n, CONNS * BURST);
		send_burst(n, r);
	}
	for (int i = 0; i < CONNS; i++)
		assert_int_equal(wait1(n->sd.conn).event_number, DAT_CONNECTION_EVENT_DISCONNECTED);
	long t2 = now_ns();
	int status;
	assert_int_equal(wait_bounded(pid, 120, &status), 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(n->received, ROUNDS * CONNS * BURST);
	for (int i = 0; i < CONNS; i++)
		assert_int_equal(n->next_seq[i], ROUNDS * BURST);
	DAT_SRQ_PARAM p;
	CK(dat_srq_query(n->srq, DAT_SRQ_FIELD_ALL, &p));
	assert_int_equal(p.available_dto_count, SRQ_LEN);
	assert_int_equal(p.outstanding_dto_count, SRQ_LEN);
	print_message("%d connections, %d buffers per side: connected in %.0f ms; %d messages each way in %.0f ms\n",
		      CONNS, SRQ_LEN, (t1 - t0) / 1e6, ROUNDS * CONNS * BURST, (t2 - t1) / 1e6);
	CK(dat_psp_free(psp));
	CK(dat_ia_close(n->sd.ia, DAT_CLOSE_ABRUPT_FLAG));
	free(n->sd.buf);
	free(n);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--client") == 0)
		return client(argv[2]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dat_srq_create__hundred_connections),
	};
	return cmocka_run_group_tests_name("dat_srq_scale", tests, NULL, NULL);
}
