/* Registered memory the program cannot use as registered: the request
 * completes with an error, and no process dies (issue 15). Three kinds of
 * bad memory:
 *
 *   unmapped    registered, then munmap'ed before the post
 *   prot_none   a PROT_NONE mapping, registered as such
 *   readonly    a PROT_READ mapping, registered with write privileges
 *
 * A provider may refuse the last two at registration, as verbs does
 * (ibv_reg_mr faults the pages in for the access asked); dat_lmr_create
 * must then fail with DAT_PRIVILEGES_VIOLATION (the software provider's
 * rdma.ErrFault) and the case ends there, which the test process finds
 * out first. Otherwise the request that uses the memory completes with an
 * error. The software provider registers both (it checks that the range
 * is mapped, not its protection) and fails the requests.
 *
 * The process that posts (the poster) registers memory with dat_lmr_create
 * over an mmap'ed range, or its peer offers such a range for RDMA. The
 * requests, each over the kinds that forbid it (a read-only page may be
 * sent from and read by RDMA):
 *
 *   send_local     a send whose source is bad
 *   write_local    an RDMA write whose local source is bad
 *   read_local     an RDMA read whose local target is bad
 *   recv_local     a receive into bad memory, which the peer then sends to
 *   write_remote   an RDMA write into the peer's region, which is bad
 *   read_remote    an RDMA read from the peer's region, which is bad
 *
 * Local cases must complete with DAT_DTO_ERR_LOCAL_PROTECTION: a verbs
 * provider reports IBV_WC_LOC_PROT_ERR when the HCA cannot access a local
 * buffer (an on-demand-paging region over an unmapped range faults to it),
 * and OFED dapl maps that status to DAT_DTO_ERR_LOCAL_PROTECTION. Remote
 * cases must complete with DAT_DTO_ERR_REMOTE_ACCESS (IBV_WC_REM_ACCESS_ERR:
 * the responder NAKs an access it cannot perform) or, accepted too,
 * DAT_DTO_ERR_REMOTE_RESPONDER (IBV_WC_REM_OP_ERR, which a responder may
 * report when the access fails for a reason other than the key or bounds
 * check). The post itself must succeed: the provider cannot tell a mapped
 * page from an unmapped one without touching it, so the error comes as a
 * completion, as on verbs. A remote case breaks the connection, as any
 * remote access the target refuses (broken.h): both ends get BROKEN, the
 * target EP_BROKEN on its async EVD, and a later request is flushed.
 *
 * Neither side may die, so neither runs in the test runner: the test
 * process spawns the peer, and the peer spawns the poster (the pattern
 * helpers' children, bounded); a child killed by a signal is reported as
 * a failure naming the signal. The peer stays alive while the poster works
 * (a TCP target answers RDMA requests from its own threads) and checks
 * afterwards that it can still close its IA.
 *
 * cmocka replaces the SIGSEGV and SIGBUS handlers while a test runs. The
 * Go runtime in libdat turns a fault in a copy it guards into an error
 * only through its own handlers, so the children put back the handlers
 * the library installed when it was loaded: they run as a real program
 * would. A fault the library does not handle then ends the child (the Go
 * runtime's "unexpected fault address", exit status 2), reported by the
 * process that waits for it. */
#define _GNU_SOURCE
#include "pattern.h"
#include "broken.h"
#include <sys/mman.h>

#define REGION 65536
#define MSG 64

struct offer {
	uint64_t addr;
	uint32_t rmr_context;
	uint32_t magic;
};
#define OFFER_MAGIC 0x0DEADu

/* SIGSEGV and SIGBUS as libdat's Go runtime set them up at load time. */
static struct sigaction lib_segv, lib_bus;

static void library_signal_handlers(void)
{
	assert_int_equal(sigaction(SIGSEGV, &lib_segv, NULL), 0);
	assert_int_equal(sigaction(SIGBUS, &lib_bus, NULL), 0);
}

/* A case is "KIND/REQUEST". */
static const char *const cases[] = {
	"unmapped/send_local",	"unmapped/write_local",	 "unmapped/read_local",	  "unmapped/recv_local",
	"unmapped/write_remote", "unmapped/read_remote", "prot_none/send_local",  "prot_none/write_local",
	"prot_none/read_local",	"prot_none/recv_local",	 "prot_none/write_remote", "prot_none/read_remote",
	"readonly/read_local",	"readonly/recv_local",	 "readonly/write_remote",
};
#define NCASES (sizeof cases / sizeof cases[0])

static int is_remote(const char *c)
{
	return strstr(c, "_remote") != NULL;
}

static int is_kind(const char *c, const char *kind)
{
	return strncmp(c, kind, strlen(kind)) == 0 && c[strlen(kind)] == '/';
}

/* The request part of a case. */
static const char *req_of(const char *c)
{
	return strchr(c, '/') + 1;
}

/* An mmap'ed range registered as an LMR. It is placed at a fixed, otherwise
 * unused address when the kernel allows, so that nothing else (the Go
 * runtime, malloc) is mapped into the hole once it is unmapped. */
struct region {
	char *buf;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
};

/* Maps the region, protects it as the case's kind says and registers it
 * with every privilege; returns what dat_lmr_create returned. */
static DAT_RETURN region_try(struct region *r, DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, const char *c)
{
	void *hint = (void *)(uintptr_t)0x3e0000000000ull;
	void *p = mmap(hint, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		p = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	r->buf = p;
	memset(r->buf, 0x5a, REGION);
	if (is_kind(c, "prot_none"))
		assert_int_equal(mprotect(r->buf, REGION, PROT_NONE), 0);
	else if (is_kind(c, "readonly"))
		assert_int_equal(mprotect(r->buf, REGION, PROT_READ), 0);
	DAT_REGION_DESCRIPTION rd = {.for_va = r->buf};
	DAT_VLEN rl;
	DAT_VADDR rv;
	return dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, REGION, pz, DAT_MEM_PRIV_ALL_FLAG, &r->lmr, &r->lctx,
			      &r->rctx, &rl, &rv);
}

/* The region of a case that runs: its registration succeeded in the test
 * process already (registration_refused). */
static void region_create(struct region *r, DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, const char *c)
{
	check_ok(region_try(r, ia, pz, c));
}

/* Every page of [p, p+n) is unmapped: msync fails with ENOMEM on a range
 * that holds an unmapped page, so it is asked page by page. */
static void expect_unmapped(const char *p, size_t n, const char *what)
{
	for (size_t off = 0; off < n; off += 4096) {
		errno = 0;
		if (msync((void *)(p + off), 4096, MS_ASYNC) == 0 || errno != ENOMEM)
			fail_msg("%s: page %p is mapped (the test needs it unmapped)", what, (void *)(p + off));
	}
}

/* Makes an unmapped case's region bad, after its registration; the other
 * kinds were bad from the start. */
static void region_spoil(struct region *r, const char *c, const char *what)
{
	if (!is_kind(c, "unmapped"))
		return;
	assert_int_equal(munmap(r->buf, REGION), 0);
	expect_unmapped(r->buf, REGION, what);
}

/* What both sides hold: an IA, EVDs taken in the wait mode, one EP and
 * ordinary registered memory ([0,MSG): receives, [MSG,2MSG): sends,
 * [4096,4096+REGION): a valid RDMA area). */
struct side {
	struct waiter w;
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, dto, conn, cr;
	DAT_PZ_HANDLE pz;
	struct mem m;
	DAT_EP_HANDLE ep;
};

static void side_open(struct side *s)
{
	s->async = DAT_HANDLE_NULL;
	check_ok(dat_ia_open(TEST_IA, 8, &s->async, &s->ia));
	waiter_init(&s->w, s->ia, MODE_WAIT);
	check_ok(dat_pz_create(s->ia, &s->pz));
	s->dto = waiter_evd(&s->w, s->ia, 16, DAT_EVD_DTO_FLAG);
	s->conn = waiter_evd(&s->w, s->ia, 8, DAT_EVD_CONNECTION_FLAG);
	s->cr = waiter_evd(&s->w, s->ia, 8, DAT_EVD_CR_FLAG);
	mem_create(&s->m, s->ia, s->pz, 4096 + REGION);
	check_ok(dat_ep_create(s->ia, s->pz, s->dto, s->dto, s->conn, NULL, &s->ep));
}

/* The abrupt close frees everything, including the LMR of an unmapped
 * region: the library must still be usable after the error. */
static void side_close(struct side *s)
{
	check_ok(dat_ia_close(s->ia, DAT_CLOSE_ABRUPT_FLAG));
	free(s->m.buf);
}

/* ---- the poster ---- */

static void poster(void **state)
{
	(void)state;
	const char *c = child_args.extra;
	const char *req = req_of(c);
	struct side s;
	struct region local;
	library_signal_handlers();
	side_open(&s);
	if (!is_remote(c))
		region_create(&local, s.ia, s.pz, c);
	DAT_LMR_TRIPLET go = mem_seg(&s.m, 0, MSG);
	check_ok(dat_ep_post_recv(s.ep, 1, &go, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	connect_ep(s.ep, child_args.qual, PAT_TMO, c, (DAT_COUNT)strlen(c) + 1);
	DAT_EVENT ev = expect_event(&s.w, s.conn, DAT_CONNECTION_EVENT_ESTABLISHED, "connect");
	struct offer off;
	assert_int_equal(ev.event_data.connect_event_data.private_data_size, sizeof off);
	memcpy(&off, ev.event_data.connect_event_data.private_data, sizeof off);
	assert_int_equal(off.magic, OFFER_MAGIC);
	/* The peer says go once its side is ready (its region unmapped in the
	 * remote cases, its receive posted in the send case). */
	DAT_DTO_COMPLETION_EVENT_DATA d = expect_dto(&s.w, s.dto, s.ep, MSG, "go");
	assert_int_equal(d.user_cookie.as_64, 1);
	assert_string_equal(s.m.buf, "go");

	DAT_RMR_TRIPLET remote = rmr_seg(off.rmr_context, off.addr, MSG);
	DAT_LMR_TRIPLET ok = mem_seg(&s.m, 4096, MSG);
	DAT_LMR_TRIPLET bad = {0};
	if (!is_remote(c)) {
		region_spoil(&local, c, "local region");
		bad = (DAT_LMR_TRIPLET){.lmr_context = local.lctx,
					.virtual_address = (DAT_VADDR)(uintptr_t)local.buf,
					.segment_length = MSG};
	}
	DAT_RETURN r;
	if (strcmp(req, "send_local") == 0)
		r = dat_ep_post_send(s.ep, 1, &bad, cookie(2), DAT_COMPLETION_DEFAULT_FLAG);
	else if (strcmp(req, "write_local") == 0)
		r = dat_ep_post_rdma_write(s.ep, 1, &bad, cookie(2), &remote, DAT_COMPLETION_DEFAULT_FLAG);
	else if (strcmp(req, "read_local") == 0)
		r = dat_ep_post_rdma_read(s.ep, 1, &bad, cookie(2), &remote, DAT_COMPLETION_DEFAULT_FLAG);
	else if (strcmp(req, "recv_local") == 0)
		r = dat_ep_post_recv(s.ep, 1, &bad, cookie(2), DAT_COMPLETION_DEFAULT_FLAG); /* the peer's second send lands here */
	else if (strcmp(req, "write_remote") == 0)
		r = dat_ep_post_rdma_write(s.ep, 1, &ok, cookie(2), &remote, DAT_COMPLETION_DEFAULT_FLAG);
	else
		r = dat_ep_post_rdma_read(s.ep, 1, &ok, cookie(2), &remote, DAT_COMPLETION_DEFAULT_FLAG);
	if (r != DAT_SUCCESS)
		fail_msg("%s: the post returned %s, want DAT_SUCCESS and an error completion", c, ret_name(r));

	ev = expect_event(&s.w, s.dto, DAT_DTO_COMPLETION_EVENT, c);
	d = ev.event_data.dto_completion_event_data;
	assert_int_equal(d.user_cookie.as_64, 2);
	assert_ptr_equal(d.ep_handle, s.ep);
	print_message("%s over %s: completion status %d\n", c, TEST_IA, d.status);
	if (is_remote(c)) {
		if (d.status != DAT_DTO_ERR_REMOTE_ACCESS && d.status != DAT_DTO_ERR_REMOTE_RESPONDER)
			fail_msg("%s: status %d, want DAT_DTO_ERR_REMOTE_ACCESS (%d) or _REMOTE_RESPONDER (%d)", c,
				 d.status, DAT_DTO_ERR_REMOTE_ACCESS, DAT_DTO_ERR_REMOTE_RESPONDER);
	} else if (d.status != DAT_DTO_ERR_LOCAL_PROTECTION) {
		fail_msg("%s: status %d, want DAT_DTO_ERR_LOCAL_PROTECTION (%d)", c, d.status,
			 DAT_DTO_ERR_LOCAL_PROTECTION);
	}
	if (is_remote(c)) {
		/* A remote access the target cannot perform breaks the
		 * connection, as on verbs (the responder's QP access error,
		 * broken.h): BROKEN, the EP disconnected, a later request
		 * flushed, no async event at this end. */
		brk_post_empty_send(s.ep, 3);
		d = expect_event(&s.w, s.dto, DAT_DTO_COMPLETION_EVENT, "the request after it").event_data
			.dto_completion_event_data;
		assert_int_equal(d.user_cookie.as_64, 3);
		assert_int_equal(d.status, DAT_DTO_ERR_FLUSHED);
		ev = expect_event(&s.w, s.conn, DAT_CONNECTION_EVENT_BROKEN, "the initiator's end of the connection");
		assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, s.ep);
		DAT_EP_STATE st;
		check_ok(dat_ep_get_status(s.ep, &st, NULL, NULL));
		assert_int_equal(st, DAT_EP_STATE_DISCONNECTED);
		expect_empty(s.async, "the initiator's async EVD");
	}
	side_close(&s);
}

/* ---- the peer ---- */

static void peer(void **state)
{
	(void)state;
	const char *c = child_args.extra;
	struct side s;
	struct region target;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	library_signal_handlers();
	side_open(&s);
	struct offer off = {.addr = (uint64_t)(uintptr_t)(s.m.buf + 4096), .rmr_context = s.m.rctx, .magic = OFFER_MAGIC};
	if (is_remote(c)) {
		region_create(&target, s.ia, s.pz, c);
		off.addr = (uint64_t)(uintptr_t)target.buf;
		off.rmr_context = target.rctx;
	}
	/* The send case's message has a receive to land in. */
	DAT_LMR_TRIPLET rv = mem_seg(&s.m, 0, MSG);
	check_ok(dat_ep_post_recv(s.ep, 1, &rv, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_psp_create_any(s.ia, &q, s.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	pid_t pid = spawn_child("poster", MODE_WAIT, q, c);
	DAT_EVENT ev = expect_event(&s.w, s.cr, DAT_CONNECTION_REQUEST_EVENT, "connection request");
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, s.ep, sizeof off, &off));
	expect_event(&s.w, s.conn, DAT_CONNECTION_EVENT_ESTABLISHED, "accept");
	if (is_remote(c))
		region_spoil(&target, c, "the peer's region");
	snprintf(s.m.buf + MSG, MSG, "go");
	DAT_LMR_TRIPLET go = mem_seg(&s.m, MSG, MSG);
	check_ok(dat_ep_post_send(s.ep, 1, &go, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
	/* The receive case's message: it waits for the poster's receive into
	 * bad memory (the library's sends wait for a receive). Its own
	 * completion is an error, not looked at here. */
	if (strcmp(req_of(c), "recv_local") == 0) {
		check_ok(dat_ep_post_send(s.ep, 1, &go, cookie(3), DAT_COMPLETION_DEFAULT_FLAG));
		/* This end's sends go out in its own DAT calls: wait for
		 * both. The second is refused by the receiver, whose receive
		 * faulted: DAT_DTO_ERR_REMOTE_RESPONDER (IBV_WC_REM_OP_ERR at
		 * a verbs requester). */
		expect_dto(&s.w, s.dto, s.ep, -1, "go");
		ev = expect_event(&s.w, s.dto, DAT_DTO_COMPLETION_EVENT, "the send into bad memory");
		DAT_DTO_COMPLETION_EVENT_DATA d = ev.event_data.dto_completion_event_data;
		assert_int_equal(d.user_cookie.as_64, 3);
		print_message("%s over %s: the sender's completion status %d\n", c, TEST_IA, d.status);
		if (d.status != DAT_DTO_ERR_REMOTE_RESPONDER)
			fail_msg("%s: the send's status %d, want DAT_DTO_ERR_REMOTE_RESPONDER (%d)", c, d.status,
				 DAT_DTO_ERR_REMOTE_RESPONDER);
	}
	/* The poster's verdict; this process stays up meanwhile, as a target
	 * must. */
	reap_child(pid, 60, c);
	if (is_remote(c)) {
		/* The target's end broke too: BROKEN, and EP_BROKEN on its
		 * async EVD (verbs: IBV_EVENT_QP_ACCESS_ERR at the responder). */
		ev = expect_event(&s.w, s.conn, DAT_CONNECTION_EVENT_BROKEN, "the target's end of the connection");
		assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, s.ep);
		ev = expect_event(&s.w, s.async, DAT_ASYNC_ERROR_EP_BROKEN, "the target's async event");
		assert_ptr_equal(ev.event_data.asynch_error_event_data.dat_handle, s.ep);
		assert_int_equal(ev.event_data.asynch_error_event_data.reason, DAT_EP_TRANSFER_TO_ERROR);
		DAT_EP_STATE st;
		check_ok(dat_ep_get_status(s.ep, &st, NULL, NULL));
		assert_int_equal(st, DAT_EP_STATE_DISCONNECTED);
	}
	check_ok(dat_psp_free(psp));
	side_close(&s);
}

/* ---- the test process ---- */

/* Whether the IA under test refuses to register the case's memory; then
 * only with DAT_PRIVILEGES_VIOLATION, and the case is done. An unmapped
 * case registers while the memory is still mapped. */
static int registration_refused(const char *c)
{
	if (is_kind(c, "unmapped"))
		return 0;
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_PZ_HANDLE pz;
	check_ok(dat_pz_create(ia, &pz));
	struct region r;
	DAT_RETURN ret = region_try(&r, ia, pz, c);
	if (ret == DAT_SUCCESS)
		check_ok(dat_lmr_free(r.lmr));
	else if (DAT_GET_TYPE(ret) != DAT_PRIVILEGES_VIOLATION)
		fail_msg("%s: dat_lmr_create returned %s, want DAT_SUCCESS or DAT_PRIVILEGES_VIOLATION", c, ret_name(ret));
	assert_int_equal(munmap(r.buf, REGION), 0);
	check_ok(dat_pz_free(pz));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
	return ret != DAT_SUCCESS;
}

static void run_case(void **state)
{
	const char *c = *state;
	if (registration_refused(c)) {
		print_message("%s over %s: refused at registration\n", c, TEST_IA);
		return;
	}
	print_message("%s over %s\n", c, TEST_IA);
	pid_t pid = spawn_child("peer", MODE_WAIT, 0, c);
	reap_child(pid, 90, c);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest roles[] = {cmocka_unit_test(poster), cmocka_unit_test_teardown(peer, pat_teardown)};
	int rc;
	assert_int_equal(sigaction(SIGSEGV, NULL, &lib_segv), 0);
	assert_int_equal(sigaction(SIGBUS, NULL, &lib_bus), 0);
	if (pat_child_main(argc, argv, roles, 2, &rc))
		return rc;
	alarm(280);
	struct CMUnitTest tests[NCASES];
	for (size_t i = 0; i < NCASES; i++)
		tests[i] = (struct CMUnitTest){.name = cases[i], .test_func = run_case, .teardown_func = pat_teardown,
					       .initial_state = (void *)cases[i]};
	return cmocka_run_group_tests_name("unusable registered memory", tests, NULL, NULL);
}
