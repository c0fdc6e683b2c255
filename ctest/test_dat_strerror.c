/* dat_strerror(3DAT): "converts a DAT return code into human readable
 * strings. The major_message is a string-converted DAT_TYPE_STATUS, while
 * minor_message is a string-converted DAT_SUBTYPE_STATUS." Every code of the
 * headers' DAT_RETURN_TYPE and DAT_RETURN_SUBTYPE enumerations has a name;
 * DAT_SUCCESS succeeds; an undefined value is DAT_INVALID_PARAMETER. */
#include "common.h"

struct code {
	DAT_UINT32 value;
	const char *name;
};
#define C(x) {(DAT_UINT32)(x), #x}

/* The 22 major codes of DAT_RETURN_TYPE (dat_error.h). */
static const struct code majors[] = {
	C(DAT_SUCCESS),
	C(DAT_ABORT),
	C(DAT_CONN_QUAL_IN_USE),
	C(DAT_INSUFFICIENT_RESOURCES),
	C(DAT_INTERNAL_ERROR),
	C(DAT_INVALID_HANDLE),
	C(DAT_INVALID_PARAMETER),
	C(DAT_INVALID_STATE),
	C(DAT_LENGTH_ERROR),
	C(DAT_MODEL_NOT_SUPPORTED),
	C(DAT_PROVIDER_NOT_FOUND),
	C(DAT_PRIVILEGES_VIOLATION),
	C(DAT_PROTECTION_VIOLATION),
	C(DAT_QUEUE_EMPTY),
	C(DAT_QUEUE_FULL),
	C(DAT_TIMEOUT_EXPIRED),
	C(DAT_PROVIDER_ALREADY_REGISTERED),
	C(DAT_PROVIDER_IN_USE),
	C(DAT_INVALID_ADDRESS),
	C(DAT_INTERRUPTED_CALL),
	C(DAT_CONN_QUAL_UNAVAILABLE),
	C(DAT_NOT_IMPLEMENTED),
};

/* The DAT 1.2 subtypes of DAT_RETURN_SUBTYPE, 0x00..0x65 (102 codes);
 * DAT_INVALID_RO_COOKIE (0x66) is checked on its own below. */
static const struct code subtypes[] = {
	C(DAT_NO_SUBTYPE),
	C(DAT_SUB_INTERRUPTED),
	C(DAT_RESOURCE_MEMORY),
	C(DAT_RESOURCE_DEVICE),
	C(DAT_RESOURCE_TEP),
	C(DAT_RESOURCE_TEVD),
	C(DAT_RESOURCE_PROTECTION_DOMAIN),
	C(DAT_RESOURCE_MEMORY_REGION),
	C(DAT_RESOURCE_ERROR_HANDLER),
	C(DAT_RESOURCE_CREDITS),
	C(DAT_RESOURCE_SRQ),
	C(DAT_INVALID_HANDLE_IA),
	C(DAT_INVALID_HANDLE_EP),
	C(DAT_INVALID_HANDLE_LMR),
	C(DAT_INVALID_HANDLE_RMR),
	C(DAT_INVALID_HANDLE_PZ),
	C(DAT_INVALID_HANDLE_PSP),
	C(DAT_INVALID_HANDLE_RSP),
	C(DAT_INVALID_HANDLE_CR),
	C(DAT_INVALID_HANDLE_CNO),
	C(DAT_INVALID_HANDLE_EVD_CR),
	C(DAT_INVALID_HANDLE_EVD_REQUEST),
	C(DAT_INVALID_HANDLE_EVD_RECV),
	C(DAT_INVALID_HANDLE_EVD_CONN),
	C(DAT_INVALID_HANDLE_EVD_ASYNC),
	C(DAT_INVALID_HANDLE_SRQ),
	C(DAT_INVALID_HANDLE1),
	C(DAT_INVALID_HANDLE2),
	C(DAT_INVALID_HANDLE3),
	C(DAT_INVALID_HANDLE4),
	C(DAT_INVALID_HANDLE5),
	C(DAT_INVALID_HANDLE6),
	C(DAT_INVALID_HANDLE7),
	C(DAT_INVALID_HANDLE8),
	C(DAT_INVALID_HANDLE9),
	C(DAT_INVALID_HANDLE10),
	C(DAT_INVALID_ARG1),
	C(DAT_INVALID_ARG2),
	C(DAT_INVALID_ARG3),
	C(DAT_INVALID_ARG4),
	C(DAT_INVALID_ARG5),
	C(DAT_INVALID_ARG6),
	C(DAT_INVALID_ARG7),
	C(DAT_INVALID_ARG8),
	C(DAT_INVALID_ARG9),
	C(DAT_INVALID_ARG10),
	C(DAT_INVALID_STATE_EP_UNCONNECTED),
	C(DAT_INVALID_STATE_EP_ACTCONNPENDING),
	C(DAT_INVALID_STATE_EP_PASSCONNPENDING),
	C(DAT_INVALID_STATE_EP_TENTCONNPENDING),
	C(DAT_INVALID_STATE_EP_CONNECTED),
	C(DAT_INVALID_STATE_EP_DISCONNECTED),
	C(DAT_INVALID_STATE_EP_RESERVED),
	C(DAT_INVALID_STATE_EP_COMPLPENDING),
	C(DAT_INVALID_STATE_EP_DISCPENDING),
	C(DAT_INVALID_STATE_EP_PROVIDERCONTROL),
	C(DAT_INVALID_STATE_EP_NOTREADY),
	C(DAT_INVALID_STATE_EP_RECV_WATERMARK),
	C(DAT_INVALID_STATE_EP_PZ),
	C(DAT_INVALID_STATE_EP_EVD_REQUEST),
	C(DAT_INVALID_STATE_EP_EVD_RECV),
	C(DAT_INVALID_STATE_EP_EVD_CONNECT),
	C(DAT_INVALID_STATE_EP_UNCONFIGURED),
	C(DAT_INVALID_STATE_EP_UNCONFRESERVED),
	C(DAT_INVALID_STATE_EP_UNCONFPASSIVE),
	C(DAT_INVALID_STATE_EP_UNCONFTENTATIVE),
	C(DAT_INVALID_STATE_CNO_IN_USE),
	C(DAT_INVALID_STATE_CNO_DEAD),
	C(DAT_INVALID_STATE_EVD_OPEN),
	C(DAT_INVALID_STATE_EVD_ENABLED),
	C(DAT_INVALID_STATE_EVD_DISABLED),
	C(DAT_INVALID_STATE_EVD_WAITABLE),
	C(DAT_INVALID_STATE_EVD_UNWAITABLE),
	C(DAT_INVALID_STATE_EVD_IN_USE),
	C(DAT_INVALID_STATE_EVD_CONFIG_NOTIFY),
	C(DAT_INVALID_STATE_EVD_CONFIG_SOLICITED),
	C(DAT_INVALID_STATE_EVD_CONFIG_THRESHOLD),
	C(DAT_INVALID_STATE_EVD_WAITER),
	C(DAT_INVALID_STATE_EVD_ASYNC),
	C(DAT_INVALID_STATE_IA_IN_USE),
	C(DAT_INVALID_STATE_LMR_IN_USE),
	C(DAT_INVALID_STATE_LMR_FREE),
	C(DAT_INVALID_STATE_PZ_IN_USE),
	C(DAT_INVALID_STATE_PZ_FREE),
	C(DAT_INVALID_STATE_SRQ_OPERATIONAL),
	C(DAT_INVALID_STATE_SRQ_ERROR),
	C(DAT_INVALID_STATE_SRQ_IN_USE),
	C(DAT_PRIVILEGES_READ),
	C(DAT_PRIVILEGES_WRITE),
	C(DAT_PRIVILEGES_RDMA_READ),
	C(DAT_PRIVILEGES_RDMA_WRITE),
	C(DAT_PROTECTION_READ),
	C(DAT_PROTECTION_WRITE),
	C(DAT_PROTECTION_RDMA_READ),
	C(DAT_PROTECTION_RDMA_WRITE),
	C(DAT_INVALID_ADDRESS_UNSUPPORTED),
	C(DAT_INVALID_ADDRESS_UNREACHABLE),
	C(DAT_INVALID_ADDRESS_MALFORMED),
	C(DAT_NAME_NOT_REGISTERED),
	C(DAT_MAJOR_NOT_FOUND),
	C(DAT_MINOR_NOT_FOUND),
	C(DAT_THREAD_SAFETY_NOT_FOUND),
};

#define N_MAJORS (sizeof majors / sizeof majors[0])
#define N_SUBTYPES (sizeof subtypes / sizeof subtypes[0])

/* The tables are what they claim: 22 majors, and 102 subtypes numbered
 * 0x00..0x65 without gaps. */
static void test_tables(void **state)
{
	(void)state;
	assert_int_equal(N_MAJORS, 22);
	assert_int_equal(N_SUBTYPES, 102);
	for (size_t i = 0; i < N_SUBTYPES; i++)
		assert_int_equal(subtypes[i].value, i);
}

/* "The operation succeeds when DAT_SUCCESS is passed in": DAT_SUCCESS, with
 * both messages set to non-empty strings. */
static void test_success(void **state)
{
	(void)state;
	const char *maj = NULL, *min = NULL;
	check_ok(dat_strerror(DAT_SUCCESS, &maj, &min));
	assert_non_null(maj);
	assert_non_null(min);
	assert_true(maj[0] != 0);
	assert_true(min[0] != 0);
}

/* DAT_SUCCESS for every defined value: every major code, bare and with the
 * error class bit as calls return it, converts to its "string-converted
 * DAT_TYPE_STATUS", the enumerator's own name (and the DAT_NO_SUBTYPE minor
 * to a non-empty one); different majors have different names. */
static void test_every_major(void **state)
{
	(void)state;
	const char *names[N_MAJORS];
	int bad = 0;
	for (size_t i = 0; i < N_MAJORS; i++) {
		DAT_UINT32 forms[2] = {majors[i].value, majors[i].value ? (majors[i].value | DAT_CLASS_ERROR) : 0};
		for (int f = 0; f < 2; f++) {
			const char *maj = NULL, *min = NULL;
			DAT_RETURN r = dat_strerror((DAT_RETURN)forms[f], &maj, &min);
			if (r != DAT_SUCCESS || !maj || !maj[0] || !min || !min[0]) {
				print_error("dat_strerror(%s = 0x%08x): 0x%08x, major %s, minor %s\n", majors[i].name,
					    (unsigned)forms[f], (unsigned)r, maj ? maj : "(null)", min ? min : "(null)");
				bad++;
			}
			if (f == 0)
				names[i] = maj;
			if (maj && strcmp(maj, majors[i].name) != 0) {
				print_error("dat_strerror(%s) major is \"%s\"\n", majors[i].name, maj);
				bad++;
			}
		}
	}
	if (bad)
		fail_msg("%d major codes have no name", bad);
	for (size_t i = 0; i < N_MAJORS; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(names[i], names[j]) == 0)
				fail_msg("%s and %s are both named \"%s\"", majors[i].name, majors[j].name, names[i]);
}

/* Every subtype, in an error return, converts to its "string-converted
 * DAT_SUBTYPE_STATUS", the enumerator's name; different subtypes have
 * different names. */
static void test_every_subtype(void **state)
{
	(void)state;
	const char *names[N_SUBTYPES];
	int bad = 0;
	for (size_t i = 0; i < N_SUBTYPES; i++) {
		DAT_UINT32 v = DAT_CLASS_ERROR | DAT_INVALID_PARAMETER | subtypes[i].value;
		const char *maj = NULL, *min = NULL;
		DAT_RETURN r = dat_strerror((DAT_RETURN)v, &maj, &min);
		names[i] = min;
		if (r != DAT_SUCCESS || !maj || !maj[0] || !min || strcmp(min, subtypes[i].name) != 0) {
			print_error("dat_strerror(DAT_INVALID_PARAMETER | %s = 0x%08x): 0x%08x, minor %s\n",
				    subtypes[i].name, (unsigned)v, (unsigned)r, min ? min : "(null)");
			bad++;
		}
	}
	if (bad)
		fail_msg("%d subtypes have no name", bad);
	for (size_t i = 0; i < N_SUBTYPES; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(names[i], names[j]) == 0)
				fail_msg("%s and %s are both named \"%s\"", subtypes[i].name, subtypes[j].name, names[i]);
}

/* DAT_INVALID_RO_COOKIE (0x66) is also a member of the headers'
 * DAT_RETURN_SUBTYPE (the illumos extension dat_ia_open(3DAT) describes) and
 * so has a name too. */
static void test_ro_cookie_subtype(void **state)
{
	(void)state;
	const char *maj = NULL, *min = NULL;
	DAT_UINT32 v = DAT_CLASS_ERROR | DAT_INVALID_PARAMETER | DAT_INVALID_RO_COOKIE;
	DAT_RETURN r = dat_strerror((DAT_RETURN)v, &maj, &min);
	if (r != DAT_SUCCESS || !min || !min[0])
		fail_msg("dat_strerror(DAT_INVALID_PARAMETER | DAT_INVALID_RO_COOKIE = 0x%08x): 0x%08x, minor %s, want "
			 "DAT_SUCCESS and a name", (unsigned)v, (unsigned)r, min ? min : "(null)");
}

/* minor_message may be NULL: only the major message is produced. */
static void test_minor_null(void **state)
{
	(void)state;
	const char *maj = NULL;
	check_ok(dat_strerror(DAT_CLASS_ERROR | DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_IA, &maj, NULL));
	assert_non_null(maj);
	assert_true(maj[0] != 0);
	maj = NULL;
	check_ok(dat_strerror(DAT_SUCCESS, &maj, NULL));
	assert_non_null(maj);
}

/* "If an undefined DAT_RETURN value was passed as the return parameter, the
 * operation fails with DAT_INVALID_PARAMETER returned." The page leaves the
 * messages undefined then; the reference sets both to "unknown error". An
 * undefined major (0x3ff00000) and an undefined subtype (0x7f) of a defined
 * major are both undefined values. */
static void test_undefined_values(void **state)
{
	(void)state;
	static const DAT_UINT32 values[] = {
		0x3ff00000u,
		DAT_CLASS_ERROR | 0x3ff00000u,
		DAT_CLASS_ERROR | DAT_INVALID_PARAMETER | 0x7f,
		DAT_INVALID_HANDLE | 0x7f,
	};
	for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
		const char *maj = NULL, *min = NULL;
		DAT_RETURN r = dat_strerror((DAT_RETURN)values[i], &maj, &min);
		if (DAT_GET_TYPE(r) != DAT_INVALID_PARAMETER)
			fail_msg("dat_strerror(0x%08x): got 0x%08x, want DAT_INVALID_PARAMETER", (unsigned)values[i],
				 (unsigned)r);
		if (!maj || strcmp(maj, "unknown error") != 0 || !min || strcmp(min, "unknown error") != 0)
			fail_msg("dat_strerror(0x%08x): messages \"%s\" / \"%s\", want \"unknown error\" for both",
				 (unsigned)values[i], maj ? maj : "(null)", min ? min : "(null)");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_success),
		cmocka_unit_test(test_every_major),
		cmocka_unit_test(test_every_subtype),
		cmocka_unit_test(test_ro_cookie_subtype),
		cmocka_unit_test(test_minor_null),
		cmocka_unit_test(test_undefined_values),
	};
	return cmocka_run_group_tests_name("strerror", tests, NULL, NULL);
}
