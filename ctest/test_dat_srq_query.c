/* dat_srq_query(3DAT), seed page: every testable sentence. */
#include "srq.h"

struct fix {
	struct side s, c;
	DAT_SRQ_HANDLE srq;
	DAT_EP_HANDLE sep, cep;
};

static struct fix *fix_open(DAT_COUNT n)
{
	struct fix *f = calloc(1, sizeof *f);
	assert_non_null(f);
	side_open(&f->s);
	side_open(&f->c);
	f->srq = srq_make(&f->s, n, DAT_SRQ_LW_DEFAULT);
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

/* "Example: Consumer created SRQ with 10 entries and associated 1 EP with
 * it. 3 Recv buffers have been posted to it. The query will report:
 * max_recv_dtos=10, available_dto_count=3, outstanding_dto_count=3. After a
 * Send message arrival the query will report: max_recv_dtos=10,
 * available_dto_count=2, outstanding_dto_count=3. After Consumer dequeues
 * Recv completion the query will report: max_recv_dtos=10,
 * available_dto_count=2, outstanding_dto_count=2."
 * The arrival shows in dat_srq_query before the consumer touches the
 * receive EVD: the query progresses the SRQ's EPs itself. */
static void dat_srq_query__page_example(void **state)
{
	(void)state;
	struct fix *f = fix_open(10);
	DAT_SRQ_PARAM p;
	for (int i = 0; i < 3; i++)
		srq_post(&f->s, f->srq, i);
	check_ok(dat_srq_query(f->srq, DAT_SRQ_FIELD_ALL, &p));
	assert_int_equal(p.max_recv_dtos, 10);
	assert_int_equal(p.available_dto_count, 3);
	assert_int_equal(p.outstanding_dto_count, 3);

	/* The arrival shows in the query once the message has arrived, which a
	 * transport may take a while after the send returns (TCP): query until
	 * it does, without touching the receive EVD, then check every count. */
	send_tagged(&f->c, f->cep, 1, 1, 0, 64);
	srq_until_avail(f->srq, 2);
	check_ok(dat_srq_query(f->srq, DAT_SRQ_FIELD_ALL, &p));
	assert_int_equal(p.max_recv_dtos, 10);
	assert_int_equal(p.available_dto_count, 2);
	assert_int_equal(p.outstanding_dto_count, 3);

	DAT_EVENT ev = expect_dto(f->s.dto);
	assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
	assert_ptr_equal(ev.event_data.dto_completion_event_data.ep_handle, f->sep);
	check_ok(dat_srq_query(f->srq, DAT_SRQ_FIELD_ALL, &p));
	assert_int_equal(p.max_recv_dtos, 10);
	assert_int_equal(p.available_dto_count, 2);
	assert_int_equal(p.outstanding_dto_count, 2);
	fix_close(f);
}

/* "The two that are related to entry counts on SRQ are the number of
 * Receive buffers (available_dto_count) available for EPs to dequeue and
 * the number of occupied SRQ entries (outstanding_dto_count) not available
 * for new Recv buffer postings." Occupied entries are exactly what blocks
 * new posts: with every entry occupied a post fails, and reaping one
 * completion frees one. */
static void dat_srq_query__occupied_entries(void **state)
{
	(void)state;
	struct fix *f = fix_open(4);
	DAT_COUNT a, o;
	for (int i = 0; i < 4; i++)
		srq_post(&f->s, f->srq, i);
	send_tagged(&f->c, f->cep, 1, 2, 0, 16);
	srq_until_avail(f->srq, 2);
	srq_counts(f->srq, &a, &o);
	assert_int_equal(a, 2);
	assert_int_equal(o, 4);
	DAT_LMR_TRIPLET t = rslot(&f->s, 9, SLOT);
	DAT_DTO_COOKIE ck = {.as_64 = 9};
	check_type(dat_srq_post_recv(f->srq, 1, &t, ck), DAT_INSUFFICIENT_RESOURCES);
	expect_dto(f->s.dto);
	srq_counts(f->srq, &a, &o);
	assert_int_equal(o, 3);
	check_ok(dat_srq_post_recv(f->srq, 1, &t, ck));
	srq_counts(f->srq, &a, &o);
	assert_int_equal(a, 3);
	assert_int_equal(o, 4);
	fix_close(f);
}

/* "In general, each EP associated with SRQ can have multiple buffers in
 * progress of receiving messages as well completed Recv on EVDs."
 * Completions held by two EPs on two EVDs all count as outstanding. */
static void dat_srq_query__several_eps(void **state)
{
	(void)state;
	struct fix *f = fix_open(8);
	DAT_EVD_HANDLE evd2;
	DAT_EP_HANDLE sep2, cep2;
	DAT_COUNT a, o;
	check_ok(dat_evd_create(f->s.ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &evd2));
	check_ok(dat_ep_create_with_srq(f->s.ia, f->s.pz, evd2, f->s.dto, f->s.conn, f->srq, &f->s.attr, &sep2));
	cep2 = ep_make(&f->c, NULL);
	connect_eps(&f->c, cep2, &f->s, sep2);
	for (int i = 0; i < 8; i++)
		srq_post(&f->s, f->srq, i);
	send_tagged(&f->c, f->cep, 1, 2, 0, 16);
	send_tagged(&f->c, cep2, 2, 3, 0, 16);
	srq_until_avail(f->srq, 3);
	srq_counts(f->srq, &a, &o);
	assert_int_equal(a, 3);
	assert_int_equal(o, 8);
	for (int i = 0; i < 3; i++)
		assert_ptr_equal(expect_dto(evd2).event_data.dto_completion_event_data.ep_handle, sep2);
	srq_counts(f->srq, &a, &o);
	assert_int_equal(o, 5);
	fix_close(f);
}

/* "The srq_param_mask argument allows Consumers to specify which
 * parameters to query. The Provider returns values for the requested
 * srq_param_mask parameters. The Provider can return values for any other
 * parameters." Each single field comes back right; the rest of the
 * structure is filled too (godat fills everything). */
static void dat_srq_query__mask_fields(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_SRQ_ATTR a = {.max_recv_dtos = 7, .max_recv_iov = 3, .low_watermark = 0};
	DAT_SRQ_HANDLE q;
	DAT_SRQ_PARAM p;
	check_ok(dat_srq_create(s.ia, s.pz, &a, &q));
	check_ok(dat_srq_set_lw(q, 5));
	expect_watermark(&s, q, DAT_SRQ_LOW_WATERMARK_EVENT); /* empty: 0 < 5 */
	const DAT_SRQ_PARAM_MASK masks[] = {DAT_SRQ_FIELD_IA_HANDLE, DAT_SRQ_FIELD_SRQ_STATE, DAT_SRQ_FIELD_PZ_HANDLE,
					    DAT_SRQ_FIELD_MAX_RECV_DTO, DAT_SRQ_FIELD_MAX_RECV_IOV,
					    DAT_SRQ_FIELD_LOW_WATERMARK, DAT_SRQ_FIELD_AVAILABLE_DTO_COUNT,
					    DAT_SRQ_FIELD_OUTSTANDING_DTO_COUNT, 0, DAT_SRQ_FIELD_ALL};
	for (size_t i = 0; i < sizeof masks / sizeof masks[0]; i++) {
		memset(&p, 0x5a, sizeof p);
		check_ok(dat_srq_query(q, masks[i], &p));
		assert_ptr_equal(p.ia_handle, s.ia);
		assert_int_equal(p.srq_state, DAT_SRQ_STATE_OPERATIONAL);
		assert_ptr_equal(p.pz_handle, s.pz);
		assert_int_equal(p.max_recv_dtos, 7);
		assert_int_equal(p.max_recv_iov, 3);
		assert_int_equal(p.low_watermark, 5);
		assert_int_equal(p.available_dto_count, 0);
		assert_int_equal(p.outstanding_dto_count, 0);
	}
	side_close(&s);
}

/* "If the Provider cannot support the query for the number of outstanding
 * Recv of SRQ or available Recvs of SRQ, the value return for that
 * attribute should be DAT_VALUE_UNKNOWN." godat supports both
 * (srq_info_supported) and always has them: never DAT_VALUE_UNKNOWN. */
static void dat_srq_query__never_unknown(void **state)
{
	(void)state;
	struct fix *f = fix_open(16);
	DAT_PROVIDER_ATTR pa;
	DAT_COUNT a, o;
	check_ok(dat_ia_query(f->s.ia, NULL, 0, NULL, DAT_PROVIDER_FIELD_ALL, &pa));
	assert_int_equal(pa.srq_supported, DAT_TRUE);
	assert_int_not_equal(pa.srq_info_supported, 0);
	for (int i = 0; i < 16; i++) {
		srq_post(&f->s, f->srq, i);
		if (i % 3 == 0)
			send_tagged(&f->c, f->cep, 1, 1, i, 16);
		srq_counts(f->srq, &a, &o);
		assert_int_not_equal(a, DAT_VALUE_UNKNOWN);
		assert_int_not_equal(o, DAT_VALUE_UNKNOWN);
		assert_true(a >= 0 && a <= o && o <= 16);
	}
	fix_close(f);
}

/* DAT_INVALID_PARAMETER: "The srq_param_mask argument is invalid." (and a
 * NULL srq_param, the only other parameter). */
static void dat_srq_query__invalid_parameter(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_SRQ_HANDLE q = srq_make(&s, 4, 0);
	DAT_SRQ_PARAM p;
	check_ret(dat_srq_query(q, (DAT_SRQ_PARAM_MASK)0x100, &p), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_srq_query(q, (DAT_SRQ_PARAM_MASK)(DAT_SRQ_FIELD_ALL | 0x8000), &p), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG2);
	check_ret(dat_srq_query(q, DAT_SRQ_FIELD_ALL, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	side_close(&s);
}

/* DAT_INVALID_HANDLE: "The srq_handle argument is an invalid DAT handle."
 * NULL, freed, another family's handle. */
static void dat_srq_query__invalid_handle(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_SRQ_HANDLE q = srq_make(&s, 4, 0);
	DAT_SRQ_PARAM p;
	check_ok(dat_srq_free(q));
	check_ret(dat_srq_query(q, DAT_SRQ_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	check_ret(dat_srq_query(DAT_HANDLE_NULL, DAT_SRQ_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	check_ret(dat_srq_query((DAT_SRQ_HANDLE)s.pz, DAT_SRQ_FIELD_ALL, &p), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	side_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dat_srq_query__page_example),
		cmocka_unit_test(dat_srq_query__occupied_entries),
		cmocka_unit_test(dat_srq_query__several_eps),
		cmocka_unit_test(dat_srq_query__mask_fields),
		cmocka_unit_test(dat_srq_query__never_unknown),
		cmocka_unit_test(dat_srq_query__invalid_parameter),
		cmocka_unit_test(dat_srq_query__invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_srq_query", tests, NULL, NULL);
}
