/* Helpers shared by the C tests: cmocka, the DAT headers, and checks that
 * name the DAT return code on failure. */
#ifndef GODAT_CTEST_COMMON_H
#define GODAT_CTEST_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <dat/udat.h>
#include <dat/dat_redirection.h>

/* The IA under test: every test opens it unless it says otherwise. It is
 * $GODAT_TEST_IA (a name of the repository's dat.conf; make check runs the
 * suite once per IA), godat-shm when unset. Read once: a test that spawns a
 * child passes its environment on, so both sides test the same IA. */
static inline char *test_ia(void)
{
	static char *ia;
	if (ia == NULL) {
		char *e = getenv("GODAT_TEST_IA");
		ia = (e != NULL && *e != 0) ? e : "godat-shm";
	}
	return ia;
}
#define TEST_IA (test_ia())

/* The resource-limit cases create objects up to the IA's limit: a few
 * thousand for the software provider, up to a million on an RDMA device
 * (Soft-RoCE: max_eps 1048560, max_lmrs 524287), too many to create in a
 * bounded test. Above EXHAUST_MAX such a case skips, saying why. */
#define EXHAUST_MAX 65536
#define skip_unless_exhaustible(what, max)                                      \
	do {                                                                    \
		if ((long)(max) > EXHAUST_MAX) {                                \
			print_message("SKIP: %s is %ld, more than %d objects to "  \
				      "create in a test\n",                     \
				      (what), (long)(max), EXHAUST_MAX);        \
			skip();                                                 \
		}                                                               \
	} while (0)

static inline const char *ret_name(DAT_RETURN r)
{
	static __thread char buf[160];
	const char *maj = "?", *min = "?";
	dat_strerror(r, &maj, &min);
	snprintf(buf, sizeof buf, "0x%08x %s %s", (unsigned)r, maj, min);
	return buf;
}

#define check_ok(expr)                                                          \
	do {                                                                    \
		DAT_RETURN r_ = (expr);                                         \
		if (r_ != DAT_SUCCESS)                                          \
			fail_msg("%s: %s", #expr, ret_name(r_));                \
	} while (0)

/* The major code of a return, with the class bits masked as DAT_GET_TYPE
 * does; DAT_NOT_IMPLEMENTED is compared whole. */
#define check_type(expr, type)                                                  \
	do {                                                                    \
		DAT_RETURN r_ = (expr);                                         \
		if (DAT_GET_TYPE(r_) != DAT_GET_TYPE(type))                     \
			fail_msg("%s: got %s, want type 0x%x", #expr,            \
				 ret_name(r_), (unsigned)(type));               \
	} while (0)

#define check_ret(expr, type, sub)                                              \
	do {                                                                    \
		DAT_RETURN r_ = (expr);                                         \
		if (DAT_GET_TYPE(r_) != DAT_GET_TYPE(type) ||                   \
		    DAT_GET_SUBTYPE(r_) != (sub))                               \
			fail_msg("%s: got %s, want 0x%x|0x%x", #expr,            \
				 ret_name(r_), (unsigned)(type), (unsigned)(sub)); \
	} while (0)

static inline DAT_IA_HANDLE open_ia(DAT_EVD_HANDLE *async)
{
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE a = DAT_HANDLE_NULL;
	check_ok(dat_ia_open(TEST_IA, 16, &a, &ia));
	if (async)
		*async = a;
	return ia;
}

#endif
