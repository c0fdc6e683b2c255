/* dat_srq_post_recv(3DAT): return values and the behaviour sentences. */
#include <limits.h>
#include "srq.h"

struct fix {
	struct side s, c;
	DAT_SRQ_HANDLE srq;
	DAT_EP_HANDLE sep, cep;
};

static struct fix *fix_open(DAT_COMPLETION_FLAGS recv_flags)
{
	struct fix *f = calloc(1, sizeof *f);
	assert_non_null(f);
	side_open(&f->s);
	side_open(&f->c);
	f->srq = srq_make(&f->s, 16, DAT_SRQ_LW_DEFAULT);
	f->s.attr.recv_completion_flags = recv_flags;
	f->sep = ep_make(&f->s, f->srq);
	f->cep = ep_make(&f->c, NULL);
	connect_eps(&f->c, f->cep, &f->s, f->sep);
	return f;
}

static void fix_close(struct fix *f)
{
	side_close(&f->c);
	side_close(&f->s);
	free(f);
}

/* DAT_SUCCESS. "The dat_srq_post_recv() function posts the receive buffer
 * that can be used for the incoming message into the local_iov by any
 * connected EP that uses SRQ." "The local_iov segments are filled in the
 * I/O Vector order until the whole message is received." "The user_cookie
 * is returned to the Consumer in the Completion event for the posted
 * Receive." "The completion of the Receive posted to the SRQ is equivalent
 * to what happened to the Receive posted to the Endpoint for the Endpoint
 * that dequeued the Receive buffer": the event names that EP. */
static void dat_srq_post_recv__success(void **state)
{
	(void)state;
	struct fix *f = fix_open(DAT_COMPLETION_DEFAULT_FLAG);
	DAT_LMR_TRIPLET iov[3] = {rslot(&f->s, 0, 10), rslot(&f->s, 1, 20), rslot(&f->s, 2, 100)};
	DAT_DTO_COOKIE ck = {.as_64 = 0xC00C1E};
	check_ok(dat_srq_post_recv(f->srq, 2, iov, ck));
	DAT_LMR_TRIPLET t = sslot(&f->c, 0, 25);
	for (int i = 0; i < 25; i++)
		((char *)(uintptr_t)t.virtual_address)[i] = (char)('a' + i);
	check_ok(dat_ep_post_send(f->cep, 1, &t, ck, DAT_COMPLETION_SUPPRESS_FLAG));
	DAT_EVENT ev = expect_dto(f->s.dto);
	DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
	assert_int_equal(d->status, DAT_DTO_SUCCESS);
	assert_int_equal(d->user_cookie.as_64, 0xC00C1E);
	assert_int_equal(d->transfered_length, 25);
	assert_ptr_equal(d->ep_handle, f->sep);
	assert_memory_equal(f->s.buf, "abcdefghij", 10);
	assert_memory_equal(f->s.buf + SLOT, "klmnopqrstuvwxy", 15);
	fix_close(f);
}

/* num_segments "Can be 0 for receiving a zero-size message." local_iov
 * "Can be NULL for receiving a zero-size message." */
static void dat_srq_post_recv__zero_size(void **state)
{
	(void)state;
	struct fix *f = fix_open(DAT_COMPLETION_DEFAULT_FLAG);
	DAT_DTO_COOKIE ck = {.as_64 = 5};
	check_ok(dat_srq_post_recv(f->srq, 0, NULL, ck));
	check_ok(dat_ep_post_send(f->cep, 0, NULL, ck, DAT_COMPLETION_SUPPRESS_FLAG));
	DAT_EVENT ev = expect_dto(f->s.dto);
	assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	assert_int_equal(ev.event_data.dto_completion_event_data.transfered_length, 0);
	assert_int_equal(ev.event_data.dto_completion_event_data.user_cookie.as_64, 5);
	fix_close(f);
}

/* "If EP Recv Completion Flag is DAT_COMPLETION_UNSIGNALLED_FLAG, which is
 * the default value for SRQ EP, then all posted Recvs will generate
 * completions with Signal Notifications." An unsignalled-receive EP's
 * completion wakes dat_evd_wait with threshold 1. */
static void dat_srq_post_recv__signalled(void **state)
{
	(void)state;
	struct fix *f = fix_open(DAT_COMPLETION_UNSIGNALLED_FLAG);
	srq_post(&f->s, f->srq, 0);
	send_tagged(&f->c, f->cep, 1, 1, 0, 16);
	DAT_EVENT ev;
	DAT_COUNT n;
	check_ok(dat_evd_wait(f->s.dto, TMO, 1, &ev, &n));
	assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	fix_close(f);
}

/* Usage: "If the Endpoint Recv Completion flag is
 * DAT_COMPLETION_SOLICITED_WAIT_FLAG then matching Send DTO completion
 * flag value for Solicited Wait determines if the completion will be
 * Signalled or not." An unsolicited message's completion is queued but
 * does not wake a threshold-1 waiter; a solicited one does. */
static void dat_srq_post_recv__solicited_wait(void **state)
{
	(void)state;
	struct fix *f = fix_open(DAT_COMPLETION_SOLICITED_WAIT_FLAG);
	DAT_EVENT ev;
	DAT_COUNT n;
	srq_post(&f->s, f->srq, 0);
	srq_post(&f->s, f->srq, 1);
	send_tagged(&f->c, f->cep, 1, 1, 0, 16);
	srq_until_avail(f->srq, 1);
	check_type(dat_evd_wait(f->s.dto, 100000, 1, &ev, &n), DAT_TIMEOUT_EXPIRED);
	DAT_LMR_TRIPLET t = sslot(&f->c, 100, 16);
	DAT_DTO_COOKIE ck = {.as_64 = 1};
	check_ok(dat_ep_post_send(f->cep, 1, &t, ck, DAT_COMPLETION_SUPPRESS_FLAG | DAT_COMPLETION_SOLICITED_WAIT_FLAG));
	check_ok(dat_evd_wait(f->s.dto, TMO, 1, &ev, &n));
	assert_int_equal(ev.event_data.dto_completion_event_data.user_cookie.as_64, 0);
	fix_close(f);
}

/* Usage: "Only the Endpoint that is in Connected or Disconnect Pending
 * states can dequeue buffers from SRQ. When an Endpoint is transitioned
 * into Disconnected state, all the buffers that it dequeued from SRQ are
 * queued on the Endpoint recv_evd." A disconnected EP takes nothing more;
 * what it took is on its receive EVD. */
static void dat_srq_post_recv__disconnected_ep(void **state)
{
	(void)state;
	struct fix *f = fix_open(DAT_COMPLETION_DEFAULT_FLAG);
	DAT_COUNT a, o;
	for (int i = 0; i < 4; i++)
		srq_post(&f->s, f->srq, i);
	send_tagged(&f->c, f->cep, 1, 2, 0, 16);
	srq_until_avail(f->srq, 2);
	check_ok(dat_ep_disconnect(f->sep, DAT_CLOSE_ABRUPT_FLAG));
	assert_int_equal(wait_ev(f->s.conn).event_number, DAT_CONNECTION_EVENT_DISCONNECTED);
	srq_counts(f->srq, &a, &o);
	assert_int_equal(a, 2);
	assert_int_equal(o, 4);
	for (int i = 0; i < 2; i++)
		assert_int_equal(expect_dto(f->s.dto).event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	expect_none(f->s.dto);
	check_ok(dat_ep_reset(f->sep)); /* unconnected: still takes nothing */
	srq_counts(f->srq, &a, &o);
	assert_int_equal(a, 2);
	assert_int_equal(o, 2);
	fix_close(f);
}

/* DAT_INSUFFICIENT_RESOURCES "The operation failed due to resource
 * limitations.": every entry of the SRQ is occupied. */
static void dat_srq_post_recv__insufficient_resources(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_SRQ_HANDLE q = srq_make(&s, 3, 0);
	for (int i = 0; i < 3; i++)
		srq_post(&s, q, i);
	DAT_LMR_TRIPLET t = rslot(&s, 3, SLOT);
	DAT_DTO_COOKIE ck = {.as_64 = 3};
	check_ret(dat_srq_post_recv(q, 1, &t, ck), DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_SRQ);
	side_close(&s);
}

/* DAT_INVALID_PARAMETER "Invalid parameter. For example, one of the IOV
 * segments pointed to a memory outside its LMR." Also more segments than
 * the SRQ's max_recv_iov, a negative count, and a NULL IOV with segments. */
static void dat_srq_post_recv__invalid_parameter(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_SRQ_HANDLE q = srq_make(&s, 4, 0);
	DAT_DTO_COOKIE ck = {.as_64 = 0};
	DAT_LMR_TRIPLET out = {.lmr_context = s.lctx,
			       .virtual_address = (DAT_VADDR)(uintptr_t)(s.buf + (size_t)NSLOT * SLOT - 8),
			       .segment_length = 16};
	check_ret(dat_srq_post_recv(q, 1, &out, ck), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	DAT_LMR_TRIPLET three[3] = {rslot(&s, 0, 8), rslot(&s, 1, 8), rslot(&s, 2, 8)};
	check_ret(dat_srq_post_recv(q, 3, three, ck), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	/* A count far past a short array is refused before the array is read
	 * (issue 15). */
	check_ret(dat_srq_post_recv(q, INT_MAX, three, ck), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_srq_post_recv(q, -1, three, ck), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_srq_post_recv(q, 1, NULL, ck), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	DAT_SRQ_PARAM p;
	check_ok(dat_srq_query(q, DAT_SRQ_FIELD_ALL, &p));
	assert_int_equal(p.outstanding_dto_count, 0);
	side_close(&s);
}

/* DAT_PROTECTION_VIOLATION "Protection Zone mismatch between an LMR of one
 * of the local_iov segments and the SRQ." */
static void dat_srq_post_recv__protection_violation(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_PZ_HANDLE pz2;
	check_ok(dat_pz_create(s.ia, &pz2));
	DAT_SRQ_ATTR a = {.max_recv_dtos = 4, .max_recv_iov = 2};
	DAT_SRQ_HANDLE q;
	check_ok(dat_srq_create(s.ia, pz2, &a, &q)); /* the buffer's LMR is in s.pz */
	DAT_LMR_TRIPLET t = rslot(&s, 0, 8);
	DAT_DTO_COOKIE ck = {.as_64 = 0};
	check_ret(dat_srq_post_recv(q, 1, &t, ck), DAT_PROTECTION_VIOLATION, DAT_PROTECTION_WRITE);
	side_close(&s);
}

/* DAT_PRIVILEGES_VIOLATION "One of the LMRs used in local_iov was either
 * invalid or did not have the local write privileges." */
static void dat_srq_post_recv__privileges_violation(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_SRQ_HANDLE q = srq_make(&s, 4, 0);
	DAT_LMR_HANDLE ro;
	DAT_LMR_CONTEXT ctx;
	DAT_RMR_CONTEXT r;
	DAT_VLEN len;
	DAT_VADDR va;
	DAT_REGION_DESCRIPTION rd;
	static char mem[4096];
	rd.for_va = mem;
	check_ok(dat_lmr_create(s.ia, DAT_MEM_TYPE_VIRTUAL, rd, sizeof mem, s.pz, DAT_MEM_PRIV_READ_FLAG, &ro, &ctx, &r,
				&len, &va));
	DAT_LMR_TRIPLET t = {.lmr_context = ctx, .virtual_address = (DAT_VADDR)(uintptr_t)mem, .segment_length = 8};
	DAT_DTO_COOKIE ck = {.as_64 = 0};
	check_ret(dat_srq_post_recv(q, 1, &t, ck), DAT_PRIVILEGES_VIOLATION, DAT_PRIVILEGES_WRITE);
	check_ok(dat_lmr_free(ro));
	check_ret(dat_srq_post_recv(q, 1, &t, ck), DAT_PRIVILEGES_VIOLATION, DAT_PRIVILEGES_WRITE);
	side_close(&s);
}

/* DAT_INVALID_HANDLE "The srq_handle argument is an invalid DAT handle." */
static void dat_srq_post_recv__invalid_handle(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_SRQ_HANDLE q = srq_make(&s, 4, 0);
	DAT_LMR_TRIPLET t = rslot(&s, 0, 8);
	DAT_DTO_COOKIE ck = {.as_64 = 0};
	check_ok(dat_srq_free(q));
	check_ret(dat_srq_post_recv(q, 1, &t, ck), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	check_ret(dat_srq_post_recv(DAT_HANDLE_NULL, 1, &t, ck), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	check_ret(dat_srq_post_recv((DAT_SRQ_HANDLE)s.ia, 1, &t, ck), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	side_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dat_srq_post_recv__success),
		cmocka_unit_test(dat_srq_post_recv__zero_size),
		cmocka_unit_test(dat_srq_post_recv__signalled),
		cmocka_unit_test(dat_srq_post_recv__solicited_wait),
		cmocka_unit_test(dat_srq_post_recv__disconnected_ep),
		cmocka_unit_test(dat_srq_post_recv__insufficient_resources),
		cmocka_unit_test(dat_srq_post_recv__invalid_parameter),
		cmocka_unit_test(dat_srq_post_recv__protection_violation),
		cmocka_unit_test(dat_srq_post_recv__privileges_violation),
		cmocka_unit_test(dat_srq_post_recv__invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_srq_post_recv", tests, NULL, NULL);
}
