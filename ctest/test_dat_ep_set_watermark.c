/* dat_ep_set_watermark(3DAT), seed page: every testable sentence.
 *
 * The count the watermarks compare ("the number of Recv buffers at EP",
 * "consumed by the Endpoint") is godat's held count: receive buffers the
 * EP has taken for arriving messages, from its SRQ or its own queue, whose
 * completions the consumer has not dequeued from the receive EVD. A buffer
 * enters the count when a message is placed in it and leaves it when its
 * completion is reaped. "Exceeds" is strict: held > watermark. */
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
	if (use_srq) {
		f->srq = srq_make(&f->s, 64, DAT_SRQ_LW_DEFAULT);
		for (int i = 0; i < 32; i++)
			srq_post(&f->s, f->srq, i);
	}
	f->sep = ep_make(&f->s, f->srq);
	f->cep = ep_make(&f->c, NULL);
	return f;
}

static void fix_connect(struct fix *f)
{
	connect_eps(&f->c, f->cep, &f->s, f->sep);
}

static void fix_close(struct fix *f)
{
	side_close(&f->c);
	side_close(&f->s);
	free(f);
}

/* n more messages reach the server EP and are taken. */
static void arrive(struct fix *f, int n)
{
	static int seq;
	DAT_COUNT a, o;
	srq_counts(f->srq, &a, &o);
	send_tagged(&f->c, f->cep, 1, n, seq, 16);
	seq += n;
	srq_until_avail(f->srq, a - n);
}

/* "An asynchronous event will be generated for IA async_evd when the
 * number of Recv buffers at EP exceeds the soft high watermark for the
 * first time." The event's dat_handle is the EP, its reason
 * DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT. */
static void dat_ep_set_watermark__soft_event(void **state)
{
	(void)state;
	struct fix *f = fix_open(1);
	fix_connect(f);
	check_ok(dat_ep_set_watermark(f->sep, 2, DAT_WATERMARK_INFINITE));
	arrive(f, 2);
	expect_none(f->s.async); /* 2 does not exceed 2 */
	arrive(f, 1);
	expect_watermark(&f->s, f->sep, DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT);
	assert_int_equal(ep_state(f->sep), DAT_EP_STATE_CONNECTED); /* soft: nothing else happens */
	fix_close(f);
}

/* "The asynchronous event for a soft high watermark is generated only once
 * per setting. Once an event is generated, no new asynchronous events for
 * the soft high watermark is generated until the EP is again set for the
 * soft high watermark. If the Consumer is once again interested in the
 * event, the Consumer should again set the soft high watermark." */
static void dat_ep_set_watermark__soft_once_per_setting(void **state)
{
	(void)state;
	struct fix *f = fix_open(1);
	fix_connect(f);
	check_ok(dat_ep_set_watermark(f->sep, 0, DAT_WATERMARK_INFINITE));
	arrive(f, 1);
	expect_watermark(&f->s, f->sep, DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT);
	arrive(f, 3);
	expect_none(f->s.async);
	/* Reap everything, exceed again: still no event without a new setting. */
	for (int i = 0; i < 4; i++)
		expect_dto(f->s.dto);
	arrive(f, 2);
	expect_none(f->s.async);
	for (int i = 0; i < 2; i++)
		expect_dto(f->s.dto);
	check_ok(dat_ep_set_watermark(f->sep, 1, DAT_WATERMARK_INFINITE));
	arrive(f, 1);
	expect_none(f->s.async);
	arrive(f, 1);
	expect_watermark(&f->s, f->sep, DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT);
	fix_close(f);
}

/* "A connection broken event will be generated for EP connect_evd when the
 * number of Recv buffers at EP exceeds the hard high watermark." It is a
 * connection event (DAT_CONNECTION_EVENT_BROKEN, ep_handle the EP), not an
 * asynchronous one; the EP ends disconnected and its peer sees the
 * connection end. */
static void dat_ep_set_watermark__hard_broken(void **state)
{
	(void)state;
	struct fix *f = fix_open(1);
	fix_connect(f);
	check_ok(dat_ep_set_watermark(f->sep, DAT_WATERMARK_INFINITE, 3));
	arrive(f, 3);
	expect_none(f->s.conn);
	arrive(f, 1);
	DAT_EVENT ev = wait_ev(f->s.conn);
	assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_BROKEN);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, f->sep);
	assert_int_equal(ep_state(f->sep), DAT_EP_STATE_DISCONNECTED);
	expect_none(f->s.async);
	ev = wait_ev(f->c.conn);
	assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_DISCONNECTED);
	/* The 4 completions stay on the receive EVD for the consumer. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(expect_dto(f->s.dto).event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	fix_close(f);
}

/* "These can occur during this call or when EP takes a buffer from the SRQ
 * or EP RQ." and (Usage) "If the new high watermark values are below the
 * current number of Receive DTOs at EP, an asynchronous event will be
 * generated immediately." Both watermarks, during the call. */
static void dat_ep_set_watermark__during_call(void **state)
{
	(void)state;
	struct fix *f = fix_open(1);
	fix_connect(f);
	arrive(f, 3);
	check_ok(dat_ep_set_watermark(f->sep, 2, DAT_WATERMARK_INFINITE));
	expect_watermark(&f->s, f->sep, DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT);
	expect_none(f->s.conn);
	check_ok(dat_ep_set_watermark(f->sep, DAT_WATERMARK_INFINITE, 2));
	assert_int_equal(wait_ev(f->s.conn).event_number, DAT_CONNECTION_EVENT_BROKEN);
	fix_close(f);
}

/* "The soft and hard high watermark asynchronous event generation and
 * setting are independent of each other." The soft event does not break
 * the connection; the soft one fired does not disarm the hard one. */
static void dat_ep_set_watermark__independent(void **state)
{
	(void)state;
	struct fix *f = fix_open(1);
	fix_connect(f);
	check_ok(dat_ep_set_watermark(f->sep, 1, 3));
	arrive(f, 2);
	expect_watermark(&f->s, f->sep, DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT);
	expect_none(f->s.conn);
	arrive(f, 1);
	expect_none(f->s.conn);
	arrive(f, 1);
	assert_int_equal(wait_ev(f->s.conn).event_number, DAT_CONNECTION_EVENT_BROKEN);
	expect_none(f->s.async);
	fix_close(f);
}

/* "If the Consumer is not interested in a soft or hard high watermark,
 * the value of DAT_WATERMARK_INFINITE can be specified for the case that
 * is the default value. This value specifies that a non-asynchronous event
 * will be generated for a high watermark EP attribute for which this value
 * is set." A new EP reports srq_soft_hw DAT_HW_DEFAULT (INFINITE); it can
 * hold many buffers without any event. */
static void dat_ep_set_watermark__infinite_default(void **state)
{
	(void)state;
	struct fix *f = fix_open(1);
	DAT_EP_PARAM p;
	DAT_EP_HANDLE ep;
	check_ok(dat_ep_create_with_srq(f->s.ia, f->s.pz, f->s.dto, f->s.dto, f->s.conn, f->srq, &f->s.attr, &ep));
	check_ok(dat_ep_query(ep, DAT_EP_FIELD_EP_ATTR_SRQ_SOFT_HW, &p));
	assert_int_equal(p.ep_attr.srq_soft_hw, DAT_WATERMARK_INFINITE);
	assert_int_equal(DAT_HW_DEFAULT, DAT_WATERMARK_INFINITE);
	fix_connect(f);
	arrive(f, 20);
	check_ok(dat_ep_set_watermark(f->sep, DAT_WATERMARK_INFINITE, DAT_WATERMARK_INFINITE));
	arrive(f, 5);
	expect_none(f->s.async);
	expect_none(f->s.conn);
	assert_int_equal(ep_state(f->sep), DAT_EP_STATE_CONNECTED);
	/* "It does not prevent generation of a connection broken event for EP
	 * when no Recv buffer is available for a message arrived on the EP
	 * connection." godat never breaks a connection for a missing buffer
	 * (the message waits, see dat_srq_create), so there is no such event
	 * to prevent or allow. */
	fix_close(f);
}

/* "The operation is supported for all states of Endpoint." Unconnected,
 * connected, disconnected, reset to unconnected. */
static void dat_ep_set_watermark__every_state(void **state)
{
	(void)state;
	struct fix *f = fix_open(1);
	check_ok(dat_ep_set_watermark(f->sep, 5, 5));
	fix_connect(f);
	check_ok(dat_ep_set_watermark(f->sep, 6, 6));
	check_ok(dat_ep_disconnect(f->cep, DAT_CLOSE_ABRUPT_FLAG));
	assert_int_equal(wait_ev(f->s.conn).event_number, DAT_CONNECTION_EVENT_DISCONNECTED);
	assert_int_equal(ep_state(f->sep), DAT_EP_STATE_DISCONNECTED);
	check_ok(dat_ep_set_watermark(f->sep, 7, 7));
	check_ok(dat_ep_reset(f->sep));
	check_ok(dat_ep_set_watermark(f->sep, 8, DAT_WATERMARK_INFINITE));
	DAT_EP_PARAM p;
	check_ok(dat_ep_query(f->sep, DAT_EP_FIELD_EP_ATTR_SRQ_SOFT_HW, &p));
	assert_int_equal(p.ep_attr.srq_soft_hw, 8);
	fix_close(f);
}

/* Usage: "For a hard high watermark, the Provider is ready to generate a
 * connection broken event as soon as the connection is established." A
 * hard watermark set before connecting applies to the first messages. */
static void dat_ep_set_watermark__hard_ready_at_establishment(void **state)
{
	(void)state;
	struct fix *f = fix_open(1);
	check_ok(dat_ep_set_watermark(f->sep, DAT_WATERMARK_INFINITE, 1));
	fix_connect(f);
	arrive(f, 1);
	expect_none(f->s.conn);
	arrive(f, 1);
	assert_int_equal(wait_ev(f->s.conn).event_number, DAT_CONNECTION_EVENT_BROKEN);
	fix_close(f);
}

/* Usage: "If the asynchronous event for a soft or hard high watermark has
 * not yet been generated, this call simply modifies the values for these
 * attributes. The Provider remains armed for generation of these
 * asynchronous events." 10 is replaced by 1 before anything fires. */
static void dat_ep_set_watermark__modify_while_armed(void **state)
{
	(void)state;
	struct fix *f = fix_open(1);
	fix_connect(f);
	check_ok(dat_ep_set_watermark(f->sep, 10, 10));
	arrive(f, 1);
	check_ok(dat_ep_set_watermark(f->sep, 1, 2));
	expect_none(f->s.async);
	arrive(f, 1);
	expect_watermark(&f->s, f->sep, DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT);
	expect_none(f->s.conn);
	arrive(f, 1);
	assert_int_equal(wait_ev(f->s.conn).event_number, DAT_CONNECTION_EVENT_BROKEN);
	fix_close(f);
}

/* "These can occur [...] when EP takes a buffer from the SRQ or EP RQ."
 * An EP with its own receive queue: posted buffers are not consumed; the
 * ones messages consumed count until reaped. */
static void dat_ep_set_watermark__own_receive_queue(void **state)
{
	(void)state;
	struct fix *f = fix_open(0);
	for (int i = 0; i < 8; i++) {
		DAT_LMR_TRIPLET t = rslot(&f->s, i, SLOT);
		DAT_DTO_COOKIE ck = {.as_64 = (DAT_UINT64)i};
		check_ok(dat_ep_post_recv(f->sep, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG));
	}
	fix_connect(f);
	check_ok(dat_ep_set_watermark(f->sep, 1, DAT_WATERMARK_INFINITE));
	expect_none(f->s.async); /* 8 posted, none consumed */
	send_tagged(&f->c, f->cep, 3, 2, 0, 16);
	/* dat_ep_recv_query progresses the EP: wait until both are placed. */
	struct timespec ts = {0, 1000000};
	DAT_COUNT n = 8;
	for (int i = 0; i < 5000 && n > 6; i++) {
		check_ok(dat_ep_recv_query(f->sep, &n, NULL));
		nanosleep(&ts, NULL);
	}
	assert_int_equal(n, 6);
	expect_watermark(&f->s, f->sep, DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT);
	fix_close(f);
}

/* DAT_INVALID_PARAMETER "One of the parameters is invalid.": a negative
 * watermark other than DAT_WATERMARK_INFINITE. */
static void dat_ep_set_watermark__invalid_parameter(void **state)
{
	(void)state;
	struct fix *f = fix_open(1);
	check_ret(dat_ep_set_watermark(f->sep, -2, 4), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_ep_set_watermark(f->sep, 4, -7), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	DAT_EP_PARAM p;
	check_ok(dat_ep_query(f->sep, DAT_EP_FIELD_EP_ATTR_SRQ_SOFT_HW, &p));
	assert_int_equal(p.ep_attr.srq_soft_hw, DAT_WATERMARK_INFINITE);
	fix_close(f);
}

/* DAT_INVALID_HANDLE "The ep_handle argument is an invalid DAT handle." */
static void dat_ep_set_watermark__invalid_handle(void **state)
{
	(void)state;
	struct fix *f = fix_open(1);
	check_ok(dat_ep_free(f->sep));
	check_ret(dat_ep_set_watermark(f->sep, 1, 1), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_set_watermark(DAT_HANDLE_NULL, 1, 1), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	check_ret(dat_ep_set_watermark((DAT_EP_HANDLE)f->srq, 1, 1), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	fix_close(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dat_ep_set_watermark__soft_event),
		cmocka_unit_test(dat_ep_set_watermark__soft_once_per_setting),
		cmocka_unit_test(dat_ep_set_watermark__hard_broken),
		cmocka_unit_test(dat_ep_set_watermark__during_call),
		cmocka_unit_test(dat_ep_set_watermark__independent),
		cmocka_unit_test(dat_ep_set_watermark__infinite_default),
		cmocka_unit_test(dat_ep_set_watermark__every_state),
		cmocka_unit_test(dat_ep_set_watermark__hard_ready_at_establishment),
		cmocka_unit_test(dat_ep_set_watermark__modify_while_armed),
		cmocka_unit_test(dat_ep_set_watermark__own_receive_queue),
		cmocka_unit_test(dat_ep_set_watermark__invalid_parameter),
		cmocka_unit_test(dat_ep_set_watermark__invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_ep_set_watermark", tests, NULL, NULL);
}
