/* fork(): "A Go runtime cannot survive fork(): a child process's calls
 * return an error at once instead of hanging, checked in C before entering
 * Go." A forked child of a process with an open IA gets DAT_INTERNAL_ERROR
 * from every call, quickly; the documented remedy (exec a fresh program)
 * works; and the parent's IA is unharmed by either child. */
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

/* Every wait for a child is bounded by this; a hang is a failure. */
#define CHILD_LIMIT_S 10

/* What the forked child reports through a pipe: the return of each call
 * and how long the whole sequence took. */
enum { C_IA_QUERY, C_PZ_CREATE, C_EVD_DEQUEUE, C_IA_CLOSE, C_IA_OPEN, C_N };
static const char *const call_names[C_N] = {
	"dat_ia_query", "dat_pz_create", "dat_evd_dequeue", "dat_ia_close", "dat_ia_open",
};
struct child_report {
	DAT_RETURN ret[C_N];
	long elapsed_ns;
};


static void describe_status(int status, char *buf, size_t n)
{
	if (WIFEXITED(status))
		snprintf(buf, n, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, n, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, n, "status 0x%x", status);
}

/* The parent's objects the child calls on. */
static DAT_IA_HANDLE ia;
static DAT_EVD_HANDLE async_evd, evd;

static int setup(void **state)
{
	(void)state;
	ia = open_ia(&async_evd);
	check_ok(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &evd));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (evd != DAT_HANDLE_NULL)
		dat_evd_free(evd);
	if (ia != DAT_HANDLE_NULL)
		dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
	return 0;
}

/* The forked child: only async-signal-safe calls besides the DAT calls
 * under test. alarm(10) kills it if a DAT call hangs. */
static _Noreturn void forked_child(int wfd)
{
	struct child_report rep;
	DAT_IA_ATTR attr;
	DAT_EVD_HANDLE a = DAT_HANDLE_NULL;
	DAT_PZ_HANDLE pz = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia2 = DAT_HANDLE_NULL;
	DAT_EVENT ev;
	struct sigaction sa = {.sa_handler = SIG_DFL};
	long t0;

	sigaction(SIGALRM, &sa, NULL);
	alarm(CHILD_LIMIT_S);
	t0 = now_ns();
	rep.ret[C_IA_QUERY] = dat_ia_query(ia, &a, DAT_IA_ALL, &attr, 0, NULL);
	rep.ret[C_PZ_CREATE] = dat_pz_create(ia, &pz);
	rep.ret[C_EVD_DEQUEUE] = dat_evd_dequeue(evd, &ev);
	rep.ret[C_IA_CLOSE] = dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
	a = DAT_HANDLE_NULL;
	rep.ret[C_IA_OPEN] = dat_ia_open(TEST_IA, 16, &a, &ia2);
	rep.elapsed_ns = now_ns() - t0;
	alarm(0);
	_exit(write(wfd, &rep, sizeof rep) == (ssize_t)sizeof rep ? 0 : 3);
}

/* In a forked child, dat_ia_query, dat_pz_create, dat_evd_dequeue,
 * dat_ia_close and dat_ia_open of a new IA each return DAT_INTERNAL_ERROR,
 * and all five take under 2 s together (they never enter Go). */
static void test_forked_child_gets_internal_error(void **state)
{
	(void)state;
	int fds[2], status;
	struct child_report rep;
	char how[96];
	ssize_t got;

	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		forked_child(fds[1]);
	}
	close(fds[1]);
	/* The child is bounded: killed and failed after 10 s. */
	if (wait_bounded(pid, CHILD_LIMIT_S, &status) != 0) {
		close(fds[0]);
		fail_msg("forked child did not finish within %d s (killed): a DAT call hung", CHILD_LIMIT_S);
	}
	describe_status(status, how, sizeof how);
	got = read(fds[0], &rep, sizeof rep);
	close(fds[0]);
	/* It exits normally: it was not killed by the alarm guard. */
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("forked child: %s (SIGALRM means a DAT call hung)", how);
	assert_int_equal(got, (ssize_t)sizeof rep);
	/* Each call returns DAT_INTERNAL_ERROR (compared with DAT_GET_TYPE). */
	int bad = 0;
	for (int i = 0; i < C_N; i++) {
		if (DAT_GET_TYPE(rep.ret[i]) != DAT_INTERNAL_ERROR) {
			print_error("forked child: %s: got %s, want DAT_INTERNAL_ERROR\n",
				    call_names[i], ret_name(rep.ret[i]));
			bad++;
		}
	}
	if (bad)
		fail_msg("%d calls in the forked child did not return DAT_INTERNAL_ERROR", bad);
	/* "at once": the whole sequence well under 2 s. */
	if (rep.elapsed_ns >= 2000000000L)
		fail_msg("forked child: the five calls took %ld ms, want < 2000 ms", rep.elapsed_ns / 1000000);
}

/* The directory of the built test programs: $GODAT_CTEST_BIN, else the
 * directory of this program (they are built side by side). */
static void ctest_bin(char *out, size_t n)
{
	const char *d = getenv("GODAT_CTEST_BIN");
	if (d && *d) {
		snprintf(out, n, "%s", d);
		return;
	}
	ssize_t k = readlink("/proc/self/exe", out, n - 1);
	assert_true(k > 0);
	out[k] = 0;
	char *slash = strrchr(out, '/');
	assert_non_null(slash);
	*slash = 0;
}

/* The remedy: a child that exec()s child_exec runs a fresh Go runtime and
 * opens an IA (the IA under test), creates and frees a PZ and closes the IA (exit status 0). */
static void test_fork_exec_remedy(void **state)
{
	(void)state;
	char dir[PATH_MAX], prog[PATH_MAX + 16], how[96];
	int status;

	ctest_bin(dir, sizeof dir);
	snprintf(prog, sizeof prog, "%s/child_exec", dir);
	if (access(prog, X_OK) != 0)
		fail_msg("%s: not executable (build it: make -C ctest)", prog);
	char *const argv[] = {prog, TEST_IA, NULL};
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* Between fork and exec: nothing but execv and _exit. */
		execv(prog, argv);
		_exit(127);
	}
	if (wait_bounded(pid, CHILD_LIMIT_S, &status) != 0)
		fail_msg("%s did not finish within %d s (killed)", prog, CHILD_LIMIT_S);
	describe_status(status, how, sizeof how);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("%s: %s, want exit 0 (its stderr names the failing call)", prog, how);
}

/* The parent's IA still works after both children ran: its query, a PZ
 * create/free, and a dequeue on its EVD (empty) behave as before. */
static void test_parent_unaffected(void **state)
{
	(void)state;
	DAT_IA_ATTR attr;
	DAT_EVD_HANDLE a = DAT_HANDLE_NULL;
	DAT_PZ_HANDLE pz;
	DAT_EVENT ev;

	check_ok(dat_ia_query(ia, &a, DAT_IA_ALL, &attr, 0, NULL));
	assert_ptr_equal(a, async_evd);
	check_ok(dat_pz_create(ia, &pz));
	check_ok(dat_pz_free(pz));
	check_type(dat_evd_dequeue(evd, &ev), DAT_QUEUE_EMPTY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forked_child_gets_internal_error),
		cmocka_unit_test(test_fork_exec_remedy),
		cmocka_unit_test(test_parent_unaffected),
	};
	return cmocka_run_group_tests_name("fork", tests, setup, teardown);
}
