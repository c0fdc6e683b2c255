/* Connection management seen from C, two IAs in one process: connection
 * requests (CR handles: type and consumer context), accept with private
 * data, reject, no listener, qualifier in use, 64-bit qualifiers. */
#include "common.h"
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#define TMO 5000000

struct side {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, evd, cr;
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep;
};

static void side_open(struct side *s)
{
	s->ia = open_ia(&s->async);
	check_ok(dat_evd_create(s->ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &s->evd));
	check_ok(dat_evd_create(s->ia, 16, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &s->cr));
	check_ok(dat_pz_create(s->ia, &s->pz));
	check_ok(dat_ep_create(s->ia, s->pz, s->evd, s->evd, s->evd, NULL, &s->ep));
}

static void side_close(struct side *s)
{
	check_ok(dat_ia_close(s->ia, DAT_CLOSE_ABRUPT_FLAG));
}

static struct sockaddr_in loopback(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sa;
}

static DAT_EVENT next_event(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;
	DAT_COUNT n;
	check_ok(dat_evd_wait(evd, TMO, 1, &ev, &n));
	return ev;
}

static void connect_to(struct side *c, DAT_CONN_QUAL q, const char *pd)
{
	struct sockaddr_in sa = loopback();
	check_ok(dat_ep_connect(c->ep, (DAT_IA_ADDRESS_PTR)&sa, q, TMO, (DAT_COUNT)strlen(pd) + 1, (DAT_PVOID)pd,
				DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
}

/* A CR is a DAT object like the others: dat_get_handle_type reports
 * DAT_HANDLE_TYPE_CR and its consumer context round-trips; dat_cr_query
 * returns the connect private data; accept completes both sides. */
static void test_cr_accept(void **state)
{
	(void)state;
	struct side s, c;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	side_open(&s);
	side_open(&c);
	check_ok(dat_psp_create_any(s.ia, &q, s.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	connect_to(&c, q, "private-hello");
	DAT_EVENT ev = next_event(s.cr);
	assert_int_equal(ev.event_number, DAT_CONNECTION_REQUEST_EVENT);
	assert_int_equal(ev.event_data.cr_arrival_event_data.conn_qual, q);
	assert_ptr_equal(ev.event_data.cr_arrival_event_data.sp_handle.psp_handle, psp);
	DAT_CR_HANDLE cr = ev.event_data.cr_arrival_event_data.cr_handle;
	DAT_HANDLE_TYPE t;
	check_ok(dat_get_handle_type(cr, &t));
	assert_int_equal(t, DAT_HANDLE_TYPE_CR);
	DAT_CONTEXT ctx = {.as_64 = 0xC12}, got = {.as_64 = 0};
	check_ok(dat_set_consumer_context(cr, ctx));
	check_ok(dat_get_consumer_context(cr, &got));
	assert_int_equal(got.as_64, 0xC12);
	DAT_CR_PARAM crp;
	check_ok(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	assert_int_equal(crp.private_data_size, strlen("private-hello") + 1);
	assert_string_equal((char *)crp.private_data, "private-hello");
	check_ok(dat_cr_accept(cr, s.ep, 6, "reply"));
	/* The CR is destroyed by the accept. */
	check_type(dat_get_handle_type(cr, &t), DAT_INVALID_HANDLE);
	ev = next_event(s.evd);
	assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, s.ep);
	ev = next_event(c.evd);
	assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_ESTABLISHED);
	assert_int_equal(ev.event_data.connect_event_data.private_data_size, 6);
	assert_string_equal((char *)ev.event_data.connect_event_data.private_data, "reply");
	/* Disconnect is seen on both sides with ep_handle set. */
	check_ok(dat_ep_disconnect(c.ep, DAT_CLOSE_GRACEFUL_FLAG));
	ev = next_event(c.evd);
	assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_DISCONNECTED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, c.ep);
	ev = next_event(s.evd);
	assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_DISCONNECTED);
	assert_ptr_equal(ev.event_data.connect_event_data.ep_handle, s.ep);
	/* dat_ep_reset makes the EP reusable. */
	DAT_EP_STATE st;
	check_ok(dat_ep_get_status(c.ep, &st, NULL, NULL));
	assert_int_equal(st, DAT_EP_STATE_DISCONNECTED);
	check_ok(dat_ep_reset(c.ep));
	check_ok(dat_ep_get_status(c.ep, &st, NULL, NULL));
	assert_int_equal(st, DAT_EP_STATE_UNCONNECTED);
	check_ok(dat_psp_free(psp));
	side_close(&c);
	side_close(&s);
}

/* dat_cr_reject: the active side gets DAT_CONNECTION_EVENT_PEER_REJECTED. */
static void test_cr_reject(void **state)
{
	(void)state;
	struct side s, c;
	DAT_PSP_HANDLE psp;
	side_open(&s);
	side_open(&c);
	check_ok(dat_psp_create(s.ia, 25248, s.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	connect_to(&c, 25248, "x");
	DAT_EVENT ev = next_event(s.cr);
	assert_int_equal(ev.event_number, DAT_CONNECTION_REQUEST_EVENT);
	check_ok(dat_cr_reject(ev.event_data.cr_arrival_event_data.cr_handle));
	ev = next_event(c.evd);
	assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_PEER_REJECTED);
	check_ok(dat_psp_free(psp));
	side_close(&c);
	side_close(&s);
}

/* Nobody listening: the connect fails with a connection event, not a hang. */
static void test_no_listener(void **state)
{
	(void)state;
	struct side c;
	side_open(&c);
	connect_to(&c, 0xB0DE0000DEADull, "x");
	DAT_EVENT ev = next_event(c.evd);
	assert_int_equal(ev.event_number, DAT_CONNECTION_EVENT_NON_PEER_REJECTED);
	side_close(&c);
}

/* 64-bit qualifiers; DAT_CONN_QUAL_IN_USE for a duplicate; psp_create_any
 * always succeeds and reports a qualifier that dat_psp_query agrees with. */
static void test_qualifiers(void **state)
{
	(void)state;
	struct side s;
	DAT_PSP_HANDLE p[6], dup;
	DAT_CONN_QUAL quals[] = {25248, 0x50DE, 0xAFF5B1E, 0xAFF5B1E + 1, 0xFFFFFFFFFFFFFFF0ull};
	side_open(&s);
	for (int i = 0; i < 5; i++)
		check_ok(dat_psp_create(s.ia, quals[i], s.cr, DAT_PSP_CONSUMER_FLAG, &p[i]));
	check_type(dat_psp_create(s.ia, 0x50DE, s.cr, DAT_PSP_CONSUMER_FLAG, &dup), DAT_CONN_QUAL_IN_USE);
	DAT_CONN_QUAL any;
	check_ok(dat_psp_create_any(s.ia, &any, s.cr, DAT_PSP_CONSUMER_FLAG, &p[5]));
	DAT_PSP_PARAM pp;
	check_ok(dat_psp_query(p[5], DAT_PSP_FIELD_ALL, &pp));
	assert_int_equal(pp.conn_qual, any);
	assert_ptr_equal(pp.evd_handle, s.cr);
	for (int i = 0; i < 6; i++)
		check_ok(dat_psp_free(p[i]));
	/* A freed qualifier can be bound again. */
	check_ok(dat_psp_create(s.ia, 0x50DE, s.cr, DAT_PSP_CONSUMER_FLAG, &dup));
	check_ok(dat_psp_free(dup));
	side_close(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cr_accept),
		cmocka_unit_test(test_cr_reject),
		cmocka_unit_test(test_no_listener),
		cmocka_unit_test(test_qualifiers),
	};
	return cmocka_run_group_tests_name("connect", tests, NULL, NULL);
}
