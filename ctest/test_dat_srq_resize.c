/* dat_srq_resize(3DAT), seed page: every testable sentence. */
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

static DAT_SRQ_PARAM params(DAT_SRQ_HANDLE q)
{
	DAT_SRQ_PARAM p;
	check_ok(dat_srq_query(q, DAT_SRQ_FIELD_ALL, &p));
	return p;
}

/* "The dat_srq_resize() function modifies the size of the queue of SRQ."
 * Growing: the new size is reported and can be filled. Usage: "The
 * quality of the implementation determines how closely to the
 * Consumer-requested value the Provider shrinks the SRQ." godat shrinks
 * exactly to the requested value whenever that is allowed. */
static void dat_srq_resize__success(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_SRQ_HANDLE q = srq_make(&s, 4, 0);
	for (int i = 0; i < 4; i++)
		srq_post(&s, q, i);
	check_ok(dat_srq_resize(q, 12));
	assert_int_equal(params(q).max_recv_dtos, 12);
	for (int i = 4; i < 12; i++)
		srq_post(&s, q, i);
	DAT_LMR_TRIPLET t = rslot(&s, 12, SLOT);
	DAT_DTO_COOKIE ck = {.as_64 = 12};
	check_type(dat_srq_post_recv(q, 1, &t, ck), DAT_INSUFFICIENT_RESOURCES);
	/* Shrink to exactly the requested value, here the outstanding count. */
	DAT_SRQ_HANDLE q2 = srq_make(&s, 100, 0);
	srq_post(&s, q2, 100);
	check_ok(dat_srq_resize(q2, 1));
	DAT_SRQ_PARAM p = params(q2);
	assert_int_equal(p.max_recv_dtos, 1);
	assert_int_equal(p.available_dto_count, 1);
	side_close(&s);
}

/* "If the number of outstanding Recv buffers on the SRQ is larger then
 * the requested srq_max_recv_dto, the operation returns DAT_INVALID_STATE
 * and do not change SRQ. This includes not just the buffers on the SRQ but
 * all outstanding Receive buffers that had been posted to the SRQ and
 * whose completions have not reaped yet. Thus, the outstanding buffers
 * include the buffers on SRQ, the buffers posted to SRQ at are at SRQ
 * associated EPs, and the buffers posted to SRQ for which completions have
 * been generated but not yet reaped by Consumer from recv_evds of the EPs
 * that use the SRQ."
 * 3 on the SRQ and 2 completed, not reaped: 5 outstanding. Resizing to 4
 * (above the 3 on the SRQ) fails and changes nothing; reaping one
 * completion makes 4 possible. */
static void dat_srq_resize__invalid_state_outstanding(void **state)
{
	(void)state;
	struct fix *f = fix_open(10);
	for (int i = 0; i < 5; i++)
		srq_post(&f->s, f->srq, i);
	send_tagged(&f->c, f->cep, 1, 2, 0, 16);
	srq_until_avail(f->srq, 3);
	DAT_SRQ_PARAM before = params(f->srq);
	assert_int_equal(before.available_dto_count, 3);
	assert_int_equal(before.outstanding_dto_count, 5);
	check_ret(dat_srq_resize(f->srq, 4), DAT_INVALID_STATE, DAT_NO_SUBTYPE);
	check_ret(dat_srq_resize(f->srq, 3), DAT_INVALID_STATE, DAT_NO_SUBTYPE);
	DAT_SRQ_PARAM after = params(f->srq);
	assert_memory_equal(&before, &after, sizeof before);
	expect_dto(f->s.dto);
	check_ok(dat_srq_resize(f->srq, 4));
	assert_int_equal(params(f->srq).max_recv_dtos, 4);
	fix_close(f);
}

/* "If the requested srq_max_recv_dto is below the SRQ low watermark, the
 * operation returns DAT_INVALID_STATE and does not change SRQ."
 * (DAT_INVALID_STATE "... or the requested SRQ queue length is smaller
 * than the SRQ low watermark.") Equal to the watermark is allowed. */
static void dat_srq_resize__invalid_state_low_watermark(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_SRQ_HANDLE r = srq_make(&s, 10, 0);
	check_ok(dat_srq_set_lw(r, 6));
	expect_watermark(&s, r, DAT_SRQ_LOW_WATERMARK_EVENT);
	check_ret(dat_srq_resize(r, 5), DAT_INVALID_STATE, DAT_NO_SUBTYPE);
	DAT_SRQ_PARAM p = params(r);
	assert_int_equal(p.max_recv_dtos, 10);
	assert_int_equal(p.low_watermark, 6);
	check_ok(dat_srq_resize(r, 6));
	assert_int_equal(params(r).max_recv_dtos, 6);
	side_close(&s);
}

/* "Resizing of Shared Receive Queue should not cause any incoming messages
 * on any of the EPs that use the SRQ to be lost." and (Usage) "The
 * dat_srq_resize() function is required not to lose any buffers."
 * Messages waiting for buffers, posted buffers, and completed ones all
 * survive a shrink and a grow: every message lands, in order. */
static void dat_srq_resize__nothing_lost(void **state)
{
	(void)state;
	struct fix *f = fix_open(8);
	for (int i = 0; i < 3; i++)
		srq_post(&f->s, f->srq, i);
	send_tagged(&f->c, f->cep, 5, 6, 0, 32); /* 3 land, 3 wait */
	srq_until_avail(f->srq, 0);
	check_ok(dat_srq_resize(f->srq, 3)); /* 3 outstanding: allowed */
	check_ok(dat_srq_resize(f->srq, 40));
	for (int i = 3; i < 10; i++)
		srq_post(&f->s, f->srq, i);
	check_ok(dat_srq_resize(f->srq, 10));
	for (int k = 0; k < 6; k++) {
		DAT_EVENT ev = expect_dto(f->s.dto);
		uint32_t tag, seq;
		assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_SUCCESS);
		tag_of(&f->s, &ev, &tag, &seq);
		assert_int_equal(tag, 5);
		assert_int_equal(seq, k);
	}
	DAT_SRQ_PARAM p = params(f->srq);
	assert_int_equal(p.available_dto_count, 4);
	assert_int_equal(p.outstanding_dto_count, 4);
	fix_close(f);
}

/* DAT_INVALID_PARAMETER "The srq_max_recv_dto argument is invalid.": not
 * positive, or above the IA's max_recv_per_srq. */
static void dat_srq_resize__invalid_parameter(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_IA_ATTR ia;
	check_ok(dat_ia_query(s.ia, NULL, DAT_IA_ALL, &ia, 0, NULL));
	DAT_SRQ_HANDLE q = srq_make(&s, 4, 0);
	check_ret(dat_srq_resize(q, 0), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_srq_resize(q, -3), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_srq_resize(q, ia.max_recv_per_srq + 1), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ok(dat_srq_resize(q, ia.max_recv_per_srq));
	assert_int_equal(params(q).max_recv_dtos, ia.max_recv_per_srq);
	side_close(&s);
}

/* DAT_INVALID_HANDLE "The srq_handle argument is an invalid DAT handle." */
static void dat_srq_resize__invalid_handle(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_SRQ_HANDLE q = srq_make(&s, 4, 0);
	check_ok(dat_srq_free(q));
	check_ret(dat_srq_resize(q, 8), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	check_ret(dat_srq_resize(DAT_HANDLE_NULL, 8), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	check_ret(dat_srq_resize((DAT_SRQ_HANDLE)s.lmr, 8), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	side_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dat_srq_resize__success),
		cmocka_unit_test(dat_srq_resize__invalid_state_outstanding),
		cmocka_unit_test(dat_srq_resize__invalid_state_low_watermark),
		cmocka_unit_test(dat_srq_resize__nothing_lost),
		cmocka_unit_test(dat_srq_resize__invalid_parameter),
		cmocka_unit_test(dat_srq_resize__invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_srq_resize", tests, NULL, NULL);
}
