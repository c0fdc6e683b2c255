/* Program pattern: code written against the reference headers (issue 13,
 * item 7). Such programs annotate their own prototypes with the reference
 * platform header's empty IN, OUT and INOUT markers, use the DAT 1.1 member
 * names max_mtu_size and max_rdma_read_per_ep, and test for
 * DAT_RMR_BIND_COMPLETION_STATUS with #ifdef. On a header without them this
 * file does not compile. Run over godat-shm and godat-tcp. */
#include "common.h"

#ifndef DAT_RMR_BIND_COMPLETION_STATUS
#error "DAT_RMR_BIND_COMPLETION_STATUS is not a macro"
#endif

/* A program's own helper, declared the way the reference sample code
 * declares its functions. */
static DAT_RETURN query_limits(IN DAT_IA_HANDLE ia, OUT DAT_IA_ATTR *attr, INOUT DAT_COUNT *calls);

static DAT_RETURN query_limits(IN DAT_IA_HANDLE ia, OUT DAT_IA_ATTR *attr, INOUT DAT_COUNT *calls)
{
	DAT_EVD_HANDLE async;
	(*calls)++;
	return dat_ia_query(ia, &async, DAT_IA_FIELD_ALL, attr, 0, NULL);
}

/* The DAT 1.1 names reach the DAT 1.2 members, on the IA and EP attributes
 * the provider reports. */
static void old_member_names(void **state)
{
	char *name = *state;
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	check_ok(dat_ia_open(name, 8, &async, &ia));
	DAT_IA_ATTR a;
	DAT_COUNT calls = 0;
	memset(&a, 0, sizeof a);
	check_ok(query_limits(ia, &a, &calls));
	assert_int_equal(calls, 1);
	assert_true(a.max_rdma_read_per_ep > 0);
	assert_int_equal(a.max_rdma_read_per_ep, a.max_rdma_read_per_ep_in);
	assert_true(a.max_mtu_size > 0);
	assert_int_equal(a.max_mtu_size, a.max_message_size);
	assert_int_equal(offsetof(DAT_IA_ATTR, max_rdma_read_per_ep), offsetof(DAT_IA_ATTR, max_rdma_read_per_ep_in));

	DAT_EP_ATTR ea;
	memset(&ea, 0, sizeof ea);
	ea.max_mtu_size = 4096; /* the DAT 1.1 spelling of max_message_size */
	assert_int_equal(ea.max_message_size, 4096);

	DAT_RMR_BIND_COMPLETION_STATUS st = DAT_RMR_BIND_SUCCESS;
	DAT_DTO_COMPLETION_STATUS same = st;
	assert_int_equal(same, DAT_DTO_SUCCESS);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate(old_member_names, (void *)"godat-shm"),
		cmocka_unit_test_prestate(old_member_names, (void *)"godat-tcp"),
	};
	return cmocka_run_group_tests_name("compat headers", tests, NULL, NULL);
}
