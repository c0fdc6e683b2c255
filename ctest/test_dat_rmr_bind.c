/* dat_rmr_bind(3DAT): every provokable return value, the completion event,
 * rebinding, unbinding, privileges, and binds on a disconnected endpoint. */
#define _GNU_SOURCE
#include "pages.h"

static char window[4096];

/* A connected pair whose side 0 owns an LMR over window and an RMR. */
struct bind_fixture {
	struct pair p;
	struct lmr l;
	DAT_RMR_HANDLE rmr;
};

static void fixture_open(struct bind_fixture *f, DAT_MEM_PRIV_FLAGS lmr_priv)
{
	pair_open(&f->p, NULL);
	pair_connect(&f->p);
	memset(window, 0, sizeof window);
	f->l = make_lmr(f->p.ia[0], f->p.pz[0], window, sizeof window, lmr_priv);
	check_ok(dat_rmr_create(f->p.pz[0], &f->rmr));
}

static DAT_RMR_CONTEXT bind_ok(struct bind_fixture *f, char *at, DAT_VLEN len, DAT_MEM_PRIV_FLAGS priv,
			       uint64_t cookie)
{
	DAT_LMR_TRIPLET t = triplet(&f->l, at, len);
	DAT_RMR_COOKIE ck = {.as_64 = cookie};
	DAT_RMR_CONTEXT rc = 0;
	check_ok(dat_rmr_bind(f->rmr, &t, priv, f->p.ep[0], ck, DAT_COMPLETION_DEFAULT_FLAG, &rc));
	DAT_EVENT ev = wait_event(f->p.evd[0], DAT_RMR_BIND_COMPLETION_EVENT);
	assert_ptr_equal(ev.event_data.rmr_completion_event_data.rmr_handle, f->rmr);
	assert_int_equal(ev.event_data.rmr_completion_event_data.user_cookie.as_64, cookie);
	assert_int_equal(ev.event_data.rmr_completion_event_data.status, DAT_RMR_BIND_SUCCESS);
	return rc;
}

/* The peer (side 1) posts an RDMA write of len bytes of text to target
 * through rc, with cookie ck; returns the source LMR, to free once the
 * write completed. */
static struct lmr peer_post_write(struct bind_fixture *f, DAT_RMR_CONTEXT rc, char *target, const char *text,
				  DAT_VLEN len, uint64_t ck)
{
	static char src[4096];
	snprintf(src, sizeof src, "%s", text);
	struct lmr s = make_lmr(f->p.ia[1], f->p.pz[1], src, sizeof src, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET st = triplet(&s, src, len);
	DAT_RMR_TRIPLET r = {.rmr_context = rc, .target_address = (DAT_VADDR)(uintptr_t)target,
			     .segment_length = len};
	DAT_DTO_COOKIE c = {.as_64 = ck};
	check_ok(dat_ep_post_rdma_write(f->p.ep[1], 1, &st, c, &r, DAT_COMPLETION_DEFAULT_FLAG));
	return s;
}

/* The peer writes through rc, and the write succeeds. */
static void peer_write_ok(struct bind_fixture *f, DAT_RMR_CONTEXT rc, char *target, const char *text, DAT_VLEN len)
{
	struct lmr s = peer_post_write(f, rc, target, text, len, 77);
	DAT_EVENT ev = wait_event(f->p.evd[1], DAT_DTO_COMPLETION_EVENT);
	assert_int_equal(ev.event_data.dto_completion_event_data.user_cookie.as_64, 77);
	assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	check_ok(dat_lmr_free(s.h));
}

/* The peer writes through rc, and the window refuses it: "fail and report
 * a protection violation", DAT_DTO_ERR_REMOTE_ACCESS, and, as on verbs (a
 * QP access error), the connection breaks (broken.h). The caller checks
 * that nothing was written. */
static void peer_write_refused(struct bind_fixture *f, DAT_RMR_CONTEXT rc, char *target, const char *text,
			       DAT_VLEN len)
{
	struct lmr s = peer_post_write(f, rc, target, text, len, 77);
	pair_expect_broken(&f->p, 1, 77);
	check_ok(dat_lmr_free(s.h));
}

/* The peer reads len bytes at target through rc into dst: successfully
 * (refused 0), or refused, breaking the connection (refused 1). */
static void peer_read(struct bind_fixture *f, DAT_RMR_CONTEXT rc, char *target, char *dst, DAT_VLEN len, int refused)
{
	struct lmr d = make_lmr(f->p.ia[1], f->p.pz[1], dst, len, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET dt = triplet(&d, dst, len);
	DAT_RMR_TRIPLET r = {.rmr_context = rc, .target_address = (DAT_VADDR)(uintptr_t)target,
			     .segment_length = len};
	DAT_DTO_COOKIE ck = {.as_64 = 78};
	check_ok(dat_ep_post_rdma_read(f->p.ep[1], 1, &dt, ck, &r, DAT_COMPLETION_DEFAULT_FLAG));
	if (refused) {
		pair_expect_broken(&f->p, 1, 78);
	} else {
		DAT_EVENT ev = wait_event(f->p.evd[1], DAT_DTO_COMPLETION_EVENT);
		assert_int_equal(ev.event_data.dto_completion_event_data.user_cookie.as_64, 78);
		assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	}
	check_ok(dat_lmr_free(d.h));
}

/* DAT_SUCCESS: "The dat_rmr_bind() function binds the RMR to the specified
 * memory region within an LMR and provides the new rmr_context value."
 * "The Consumer is notified of the completion of this operation through a
 * rmr_bind Completion event on the request_evd_handle of the specified
 * Endpoint" carrying the user_cookie ("The user_cookie is returned to the
 * Consumer in the rmr_bind Completion event"). The peer writes inside the
 * window through the new context; outside it fails, writing nothing, and
 * breaks the connection. */
static void test_rmr_bind_success(void **state)
{
	(void)state;
	struct bind_fixture f;
	fixture_open(&f, DAT_MEM_PRIV_ALL_FLAG);
	DAT_RMR_CONTEXT rc = bind_ok(&f, window + 1024, 512, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, 0xB1D);
	peer_write_ok(&f, rc, window + 1024, "inside the window", 18);
	assert_string_equal(window + 1024, "inside the window");
	peer_write_refused(&f, rc, window + 1024 + 500, "past the end", 13);
	assert_int_equal(window[1524], 0);
	assert_string_equal(window + 1024, "inside the window");
	pair_close(&f.p);
}

/* "Any RDMA DTO that uses the previous value of rmr_context after the
 * dat_rmr_bind() is completed fail and report a protection violation." A
 * rebind gives a new context; the new one works, the old one is refused,
 * writing nothing, and the refusal breaks the connection (so it comes
 * last). */
static void test_rmr_bind_rebind_invalidates_old_context(void **state)
{
	(void)state;
	struct bind_fixture f;
	fixture_open(&f, DAT_MEM_PRIV_ALL_FLAG);
	DAT_RMR_CONTEXT old = bind_ok(&f, window, 256, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, 1);
	DAT_RMR_CONTEXT rc = bind_ok(&f, window, 256, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, 2);
	assert_int_not_equal(old, rc);
	peer_write_ok(&f, rc, window, "new", 4);
	assert_string_equal(window, "new");
	peer_write_refused(&f, old, window, "old", 4);
	assert_string_equal(window, "new");
	pair_close(&f.p);
}

/* "The mem_privileges parameter allows Consumers to restrict the type of
 * remote accesses to the registered RMR by RDMA DTOs": a read-only window
 * can be read, not written; a write-only window the other way round. Each
 * refused access breaks its connection, so each window has one. */
static void test_rmr_bind_privileges_restrict_access(void **state)
{
	(void)state;
	static char got[64];
	struct bind_fixture f;
	fixture_open(&f, DAT_MEM_PRIV_ALL_FLAG);
	strcpy(window, "readable");
	DAT_RMR_CONTEXT rc = bind_ok(&f, window, 64, DAT_MEM_PRIV_REMOTE_READ_FLAG, 1);
	memset(got, 0, sizeof got);
	peer_read(&f, rc, window, got, 9, 0);
	assert_string_equal(got, "readable");
	peer_write_refused(&f, rc, window, "nope", 5);
	assert_string_equal(window, "readable");
	pair_close(&f.p);

	fixture_open(&f, DAT_MEM_PRIV_ALL_FLAG);
	strcpy(window, "readable");
	rc = bind_ok(&f, window, 64, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, 2);
	peer_write_ok(&f, rc, window, "written", 8);
	assert_string_equal(window, "written");
	memset(got, 0, sizeof got);
	peer_read(&f, rc, window, got, 9, 1);
	assert_int_equal(got[0], 0); /* the refused read brought nothing */
	assert_string_equal(window, "written");
	pair_close(&f.p);
}

/* "In the lmr_triplet, the value of length of zero means that the Consumer
 * does not want to associate an RMR with any memory region within the
 * LMR": the bind succeeds and the previous context stops working (the
 * write through it is refused, writes nothing, and breaks the
 * connection). */
static void test_rmr_bind_zero_length_unbinds(void **state)
{
	(void)state;
	struct bind_fixture f;
	fixture_open(&f, DAT_MEM_PRIV_ALL_FLAG);
	DAT_RMR_CONTEXT old = bind_ok(&f, window, 64, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, 1);
	bind_ok(&f, window, 0, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, 2);
	peer_write_refused(&f, old, window, "gone", 5);
	assert_int_equal(window[0], 0);
	/* The LMR is no longer in use by the RMR. */
	check_ok(dat_lmr_free(f.l.h));
	pair_close(&f.p);
}

/* "By default, dat_rmr_bind() generates notification completions."
 * DAT_COMPLETION_SUPPRESS_FLAG: "Suppress successful Completion": no
 * event, yet the bind took effect. */
static void test_rmr_bind_completion_flags(void **state)
{
	(void)state;
	struct bind_fixture f;
	fixture_open(&f, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET t = triplet(&f.l, window, 64);
	DAT_RMR_COOKIE ck = {.as_64 = 5};
	DAT_RMR_CONTEXT rc;
	check_ok(dat_rmr_bind(f.rmr, &t, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, f.p.ep[0], ck, DAT_COMPLETION_SUPPRESS_FLAG,
			      &rc));
	expect_empty(f.p.evd[0]);
	peer_write_ok(&f, rc, window, "suppressed", 11);
	assert_string_equal(window, "suppressed");
	check_ok(dat_rmr_bind(f.rmr, &t, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, f.p.ep[0], ck, DAT_COMPLETION_BARRIER_FENCE_FLAG,
			      &rc));
	wait_event(f.p.evd[0], DAT_RMR_BIND_COMPLETION_EVENT);
	pair_close(&f.p);
}

/* "Another way is to send rmr_context in a Send DTO over the connection
 * of the Endpoint ep_handle. The barrier-fencing behavior of the
 * dat_rmr_bind() with respect to Send and RDMA DTOs ensures that a Send
 * DTO does not start until dat_rmr_bind() completed." The peer uses the
 * context as soon as the send arrives, and it works. */
static void test_rmr_bind_fences_later_send(void **state)
{
	(void)state;
	struct bind_fixture f;
	fixture_open(&f, DAT_MEM_PRIV_ALL_FLAG);
	static DAT_RMR_CONTEXT msg, got;
	struct lmr ml = make_lmr(f.p.ia[0], f.p.pz[0], &msg, sizeof msg, DAT_MEM_PRIV_ALL_FLAG);
	struct lmr gl = make_lmr(f.p.ia[1], f.p.pz[1], &got, sizeof got, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET mt = triplet(&ml, &msg, sizeof msg), gt = triplet(&gl, &got, sizeof got);
	DAT_DTO_COOKIE dc = {.as_64 = 9};
	check_ok(dat_ep_post_recv(f.p.ep[1], 1, &gt, dc, DAT_COMPLETION_DEFAULT_FLAG));
	DAT_LMR_TRIPLET t = triplet(&f.l, window, 128);
	DAT_RMR_COOKIE ck = {.as_64 = 4};
	check_ok(dat_rmr_bind(f.rmr, &t, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, f.p.ep[0], ck, DAT_COMPLETION_DEFAULT_FLAG,
			      &msg));
	check_ok(dat_ep_post_send(f.p.ep[0], 1, &mt, dc, DAT_COMPLETION_SUPPRESS_FLAG));
	DAT_EVENT ev = wait_event(f.p.evd[1], DAT_DTO_COMPLETION_EVENT);
	assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	assert_int_equal(got, msg);
	peer_write_ok(&f, got, window, "fenced", 7);
	assert_string_equal(window, "fenced");
	pair_close(&f.p);
}

/* "The operation is valid for the Endpoint in the DAT_EP_STATE_CONNECTED
 * and DAT_EP_STATE_DISCONNECTED states. If the operation returns
 * successfully for the Endpoint in DAT_EP_STATE_DISCONNECTED state, the
 * posted RMR Bind is immediately flushed to request_evd_handle." */
static void test_rmr_bind_disconnected_flushes(void **state)
{
	(void)state;
	struct bind_fixture f;
	fixture_open(&f, DAT_MEM_PRIV_ALL_FLAG);
	pair_disconnect(&f.p, 0);
	DAT_LMR_TRIPLET t = triplet(&f.l, window, 64);
	DAT_RMR_COOKIE ck = {.as_64 = 0xF1};
	DAT_RMR_CONTEXT rc;
	check_ok(dat_rmr_bind(f.rmr, &t, DAT_MEM_PRIV_REMOTE_READ_FLAG, f.p.ep[0], ck, DAT_COMPLETION_DEFAULT_FLAG, &rc));
	DAT_EVENT ev = wait_event(f.p.evd[0], DAT_RMR_BIND_COMPLETION_EVENT);
	assert_int_equal(ev.event_data.rmr_completion_event_data.user_cookie.as_64, 0xF1);
	assert_int_equal(ev.event_data.rmr_completion_event_data.status, DAT_DTO_ERR_FLUSHED);
	pair_close(&f.p);
}

/* DAT_INSUFFICIENT_RESOURCES: "The operation failed due to resource
 * limitations." Every memory registration of an IA (LMRs and bound RMR
 * windows) takes an entry of its translation table, max_lmrs entries in
 * all; with the table full a bind cannot get one (DAT_RESOURCE_MEMORY). */
static void test_rmr_bind_insufficient_resources(void **state)
{
	(void)state;
	struct bind_fixture f;
	fixture_open(&f, DAT_MEM_PRIV_ALL_FLAG);
	DAT_IA_ATTR a;
	check_ok(dat_ia_query(f.p.ia[0], NULL, DAT_IA_FIELD_IA_MAX_LMRS, &a, 0, NULL));
	skip_unless_exhaustible("max_lmrs", a.max_lmrs);
	DAT_LMR_HANDLE *v = calloc((size_t)a.max_lmrs, sizeof *v);
	assert_non_null(v);
	DAT_COUNT n = 0;
	for (;;) {
		struct lmr l;
		DAT_RETURN r = lmr_create_va(f.p.ia[0], f.p.pz[0], window, 64, DAT_MEM_PRIV_LOCAL_READ_FLAG, &l);
		if (r != DAT_SUCCESS) {
			check_type(r, DAT_INSUFFICIENT_RESOURCES);
			break;
		}
		assert_true(n < a.max_lmrs);
		v[n++] = l.h;
	}
	DAT_LMR_TRIPLET t = triplet(&f.l, window, 64);
	DAT_RMR_COOKIE ck = {.as_64 = 1};
	DAT_RMR_CONTEXT rc = 0x55;
	check_ret(dat_rmr_bind(f.rmr, &t, DAT_MEM_PRIV_REMOTE_READ_FLAG, f.p.ep[0], ck, DAT_COMPLETION_DEFAULT_FLAG, &rc),
		  DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
	assert_int_equal(rc, 0x55);
	expect_empty(f.p.evd[0]);
	check_ok(dat_lmr_free(v[--n]));
	bind_ok(&f, window, 64, DAT_MEM_PRIV_REMOTE_READ_FLAG, 2);
	free(v);
	pair_close(&f.p);
}

/* DAT_INVALID_PARAMETER: "the target_address or segment_length exceeded
 * the limits of the existing LMR" (argument 2), also an unknown
 * lmr_context and a NULL triplet; undefined privilege bits (argument 3);
 * "The value of DAT_COMPLETION_UNSIGNALLED_FLAG is only valid if the
 * Endpoint Request Completion Flags DAT_COMPLETION_UNSIGNALLED_FLAG.
 * Otherwise, DAT_INVALID_PARAMETER is returned" (argument 6); no place for
 * the context (argument 7). Nothing is bound and no event is queued. */
static void test_rmr_bind_invalid_parameter(void **state)
{
	(void)state;
	struct bind_fixture f;
	fixture_open(&f, DAT_MEM_PRIV_ALL_FLAG);
	DAT_RMR_COOKIE ck = {.as_64 = 1};
	DAT_RMR_CONTEXT rc;
	DAT_LMR_TRIPLET past = triplet(&f.l, window + 4000, 97), before = triplet(&f.l, window, 8),
			unknown = triplet(&f.l, window, 8), ok = triplet(&f.l, window, 8);
	unknown.lmr_context ^= 0x3fff;
	before.virtual_address -= 1;
	DAT_MEM_PRIV_FLAGS rr = DAT_MEM_PRIV_REMOTE_READ_FLAG;
	check_ret(dat_rmr_bind(f.rmr, &past, rr, f.p.ep[0], ck, 0, &rc), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_rmr_bind(f.rmr, &before, rr, f.p.ep[0], ck, 0, &rc), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_rmr_bind(f.rmr, &unknown, rr, f.p.ep[0], ck, 0, &rc), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_rmr_bind(f.rmr, NULL, rr, f.p.ep[0], ck, 0, &rc), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_rmr_bind(f.rmr, &ok, 0x100, f.p.ep[0], ck, 0, &rc), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ret(dat_rmr_bind(f.rmr, &ok, rr, f.p.ep[0], ck, DAT_COMPLETION_UNSIGNALLED_FLAG, &rc),
		  DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	check_ret(dat_rmr_bind(f.rmr, &ok, rr, f.p.ep[0], ck, 0x400, &rc), DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	check_ret(dat_rmr_bind(f.rmr, &ok, rr, f.p.ep[0], ck, 0, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG7);
	expect_empty(f.p.evd[0]);
	check_ok(dat_lmr_free(f.l.h)); /* nothing was bound to it */
	pair_close(&f.p);
}

/* The UNSIGNALLED flag is accepted on an endpoint whose request
 * completion flags allow it. */
static void test_rmr_bind_unsignalled_on_configured_ep(void **state)
{
	(void)state;
	static char buf[64];
	DAT_EP_ATTR attr;
	struct pair p;
	pair_open(&p, NULL);
	DAT_EP_PARAM ep;
	check_ok(dat_ep_query(p.ep[0], DAT_EP_FIELD_ALL, &ep));
	attr = ep.ep_attr;
	attr.request_completion_flags = DAT_COMPLETION_UNSIGNALLED_FLAG;
	DAT_EP_HANDLE u;
	check_ok(dat_ep_create(p.ia[0], p.pz[0], p.evd[0], p.evd[0], p.evd[0], &attr, &u));
	pair_connect_eps(&p, u, p.ep[1], NULL, NULL);
	struct lmr l = make_lmr(p.ia[0], p.pz[0], buf, sizeof buf, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET t = triplet(&l, buf, sizeof buf);
	DAT_RMR_HANDLE rmr;
	DAT_RMR_CONTEXT rc;
	DAT_RMR_COOKIE ck = {.as_64 = 1};
	check_ok(dat_rmr_create(p.pz[0], &rmr));
	check_ok(dat_rmr_bind(rmr, &t, DAT_MEM_PRIV_REMOTE_READ_FLAG, u, ck, DAT_COMPLETION_UNSIGNALLED_FLAG, &rc));
	pair_close(&p);
}

/* DAT_INVALID_HANDLE: a bad RMR (DAT_INVALID_HANDLE_RMR) or a bad endpoint
 * (DAT_INVALID_HANDLE_EP), NULL, freed or of another type. */
static void test_rmr_bind_invalid_handle(void **state)
{
	(void)state;
	struct bind_fixture f;
	fixture_open(&f, DAT_MEM_PRIV_ALL_FLAG);
	DAT_RMR_HANDLE gone;
	check_ok(dat_rmr_create(f.p.pz[0], &gone));
	check_ok(dat_rmr_free(gone));
	DAT_LMR_TRIPLET t = triplet(&f.l, window, 8);
	DAT_RMR_COOKIE ck = {.as_64 = 1};
	DAT_RMR_CONTEXT rc;
	DAT_MEM_PRIV_FLAGS rr = DAT_MEM_PRIV_REMOTE_READ_FLAG;
	check_ret(dat_rmr_bind(DAT_HANDLE_NULL, &t, rr, f.p.ep[0], ck, 0, &rc), DAT_INVALID_HANDLE,
		  DAT_INVALID_HANDLE_RMR);
	check_ret(dat_rmr_bind(gone, &t, rr, f.p.ep[0], ck, 0, &rc), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
	check_ret(dat_rmr_bind(f.l.h, &t, rr, f.p.ep[0], ck, 0, &rc), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
	check_ret(dat_rmr_bind(f.rmr, &t, rr, DAT_HANDLE_NULL, ck, 0, &rc), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_rmr_bind(f.rmr, &t, rr, f.p.pz[0], ck, 0, &rc), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	/* An endpoint of another IA. */
	check_ret(dat_rmr_bind(f.rmr, &t, rr, f.p.ep[1], ck, 0, &rc), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	pair_close(&f.p);
}

/* DAT_INVALID_STATE: "Endpoint was not in the a DAT_EP_STATE_CONNECTED or
 * DAT_EP_STATE_DISCONNECTED state": an unconnected endpoint
 * (DAT_INVALID_STATE_EP_UNCONNECTED). */
static void test_rmr_bind_invalid_state(void **state)
{
	(void)state;
	struct bind_fixture f;
	fixture_open(&f, DAT_MEM_PRIV_ALL_FLAG);
	DAT_EP_HANDLE idle;
	check_ok(dat_ep_create(f.p.ia[0], f.p.pz[0], f.p.evd[0], f.p.evd[0], f.p.evd[0], NULL, &idle));
	DAT_LMR_TRIPLET t = triplet(&f.l, window, 8);
	DAT_RMR_COOKIE ck = {.as_64 = 1};
	DAT_RMR_CONTEXT rc;
	check_ret(dat_rmr_bind(f.rmr, &t, DAT_MEM_PRIV_REMOTE_READ_FLAG, idle, ck, 0, &rc), DAT_INVALID_STATE,
		  DAT_INVALID_STATE_EP_UNCONNECTED);
	expect_empty(f.p.evd[0]);
	pair_close(&f.p);
}

/* DAT_PRIVILEGES_VIOLATION: "Set RMR's DAT_MEM_PRIV_REMOTE_READ_FLAG
 * requires that LMR's DAT_MEM_PRIV_LOCAL_READ_FLAG is also set, Set RMR's
 * DAT_MEM_PRIV_REMOTE_WRITE_FLAG requires that LMR's
 * DAT_MEM_PRIV_LOCAL_WRITE_FLAG is also set, or the operation fails and
 * returns DAT_PRIVILEGES_VIOLATION." */
static void test_rmr_bind_privileges_violation(void **state)
{
	(void)state;
	struct bind_fixture f;
	fixture_open(&f, DAT_MEM_PRIV_LOCAL_WRITE_FLAG);
	struct lmr ro = make_lmr(f.p.ia[0], f.p.pz[0], window, sizeof window, DAT_MEM_PRIV_LOCAL_READ_FLAG);
	DAT_LMR_TRIPLET wo = triplet(&f.l, window, 8), r = triplet(&ro, window, 8);
	DAT_RMR_COOKIE ck = {.as_64 = 1};
	DAT_RMR_CONTEXT rc;
	check_type(dat_rmr_bind(f.rmr, &wo, DAT_MEM_PRIV_REMOTE_READ_FLAG, f.p.ep[0], ck, 0, &rc),
		   DAT_PRIVILEGES_VIOLATION);
	check_type(dat_rmr_bind(f.rmr, &r, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, f.p.ep[0], ck, 0, &rc),
		   DAT_PRIVILEGES_VIOLATION);
	/* The matching rights bind. */
	check_ok(dat_rmr_bind(f.rmr, &wo, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, f.p.ep[0], ck, 0, &rc));
	check_ok(dat_rmr_bind(f.rmr, &r, DAT_MEM_PRIV_REMOTE_READ_FLAG, f.p.ep[0], ck, 0, &rc));
	pair_close(&f.p);
}

/* DAT_PROTECTION_VIOLATION: "Protection violation for local or remote
 * memory access": the endpoint, or the LMR, is in another Protection Zone
 * than the RMR. */
static void test_rmr_bind_protection_violation(void **state)
{
	(void)state;
	struct bind_fixture f;
	fixture_open(&f, DAT_MEM_PRIV_ALL_FLAG);
	DAT_PZ_HANDLE other = make_pz(f.p.ia[0]);
	DAT_RMR_HANDLE foreign;
	check_ok(dat_rmr_create(other, &foreign));
	struct lmr ol = make_lmr(f.p.ia[0], other, window, sizeof window, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET t = triplet(&f.l, window, 8), ot = triplet(&ol, window, 8);
	DAT_RMR_COOKIE ck = {.as_64 = 1};
	DAT_RMR_CONTEXT rc;
	DAT_MEM_PRIV_FLAGS rr = DAT_MEM_PRIV_REMOTE_READ_FLAG;
	check_type(dat_rmr_bind(foreign, &ot, rr, f.p.ep[0], ck, 0, &rc), DAT_PROTECTION_VIOLATION);
	check_type(dat_rmr_bind(f.rmr, &ot, rr, f.p.ep[0], ck, 0, &rc), DAT_PROTECTION_VIOLATION);
	expect_empty(f.p.evd[0]);
	check_ok(dat_rmr_bind(f.rmr, &t, rr, f.p.ep[0], ck, 0, &rc));
	pair_close(&f.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rmr_bind_success),
		cmocka_unit_test(test_rmr_bind_rebind_invalidates_old_context),
		cmocka_unit_test(test_rmr_bind_privileges_restrict_access),
		cmocka_unit_test(test_rmr_bind_zero_length_unbinds),
		cmocka_unit_test(test_rmr_bind_completion_flags),
		cmocka_unit_test(test_rmr_bind_fences_later_send),
		cmocka_unit_test(test_rmr_bind_disconnected_flushes),
		cmocka_unit_test(test_rmr_bind_insufficient_resources),
		cmocka_unit_test(test_rmr_bind_invalid_parameter),
		cmocka_unit_test(test_rmr_bind_unsignalled_on_configured_ep),
		cmocka_unit_test(test_rmr_bind_invalid_handle),
		cmocka_unit_test(test_rmr_bind_invalid_state),
		cmocka_unit_test(test_rmr_bind_privileges_violation),
		cmocka_unit_test(test_rmr_bind_protection_violation),
	};
	return cmocka_run_group_tests_name("dat_rmr_bind", tests, NULL, NULL);
}
