/* dat_ep_recv_query(3DAT): return values and the counting sentences.
 *
 * nbufs_allocated is "the number of buffers at the EP for which completions
 * have not yet been generated". That is not the watermarks' count (buffers
 * taken and not reaped, see dat_ep_set_watermark): a completed buffer no
 * longer counts here. */
#include "srq.h"

struct fix {
	struct side s, c;
	DAT_SRQ_HANDLE srq;
	DAT_EP_HANDLE sep, cep;
};

static struct fix *fix_open(int use_srq)
{
	struct fix *f = calloc(1, sizeof *f);
	assert_non_null(f);
	side_open(&f->s);
	side_open(&f->c);
	if (use_srq)
		f->srq = srq_make(&f->s, 16, 0);
	f->sep = ep_make(&f->s, f->srq);
	f->cep = ep_make(&f->c, NULL);
	return f;
}

static void fix_close(struct fix *f)
{
	side_close(&f->c);
	side_close(&f->s);
	free(f);
}

static void post_ep(struct fix *f, int i)
{
	DAT_LMR_TRIPLET t = rslot(&f->s, i, SLOT);
	DAT_DTO_COOKIE ck = {.as_64 = (DAT_UINT64)i};
	check_ok(dat_ep_post_recv(f->sep, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG));
}

/* Queries until nbufs_allocated is at most want (the query progresses the
 * EP); returns the last pair. */
static void until(DAT_EP_HANDLE ep, DAT_COUNT want, DAT_COUNT *n, DAT_COUNT *span)
{
	struct timespec ts = {0, 1000000};
	for (int i = 0; i < 5000; i++) {
		check_ok(dat_ep_recv_query(ep, n, span));
		if (*n <= want)
			return;
		nanosleep(&ts, NULL);
	}
	fail_msg("nbufs_allocated stays %d, want %d", *n, want);
}

/* DAT_SUCCESS. "When an EP does not use SRQ, a buffer is allocated as soon
 * as it is posted to the EP." "If nbufs_allocated is not NULL, the count
 * pointed to by nbufs_allocated will return a snapshot count of the number
 * of buffers allocated to ep_handle but not yet completed." "The span is
 * the number of additional successful Recv completions that EP can
 * generate if all the messages it is currently receiving will complete
 * successfully." Messages complete in order on a connection, so the span
 * of an EP's own queue is its count. */
static void dat_ep_recv_query__own_queue(void **state)
{
	(void)state;
	struct fix *f = fix_open(0);
	DAT_COUNT n = -9, span = -9;
	check_ok(dat_ep_recv_query(f->sep, &n, &span));
	assert_int_equal(n, 0);
	assert_int_equal(span, 0);
	for (int i = 0; i < 5; i++)
		post_ep(f, i);
	check_ok(dat_ep_recv_query(f->sep, &n, &span));
	assert_int_equal(n, 5);
	assert_int_equal(span, 5);
	connect_eps(&f->c, f->cep, &f->s, f->sep);
	send_tagged(&f->c, f->cep, 1, 2, 0, 16);
	until(f->sep, 3, &n, &span);
	assert_int_equal(n, 3);
	assert_int_equal(span, 3);
	/* Completed, not yet reaped: no longer allocated-and-uncompleted. */
	expect_dto(f->s.dto);
	check_ok(dat_ep_recv_query(f->sep, &n, &span));
	assert_int_equal(n, 3);
	/* "Once a buffer has been allocated to an EP, it will be completed to
	 * the EP recv_evd if the EVD has not overflowed.": a disconnect flushes
	 * the 3 to the receive EVD and the count drops to 0. */
	check_ok(dat_ep_disconnect(f->sep, DAT_CLOSE_ABRUPT_FLAG));
	int flushed = 0;
	for (int i = 0; i < 4; i++) {
		DAT_EVENT ev = expect_dto(f->s.dto);
		flushed += ev.event_data.dto_completion_event_data.status == DAT_DTO_ERR_FLUSHED;
	}
	assert_int_equal(flushed, 3);
	check_ok(dat_ep_recv_query(f->sep, &n, &span));
	assert_int_equal(n, 0);
	fix_close(f);
}

/* "For EP that uses SRQ, a buffer is allocated to the EP when EP removes it
 * from SRQ." godat takes a buffer from the SRQ only to place an arrived
 * message, and generates its completion in the same step: an EP of an SRQ
 * never has a buffer allocated and not yet completed, so both counts are
 * 0, while the SRQ shows the buffer taken. "The implementation must never
 * report n buffers in a span that is less than n." */
static void dat_ep_recv_query__srq(void **state)
{
	(void)state;
	struct fix *f = fix_open(1);
	DAT_COUNT n, span, a, o;
	connect_eps(&f->c, f->cep, &f->s, f->sep);
	for (int i = 0; i < 4; i++)
		srq_post(&f->s, f->srq, i);
	check_ok(dat_ep_recv_query(f->sep, &n, &span));
	assert_int_equal(n, 0);
	assert_int_equal(span, 0);
	send_tagged(&f->c, f->cep, 1, 3, 0, 16);
	srq_until_avail(f->srq, 1);
	check_ok(dat_ep_recv_query(f->sep, &n, &span));
	assert_int_equal(n, 0);
	assert_true(span >= n);
	srq_counts(f->srq, &a, &o);
	assert_int_equal(a, 1);
	assert_int_equal(o, 4);
	fix_close(f);
}

/* "If nbufs_allocated is not NULL ..." / "If bufs_alloc_span is not NULL
 * ...": either may be NULL; the other is still written. */
static void dat_ep_recv_query__one_null(void **state)
{
	(void)state;
	struct fix *f = fix_open(0);
	DAT_COUNT n = -9, span = -9;
	post_ep(f, 0);
	post_ep(f, 1);
	check_ok(dat_ep_recv_query(f->sep, &n, NULL));
	assert_int_equal(n, 2);
	check_ok(dat_ep_recv_query(f->sep, NULL, &span));
	assert_int_equal(span, 2);
	fix_close(f);
}

/* DAT_INVALID_PARAMETER "Invalid parameter.": nothing asked for (both
 * outputs NULL) is the one malformed call. */
static void dat_ep_recv_query__invalid_parameter(void **state)
{
	(void)state;
	struct fix *f = fix_open(1);
	check_ret(dat_ep_recv_query(f->sep, NULL, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	fix_close(f);
}

/* DAT_INVALID_HANDLE "The DAT handle ep_handle is invalid." */
static void dat_ep_recv_query__invalid_handle(void **state)
{
	(void)state;
	struct fix *f = fix_open(1);
	DAT_COUNT n, span;
	check_ok(dat_ep_free(f->sep));
	check_ret(dat_ep_recv_query(f->sep, &n, &span), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_recv_query(DAT_HANDLE_NULL, &n, &span), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_recv_query((DAT_EP_HANDLE)f->srq, &n, &span), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	fix_close(f);
}

/* "Check the Provider attribute for EP Recv info support.": godat
 * supports both counts and says so. */
static void dat_ep_recv_query__provider_attribute(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_PROVIDER_ATTR pa;
	check_ok(dat_ia_query(s.ia, NULL, 0, NULL, DAT_PROVIDER_FIELD_ALL, &pa));
	assert_int_not_equal(pa.ep_recv_info_supported, 0);
	assert_int_not_equal(pa.srq_watermarks_supported, 0);
	side_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dat_ep_recv_query__own_queue),
		cmocka_unit_test(dat_ep_recv_query__srq),
		cmocka_unit_test(dat_ep_recv_query__one_null),
		cmocka_unit_test(dat_ep_recv_query__invalid_parameter),
		cmocka_unit_test(dat_ep_recv_query__invalid_handle),
		cmocka_unit_test(dat_ep_recv_query__provider_attribute),
	};
	return cmocka_run_group_tests_name("dat_ep_recv_query", tests, NULL, NULL);
}
