/* The verbs IA where it cannot open (issue 16, "no hard dependency"): on a
 * machine without rdma-core's libraries (ctest/run.sh runs the suite through
 * tools/nordma.sh, which hides them: GODAT_NORDMA=hidden) or without an RDMA
 * device, dat_ia_open of a transport=verbs entry fails with
 * DAT_PROVIDER_NOT_FOUND and one log line says what is missing; a
 * transport=verbs-or-auto alias opens the software provider instead and the
 * log says why. Where a device is there (the verbs VM), the cases that need
 * its absence skip: the VM runs the suite over the verbs IA instead. */
#define _GNU_SOURCE
#include "common.h"
#include "rdma.h"
#include <unistd.h>

static char logpath[64];

/* log_has reports whether one line of the library's log holds both a and b. */
static int log_has(const char *a, const char *b)
{
	FILE *f = fopen(logpath, "r");
	char line[2048];
	int found = 0;
	assert_non_null(f);
	while (!found && fgets(line, sizeof line, f) != NULL)
		found = strstr(line, a) != NULL && strstr(line, b) != NULL;
	fclose(f);
	return found;
}

static void verbs_ia_not_found(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	if (verbs_usable())
		skip(); /* a device is there: the VM runs the suite over it */
	check_ret(dat_ia_open("godat-verbs", 8, &async, &ia), DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED);
	if (!log_has("dat_ia_openv: godat-verbs (", verbs_missing()))
		fail_msg("no log line saying \"%s\" for godat-verbs in %s", verbs_missing(), logpath);
}

/* A conventional OFED name falls back to the software provider, works, and
 * the log says why. */
static void alias_falls_back(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_PROVIDER_ATTR pa;
	if (verbs_usable())
		skip();
	check_ok(dat_ia_open("ofa-v2-mlx5_0-1", 8, &async, &ia));
	check_ok(dat_ia_query(ia, &async, 0, NULL, DAT_PROVIDER_FIELD_ALL, &pa));
	if (!log_has("dat_ia_openv: ofa-v2-mlx5_0-1 (", "using the soft backend (transport=auto) instead"))
		fail_msg("no fallback line for ofa-v2-mlx5_0-1 in %s", logpath);
	if (!log_has("dat_ia_openv: ofa-v2-mlx5_0-1 (", "opened soft-auto, address"))
		fail_msg("ofa-v2-mlx5_0-1 did not open soft-auto (%s)", logpath);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* The libraries stay unloaded until a verbs IA opens: a soft IA does not
 * map them (with them hidden, it could not). */
static void soft_ia_maps_no_verbs(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	char line[512];
	int mapped = 0;
	check_ok(dat_ia_open("godat-shm", 8, &async, &ia));
	FILE *f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	while (fgets(line, sizeof line, f) != NULL)
		mapped |= strstr(line, "libibverbs") != NULL || strstr(line, "librdmacm") != NULL;
	fclose(f);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	if (mapped)
		fail_msg("a soft IA mapped libibverbs or librdmacm");
}

int main(void)
{
	/* Read at the library's first log call, which is after this. */
	snprintf(logpath, sizeof logpath, "/tmp/godat-verbs-absent.%d.log", (int)getpid());
	setenv("GODAT_LOG", "debug", 1);
	setenv("GODAT_LOG_FILE", logpath, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(soft_ia_maps_no_verbs),
		cmocka_unit_test(verbs_ia_not_found),
		cmocka_unit_test(alias_falls_back),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(logpath);
	return r;
}
