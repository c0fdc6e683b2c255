/* dat_srq_create(3DAT), seed page: every testable sentence. */
#include "srq.h"

/* DAT_SUCCESS, and "The created SRQ is unattached to any Endpoints." An
 * attached SRQ cannot be freed (dat_srq_free), so a new one can be freed at
 * once; its query names the IA and PZ and an operational, empty SRQ. */
static void dat_srq_create__success_unattached(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_SRQ_ATTR a = {.max_recv_dtos = 16, .max_recv_iov = 1, .low_watermark = DAT_SRQ_LW_DEFAULT};
	DAT_SRQ_HANDLE q = DAT_HANDLE_NULL;
	DAT_SRQ_PARAM p;
	DAT_HANDLE_TYPE t;
	check_ok(dat_srq_create(s.ia, s.pz, &a, &q));
	assert_non_null(q);
	check_ok(dat_get_handle_type(q, &t));
	assert_int_equal(t, DAT_HANDLE_TYPE_SRQ);
	check_ok(dat_srq_query(q, DAT_SRQ_FIELD_ALL, &p));
	assert_ptr_equal(p.ia_handle, s.ia);
	assert_ptr_equal(p.pz_handle, s.pz);
	assert_int_equal(p.srq_state, DAT_SRQ_STATE_OPERATIONAL);
	assert_int_equal(p.available_dto_count, 0);
	assert_int_equal(p.outstanding_dto_count, 0);
	check_ok(dat_srq_free(q));
	side_close(&s);
}

/* "If the operation is successful, the created SRQ will have the queue
 * size at least max_recv_dtos and the number of entries on the posted Recv
 * scatter list of at lease max_recv_iov. [...] Consumer can query SRQ to
 * find out the actual supported queue size and maximum Recv IOV." The
 * reported sizes are at least the requested ones, and they are real: that
 * many receives of that many segments can be posted. */
static void dat_srq_create__at_least_requested(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	const DAT_COUNT sizes[][2] = {{1, 1}, {10, 2}, {100, 4}, {1000, 16}};
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		DAT_SRQ_ATTR a = {.max_recv_dtos = sizes[k][0], .max_recv_iov = sizes[k][1]};
		DAT_SRQ_HANDLE q;
		DAT_SRQ_PARAM p;
		check_ok(dat_srq_create(s.ia, s.pz, &a, &q));
		check_ok(dat_srq_query(q, DAT_SRQ_FIELD_MAX_RECV_DTO | DAT_SRQ_FIELD_MAX_RECV_IOV, &p));
		assert_true(p.max_recv_dtos >= a.max_recv_dtos);
		assert_true(p.max_recv_iov >= a.max_recv_iov);
		DAT_LMR_TRIPLET iov[16];
		for (DAT_COUNT i = 0; i < p.max_recv_dtos; i++) {
			for (DAT_COUNT j = 0; j < p.max_recv_iov; j++)
				iov[j] = rslot(&s, (int)j, 16);
			DAT_DTO_COOKIE ck = {.as_64 = (DAT_UINT64)i};
			check_ok(dat_srq_post_recv(q, p.max_recv_iov, iov, ck));
		}
		check_ok(dat_srq_query(q, DAT_SRQ_FIELD_AVAILABLE_DTO_COUNT, &p));
		assert_int_equal(p.available_dto_count, p.max_recv_dtos);
		check_ok(dat_srq_free(q));
	}
	side_close(&s);
}

/* "The Consumer must set low_watermark to DAT_SRQ_LW_DEFAULT to ensure
 * that an asynchronous event will not be generated immediately, since
 * there are no buffers in the created SRQ." With DAT_SRQ_LW_DEFAULT no
 * event; with another value the SRQ is armed at creation and, being empty,
 * reports at once (dat_handle the SRQ, DAT_SRQ_LOW_WATERMARK_EVENT). */
static void dat_srq_create__lw_default_no_event(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_SRQ_HANDLE q = srq_make(&s, 8, DAT_SRQ_LW_DEFAULT);
	srq_post(&s, q, 0);
	expect_none(s.async);
	DAT_SRQ_HANDLE armed = srq_make(&s, 8, 3);
	expect_watermark(&s, armed, DAT_SRQ_LOW_WATERMARK_EVENT);
	expect_none(s.async);
	DAT_SRQ_PARAM p;
	check_ok(dat_srq_query(armed, DAT_SRQ_FIELD_LOW_WATERMARK, &p));
	assert_int_equal(p.low_watermark, 3);
	side_close(&s);
}

/* "The Protection Zone pz_handle allows Consumers to control what local
 * memory can be used for the Recv DTO buffers posted to the SRQ. Only
 * memory referred to by LMRs of the posted Recv buffers that match the SRQ
 * Protection Zone can be accessed by the SRQ." */
static void dat_srq_create__pz_controls_memory(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_PZ_HANDLE pz2;
	DAT_LMR_HANDLE lmr2;
	DAT_LMR_CONTEXT ctx2;
	DAT_RMR_CONTEXT r;
	DAT_VLEN len;
	DAT_VADDR va;
	DAT_REGION_DESCRIPTION rd;
	static char other[4096];
	check_ok(dat_pz_create(s.ia, &pz2));
	rd.for_va = other;
	check_ok(dat_lmr_create(s.ia, DAT_MEM_TYPE_VIRTUAL, rd, sizeof other, pz2, DAT_MEM_PRIV_ALL_FLAG, &lmr2, &ctx2,
				&r, &len, &va));
	DAT_SRQ_HANDLE q = srq_make(&s, 4, 0);
	DAT_LMR_TRIPLET t = {.lmr_context = ctx2, .virtual_address = (DAT_VADDR)(uintptr_t)other, .segment_length = 64};
	DAT_DTO_COOKIE ck = {.as_64 = 1};
	check_type(dat_srq_post_recv(q, 1, &t, ck), DAT_PROTECTION_VIOLATION);
	t = rslot(&s, 0, 64);
	check_ok(dat_srq_post_recv(q, 1, &t, ck));
	side_close(&s);
}

/* Connects a client EP to a server EP; returns the client EP. */
static DAT_EP_HANDLE client_for(struct side *c, struct side *s, DAT_EP_HANDLE sep)
{
	DAT_EP_HANDLE cep = ep_make(c, NULL);
	connect_eps(c, cep, s, sep);
	return cep;
}

/* Drives progress on both sides for about ms milliseconds without reaping
 * receive completions: sender request completions are counted. */
static int settle_sends(struct side *c, int ms)
{
	struct timespec ts = {0, 1000000};
	DAT_EVENT ev;
	int sends = 0;
	for (int i = 0; i < ms; i++) {
		while (dat_evd_dequeue(c->dto, &ev) == DAT_SUCCESS) {
			assert_int_equal(ev.event_number, DAT_DTO_COMPLETION_EVENT);
			assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
			sends++;
		}
		nanosleep(&ts, NULL);
	}
	return sends;
}

/* Counts the sender's request completions until at least want have come
 * and then none for 300 ms (bounded by 5 s): how many sends a connection
 * completes when nothing more can be delivered. A transport may complete
 * the sends that fit in flight from another thread (TCP hands them to the
 * kernel asynchronously), so the count is taken once it is quiet, not at
 * a fixed instant. */
static int settled_sends(struct side *c, int want)
{
	int sends = 0, quiet = 0;
	for (int ms = 0; ms < 5000 && (sends < want || quiet < 300); ms++) {
		int more = settle_sends(c, 1);
		sends += more;
		quiet = more ? 0 : quiet + 1;
	}
	return sends;
}

/* Sends n signaled 32-byte messages tagged (tag, i). */
static void send_signaled(struct side *c, DAT_EP_HANDLE ep, uint32_t tag, int n)
{
	for (int i = 0; i < n; i++) {
		DAT_LMR_TRIPLET t = sslot(c, (int)tag * 512 + i, 32);
		uint32_t hdr[2] = {tag, (uint32_t)i};
		memcpy((char *)(uintptr_t)t.virtual_address, hdr, sizeof hdr);
		DAT_DTO_COOKIE ck = {.as_64 = (DAT_UINT64)i};
		check_ok(dat_ep_post_send(ep, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG));
	}
}

/* "When an associated EP tries to get a buffer from SRQ and there are no
 * buffers available, the behavior of the EP is the same as when there are
 * no buffers on the EP Recv Work Queue."
 * Two connections: one to an EP with an empty receive queue, one to an EP
 * of an empty SRQ. Each sender posts more messages than fit in flight. What
 * both senders see is the same: as many sends complete successfully on one
 * connection as on the other (the messages the transport takes in flight
 * without a receive: godat-shm's inbound ring holds 64; a verbs provider
 * or a credit-based transport completes none, the sender retrying as after
 * an RNR NAK), the rest stay posted without completing, and nothing fails,
 * times out or disconnects however long the receiver waits (there is no
 * receiver-not-ready timeout). When buffers
 * are posted, every message is delivered in order and the remaining sends
 * complete. */
static void dat_srq_create__empty_srq_like_empty_rq(void **state)
{
	(void)state;
	struct side s, c;
	side_open(&s);
	side_open(&c);
	DAT_SRQ_HANDLE q = srq_make(&s, 256, 0);
	DAT_EP_HANDLE rq_ep = ep_make(&s, NULL), srq_ep = ep_make(&s, q);
	DAT_EP_HANDLE c_rq = client_for(&c, &s, rq_ep), c_srq = client_for(&c, &s, srq_ep);
	const int n = 100;
	send_signaled(&c, c_rq, 1, n);
	int done_rq = settled_sends(&c, 0);
	send_signaled(&c, c_srq, 2, n);
	int done_srq = settled_sends(&c, done_rq);
	print_message("no buffer: %d (receive queue) and %d (SRQ) of %d sends completed, the rest wait\n", done_rq,
		      done_srq, n);
	assert_true(done_rq < n);
	assert_int_equal(done_srq, done_rq);
	expect_none(s.dto);
	expect_none(c.conn);
	expect_none(s.conn);
	assert_int_equal(ep_state(c_rq), DAT_EP_STATE_CONNECTED);
	assert_int_equal(ep_state(c_srq), DAT_EP_STATE_CONNECTED);
	/* Buffers arrive: everything is delivered, in order per connection. */
	for (int i = 0; i < n; i++) {
		DAT_LMR_TRIPLET t = rslot(&s, 1000 + i, SLOT);
		DAT_DTO_COOKIE ck = {.as_64 = (DAT_UINT64)(1000 + i)};
		check_ok(dat_ep_post_recv(rq_ep, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG));
		srq_post(&s, q, i);
	}
	uint32_t next[3] = {0, 0, 0};
	int rest = 0;
	for (int i = 0; i < 2 * n; i++) {
		DAT_EVENT ev = recv_ev(s.dto, &c, &rest);
		uint32_t tag, seq;
		assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
		tag_of(&s, &ev, &tag, &seq);
		assert_true(tag == 1 || tag == 2);
		assert_ptr_equal(ev.event_data.dto_completion_event_data.ep_handle, tag == 1 ? rq_ep : srq_ep);
		assert_int_equal(seq, next[tag]);
		next[tag]++;
	}
	for (int i = 0; i < 5000 && rest < 2 * n - done_rq - done_srq; i++)
		rest += settle_sends(&c, 1);
	assert_int_equal(rest, 2 * n - done_rq - done_srq);
	side_close(&c);
	side_close(&s);
}

/* Usage: "For each connection the Recv buffers completion order is
 * guaranteed to be in the order of the posted matching Sends to the other
 * end of the connection." and "The EPs that use SRQ might or might not use
 * the same recv_evd." Three connections, two receive EVDs, interleaved
 * sends: per connection, the order of the sends. */
static void dat_srq_create__order_per_connection(void **state)
{
	(void)state;
	struct side s, c;
	side_open(&s);
	side_open(&c);
	DAT_SRQ_HANDLE q = srq_make(&s, 512, 0);
	DAT_EVD_HANDLE evd2;
	DAT_EP_HANDLE sep[3], cep[3];
	check_ok(dat_evd_create(s.ia, 1024, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &evd2));
	for (int i = 0; i < 3; i++) {
		DAT_EVD_HANDLE r = i == 2 ? evd2 : s.dto;
		check_ok(dat_ep_create_with_srq(s.ia, s.pz, r, s.dto, s.conn, q, &s.attr, &sep[i]));
		cep[i] = client_for(&c, &s, sep[i]);
	}
	for (int i = 0; i < 300; i++)
		srq_post(&s, q, i);
	for (int round = 0; round < 100; round++)
		for (int i = 0; i < 3; i++)
			send_tagged(&c, cep[i], (uint32_t)i, 1, round, 24);
	uint32_t next[3] = {0, 0, 0};
	for (int k = 0; k < 300; k++) {
		DAT_EVENT ev = recv_ev(k < 200 ? s.dto : evd2, &c, NULL);
		uint32_t tag, seq;
		tag_of(&s, &ev, &tag, &seq);
		assert_true(tag < 3);
		assert_int_equal(k < 200, tag != 2);
		assert_ptr_equal(ev.event_data.dto_completion_event_data.ep_handle, sep[tag]);
		assert_int_equal(seq, next[tag]);
		next[tag]++;
	}
	side_close(&c);
	side_close(&s);
}

/* Usage: "Some Providers might restrict whether multiple EPs that share a
 * SRQ can have different Protection Zones. Check the
 * srq_ep_pz_difference_support Provider attribute." The software provider
 * does not: the attribute is DAT_TRUE and an EP of another PZ receives
 * into the SRQ's buffers (checked against the SRQ's PZ). A verbs IA does
 * (rdma_rxe checks an SRQ's buffers against the QP's PD): the attribute
 * is DAT_FALSE, dat_ep_create_with_srq refuses such an EP with
 * DAT_INVALID_PARAMETER ("pz_handle specified does not match the one for
 * SRQ"), and the rest of the case skips, saying so. */
static void dat_srq_create__ep_pz_difference(void **state)
{
	(void)state;
	struct side s, c;
	side_open(&s);
	side_open(&c);
	DAT_PROVIDER_ATTR pa;
	DAT_PZ_HANDLE pz2;
	DAT_EP_HANDLE sep;
	check_ok(dat_ia_query(s.ia, NULL, 0, NULL, DAT_PROVIDER_FIELD_ALL, &pa));
	DAT_SRQ_HANDLE q = srq_make(&s, 8, 0);
	check_ok(dat_pz_create(s.ia, &pz2));
	if (pa.srq_ep_pz_difference_supported != DAT_TRUE) {
		assert_int_equal(pa.srq_ep_pz_difference_supported, DAT_FALSE);
		check_type(dat_ep_create_with_srq(s.ia, pz2, s.dto, s.dto, s.conn, q, &s.attr, &sep),
			   DAT_INVALID_PARAMETER);
		check_ok(dat_pz_free(pz2));
		side_close(&c);
		side_close(&s);
		print_message("SKIP: %s: srq_ep_pz_difference_supported is DAT_FALSE (an EP of another PZ "
			      "than its SRQ's is refused)\n",
			      TEST_IA);
		skip();
	}
	check_ok(dat_ep_create_with_srq(s.ia, pz2, s.dto, s.dto, s.conn, q, &s.attr, &sep));
	DAT_EP_HANDLE cep = client_for(&c, &s, sep);
	srq_post(&s, q, 0);
	send_tagged(&c, cep, 9, 1, 0, 40);
	DAT_EVENT ev = expect_dto(s.dto);
	uint32_t tag, seq;
	assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	tag_of(&s, &ev, &tag, &seq);
	assert_int_equal(tag, 9);
	side_close(&c);
	side_close(&s);
}

/* Usage: "Since a Recv buffer of SRQ can be used by any EP that is using
 * SRQ, the Consumer should ensure that the posted Recv buffers are large
 * enough to receive an incoming message on any of the EPs." A buffer too
 * small for the message that takes it completes on that EP with
 * DAT_DTO_ERR_LOCAL_LENGTH, as a receive of its own queue would; the next
 * buffer serves the next message. */
static void dat_srq_create__buffer_too_small(void **state)
{
	(void)state;
	struct side s, c;
	side_open(&s);
	side_open(&c);
	DAT_SRQ_HANDLE q = srq_make(&s, 4, 0);
	DAT_EP_HANDLE sep = ep_make(&s, q), cep = client_for(&c, &s, sep);
	DAT_LMR_TRIPLET small = rslot(&s, 0, 16);
	DAT_DTO_COOKIE ck = {.as_64 = 0};
	check_ok(dat_srq_post_recv(q, 1, &small, ck));
	srq_post(&s, q, 1);
	send_tagged(&c, cep, 4, 2, 0, 100);
	DAT_EVENT ev = expect_dto(s.dto);
	assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_ERR_LOCAL_LENGTH);
	assert_int_equal(ev.event_data.dto_completion_event_data.user_cookie.as_64, 0);
	assert_ptr_equal(ev.event_data.dto_completion_event_data.ep_handle, sep);
	ev = expect_dto(s.dto);
	assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	uint32_t tag, seq;
	tag_of(&s, &ev, &tag, &seq);
	assert_int_equal(seq, 1);
	side_close(&c);
	side_close(&s);
}

/* DAT_INSUFFICIENT_RESOURCES "The operation failed due to resource
 * limitations.": more SRQs than the IA's max_srqs. */
static void dat_srq_create__insufficient_resources(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_IA_ATTR ia;
	check_ok(dat_ia_query(s.ia, NULL, DAT_IA_ALL, &ia, 0, NULL));
	assert_true(ia.max_srqs > 0);
	skip_unless_exhaustible("max_srqs", ia.max_srqs);
	DAT_SRQ_ATTR a = {.max_recv_dtos = 1, .max_recv_iov = 1};
	DAT_SRQ_HANDLE *q = calloc((size_t)ia.max_srqs, sizeof *q);
	assert_non_null(q);
	for (DAT_COUNT i = 0; i < ia.max_srqs; i++)
		check_ok(dat_srq_create(s.ia, s.pz, &a, &q[i]));
	DAT_SRQ_HANDLE extra;
	check_ret(dat_srq_create(s.ia, s.pz, &a, &extra), DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_SRQ);
	check_ok(dat_srq_free(q[0]));
	check_ok(dat_srq_create(s.ia, s.pz, &a, &q[0]));
	free(q);
	side_close(&s);
}

/* DAT_INVALID_HANDLE "Either ia_handle or pz_handle is an invalid DAT
 * handle." NULL, freed and other-family handles in each position, and a
 * PZ of another IA. */
static void dat_srq_create__invalid_handle(void **state)
{
	(void)state;
	struct side s, o;
	side_open(&s);
	side_open(&o);
	DAT_SRQ_ATTR a = {.max_recv_dtos = 4, .max_recv_iov = 1};
	DAT_SRQ_HANDLE q;
	check_ret(dat_srq_create(DAT_HANDLE_NULL, s.pz, &a, &q), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	check_ret(dat_srq_create((DAT_IA_HANDLE)s.pz, s.pz, &a, &q), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	check_ret(dat_srq_create(s.ia, DAT_HANDLE_NULL, &a, &q), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	check_ret(dat_srq_create(s.ia, (DAT_PZ_HANDLE)s.dto, &a, &q), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	check_ret(dat_srq_create(s.ia, freed_pz(&s), &a, &q), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	check_ret(dat_srq_create(s.ia, o.pz, &a, &q), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	DAT_IA_HANDLE closed = open_ia(NULL);
	check_ok(dat_ia_close(closed, DAT_CLOSE_ABRUPT_FLAG));
	check_ret(dat_srq_create(closed, s.pz, &a, &q), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	side_close(&o);
	side_close(&s);
}

/* DAT_INVALID_PARAMETER "One of the parameters is invalid. Either one of
 * the requested SRQ attributes was invalid or a combination of attributes
 * is invalid." */
static void dat_srq_create__invalid_parameter(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_IA_ATTR ia;
	check_ok(dat_ia_query(s.ia, NULL, DAT_IA_ALL, &ia, 0, NULL));
	DAT_SRQ_HANDLE q;
	DAT_SRQ_ATTR ok = {.max_recv_dtos = 4, .max_recv_iov = 1};
	const DAT_SRQ_ATTR bad[] = {
		{.max_recv_dtos = 0, .max_recv_iov = 1},
		{.max_recv_dtos = -1, .max_recv_iov = 1},
		{.max_recv_dtos = ia.max_recv_per_srq + 1, .max_recv_iov = 1},
		{.max_recv_dtos = 4, .max_recv_iov = -1},
		{.max_recv_dtos = 4, .max_recv_iov = ia.max_iov_segments_per_dto + 1},
		{.max_recv_dtos = 4, .max_recv_iov = 1, .low_watermark = -1},
		{.max_recv_dtos = 4, .max_recv_iov = 1, .low_watermark = 5}, /* combination */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		DAT_SRQ_ATTR a = bad[i];
		check_ret(dat_srq_create(s.ia, s.pz, &a, &q), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	}
	check_ret(dat_srq_create(s.ia, s.pz, NULL, &q), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	check_ret(dat_srq_create(s.ia, s.pz, &ok, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	/* "If the value of DAT_RETURN is not DAT_SUCCESS, the value of
	 * srq_handle is not defined.": godat leaves it untouched. */
	q = (DAT_SRQ_HANDLE)(uintptr_t)0x5eed;
	DAT_SRQ_ATTR a = bad[0];
	check_type(dat_srq_create(s.ia, s.pz, &a, &q), DAT_INVALID_PARAMETER);
	assert_ptr_equal(q, (DAT_SRQ_HANDLE)(uintptr_t)0x5eed);
	expect_none(s.async);
	side_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dat_srq_create__success_unattached),
		cmocka_unit_test(dat_srq_create__at_least_requested),
		cmocka_unit_test(dat_srq_create__lw_default_no_event),
		cmocka_unit_test(dat_srq_create__pz_controls_memory),
		cmocka_unit_test(dat_srq_create__empty_srq_like_empty_rq),
		cmocka_unit_test(dat_srq_create__order_per_connection),
		cmocka_unit_test(dat_srq_create__ep_pz_difference),
		cmocka_unit_test(dat_srq_create__buffer_too_small),
		cmocka_unit_test(dat_srq_create__insufficient_resources),
		cmocka_unit_test(dat_srq_create__invalid_handle),
		cmocka_unit_test(dat_srq_create__invalid_parameter),
	};
	return cmocka_run_group_tests_name("dat_srq_create", tests, NULL, NULL);
}
