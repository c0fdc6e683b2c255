/* The static registry: dat_ia_open's name lookup in dat.conf (dat.conf(5),
 * dat_ia_open(3DAT)) and what dat_registry_list_providers(3DAT) shows of a
 * private dat.conf. The page-by-page checks of the registry calls are in
 * test_dat_registry_*.c.
 *
 * The parent process runs with the repository's dat.conf (DAT_OVERRIDE set
 * by make). Checks of a private dat.conf run in children re-executed with
 * DAT_OVERRIDE, GODAT_LOG and GODAT_LOG_FILE set before exec, because the
 * library takes its logging settings from the environment on first use. */
#define _GNU_SOURCE
#include "common.h"
#include "child.h"
#include <dat/dat_registry.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <time.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/wait.h>

#define CHILD_LIMIT_S 10


/* ---- helpers ------------------------------------------------------------- */



/* Runs this program again as `self mode arg` with env; fails the test
 * unless it exits 0 within CHILD_LIMIT_S. */
static void run_child(const char *mode, const char *arg, char **env)
{
	char self[PATH_MAX];
	int status;
	ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
	assert_true(k > 0);
	self[k] = 0;
	char *argv[] = {self, (char *)mode, (char *)arg, NULL};
	pid_t pid;
	fflush(NULL);
	/* posix_spawn, not fork: the library's threads are not forked. */
	int r = posix_spawn(&pid, self, NULL, NULL, argv, env);
	if (r != 0)
		fail_msg("posix_spawn %s: %s", self, strerror(r));
	if (wait_bounded(pid, CHILD_LIMIT_S, &status) != 0)
		fail_msg("%s child did not finish within %d s (killed)", mode, CHILD_LIMIT_S);
	if (WIFSIGNALED(status))
		fail_msg("%s child killed by signal %d (%s)", mode, WTERMSIG(status), strsignal(WTERMSIG(status)));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("%s child: exit %d, want 0 (its failures are printed above)", mode, WEXITSTATUS(status));
}

/* Lists the providers into a fresh array; returns the count (and the
 * array in *out, to free). */
static DAT_COUNT list_all(DAT_PROVIDER_INFO **out)
{
	DAT_COUNT n = -1, n2 = -1;
	/* A first call with no room reports how many entries there are. */
	check_type(dat_registry_list_providers(0, &n, NULL), DAT_INVALID_PARAMETER);
	assert_true(n >= 0);
	DAT_PROVIDER_INFO *infos = calloc((size_t)n + 1, sizeof *infos);
	DAT_PROVIDER_INFO **ptrs = calloc((size_t)n + 1, sizeof *ptrs);
	assert_non_null(infos);
	assert_non_null(ptrs);
	for (DAT_COUNT i = 0; i <= n; i++)
		ptrs[i] = &infos[i];
	check_ok(dat_registry_list_providers(n + 1, &n2, ptrs));
	assert_int_equal(n2, n);
	free(ptrs);
	*out = infos;
	return n;
}

static const DAT_PROVIDER_INFO *find_info(const DAT_PROVIDER_INFO *infos, DAT_COUNT n, const char *name)
{
	for (DAT_COUNT i = 0; i < n; i++)
		if (strncmp(infos[i].ia_name, name, DAT_NAME_MAX_LENGTH) == 0)
			return &infos[i];
	return NULL;
}

/* ---- the private dat.conf ------------------------------------------------ */

/* Comments, quoted fields, a malformed line (7 fields, line 5), a
 * nonthreadsafe u1.2 entry and a u2.0-only name. */
static const char private_conf[] =
	"# godat ctest registry: comments, quoted fields, one malformed line\n"
	"   # an indented comment\n"
	"\n"
	"reg-ok u1.2 threadsafe default libdat.so.1 godat.1.0 \"transport=shm\" \"\"   # a trailing comment\n"
	"reg-bad u1.2 threadsafe default libdat.so.1 godat.1.0 \"transport=shm\"\n"
	"reg-quoted u1.2 threadsafe default libdat.so.1 godat.1.0 \"transport=shm\" \"platform # not a comment\"\n"
	"reg-nts u1.2 nonthreadsafe nondefault libdat.so.1 godat.1.0 \"transport=shm\" \"\"\n"
	"reg-v2 u2.0 threadsafe default libdat.so.1 godat.1.0 \"transport=shm\" \"\"\n";
#define MALFORMED_LINE 5

static char conf_path[] = "/tmp/godat-registry-conf-XXXXXX";
static char log_path[] = "/tmp/godat-registry-log-XXXXXX";

static void write_private_conf(void)
{
	int fd = mkstemp(conf_path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, private_conf, sizeof private_conf - 1), (ssize_t)(sizeof private_conf - 1));
	close(fd);
	fd = mkstemp(log_path);
	assert_true(fd >= 0);
	close(fd);
}

/* ---- child "conf-child": DAT_OVERRIDE=<private conf> --------------------- */

/* The u1.2 entry of the built-in library opens, and so does the entry
 * whose last (quoted) field contains blanks and a '#'. */
static void test_conf_u12_entries_open(void **state)
{
	(void)state;
	static char *const names[] = {"reg-ok", "reg-quoted"};
	for (size_t i = 0; i < 2; i++) {
		DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
		DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
		DAT_RETURN r = dat_ia_open(names[i], 8, &async, &ia);
		if (r != DAT_SUCCESS)
			fail_msg("dat_ia_open(%s): %s", names[i], ret_name(r));
		check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
	}
}

/* A name with only a u2.0 entry is not found by a DAT 1.2 program, and the
 * malformed line's name was skipped; the repository's names are not in
 * this registry at all (DAT_OVERRIDE replaces it). */
static void test_conf_other_names_do_not_open(void **state)
{
	(void)state;
	char *const names[] = {"reg-v2", "reg-bad", TEST_IA};
	for (size_t i = 0; i < 3; i++) {
		DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
		DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
		DAT_RETURN r = dat_ia_open(names[i], 8, &async, &ia);
		if (DAT_GET_TYPE(r) != DAT_PROVIDER_NOT_FOUND)
			fail_msg("dat_ia_open(%s): got %s, want DAT_PROVIDER_NOT_FOUND", names[i], ret_name(r));
	}
}

/* dat_registry_list_providers shows the four well-formed entries, with the
 * API version and thread safety of their lines, and not the malformed one. */
static void test_conf_list(void **state)
{
	(void)state;
	DAT_PROVIDER_INFO *infos;
	DAT_COUNT n = list_all(&infos);
	const DAT_PROVIDER_INFO *p;
	static const struct {
		const char *name;
		DAT_UINT32 major, minor;
		DAT_BOOLEAN ts;
	} want[] = {
		{"reg-ok", 1, 2, DAT_TRUE},
		{"reg-quoted", 1, 2, DAT_TRUE},
		{"reg-nts", 1, 2, DAT_FALSE},
		{"reg-v2", 2, 0, DAT_TRUE},
	};
	assert_int_equal(n, 4);
	for (size_t i = 0; i < 4; i++) {
		p = find_info(infos, n, want[i].name);
		if (!p)
			fail_msg("%s is not listed", want[i].name);
		assert_int_equal(p->dapl_version_major, want[i].major);
		assert_int_equal(p->dapl_version_minor, want[i].minor);
		assert_int_equal(p->is_thread_safe, want[i].ts);
	}
	assert_null(find_info(infos, n, "reg-bad"));
	free(infos);
}

static int conf_child(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conf_u12_entries_open),
		cmocka_unit_test(test_conf_other_names_do_not_open),
		cmocka_unit_test(test_conf_list),
	};
	return cmocka_run_group_tests_name("registry (private dat.conf, child)", tests, NULL, NULL) ? 1 : 0;
}

/* ---- child "setenv-child": no DAT_OVERRIDE in its environment ------------ */

/* A program that sets DAT_OVERRIDE with setenv() before its first DAT call
 * gets that registry, as with the reference libdat (which reads it on
 * first use). */
static int setenv_child(const char *conf)
{
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	setenv("DAT_OVERRIDE", conf, 1);
	DAT_RETURN r = dat_ia_open("reg-ok", 8, &async, &ia);
	if (r != DAT_SUCCESS) {
		fprintf(stderr, "setenv-child: setenv(DAT_OVERRIDE=%s) then dat_ia_open(reg-ok): 0x%08x, want DAT_SUCCESS\n",
			conf, (unsigned)r);
		return 1;
	}
	dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
	return 0;
}

/* ---- the parent: the repository's dat.conf -------------------------------- */

/* An IA name that is in no registry entry: exactly DAT_PROVIDER_NOT_FOUND
 * with subtype DAT_NAME_NOT_REGISTERED. */
static void test_unknown_name(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_RETURN r = dat_ia_open("no-such-ia-godat-ctest", 8, &async, &ia);
	if (r != (DAT_CLASS_ERROR | DAT_PROVIDER_NOT_FOUND | DAT_NAME_NOT_REGISTERED))
		fail_msg("unknown name: got %s, want DAT_PROVIDER_NOT_FOUND|DAT_NAME_NOT_REGISTERED", ret_name(r));
	assert_ptr_equal(ia, DAT_HANDLE_NULL);
}

/* NULL name, NULL ia pointer and NULL async pointer: DAT_INVALID_PARAMETER
 * naming the argument (1, 4 and 3). */
static void test_null_arguments(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	check_ret(dat_ia_open(NULL, 8, &async, &ia), DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	check_ret(dat_ia_open(TEST_IA, 8, &async, NULL), DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	check_ret(dat_ia_open(TEST_IA, 8, NULL, &ia), DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
}

/* A name longer than DAT_NAME_MAX_LENGTH (which includes the terminating
 * NUL) is an invalid parameter; the longest legal name is just looked up. */
static void test_name_length(void **state)
{
	(void)state;
	char name[301];
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;

	memset(name, 'a', 300);
	name[300] = 0;
	check_type(dat_ia_open(name, 8, &async, &ia), DAT_INVALID_PARAMETER);
	name[DAT_NAME_MAX_LENGTH] = 0; /* 256 characters: no room for the NUL */
	check_type(dat_ia_open(name, 8, &async, &ia), DAT_INVALID_PARAMETER);
	name[DAT_NAME_MAX_LENGTH - 1] = 0; /* 255 characters: legal, not registered */
	check_ret(dat_ia_open(name, 8, &async, &ia), DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED);
	assert_ptr_equal(ia, DAT_HANDLE_NULL);
}

/* The private dat.conf in a child with DAT_OVERRIDE, GODAT_LOG=warn and
 * GODAT_LOG_FILE set before exec: its checks pass (see conf_child), and the
 * warning log names the file and line number of the malformed line. */
static void test_private_conf_and_log(void **state)
{
	(void)state;
	char conf_env[PATH_MAX + 16], log_env[PATH_MAX + 32], want[PATH_MAX + 16];
	snprintf(conf_env, sizeof conf_env, "DAT_OVERRIDE=%s", conf_path);
	snprintf(log_env, sizeof log_env, "GODAT_LOG_FILE=%s", log_path);
	const char *const drop[] = {"DAT_OVERRIDE", "GODAT_LOG", "GODAT_LOG_FILE", "DAT_DBG_TYPE", "DAPL_DBG_TYPE", NULL};
	char *const add[] = {conf_env, "GODAT_LOG=warn", log_env, NULL};
	char **env = make_env(drop, add);
	run_child("conf-child", conf_path, env);
	free(env);

	char text[65536] = "";
	FILE *f = fopen(log_path, "r");
	assert_non_null(f);
	size_t got = fread(text, 1, sizeof text - 1, f);
	text[got] = 0;
	fclose(f);
	snprintf(want, sizeof want, "%s:%d", conf_path, MALFORMED_LINE);
	const char *at = strstr(text, want);
	if (!at || (at[strlen(want)] >= '0' && at[strlen(want)] <= '9'))
		fail_msg("log does not name %s (the malformed line); log:\n%s", want, text);
}

/* DAT_OVERRIDE set with setenv() by the program itself, before its first
 * DAT call, is honoured (run in a child with no DAT_OVERRIDE at exec). */
static void test_setenv_override(void **state)
{
	(void)state;
	const char *const drop[] = {"DAT_OVERRIDE", NULL};
	char *const add[] = {NULL};
	char **env = make_env(drop, add);
	run_child("setenv-child", conf_path, env);
	free(env);
}

static int group_setup(void **state)
{
	(void)state;
	write_private_conf();
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	unlink(conf_path);
	unlink(log_path);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "conf-child") == 0)
		return conf_child();
	if (argc > 2 && strcmp(argv[1], "setenv-child") == 0)
		return setenv_child(argv[2]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_name),
		cmocka_unit_test(test_null_arguments),
		cmocka_unit_test(test_name_length),
		cmocka_unit_test(test_private_conf_and_log),
		cmocka_unit_test(test_setenv_override),
	};
	return cmocka_run_group_tests_name("registry", tests, group_setup, group_teardown);
}
