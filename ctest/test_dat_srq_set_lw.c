/* dat_srq_set_lw(3DAT), seed page: every testable sentence.
 *
 * "The number of buffers on the SRQ" is available_dto_count: receives
 * posted and not yet taken by an EP. An EP takes one when a message
 * arrives for it. "Below" is strict: available < low_watermark. */
#include "srq.h"
#include <unistd.h>

/* Where each low watermark event came from. The library's debug log (to a
 * file of this process) has one line per SRQ limit event of a backend
 * with more than one source: the verbs backend says whether the device's
 * SRQ limit raised it (IBV_EVENT_SRQ_LIMIT_REACHED, the limit armed with
 * ibv_modify_srq) or the backend did, the SRQ being below the watermark
 * already when armed. Over a verbs IA each test checks how many of each it
 * caused: exactly one device event per arm that a take crosses. */
static char logpath[64];

struct origins {
	int device, armed;
};

static struct origins origins_now(int *verbs)
{
	struct origins o = {0, 0};
	char line[1024];
	FILE *f = fopen(logpath, "r");
	*verbs = 0;
	if (f == NULL)
		return o;
	while (fgets(line, sizeof line, f) != NULL) {
		*verbs |= strstr(line, "): opened verbs-") != NULL;
		if (strstr(line, "srq: low watermark event of SRQ ") == NULL)
			continue;
		o.device += strstr(line, "(IBV_EVENT_SRQ_LIMIT_REACHED)") != NULL;
		o.armed += strstr(line, "already below the limit when armed") != NULL;
	}
	fclose(f);
	return o;
}

static struct origins origins_mark(void)
{
	int verbs;
	return origins_now(&verbs);
}

/* The events since mark: device from the device's limit, armed raised at
 * arming (a verbs IA only: the software provider has one source). */
static void expect_origins(struct origins mark, int device, int armed)
{
	int verbs;
	struct origins o = origins_now(&verbs);
	if (strstr(TEST_IA, "verbs") != NULL && !verbs)
		fail_msg("%s: no \"opened verbs-\" line in %s", TEST_IA, logpath);
	if (!verbs)
		return;
	if (o.device - mark.device != device || o.armed - mark.armed != armed)
		fail_msg("low watermark events: %d from the device's SRQ limit, %d at arming; want %d and %d (%s)",
			 o.device - mark.device, o.armed - mark.armed, device, armed, logpath);
}

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

/* One message arrives and is taken: the SRQ then has avail buffers. */
static void take_one(struct fix *f, DAT_COUNT avail)
{
	static int seq;
	send_tagged(&f->c, f->cep, 1, 1, seq++, 16);
	srq_until_avail(f->srq, avail);
}

/* "The dat_srq_set_lw() function sets the low watermark value for the SRQ
 * and arms the SRQ for generating an asynchronous event for the low
 * watermark. An asynchronous event will be generated when the number of
 * buffers on the SRQ is below the low watermark for the first time. This
 * can occur [...] when an associated EP takes a buffer from the SRQ."
 * The event is on the IA's async EVD, dat_handle the SRQ, reason
 * DAT_SRQ_LOW_WATERMARK_EVENT. */
static void dat_srq_set_lw__event_when_ep_takes(void **state)
{
	(void)state;
	struct fix *f = fix_open(10);
	struct origins mark = origins_mark();
	DAT_SRQ_PARAM p;
	for (int i = 0; i < 4; i++)
		srq_post(&f->s, f->srq, i);
	check_ok(dat_srq_set_lw(f->srq, 2));
	check_ok(dat_srq_query(f->srq, DAT_SRQ_FIELD_LOW_WATERMARK, &p));
	assert_int_equal(p.low_watermark, 2);
	take_one(f, 3);
	expect_none(f->s.async);
	take_one(f, 2); /* 2 is not below 2 */
	expect_none(f->s.async);
	take_one(f, 1); /* below, the first time */
	expect_watermark(&f->s, f->srq, DAT_SRQ_LOW_WATERMARK_EVENT);
	expect_origins(mark, 1, 0);
	fix_close(f);
}

/* "This can occur during the current call": the SRQ already has fewer
 * buffers than the new watermark. */
static void dat_srq_set_lw__event_during_call(void **state)
{
	(void)state;
	struct fix *f = fix_open(10);
	struct origins mark = origins_mark();
	srq_post(&f->s, f->srq, 0);
	check_ok(dat_srq_set_lw(f->srq, 2));
	expect_watermark(&f->s, f->srq, DAT_SRQ_LOW_WATERMARK_EVENT);
	expect_none(f->s.async);
	expect_origins(mark, 0, 1);
	fix_close(f);
}

/* "The asynchronous event will be generated only once per setting of the
 * low watermark. Once an event is generated, no new asynchronous events for
 * the number of buffers in the SRQ below the specified value will be
 * generated until the SRQ is again set for the Low Watermark." */
static void dat_srq_set_lw__once_per_setting(void **state)
{
	(void)state;
	struct fix *f = fix_open(10);
	struct origins mark = origins_mark();
	for (int i = 0; i < 5; i++)
		srq_post(&f->s, f->srq, i);
	check_ok(dat_srq_set_lw(f->srq, 4));
	take_one(f, 4);
	expect_none(f->s.async);
	take_one(f, 3);
	expect_watermark(&f->s, f->srq, DAT_SRQ_LOW_WATERMARK_EVENT);
	take_one(f, 2);
	take_one(f, 1);
	take_one(f, 0);
	/* Replenishing and falling below again does not fire either. */
	srq_post(&f->s, f->srq, 5);
	srq_post(&f->s, f->srq, 6);
	take_one(f, 1);
	expect_none(f->s.async);
	expect_origins(mark, 1, 0);
	fix_close(f);
}

/* "If the Consumer is again interested in the event, the Consumer should
 * set the low watermark again." and (Usage) "Upon receiving the
 * asynchronous event for the SRQ low watermark, the Consumer can replenish
 * Recv buffers on the SRQ". Replenish, re-arm, fall below: a new event. */
static void dat_srq_set_lw__rearm(void **state)
{
	(void)state;
	struct fix *f = fix_open(10);
	struct origins mark = origins_mark();
	for (int i = 0; i < 3; i++)
		srq_post(&f->s, f->srq, i);
	check_ok(dat_srq_set_lw(f->srq, 3));
	take_one(f, 2);
	expect_watermark(&f->s, f->srq, DAT_SRQ_LOW_WATERMARK_EVENT);
	for (int i = 3; i < 7; i++)
		srq_post(&f->s, f->srq, i); /* replenish: 6 */
	check_ok(dat_srq_set_lw(f->srq, 5));
	expect_none(f->s.async);
	take_one(f, 5);
	expect_none(f->s.async);
	take_one(f, 4);
	expect_watermark(&f->s, f->srq, DAT_SRQ_LOW_WATERMARK_EVENT);
	expect_origins(mark, 2, 0);
	fix_close(f);
}

/* Usage: "Regardless of whether an asynchronous event for the low
 * watermark has been generated, this operation will set the generation of
 * an asynchronous event with the Consumer-provided low watermark value.
 * [...] Otherwise the old low watermark value is simply replaced with the
 * new one." An armed 3 replaced by 1 fires at 0, not at 2. */
static void dat_srq_set_lw__replaces_old_value(void **state)
{
	(void)state;
	struct fix *f = fix_open(10);
	struct origins mark = origins_mark();
	for (int i = 0; i < 4; i++)
		srq_post(&f->s, f->srq, i);
	check_ok(dat_srq_set_lw(f->srq, 3));
	check_ok(dat_srq_set_lw(f->srq, 1));
	take_one(f, 3);
	take_one(f, 2);
	take_one(f, 1);
	expect_none(f->s.async);
	take_one(f, 0);
	expect_watermark(&f->s, f->srq, DAT_SRQ_LOW_WATERMARK_EVENT);
	/* DAT_SRQ_LW_DEFAULT disarms: nothing is ever below 0. */
	check_ok(dat_srq_set_lw(f->srq, DAT_SRQ_LW_DEFAULT));
	expect_none(f->s.async);
	expect_origins(mark, 1, 0);
	fix_close(f);
}

/* Usage: "If the new low watermark value is below the current number of
 * free Receive DTOs posted to the SRQ, an asynchronous event will be
 * generated immediately."
 * This sentence contradicts the Description ("when the number of buffers
 * on the SRQ is below the low watermark"): a watermark below the number of
 * buffers means the SRQ is above it, the case the event is not for. godat
 * follows the Description: a value below (or equal to) the number of
 * buffers arms the SRQ without an event. */
static void dat_srq_set_lw__usage_contradiction(void **state)
{
	(void)state;
	struct fix *f = fix_open(10);
	struct origins mark = origins_mark();
	for (int i = 0; i < 5; i++)
		srq_post(&f->s, f->srq, i);
	check_ok(dat_srq_set_lw(f->srq, 2)); /* 2 < 5 buffers: no event */
	expect_none(f->s.async);
	check_ok(dat_srq_set_lw(f->srq, 5)); /* equal: not below, no event */
	expect_none(f->s.async);
	check_ok(dat_srq_set_lw(f->srq, 6)); /* 5 buffers below 6: event */
	expect_watermark(&f->s, f->srq, DAT_SRQ_LOW_WATERMARK_EVENT);
	expect_origins(mark, 0, 1);
	fix_close(f);
}

/* DAT_SUCCESS "The operation was successful." for every value from
 * DAT_SRQ_LW_DEFAULT to max_recv_dtos. */
static void dat_srq_set_lw__success_range(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_SRQ_HANDLE q = srq_make(&s, 6, 0);
	DAT_SRQ_PARAM p;
	for (int i = 0; i < 6; i++)
		srq_post(&s, q, i);
	for (DAT_COUNT lw = 0; lw <= 6; lw++) {
		check_ok(dat_srq_set_lw(q, lw));
		check_ok(dat_srq_query(q, DAT_SRQ_FIELD_LOW_WATERMARK, &p));
		assert_int_equal(p.low_watermark, lw);
	}
	expect_none(s.async); /* 6 buffers are never below 6 */
	side_close(&s);
}

/* DAT_INVALID_PARAMETER "Invalid parameter; the value of low_watermark is
 * exceeds the value of max_recv_dtos." Negative values too. The SRQ is
 * left as it was. */
static void dat_srq_set_lw__invalid_parameter(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	struct origins mark = origins_mark();
	DAT_SRQ_HANDLE q = srq_make(&s, 6, 0);
	DAT_SRQ_PARAM p;
	check_ok(dat_srq_set_lw(q, 3));
	expect_watermark(&s, q, DAT_SRQ_LOW_WATERMARK_EVENT);
	check_ret(dat_srq_set_lw(q, 7), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_srq_set_lw(q, -1), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ok(dat_srq_query(q, DAT_SRQ_FIELD_LOW_WATERMARK, &p));
	assert_int_equal(p.low_watermark, 3);
	/* After a resize the bound is the new max_recv_dtos. */
	check_ok(dat_srq_resize(q, 20));
	check_ok(dat_srq_set_lw(q, 20));
	expect_watermark(&s, q, DAT_SRQ_LOW_WATERMARK_EVENT);
	check_ret(dat_srq_set_lw(q, 21), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	expect_origins(mark, 0, 2);
	side_close(&s);
}

/* DAT_INVALID_HANDLE "The srq_handle argument is an invalid DAT handle." */
static void dat_srq_set_lw__invalid_handle(void **state)
{
	(void)state;
	struct side s;
	side_open(&s);
	DAT_SRQ_HANDLE q = srq_make(&s, 4, 0);
	check_ok(dat_srq_free(q));
	check_ret(dat_srq_set_lw(q, 1), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	check_ret(dat_srq_set_lw(DAT_HANDLE_NULL, 1), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	check_ret(dat_srq_set_lw((DAT_SRQ_HANDLE)s.dto, 1), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	side_close(&s);
}

/* The low watermark counts buffers of every EP of the SRQ: takes by two
 * connections together cross it once. */
static void dat_srq_set_lw__several_eps(void **state)
{
	(void)state;
	struct fix *f = fix_open(10);
	struct origins mark = origins_mark();
	DAT_EP_HANDLE sep2 = ep_make(&f->s, f->srq), cep2 = ep_make(&f->c, NULL);
	connect_eps(&f->c, cep2, &f->s, sep2);
	for (int i = 0; i < 4; i++)
		srq_post(&f->s, f->srq, i);
	check_ok(dat_srq_set_lw(f->srq, 2));
	send_tagged(&f->c, f->cep, 1, 1, 100, 16);
	srq_until_avail(f->srq, 3);
	send_tagged(&f->c, cep2, 2, 2, 100, 16);
	srq_until_avail(f->srq, 1);
	expect_watermark(&f->s, f->srq, DAT_SRQ_LOW_WATERMARK_EVENT);
	expect_none(f->s.async);
	expect_origins(mark, 1, 0);
	fix_close(f);
}

int main(void)
{
	/* Read at the library's first log call, which is after this. */
	snprintf(logpath, sizeof logpath, "/tmp/godat-srq-lw.%d.log", (int)getpid());
	setenv("GODAT_LOG", "debug", 1);
	setenv("GODAT_LOG_FILE", logpath, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dat_srq_set_lw__event_when_ep_takes),
		cmocka_unit_test(dat_srq_set_lw__event_during_call),
		cmocka_unit_test(dat_srq_set_lw__once_per_setting),
		cmocka_unit_test(dat_srq_set_lw__rearm),
		cmocka_unit_test(dat_srq_set_lw__replaces_old_value),
		cmocka_unit_test(dat_srq_set_lw__usage_contradiction),
		cmocka_unit_test(dat_srq_set_lw__success_range),
		cmocka_unit_test(dat_srq_set_lw__invalid_parameter),
		cmocka_unit_test(dat_srq_set_lw__invalid_handle),
		cmocka_unit_test(dat_srq_set_lw__several_eps),
	};
	int r = cmocka_run_group_tests_name("dat_srq_set_lw", tests, NULL, NULL);
	if (getenv("GODAT_TEST_KEEP_LOG") == NULL)
		unlink(logpath);
	else
		print_message("log kept: %s\n", logpath);
	return r;
}
