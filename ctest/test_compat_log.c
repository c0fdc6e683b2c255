/* Say why (issue 13, item 10): when a call fails, a program often just
 * gives up, so with logging on (GODAT_LOG=debug, or a non-zero DAT_DBG_TYPE
 * or DAPL_DBG_TYPE) every call that does not return DAT_SUCCESS writes
 * exactly one line naming the call, its object (handle value and type) and
 * the reason: the DAT code names, then the underlying cause when there is
 * one. Logging is off by default and never writes on stdout.
 *
 * Children run a fixed sequence of calls on godat-shm and godat-tcp with
 * GODAT_LOG_FILE naming a file and their stdout going to another; the
 * parent reads both. */
#define _GNU_SOURCE
#include "pages.h"
#include <fcntl.h>

#define QUAL 0x13C0FFEE

static void put(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
}

/* The child: failing and succeeding calls on the IA called name. It writes
 * to expect (fd 3) one line per failure it provokes: a fragment the log line
 * must contain. Returns non-zero if a call does not fail as planned. */
static int calls_on(const char *name, FILE *expect)
{
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, evd, cr;
	DAT_PSP_HANDLE psp, psp2;
	DAT_EVENT ev;
	DAT_COUNT n;
	if (dat_ia_open((char *)name, 8, &async, &ia) != DAT_SUCCESS)
		return 1;
	if (dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &evd) != DAT_SUCCESS ||
	    dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr) != DAT_SUCCESS)
		return 2;
	/* The polling path: DAT_QUEUE_EMPTY is a non-success return too. */
	if (dat_evd_dequeue(evd, &ev) != (DAT_CLASS_ERROR | DAT_QUEUE_EMPTY))
		return 3;
	put(expect, "dat_evd_dequeue(EVD %p): DAT_QUEUE_EMPTY DAT_NO_SUBTYPE\n", (void *)evd);
	if (DAT_GET_TYPE(dat_evd_wait(evd, 0, 1, &ev, &n)) != DAT_TIMEOUT_EXPIRED)
		return 4;
	put(expect, "dat_evd_wait(EVD %p): DAT_TIMEOUT_EXPIRED DAT_NO_SUBTYPE\n", (void *)evd);
	/* A handle of the wrong type. */
	if (dat_ep_post_send((DAT_EP_HANDLE)evd, 0, NULL, (DAT_DTO_COOKIE){.as_64 = 1}, 0) !=
	    (DAT_CLASS_ERROR | DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_EP))
		return 5;
	put(expect, "dat_ep_post_send(EVD %p): DAT_INVALID_HANDLE DAT_INVALID_HANDLE_EP\n", (void *)evd);
	/* A bad argument. */
	if (dat_evd_resize(evd, -1) != (DAT_CLASS_ERROR | DAT_INVALID_PARAMETER | DAT_INVALID_ARG2))
		return 6;
	put(expect, "dat_evd_resize(EVD %p): DAT_INVALID_PARAMETER DAT_INVALID_ARG2\n", (void *)evd);
	/* A transport failure, with its cause. */
	if (dat_psp_create(ia, QUAL, cr, DAT_PSP_CONSUMER_FLAG, &psp) != DAT_SUCCESS)
		return 7;
	if (DAT_GET_TYPE(dat_psp_create(ia, QUAL, cr, DAT_PSP_CONSUMER_FLAG, &psp2)) != DAT_CONN_QUAL_IN_USE)
		return 8;
	put(expect, "dat_psp_create(IA %p): DAT_CONN_QUAL_IN_USE DAT_NO_SUBTYPE: rdma: service id in use\n",
	    (void *)ia);
	if (dat_psp_free(psp) != DAT_SUCCESS || dat_evd_free(evd) != DAT_SUCCESS)
		return 9;
	/* A freed handle. */
	if (DAT_GET_TYPE(dat_evd_free(evd)) != DAT_INVALID_HANDLE)
		return 10;
	put(expect, "dat_evd_free(%p, not a live handle): DAT_INVALID_HANDLE\n", (void *)evd);
	if (dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG) != DAT_SUCCESS)
		return 11;
	return 0;
}

static int log_child(void)
{
	FILE *expect = fdopen(3, "w");
	if (!expect)
		return 20;
	int r = calls_on("godat-shm", expect);
	if (r == 0)
		r = calls_on("godat-tcp", expect);
	/* An unknown IA name: the cause says where the library looked. */
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	if (r == 0 && dat_ia_open("godat-no-such-ia", 8, &async, &ia) !=
			      (DAT_CLASS_ERROR | DAT_PROVIDER_NOT_FOUND | DAT_NAME_NOT_REGISTERED))
		r = 21;
	if (r == 0)
		put(expect, "dat_ia_openv(\"godat-no-such-ia\"): DAT_PROVIDER_NOT_FOUND DAT_NAME_NOT_REGISTERED: "
			    "registry: \"godat-no-such-ia\" is not in \"%s\"\n",
		    getenv("DAT_OVERRIDE"));
	fclose(expect);
	return r;
}

struct run {
	char log[64], out[64], expect[64];
	int status;
};

/* Runs the child with the environment changed by add[] (GODAT_LOG and the
 * debug masks removed first), its stdout and fd 3 to files. */
static void run_child(struct run *r, char *const *add)
{
	strcpy(r->log, "/tmp/godat-ctest-log-XXXXXX");
	strcpy(r->out, "/tmp/godat-ctest-out-XXXXXX");
	strcpy(r->expect, "/tmp/godat-ctest-exp-XXXXXX");
	int lfd = mkstemp(r->log), ofd = mkstemp(r->out), efd = mkstemp(r->expect);
	assert_true(lfd >= 0 && ofd >= 0 && efd >= 0);
	close(lfd);
	unlink(r->log); /* the library must create it, and only when logging */
	char logvar[96];
	snprintf(logvar, sizeof logvar, "GODAT_LOG_FILE=%s", r->log);
	char *all[8] = {logvar};
	for (size_t i = 0; add[i] && i < 6; i++)
		all[i + 1] = add[i];
	const char *const drop[] = {"GODAT_LOG", "GODAT_LOG_FILE", "DAT_DBG_TYPE", "DAPL_DBG_TYPE", NULL};
	char **env = make_env(drop, all);

	char self[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
	assert_true(len > 0);
	self[len] = 0;
	char *argv[] = {self, "log-child", NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, ofd, 1);
	posix_spawn_file_actions_adddup2(&fa, efd, 3);
	pid_t pid;
	fflush(NULL);
	assert_int_equal(posix_spawn(&pid, self, &fa, NULL, argv, env), 0);
	posix_spawn_file_actions_destroy(&fa);
	free(env);
	close(ofd);
	close(efd);
	if (wait_bounded(pid, CHILD_LIMIT_S, &r->status) != 0)
		fail_msg("log child did not finish within %d s", CHILD_LIMIT_S);
	assert_true(WIFEXITED(r->status));
	if (WEXITSTATUS(r->status) != 0)
		fail_msg("log child: a call did not fail as planned (step %d)", WEXITSTATUS(r->status));
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *b = malloc(cap + 1);
	assert_non_null(b);
	size_t k;
	while ((k = fread(b + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap) {
			cap *= 2;
			b = realloc(b, cap + 1);
			assert_non_null(b);
		}
	}
	b[n] = 0;
	fclose(f);
	return b;
}

/* Lines of the log that report a failed call: "godat: debug: <call>(".
 * The line an open writes on success ("dat_ia_openv: NAME (FILE:LINE):
 * opened ...", read by datinfo) has a colon after the call's name. */
static int failure_lines(const char *log)
{
	static const char prefix[] = "godat: debug: dat";
	int n = 0;
	for (const char *p = log; (p = strstr(p, prefix)) != NULL; p++) {
		const char *q = p + sizeof prefix - 1;
		while (*q == '_' || (*q >= 'a' && *q <= 'z'))
			q++;
		if (*q == '(')
			n++;
	}
	return n;
}

static void run_cleanup(struct run *r)
{
	unlink(r->log);
	unlink(r->out);
	unlink(r->expect);
}

/* Every expected line is in the log, once per failing call, and the log
 * has no other failure line: exactly one line per non-success return. */
static void check_logged(struct run *r)
{
	char *log = slurp(r->log), *exp = slurp(r->expect), *out = slurp(r->out);
	assert_non_null(log);
	assert_non_null(exp);
	assert_non_null(out);
	if (out[0] != 0)
		fail_msg("the library wrote on stdout: %s", out);
	int want = 0;
	for (char *line = strtok(exp, "\n"); line; line = strtok(NULL, "\n")) {
		want++;
		const char *at = strstr(log, line);
		if (!at)
			fail_msg("no log line contains\n  %s\nlog:\n%s", line, log);
		if (strstr(at + 1, line))
			fail_msg("logged twice:\n  %s", line);
	}
	assert_int_equal(want, 13);
	if (failure_lines(log) != want)
		fail_msg("%d failure lines for %d failed calls:\n%s", failure_lines(log), want, log);
	free(log);
	free(exp);
	free(out);
}

static void debug_logs_each_failure(void **state)
{
	(void)state;
	struct run r;
	char *const add[] = {"GODAT_LOG=debug", NULL};
	run_child(&r, add);
	check_logged(&r);
	run_cleanup(&r);
}

/* The reference libraries' debug mask turns the same lines on. */
static void dbg_type_logs_each_failure(void **state)
{
	(void)state;
	struct run r;
	char *const add[] = {"DAT_DBG_TYPE=0xffff", NULL};
	run_child(&r, add);
	check_logged(&r);
	run_cleanup(&r);
}

/* Off by default: the same failures write nothing, not even the file. */
static void off_by_default(void **state)
{
	(void)state;
	struct run r;
	char *const add[] = {NULL};
	run_child(&r, add);
	char *out = slurp(r.out);
	assert_non_null(out);
	assert_string_equal(out, "");
	free(out);
	assert_int_equal(access(r.log, F_OK), -1);
	run_cleanup(&r);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "log-child") == 0)
		return log_child();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(debug_logs_each_failure),
		cmocka_unit_test(dbg_type_logs_each_failure),
		cmocka_unit_test(off_by_default),
	};
	return cmocka_run_group_tests_name("compat log", tests, NULL, NULL);
}
