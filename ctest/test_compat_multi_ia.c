/* Program pattern: one process, several IAs, event dispatchers shared
 * across them (issue 13, item 3), over godat-shm and godat-tcp. Programs
 * that open several IAs (one per port or per peer group) create the EVDs
 * once, on one IA, and give them to endpoints of the others; the
 * references accept any EVD of the process of the right kind (they check
 * the handle and the EVD's flags, never its IA).
 *
 * IA1 owns the endpoint and its PZ and memory; IA2 owns every EVD the
 * endpoint reports to (receive, request, connection) and a CNO; IA3 is the
 * peer, whose PSP reports its requests to an EVD of IA2 as well. Waits on
 * IA2's EVDs and CNO begin before the event they wait for happens (a
 * thread is seen asleep first), so the test shows the events wake them. */
#define _GNU_SOURCE
#include "pages.h"

#define LEN 64
#define QUAL 0x13003

struct rig {
	DAT_IA_HANDLE ia1, ia2, ia3;
	DAT_EVD_HANDLE async1, async2, async3;
	DAT_EVD_HANDLE recv, req, conn, cr; /* all of IA2 */
	DAT_CNO_HANDLE cno;                 /* of IA2, on recv */
	DAT_PZ_HANDLE pz1, pz3;
	DAT_EP_HANDLE ep;                  /* of IA1 */
	DAT_EVD_HANDLE p_evd;              /* IA3: DTO and connection events */
	DAT_EP_HANDLE p_ep;
	DAT_PSP_HANDLE psp; /* of IA3, requests to IA2's cr */
	char buf1[LEN], buf3[LEN];
	struct lmr l1, l3;
};

static DAT_IA_HANDLE open_named(const char *name, DAT_EVD_HANDLE *async)
{
	DAT_IA_HANDLE ia;
	*async = DAT_HANDLE_NULL;
	check_ok(dat_ia_open((char *)name, 8, async, &ia));
	return ia;
}

/* Starts a thread waiting on evd and returns once it sleeps. It waits
 * without a timeout, so only the event can end its wait (a waiter with a
 * timeout would find the event at its timeout); the test bounds it with
 * blocked_join. */
static void sleep_on(struct blocked *b, DAT_EVD_HANDLE evd)
{
	blocked_start(b, blocked_evd_main, evd, DAT_TIMEOUT_INFINITE, 1);
	wait_until_sleeping(b);
}

/* Joins a waiter started by sleep_on; its event must be number. */
static DAT_EVENT woken(struct blocked *b, DAT_EVENT_NUMBER number)
{
	blocked_join(b, 10);
	if (b->ret != DAT_SUCCESS)
		fail_msg("dat_evd_wait: %s", ret_name(b->ret));
	if (b->ev.event_number != number)
		fail_msg("event 0x%x, want 0x%x", (unsigned)b->ev.event_number, (unsigned)number);
	return b->ev;
}

static void rig_open(struct rig *r, const char *name, int modify)
{
	memset(r, 0, sizeof *r);
	r->ia1 = open_named(name, &r->async1);
	r->ia2 = open_named(name, &r->async2);
	r->ia3 = open_named(name, &r->async3);
	check_ok(dat_cno_create(r->ia2, DAT_OS_WAIT_PROXY_AGENT_NULL, &r->cno));
	r->recv = make_evd(r->ia2, 16, r->cno, DAT_EVD_DTO_FLAG);
	r->req = make_evd(r->ia2, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG);
	r->conn = make_evd(r->ia2, 16, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG);
	r->cr = make_evd(r->ia2, 16, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG);
	r->pz1 = make_pz(r->ia1);
	if (modify) {
		/* Created without EVDs, given IA2's by dat_ep_modify. */
		check_ok(dat_ep_create(r->ia1, r->pz1, DAT_HANDLE_NULL, DAT_HANDLE_NULL, DAT_HANDLE_NULL, NULL, &r->ep));
		DAT_EP_PARAM p;
		memset(&p, 0, sizeof p);
		p.recv_evd_handle = r->recv;
		p.request_evd_handle = r->req;
		p.connect_evd_handle = r->conn;
		check_ok(dat_ep_modify(r->ep,
				       DAT_EP_FIELD_RECV_EVD_HANDLE | DAT_EP_FIELD_REQUEST_EVD_HANDLE |
					   DAT_EP_FIELD_CONNECT_EVD_HANDLE,
				       &p));
	} else {
		check_ok(dat_ep_create(r->ia1, r->pz1, r->recv, r->req, r->conn, NULL, &r->ep));
	}
	DAT_EP_PARAM q;
	check_ok(dat_ep_query(r->ep, DAT_EP_FIELD_ALL, &q));
	assert_ptr_equal(q.ia_handle, r->ia1);
	assert_ptr_equal(q.recv_evd_handle, r->recv);
	assert_ptr_equal(q.request_evd_handle, r->req);
	assert_ptr_equal(q.connect_evd_handle, r->conn);
	/* In use by an EP of another IA: not freeable. */
	check_ret(dat_evd_free(r->req), DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_IN_USE);

	r->pz3 = make_pz(r->ia3);
	r->p_evd = make_evd(r->ia3, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG);
	check_ok(dat_ep_create(r->ia3, r->pz3, r->p_evd, r->p_evd, r->p_evd, NULL, &r->p_ep));
	check_ok(dat_psp_create(r->ia3, QUAL, r->cr, DAT_PSP_CONSUMER_FLAG, &r->psp));
	r->l1 = make_lmr(r->ia1, r->pz1, r->buf1, LEN, DAT_MEM_PRIV_ALL_FLAG);
	r->l3 = make_lmr(r->ia3, r->pz3, r->buf3, LEN, DAT_MEM_PRIV_ALL_FLAG);
}

/* Connects IA1's EP to IA3's PSP: the request reaches IA2's CR EVD, the
 * established event IA2's connection EVD, each waited for asleep. */
static void rig_connect(struct rig *r)
{
	struct blocked req, est;
	sleep_on(&req, r->cr);
	struct sockaddr_in sa = loopback_addr();
	sleep_on(&est, r->conn);
	check_ok(dat_ep_connect(r->ep, (DAT_IA_ADDRESS_PTR)&sa, QUAL, TMO_US, 0, NULL, DAT_QOS_BEST_EFFORT,
				DAT_CONNECT_DEFAULT_FLAG));
	DAT_EVENT ev = woken(&req, DAT_CONNECTION_REQUEST_EVENT);
	assert_ptr_equal(ev.evd_handle, r->cr);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, r->p_ep, 0, NULL));
	ev = woken(&est, DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, r->ep);
	wait_event(r->p_evd, DAT_CONNECTION_EVENT_ESTABLISHED);
}

/* A receive and a send of IA1's EP complete on IA2's EVDs: each wait
 * starts before the peer's data arrives. */
static void rig_traffic(struct rig *r, int use_cno)
{
	DAT_LMR_TRIPLET in = triplet(&r->l1, r->buf1, LEN);
	check_ok(dat_ep_post_recv(r->ep, 1, &in, (DAT_DTO_COOKIE){.as_64 = 11}, DAT_COMPLETION_DEFAULT_FLAG));
	struct blocked w;
	if (use_cno) {
		blocked_start(&w, blocked_cno_main, r->cno, DAT_TIMEOUT_INFINITE, 0);
		wait_until_sleeping(&w);
	} else {
		sleep_on(&w, r->recv);
	}
	memcpy(r->buf3, "across IAs", 11);
	DAT_LMR_TRIPLET out3 = triplet(&r->l3, r->buf3, 11);
	check_ok(dat_ep_post_send(r->p_ep, 1, &out3, (DAT_DTO_COOKIE){.as_64 = 33}, DAT_COMPLETION_DEFAULT_FLAG));
	DAT_EVENT ev;
	if (use_cno) {
		blocked_join(&w, 10);
		check_ok(w.ret);
		assert_ptr_equal(w.evd_out, r->recv);
		check_ok(dat_evd_dequeue(r->recv, &ev));
	} else {
		ev = woken(&w, DAT_DTO_COMPLETION_EVENT);
	}
	assert_int_equal(ev.event_number, DAT_DTO_COMPLETION_EVENT);
	assert_ptr_equal(ev.evd_handle, r->recv);
	assert_ptr_equal(ev.event_data.dto_completion_event_data.ep_handle, r->ep);
	assert_int_equal(ev.event_data.dto_completion_event_data.user_cookie.as_64, 11);
	assert_int_equal(ev.event_data.dto_completion_event_data.transfered_length, 11);
	assert_string_equal(r->buf1, "across IAs");
	wait_event(r->p_evd, DAT_DTO_COMPLETION_EVENT);

	/* The other way: IA1's send completes on IA2's request EVD. */
	DAT_LMR_TRIPLET in3 = triplet(&r->l3, r->buf3, LEN);
	check_ok(dat_ep_post_recv(r->p_ep, 1, &in3, (DAT_DTO_COOKIE){.as_64 = 34}, DAT_COMPLETION_DEFAULT_FLAG));
	memcpy(r->buf1, "and back", 9);
	DAT_LMR_TRIPLET out1 = triplet(&r->l1, r->buf1, 9);
	check_ok(dat_ep_post_send(r->ep, 1, &out1, (DAT_DTO_COOKIE){.as_64 = 12}, DAT_COMPLETION_DEFAULT_FLAG));
	ev = wait_event(r->req, DAT_DTO_COMPLETION_EVENT);
	assert_ptr_equal(ev.event_data.dto_completion_event_data.ep_handle, r->ep);
	assert_int_equal(ev.event_data.dto_completion_event_data.user_cookie.as_64, 12);
	assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	wait_event(r->p_evd, DAT_DTO_COMPLETION_EVENT);
	assert_string_equal(r->buf3, "and back");
}

static void evds_of_another_ia(void **state)
{
	struct rig r;
	rig_open(&r, *state, 0);
	rig_connect(&r);
	rig_traffic(&r, 0);
	rig_traffic(&r, 1);
	/* The peer's disconnect reaches IA2's connection EVD. */
	struct blocked d;
	sleep_on(&d, r.conn);
	check_ok(dat_ep_disconnect(r.p_ep, DAT_CLOSE_ABRUPT_FLAG));
	DAT_EVENT ev = woken(&d, DAT_CONNECTION_EVENT_DISCONNECTED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, r.ep);
	/* Freeing the EP releases IA2's EVDs. */
	check_ok(dat_ep_free(r.ep));
	check_ok(dat_evd_free(r.req));
	check_ok(dat_ia_close(r.ia1, DAT_CLOSE_ABRUPT_FLAG));
	check_ok(dat_ia_close(r.ia2, DAT_CLOSE_ABRUPT_FLAG));
	check_ok(dat_ia_close(r.ia3, DAT_CLOSE_ABRUPT_FLAG));
}

/* The same through dat_ep_modify; then IA2, owner of the EVDs, is closed
 * while IA1's connected EP still reports to them: traffic goes on, its
 * events go nowhere, and IA1 closes cleanly afterwards. */
static void evds_of_another_ia_by_modify(void **state)
{
	struct rig r;
	rig_open(&r, *state, 1);
	rig_connect(&r);
	rig_traffic(&r, 0);
	check_ok(dat_ia_close(r.ia2, DAT_CLOSE_ABRUPT_FLAG));
	DAT_LMR_TRIPLET in = triplet(&r.l1, r.buf1, LEN);
	check_ok(dat_ep_post_recv(r.ep, 1, &in, (DAT_DTO_COOKIE){.as_64 = 21}, DAT_COMPLETION_DEFAULT_FLAG));
	DAT_LMR_TRIPLET out3 = triplet(&r.l3, r.buf3, 4);
	memcpy(r.buf3, "late", 4);
	check_ok(dat_ep_post_send(r.p_ep, 1, &out3, (DAT_DTO_COOKIE){.as_64 = 35}, DAT_COMPLETION_DEFAULT_FLAG));
	wait_event(r.p_evd, DAT_DTO_COMPLETION_EVENT);
	check_ok(dat_ia_close(r.ia1, DAT_CLOSE_ABRUPT_FLAG));
	check_ok(dat_ia_close(r.ia3, DAT_CLOSE_ABRUPT_FLAG));
}

#define BOTH(f) cmocka_unit_test_prestate(f, (void *)"godat-shm"), cmocka_unit_test_prestate(f, (void *)"godat-tcp")

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(evds_of_another_ia),
		BOTH(evds_of_another_ia_by_modify),
	};
	return cmocka_run_group_tests_name("compat several IAs", tests, NULL, NULL);
}
