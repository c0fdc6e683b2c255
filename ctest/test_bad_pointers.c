/* Pointer arguments that point at memory the program cannot use: an
 * output in a page without access or a read-only page, an input in a page
 * without access. The call returns DAT_INTERNAL_ERROR (the library logs the
 * address) and the program goes on, where a fault in the Go runtime would
 * otherwise end it ("unexpected fault address"); and the call changes
 * nothing it could not report: no object is created whose handle could not
 * be written, no event is taken that could not be handed over, no output
 * is written in part. (The C
 * libraries fault on such a pointer; so would a C caller's own code.)
 *
 * The calls run in a child without cmocka: cmocka catches SIGSEGV itself
 * while a test runs, and a handler of the program's in front of the Go
 * runtime's leaves the fault to the program (here: cmocka's longjmp out of
 * the library, which the runtime does not survive). */
#define _GNU_SOURCE
#include "pages.h"
#include <dat/dat_registry.h>
#include <sys/mman.h>

static int failures;

#define want(expr, type)                                                                           \
	do {                                                                                       \
		DAT_RETURN r_ = (expr);                                                            \
		if (DAT_GET_TYPE(r_) != DAT_GET_TYPE(type)) {                                      \
			fprintf(stderr, "%s:%d: %s: got %s\n", __FILE__, __LINE__, #expr, ret_name(r_)); \
			failures++;                                                                \
		}                                                                                  \
	} while (0)
#define want_internal(expr) want((expr), DAT_INTERNAL_ERROR)
#define want_ok(expr) want((expr), DAT_SUCCESS)

/* Two pages: the first readable and writable, the second without access
 * (NULL, with a failure counted, if the mapping fails). */
static char *usable_then_none(long pg)
{
	char *m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m + pg, (size_t)pg, PROT_NONE) != 0) {
		perror("mmap");
		failures++;
		return NULL;
	}
	return m;
}

/* An output that straddles a usable page and one without access: the
 * query writes none of it. */
static void straddling_output(DAT_IA_HANDLE ia)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = usable_then_none(pg);
	if (!m)
		return;
	char *out = m + pg - sizeof(DAT_IA_ATTR) / 2;
	memset(m, 0x5a, (size_t)pg);
	want_internal(dat_ia_query(ia, NULL, DAT_IA_FIELD_ALL, (DAT_IA_ATTR *)out, 0, NULL));
	for (char *b = out; b < m + pg; b++)
		if (*b != 0x5a) {
			fprintf(stderr, "dat_ia_query wrote byte %td of a straddling output\n", b - out);
			failures++;
			break;
		}
	munmap(m, 2 * (size_t)pg);
}

/* Queries into a page without access and a read-only one, then into good
 * memory. */
static void query_outputs(void *none, void *ro)
{
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	want_ok(dat_ia_open(TEST_IA, 8, &async, &ia));
	DAT_PZ_HANDLE pz;
	want_ok(dat_pz_create(ia, &pz));
	want_internal(dat_pz_query(pz, DAT_PZ_FIELD_ALL, none));
	want_internal(dat_pz_query(pz, DAT_PZ_FIELD_ALL, ro));
	DAT_PZ_PARAM pp;
	want_ok(dat_pz_query(pz, DAT_PZ_FIELD_ALL, &pp));
	if (pp.ia_handle != ia) {
		fprintf(stderr, "dat_pz_query: ia_handle %p, want %p\n", pp.ia_handle, ia);
		failures++;
	}
	want_internal(dat_ia_query(ia, NULL, DAT_IA_FIELD_ALL, none, 0, NULL));
	straddling_output(ia);
	want_internal(dat_evd_query(async, DAT_EVD_FIELD_ALL, ro));
	const char *minor;
	want_internal(dat_strerror(DAT_INVALID_HANDLE, none, &minor));
	want_ok(dat_pz_free(pz));
	want_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* A create whose handle output cannot be written creates nothing: the IA
 * closes gracefully after (it refuses to while objects remain). */
static void create_outputs(void *none, void *ro)
{
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	want_ok(dat_ia_open(TEST_IA, 8, &async, &ia));
	want_internal(dat_pz_create(ia, ro));
	want_internal(dat_evd_create(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG, none));
	want_internal(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, ro));
	DAT_EVD_HANDLE cr;
	want_ok(dat_evd_create(ia, 4, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr));
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	want_internal(dat_psp_create_any(ia, ro, cr, DAT_PSP_CONSUMER_FLAG, &psp));
	want_internal(dat_psp_create_any(ia, &q, cr, DAT_PSP_CONSUMER_FLAG, ro));
	want_ok(dat_evd_free(cr));
	DAT_IA_HANDLE ia2;
	DAT_EVD_HANDLE async2 = DAT_HANDLE_NULL;
	want_internal(dat_ia_open(TEST_IA, 8, &async2, ro));
	want_internal(dat_ia_open(TEST_IA, 8, ro, &ia2));
	want_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* An event that cannot be written stays queued for the next call; one
 * that cannot be read is not queued. */
static void event_outputs(void *none, void *ro)
{
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, evd;
	want_ok(dat_ia_open(TEST_IA, 8, &async, &ia));
	want_ok(dat_evd_create(ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG, &evd));
	DAT_EVENT se = software_event(0x5ca1e), ev;
	want_ok(dat_evd_post_se(evd, &se));
	want_internal(dat_evd_dequeue(evd, none));
	want_internal(dat_evd_dequeue(evd, ro));
	DAT_COUNT n;
	want_internal(dat_evd_wait(evd, 0, 1, ro, &n));
	want_internal(dat_evd_wait(evd, 0, 1, &ev, ro));
	want_ok(dat_evd_dequeue(evd, &ev));
	if (ev.event_number != DAT_SOFTWARE_EVENT || ev.event_data.software_event_data.pointer != (DAT_PVOID)0x5ca1e) {
		fprintf(stderr, "the software event after the failed dequeues: number %#x\n", ev.event_number);
		failures++;
	}
	want_internal(dat_evd_post_se(evd, none));
	want(dat_evd_dequeue(evd, &ev), DAT_QUEUE_EMPTY);
	want_ok(dat_evd_free(evd));
	want_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* Names: dat_ia_open's IA name and a provider's, in a page without
 * access or running into one; a name that ends at the end of its page is
 * read up to its NUL and no further. */
static void name_inputs(void *none, long pg)
{
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	want_internal(dat_ia_open(none, 8, &async, &ia));
	char *m = usable_then_none(pg);
	if (!m)
		return;
	size_t n = strlen(TEST_IA);
	char *last = m + pg - n; /* TEST_IA without its NUL, up to the page end */
	memcpy(last, TEST_IA, n);
	want_internal(dat_ia_open(last, 8, &async, &ia));
	last--; /* with its NUL as the page's last byte */
	memcpy(last, TEST_IA, n + 1);
	want_ok(dat_ia_open(last, 8, &async, &ia));
	want_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
	static DAT_PROVIDER fake = {.device_name = "bad-pointers"};
	want_internal(dat_registry_add_provider(&fake, none));
	want_internal(dat_registry_remove_provider(&fake, none));
	munmap(m, 2 * (size_t)pg);
}

static int child(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 2 * pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m, pg, PROT_NONE) != 0) {
		perror("mmap");
		return 2;
	}
	query_outputs(m, m + pg);
	create_outputs(m, m + pg);
	event_outputs(m, m + pg);
	name_inputs(m, pg);
	return failures ? 1 : 0;
}

static void test_bad_pointers(void **state)
{
	(void)state;
	assert_int_equal(run_self("bad-pointers-child", NULL), 0);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "bad-pointers-child") == 0)
		return child();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_pointers),
	};
	return cmocka_run_group_tests_name("bad_pointers", tests, NULL, NULL);
}
