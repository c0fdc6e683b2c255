/* Panics: "every export recovers and returns DAT_INTERNAL_ERROR (a test
 * forces one)". With GODAT_TEST_PANIC=1 in the environment when libdat is
 * loaded, dat_ia_openv panics inside Go. The test re-executes itself in
 * "panic-child" mode with that variable set (the library reads it at load,
 * and a forked child must exec before calling libdat anyway); the child
 * checks that the panic comes back as DAT_INTERNAL_ERROR, twice, and that
 * the process and its Go runtime carry on. */
#define _GNU_SOURCE
#include "common.h"
#include "child.h"
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/wait.h>

#define CHILD_LIMIT_S 10



/* ---- the child: runs with GODAT_TEST_PANIC=1 ------------------------- */

/* Exit codes of the child, one per broken promise. */
enum { CHILD_OK = 0, CHILD_FIRST = 10, CHILD_SECOND = 11, CHILD_HANDLE = 12, CHILD_AFTER = 13, CHILD_NOENV = 14 };

static int panic_child(void)
{
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	const char *maj = NULL, *min = NULL;
	DAT_COUNT n = -1;
	DAT_RETURN r;

	/* The hook is really on: the parent put it into our environment. */
	if (!getenv("GODAT_TEST_PANIC") || strcmp(getenv("GODAT_TEST_PANIC"), "1") != 0) {
		fprintf(stderr, "panic-child: GODAT_TEST_PANIC is not 1\n");
		return CHILD_NOENV;
	}
	/* The forced panic in dat_ia_openv comes back as DAT_INTERNAL_ERROR
	 * instead of killing the process. */
	r = dat_ia_open(TEST_IA, 16, &async, &ia);
	if (DAT_GET_TYPE(r) != DAT_INTERNAL_ERROR) {
		fprintf(stderr, "panic-child: first dat_ia_open: got 0x%08x, want DAT_INTERNAL_ERROR\n", (unsigned)r);
		return CHILD_FIRST;
	}
	/* No IA came out of the failed open. */
	if (ia != DAT_HANDLE_NULL) {
		fprintf(stderr, "panic-child: failed dat_ia_open wrote ia handle %p\n", ia);
		return CHILD_HANDLE;
	}
	/* A second call panics and recovers the same way: the recovery left
	 * the library usable. */
	r = dat_ia_open(TEST_IA, 16, &async, &ia);
	if (DAT_GET_TYPE(r) != DAT_INTERNAL_ERROR) {
		fprintf(stderr, "panic-child: second dat_ia_open: got 0x%08x, want DAT_INTERNAL_ERROR\n", (unsigned)r);
		return CHILD_SECOND;
	}
	/* Other calls still run Go code normally: dat_strerror names the
	 * error, and dat_registry_list_providers reads the registry. */
	r = dat_strerror(r, &maj, &min);
	if (r != DAT_SUCCESS || !maj || strcmp(maj, "DAT_INTERNAL_ERROR") != 0) {
		fprintf(stderr, "panic-child: dat_strerror after the panic: 0x%08x %s\n", (unsigned)r, maj ? maj : "(null)");
		return CHILD_AFTER;
	}
	r = dat_registry_list_providers(0, &n, NULL);
	if (DAT_GET_TYPE(r) != DAT_INVALID_PARAMETER || n <= 0) {
		fprintf(stderr, "panic-child: dat_registry_list_providers after the panic: 0x%08x n=%d\n", (unsigned)r, (int)n);
		return CHILD_AFTER;
	}
	return CHILD_OK;
}

/* ---- the parent ---------------------------------------------------------- */


/* The child, re-executed with GODAT_TEST_PANIC=1 (and its log, with the
 * Go stack of the recovered panic, sent to a temporary file), exits 0: the
 * process survived two forced panics and both returned DAT_INTERNAL_ERROR. */
static void test_forced_panic_returns_internal_error(void **state)
{
	(void)state;
	char self[PATH_MAX], logpath[] = "/tmp/godat-panic-log-XXXXXX", logenv[PATH_MAX + 32];
	char *child_argv[] = {self, "panic-child", NULL};
	int status, fd;

	ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
	assert_true(k > 0);
	self[k] = 0;
	fd = mkstemp(logpath);
	assert_true(fd >= 0);
	close(fd);
	snprintf(logenv, sizeof logenv, "GODAT_LOG_FILE=%s", logpath);
	const char *const drop[] = {"GODAT_TEST_PANIC", "GODAT_LOG", "GODAT_LOG_FILE", "DAT_DBG_TYPE", "DAPL_DBG_TYPE", NULL};
	char *const add[] = {"GODAT_TEST_PANIC=1", "GODAT_LOG=error", logenv, NULL};
	char **env = make_env(drop, add);

	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* No libdat call between fork and exec. */
		execve(self, child_argv, env);
		_exit(127);
	}
	free(env);
	int waited = wait_bounded(pid, CHILD_LIMIT_S, &status);

	/* The recovered panic is logged at error level with its call name. */
	char logtext[65536] = "";
	FILE *f = fopen(logpath, "r");
	if (f) {
		size_t got = fread(logtext, 1, sizeof logtext - 1, f);
		logtext[got] = 0;
		fclose(f);
	}
	unlink(logpath);

	if (waited != 0)
		fail_msg("panic-child did not finish within %d s (killed)", CHILD_LIMIT_S);
	if (WIFSIGNALED(status))
		fail_msg("panic-child killed by signal %d (%s): a panic reached C", WTERMSIG(status), strsignal(WTERMSIG(status)));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != CHILD_OK)
		fail_msg("panic-child: exit %d, want 0 (see its stderr)", WEXITSTATUS(status));
	if (!strstr(logtext, "dat_ia_openv") || !strstr(logtext, "forced panic"))
		fail_msg("log of the panic-child does not name the recovered panic in dat_ia_openv:\n%s", logtext);
}

/* Without the hook, this (parent) process opens and closes an IA normally:
 * the panic is only the test hook's doing. */
static void test_no_panic_without_hook(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = open_ia(NULL);
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "panic-child") == 0)
		return panic_child();
	if (getenv("GODAT_TEST_PANIC") && strcmp(getenv("GODAT_TEST_PANIC"), "1") == 0) {
		fprintf(stderr, "test_panic: run without GODAT_TEST_PANIC=1 (the test sets it for its child)\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forced_panic_returns_internal_error),
		cmocka_unit_test(test_no_panic_without_hook),
	};
	return cmocka_run_group_tests_name("panic", tests, NULL, NULL);
}
