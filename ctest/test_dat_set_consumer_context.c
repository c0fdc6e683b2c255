/* dat_set_consumer_context(3DAT): the provokable return values. */
#define _GNU_SOURCE
#include "pages.h"

/* DAT_SUCCESS: "The dat_set_consumer_context() function associates a
 * Consumer context with the specified dat_handle" for every handle type
 * of the page. "If there is a previous Consumer context associated with
 * the specified handle, the new context replaces the old one. The
 * Consumer can disassociate the existing context by providing a NULL
 * pointer for the context. The Provider makes no assumptions about the
 * contents of context; no check is made on its value": any 64-bit value
 * round-trips, NULL included. */
static void test_set_consumer_context_success(void **state)
{
	(void)state;
	struct all_objs o;
	all_objs_open(&o);
	static const uint64_t values[] = {1, 0xDEADBEEFCAFEF00Dull, UINT64_MAX, 0};
	for (int i = 0; i < 10; i++) {
		for (size_t k = 0; k < sizeof values / sizeof values[0]; k++) {
			DAT_CONTEXT in = {.as_64 = values[k] ^ (uint64_t)i}, out = {.as_64 = 7};
			if (values[k] == 0)
				in.as_ptr = NULL;
			check_ok(dat_set_consumer_context(o.h[i], in));
			check_ok(dat_get_consumer_context(o.h[i], &out));
			assert_int_equal(out.as_64, in.as_64);
		}
	}
	all_objs_close(&o);
}

/* DAT_INVALID_HANDLE: "The dat_handle parameter is invalid": NULL, freed
 * objects of every type, a pointer that is not a handle. Setting a context
 * on a freed handle does not revive or disturb anything. */
static void test_set_consumer_context_invalid_handle(void **state)
{
	(void)state;
	struct all_objs o;
	all_objs_open(&o);
	DAT_HANDLE dead[10];
	memcpy(dead, o.h, sizeof dead);
	all_objs_close(&o);
	DAT_CONTEXT c = {.as_64 = 5};
	int local;
	check_type(dat_set_consumer_context(DAT_HANDLE_NULL, c), DAT_INVALID_HANDLE);
	check_type(dat_set_consumer_context(&local, c), DAT_INVALID_HANDLE);
	for (int i = 0; i < 10; i++)
		check_type(dat_set_consumer_context(dead[i], c), DAT_INVALID_HANDLE);
	/* A new object gets a fresh (empty) context even if its handle value
	 * were ever reused. */
	DAT_IA_HANDLE ia = open_ia(NULL);
	DAT_CONTEXT got = {.as_64 = 9};
	check_ok(dat_get_consumer_context(ia, &got));
	assert_int_equal(got.as_64, 0);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_consumer_context_success),
		cmocka_unit_test(test_set_consumer_context_invalid_handle),
	};
	return cmocka_run_group_tests_name("dat_set_consumer_context", tests, NULL, NULL);
}
