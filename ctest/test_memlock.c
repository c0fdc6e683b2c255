/* Registration beyond the locked-memory limit (issue 16: "what users meet
 * on real hardware"): on an RDMA device registered memory is pinned, which
 * counts against RLIMIT_MEMLOCK unless the process has CAP_IPC_LOCK, so
 * dat_lmr_create of more than the limit returns DAT_INSUFFICIENT_RESOURCES,
 * and the library's log (at warn level) names the limit and how to raise
 * it; a registration within the limit still succeeds.
 *
 * It needs a verbs IA and a lowered limit without CAP_IPC_LOCK, which the
 * verbs VM's memlock step sets up (GODAT_TEST_MEMLOCK=<limit in KiB>,
 * prlimit and setpriv); elsewhere it skips. */
#define _GNU_SOURCE
#include "pages.h"
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

static char logpath[64];

static int log_has(const char *a, const char *b, const char *c)
{
	FILE *f = fopen(logpath, "r");
	char line[4096];
	int found = 0;
	assert_non_null(f);
	while (!found && fgets(line, sizeof line, f) != NULL)
		found = strstr(line, a) && strstr(line, b) && strstr(line, c);
	fclose(f);
	if (found)
		print_message("log: %s", line);
	return found;
}

static void lmr_beyond_memlock(void **state)
{
	(void)state;
	const char *want = getenv("GODAT_TEST_MEMLOCK");
	if (want == NULL || *want == 0)
		skip(); /* the verbs VM's memlock step runs it */
	struct rlimit rl;
	assert_int_equal(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	assert_true(rl.rlim_cur != RLIM_INFINITY);
	assert_int_equal((long)(rl.rlim_cur >> 10), atol(want));

	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia = open_ia(&async);
	DAT_PZ_HANDLE pz = make_pz(ia);
	size_t big = 8u << 20;
	assert_true(big > rl.rlim_cur);
	void *buf = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(buf != MAP_FAILED);
	DAT_REGION_DESCRIPTION r = {.for_va = buf};
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lc;
	DAT_RMR_CONTEXT rc;
	DAT_VLEN len;
	DAT_VADDR va;
	check_ret(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, r, big, pz, DAT_MEM_PRIV_ALL_FLAG, &lmr, &lc, &rc, &len,
				 &va),
		  DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
	char limit[32];
	snprintf(limit, sizeof limit, "is %s KiB", want);
	if (!log_has("warn: dat_lmr_create: ", "RLIMIT_MEMLOCK", limit) ||
	    !log_has("warn: dat_lmr_create: ", "ulimit -l", "limits.conf"))
		fail_msg("no warn line naming RLIMIT_MEMLOCK (%s) and how to raise it in %s", limit, logpath);
	/* Within the limit it works. */
	check_ok(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, r, 4096, pz, DAT_MEM_PRIV_ALL_FLAG, &lmr, &lc, &rc, &len,
				&va));
	check_ok(dat_lmr_free(lmr));
	check_ok(dat_pz_free(pz));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	munmap(buf, big);
}

int main(void)
{
	snprintf(logpath, sizeof logpath, "/tmp/godat-memlock.%d.log", (int)getpid());
	setenv("GODAT_LOG", "warn", 1);
	setenv("GODAT_LOG_FILE", logpath, 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lmr_beyond_memlock),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(logpath);
	return r;
}
