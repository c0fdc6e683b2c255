/* datinfo(1): each mode run as a user would, its output checked against
 * the registry file the test writes and against what the library itself
 * answers in this process (dat_registry_list_providers, dat_ia_query).
 *
 * datinfo is built beside the test programs ($GODAT_CTEST_BIN/datinfo).
 * Every run is bounded (RUN_LIMIT_S) and its stdout and stderr are read
 * from a file. */
#define _GNU_SOURCE
#include "common.h"
#include "child.h"
#include "iaaddr.h"
#include "rdma.h"
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <sys/stat.h>

#include "../tools/datinfo/env.h"

#define RUN_LIMIT_S 60

static char datinfo[PATH_MAX];
static char tmpdir[64]; /* mkdtemp under /tmp: short, so paths under it fit */

struct run {
	int status; /* exit status */
	char *out;  /* stdout then stderr */
};

static void datinfo_path(void)
{
	const char *d = getenv("GODAT_CTEST_BIN");
	if (d && *d) {
		snprintf(datinfo, sizeof datinfo, "%s/datinfo", d);
	} else {
		ssize_t k = readlink("/proc/self/exe", datinfo, sizeof datinfo - 1);
		assert_true(k > 0);
		datinfo[k] = 0;
		char *slash = strrchr(datinfo, '/');
		assert_non_null(slash);
		strcpy(slash + 1, "datinfo");
	}
	if (access(datinfo, X_OK) != 0)
		fail_msg("%s: not built: %s", datinfo, strerror(errno));
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	char chunk[4096];
	size_t k;
	while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
		fwrite(chunk, 1, k, m);
	fclose(f);
	fclose(m);
	return buf;
}

/* Runs datinfo with args under env (NULL: this process's environment). */
static struct run run_datinfo(char *const args[], char **env)
{
	char *argv[8] = {datinfo};
	int n = 1;
	for (; args && args[n - 1]; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	char out[PATH_MAX];
	snprintf(out, sizeof out, "%s/out", tmpdir);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	pid_t pid;
	fflush(NULL);
	int r = posix_spawn(&pid, datinfo, &fa, NULL, argv, env ? env : environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r != 0)
		fail_msg("posix_spawn %s: %s", datinfo, strerror(r));
	int status;
	if (wait_bounded(pid, RUN_LIMIT_S, &status) != 0)
		fail_msg("datinfo did not finish within %d s (killed)", RUN_LIMIT_S);
	if (!WIFEXITED(status))
		fail_msg("datinfo killed by signal %d", WTERMSIG(status));
	struct run res = {WEXITSTATUS(status), slurp(out)};
	return res;
}

/* Fails unless the output holds the formatted text. */
static void expect(const struct run *r, const char *fmt, ...)
{
	char want[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(want, sizeof want, fmt, ap);
	va_end(ap);
	if (!strstr(r->out, want))
		fail_msg("datinfo output lacks \"%s\"; it was:\n%s", want, r->out);
}

static void expect_not(const struct run *r, const char *want)
{
	if (strstr(r->out, want))
		fail_msg("datinfo output has \"%s\"; it was:\n%s", want, r->out);
}

static void expect_status(const struct run *r, int status)
{
	if (r->status != status)
		fail_msg("datinfo exit %d, want %d; output:\n%s", r->status, status, r->out);
}

/* The value printed on the line "  NAME   VALUE" of the output. */
static const char *value_of(const struct run *r, const char *name, char *buf, size_t n)
{
	char key[128];
	snprintf(key, sizeof key, "\n  %s ", name);
	const char *p = strstr(r->out, key);
	if (!p)
		fail_msg("datinfo output has no %s line:\n%s", name, r->out);
	p += strlen(key);
	p += strspn(p, " ");
	size_t k = strcspn(p, "\n");
	snprintf(buf, n, "%.*s", (int)(k < n ? k : n - 1), p);
	return buf;
}

/* The 1-based number of the first line of path that starts with prefix. */
static int line_of(const char *path, const char *prefix)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[1024];
	int n = 0, found = 0;
	while (fgets(line, sizeof line, f)) {
		n++;
		if (strncmp(line, prefix, strlen(prefix)) == 0) {
			found = n;
			break;
		}
	}
	fclose(f);
	if (!found)
		fail_msg("%s has no line starting with \"%s\"", path, prefix);
	return found;
}

static char **env_with(const char *override)
{
	static const char *const drop[] = {"DAT_OVERRIDE", NULL};
	static char add_buf[PATH_MAX + 16];
	static char *add[2];
	if (override) {
		snprintf(add_buf, sizeof add_buf, "DAT_OVERRIDE=%s", override);
		add[0] = add_buf;
		add[1] = NULL;
	} else {
		add[0] = NULL;
	}
	return make_env(drop, add);
}

static const char *shipped(void)
{
	const char *p = getenv("DAT_OVERRIDE");
	if (!p || !*p)
		fail_msg("DAT_OVERRIDE is not set: run through make, which points it at the repository's dat.conf");
	return p;
}

/* ---- datinfo on the shipped dat.conf ---------------------------------------- */

static void test_datinfo_shipped_conf(void **state)
{
	(void)state;
	const char *conf = shipped();
	char **env = env_with(conf);
	struct run r = run_datinfo(NULL, env);
	expect_status(&r, 0);
	expect(&r, "registry: %s\n", conf);
	expect(&r, "because DAT_OVERRIDE is set");
	/* Every IA the library lists opens, on the line where it is written. */
	DAT_COUNT n = 0;
	check_type(dat_registry_list_providers(0, &n, NULL), DAT_INVALID_PARAMETER);
	assert_true(n > 0);
	DAT_PROVIDER_INFO *infos = calloc((size_t)n, sizeof *infos);
	DAT_PROVIDER_INFO **list = calloc((size_t)n, sizeof *list);
	assert_non_null(infos);
	assert_non_null(list);
	for (DAT_COUNT i = 0; i < n; i++)
		list[i] = &infos[i];
	DAT_COUNT got = 0;
	check_ok(dat_registry_list_providers(n, &got, list));
	assert_int_equal(got, n);
	/* godat-verbs is the one entry that needs an RDMA device; where there
	 * is none, the OFED aliases (transport=verbs-or-auto) open the soft
	 * provider and say why. */
	int verbs = verbs_usable();
	for (DAT_COUNT i = 0; i < n; i++) {
		char prefix[DAT_NAME_MAX_LENGTH + 2];
		const char *name = infos[i].ia_name;
		snprintf(prefix, sizeof prefix, "%s ", name);
		int line = line_of(conf, prefix);
		if (strcmp(name, "godat-verbs") == 0 && verbs)
			expect(&r, "%s:%d: %s: ok: opens (verbs-", conf, line, name);
		else if (strcmp(name, "godat-verbs") == 0)
			expect(&r, "%s:%d: %s: cannot open: DAT_PROVIDER_NOT_FOUND (DAT_NAME_NOT_REGISTERED)\n"
				   "    libdat warn: dat_ia_openv: %s (%s:%d): verbs: %s",
			       conf, line, name, name, conf, line, verbs_missing());
		else if (!verbs && (strncmp(name, "OpenIB-", 7) == 0 || strncmp(name, "ofa-v2-", 7) == 0))
			expect(&r, "%s:%d: %s: ok: opens (soft-auto, address %s)\n"
				   "    libdat info: dat_ia_openv: %s (%s:%d): verbs: ",
			       conf, line, name, host_ia_addr(), name, conf, line);
		else
			expect(&r, "%s:%d: %s: ok: opens (%s", conf, line, name, verbs ? "" : "soft-");
	}
	expect(&r, "\n%d entries: %d open, %d cannot be opened, 0 not used by DAT 1.2 programs; 0 malformed lines\n",
	       (int)n, (int)n - !verbs, !verbs);
	if (!verbs)
		expect(&r, "using the soft backend (transport=auto) instead\n");
	/* The transports the shipped names promise (README, dat.conf). */
	/* The TCP ones without addr= report the host's address (iaaddr.h). */
	expect(&r, ": godat-shm: ok: opens (soft-shm, address 127.0.0.1)\n");
	expect(&r, ": godat-tcp: ok: opens (soft-tcp, address %s)\n", host_ia_addr());
	expect(&r, ": godat-tcp6: ok: opens (soft-tcp, address ::1)\n");
	expect(&r, ": godat: ok: opens (soft-auto, address %s)\n", host_ia_addr());
	expect_not(&r, "note:");
	free(list);
	free(infos);
	free(r.out);
	free(env);
}

/* ---- a dat.conf with malformed and unusable lines ---------------------------- */

static const char bad_conf[] =
	"# datinfo test registry\n"                                                         /* 1 */
	"good   u1.2 threadsafe default libdat.so.1 godat.1.0 \"transport=shm\" \"\"\n"      /* 2 */
	"short  u1.2 threadsafe default libdat.so.1 godat.1.0 \"transport=shm\"\n"           /* 3 */
	"badts  u1.2 sometimes default libdat.so.1 godat.1.0 \"\" \"\"\n"                    /* 4 */
	"quote  u1.2 threadsafe default libdat.so.1 godat.1.0 \"transport=shm \"\"\n"        /* 5 */
	"v20    u2.0 threadsafe default libdat.so.1 godat.1.0 \"transport=shm\" \"\"\n"      /* 6 */
	"kern   k1.2 threadsafe default libdat.so.1 godat.1.0 \"\" \"\"\n"                   /* 7 */
	"good   u1.2 threadsafe default libdat.so.1 godat.1.0 \"transport=tcp\" \"\"\n"      /* 8 */
	"ib     u1.2 threadsafe default libdat.so.1 godat.1.0 \"transport=ib\" \"\"\n"       /* 9 */
	"noif   u1.2 threadsafe default libdat.so.1 godat.1.0 \"addr=nosuchif0\" \"\"\n"     /* 10 */
	"ext    u1.2 threadsafe default libdapl-ext.so.2 ext.1.0 \"\" \"\"\n"                /* 11 */
	"badver u1.x threadsafe default libdat.so.1 godat.1.0 \"\" \"\"\n"                   /* 12 */
	"\n"                                                                                 /* 13 */
	"tcp    u1.2 threadsafe default libdat.so.1 godat.1.0 \"transport=tcp\" \"\"\n";     /* 14 */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void test_datinfo_malformed_conf(void **state)
{
	(void)state;
	char conf[PATH_MAX];
	snprintf(conf, sizeof conf, "%s/bad.conf", tmpdir);
	write_file(conf, bad_conf);
	char **env = env_with(conf);
	struct run r = run_datinfo(NULL, env);
	expect_status(&r, 0); /* good and tcp open */
	expect(&r, "registry: %s\n", conf);
	expect(&r, "%s:2: good: ok: opens (soft-shm, address 127.0.0.1)\n", conf);
	expect(&r, "%s:3: malformed, skipped by libdat: 7 fields, want 8\n", conf);
	expect(&r, "%s:4: malformed, skipped by libdat: thread safety \"sometimes\" is not threadsafe or nonthreadsafe\n",
	       conf);
	expect(&r, "%s:5: malformed, skipped by libdat: unterminated double quote\n", conf);
	expect(&r, "%s:6: v20: not for DAT 1.2 programs: API version u2.0", conf);
	expect(&r, "%s:7: kern: not for user programs: k1.2 is a kernel (k) entry\n", conf);
	expect(&r, "%s:8: good: not used: line 2 is the first u1.2 entry for good\n", conf);
	expect(&r, "%s:9: ib: cannot open: DAT_PROVIDER_NOT_FOUND (DAT_NAME_NOT_REGISTERED)\n", conf);
	expect(&r, "transport \"ib\"");
	expect(&r, "%s:10: noif: cannot open: DAT_PROVIDER_NOT_FOUND (DAT_NAME_NOT_REGISTERED)\n", conf);
	expect(&r, "\"nosuchif0\"");
	expect(&r, "%s:11: ext: cannot open: DAT_PROVIDER_NOT_FOUND (DAT_NAME_NOT_REGISTERED)\n", conf);
	expect(&r, "provider library \"libdapl-ext.so.2\" is not built in");
	expect(&r, "%s:12: malformed, skipped by libdat: API version \"u1.x\" is not u<major>.<minor>", conf);
	expect(&r, "%s:14: tcp: ok: opens (soft-tcp, address %s)\n", conf, host_ia_addr());
	expect(&r, "\n8 entries: 2 open, 3 cannot be opened, 3 not used by DAT 1.2 programs; 4 malformed lines\n");
	expect_not(&r, ":1:");
	expect_not(&r, ":13:");
	expect_not(&r, "note:");
	free(r.out);

	/* A registry none of whose entries opens: exit 1. */
	write_file(conf, "ib u1.2 threadsafe default libdat.so.1 godat.1.0 \"transport=ib\" \"\"\n"
			 "x y\n");
	r = run_datinfo(NULL, env);
	expect_status(&r, 1);
	expect(&r, "%s:1: ib: cannot open:", conf);
	expect(&r, "%s:2: malformed, skipped by libdat: 2 fields, want 8\n", conf);
	expect(&r, "\n1 entries: 0 open, 1 cannot be opened, 0 not used by DAT 1.2 programs; 1 malformed lines\n");
	free(r.out);
	unlink(conf);
	free(env);
}

/* ---- DAT_OVERRIDE set to a missing file, and unset -------------------------- */

static void test_datinfo_override_missing(void **state)
{
	(void)state;
	char conf[PATH_MAX];
	snprintf(conf, sizeof conf, "%s/no-such-dat.conf", tmpdir);
	char **env = env_with(conf);
	struct run r = run_datinfo(NULL, env);
	expect_status(&r, 1);
	expect(&r, "registry: none\n");
	expect(&r, "because DAT_OVERRIDE is set");
	expect(&r, "DAT_OVERRIDE=%s does not exist\n", conf);
	expect(&r, "no IA can be opened");
	free(r.out);
	free(env);
}

/* With DAT_OVERRIDE unset the library searches its sysconfdir, then
 * /etc/dat.conf; which exist depends on the machine, so the test checks
 * datinfo against the files and against the library in this process. */
static void test_datinfo_override_unset(void **state)
{
	(void)state;
	char **env = env_with(NULL);
	struct run r = run_datinfo(NULL, env);
	expect(&r, "because DAT_OVERRIDE is not set and ");
	expect_not(&r, "DAT_OVERRIDE is set");
	/* The candidates, in order: "    PATH   exists|not found". */
	const char *p = strstr(r.out, ":\n    ");
	assert_non_null(p);
	p += 2;
	char first_existing[PATH_MAX] = "", last[PATH_MAX] = "";
	int ncand = 0;
	while (strncmp(p, "    /", 5) == 0) {
		char path[PATH_MAX];
		size_t k = strcspn(p + 4, " ");
		snprintf(path, sizeof path, "%.*s", (int)k, p + 4);
		struct stat st;
		int there = stat(path, &st) == 0;
		const char *eol = strchr(p, '\n');
		assert_non_null(eol);
		char line[PATH_MAX + 64];
		snprintf(line, sizeof line, "%.*s", (int)(eol - p), p);
		if (!strstr(line, there ? " exists" : " not found"))
			fail_msg("candidate line \"%s\": %s %s", line, path, there ? "exists" : "does not exist");
		if (there && !first_existing[0])
			snprintf(first_existing, sizeof first_existing, "%s", path);
		snprintf(last, sizeof last, "%s", path);
		ncand++;
		p = eol + 1;
	}
	assert_int_equal(ncand, 2);
	assert_string_equal(last, "/etc/dat.conf");
	expect(&r, "(libdat's sysconfdir)");

	/* The library, asked in this process with DAT_OVERRIDE unset. */
	char saved[PATH_MAX];
	snprintf(saved, sizeof saved, "%s", shipped());
	unsetenv("DAT_OVERRIDE");
	DAT_COUNT n = 0;
	DAT_RETURN ret = dat_registry_list_providers(0, &n, NULL);
	setenv("DAT_OVERRIDE", saved, 1);
	if (!first_existing[0]) {
		/* dat_registry_list_providers(3DAT): no static registry. */
		check_type(ret, DAT_INTERNAL_ERROR);
		expect(&r, "registry: none\n");
		expect_status(&r, 1);
	} else {
		check_type(ret, DAT_INVALID_PARAMETER);
		expect(&r, "registry: %s\n", first_existing);
		expect_not(&r, "note:"); /* datinfo found as many entries as the library */
	}
	free(r.out);
	free(env);
}

/* ---- datinfo -v IA ------------------------------------------------------------ */

static void test_datinfo_verbose(void **state)
{
	(void)state;
	/* The IA under test, as datinfo shows it and as the library opens it. */
	const char *conf = shipped();
	const char *transport = strcmp(TEST_IA, "godat-shm") == 0   ? "soft-shm"
				: strcmp(TEST_IA, "godat-tcp") == 0 ? "soft-tcp"
				: strcmp(TEST_IA, "godat") == 0     ? "soft-auto"
								    : NULL;
	if (transport == NULL)
		skip(); /* an IA whose transport this test does not know */
	char *args[] = {"-v", TEST_IA, NULL};
	struct run r = run_datinfo(args, NULL);
	expect_status(&r, 0);
	expect(&r, "\nIA %s\n", TEST_IA);
	char buf[256];
	char want[PATH_MAX + 16];
	char entry[64];
	snprintf(entry, sizeof entry, "%s ", TEST_IA);
	snprintf(want, sizeof want, "%s:%d", conf, line_of(conf, entry));
	assert_string_equal(value_of(&r, "entry", buf, sizeof buf), want);
	assert_string_equal(value_of(&r, "transport", buf, sizeof buf), transport);
	assert_string_equal(value_of(&r, "address", buf, sizeof buf), shipped_ia_addr(TEST_IA));
	expect(&r, "\nDAT_IA_ATTR\n");
	expect(&r, "\nDAT_PROVIDER_ATTR\n");

	/* The values are the library's: compare with dat_ia_query here. */
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia = open_ia(&async);
	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR pa;
	memset(&ia_attr, 0, sizeof ia_attr);
	memset((void *)&pa, 0, sizeof pa);
	check_ok(dat_ia_query(ia, &async, DAT_IA_FIELD_ALL, &ia_attr, DAT_PROVIDER_FIELD_ALL, &pa));
	char num[64];
	assert_string_equal(value_of(&r, "adapter_name", buf, sizeof buf), ia_attr.adapter_name);
	assert_string_equal(value_of(&r, "vendor_name", buf, sizeof buf), ia_attr.vendor_name);
	assert_string_equal(value_of(&r, "ia_address_ptr", buf, sizeof buf), shipped_ia_addr(TEST_IA));
#define SAME_NUM(field, v)                                                          \
	do {                                                                        \
		snprintf(num, sizeof num, "%lld", (long long)(v));                  \
		assert_string_equal(value_of(&r, field, buf, sizeof buf), num);     \
	} while (0)
	SAME_NUM("max_eps", ia_attr.max_eps);
	SAME_NUM("max_dto_per_ep", ia_attr.max_dto_per_ep);
	SAME_NUM("max_evd_qlen", ia_attr.max_evd_qlen);
	SAME_NUM("max_iov_segments_per_dto", ia_attr.max_iov_segments_per_dto);
	SAME_NUM("max_lmr_block_size", ia_attr.max_lmr_block_size);
	SAME_NUM("max_message_size", ia_attr.max_message_size);
	SAME_NUM("max_rdma_size", ia_attr.max_rdma_size);
	SAME_NUM("max_srqs", ia_attr.max_srqs);
	SAME_NUM("max_recv_per_srq", ia_attr.max_recv_per_srq);
	SAME_NUM("max_rdma_read_out", ia_attr.max_rdma_read_out);
	SAME_NUM("num_transport_attr", ia_attr.num_transport_attr);
	SAME_NUM("dapl_version_major", pa.dapl_version_major);
	SAME_NUM("dapl_version_minor", pa.dapl_version_minor);
	SAME_NUM("max_private_data_size", pa.max_private_data_size);
	SAME_NUM("optimal_buffer_alignment", pa.optimal_buffer_alignment);
	SAME_NUM("srq_watermarks_supported", pa.srq_watermarks_supported);
#undef SAME_NUM
	assert_string_equal(value_of(&r, "provider_name", buf, sizeof buf), pa.provider_name);
	assert_string_equal(value_of(&r, "is_thread_safe", buf, sizeof buf),
			    pa.is_thread_safe == DAT_TRUE ? "DAT_TRUE" : "DAT_FALSE");
	assert_string_equal(value_of(&r, "srq_supported", buf, sizeof buf),
			    pa.srq_supported == DAT_TRUE ? "DAT_TRUE" : "DAT_FALSE");
	if (pa.iov_ownership_on_return == DAT_IOV_CONSUMER)
		assert_string_equal(value_of(&r, "iov_ownership_on_return", buf, sizeof buf), "DAT_IOV_CONSUMER");
	if (pa.completion_flags_supported & DAT_COMPLETION_SUPPRESS_FLAG)
		assert_non_null(strstr(value_of(&r, "completion_flags_supported", buf, sizeof buf),
				       "DAT_COMPLETION_SUPPRESS_FLAG"));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	free(r.out);

	char *args6[] = {"-v", "godat-tcp6", NULL};
	r = run_datinfo(args6, NULL);
	expect_status(&r, 0);
	assert_string_equal(value_of(&r, "transport", buf, sizeof buf), "soft-tcp");
	assert_string_equal(value_of(&r, "address", buf, sizeof buf), "::1");
	assert_string_equal(value_of(&r, "ia_address_ptr", buf, sizeof buf), "::1");
	free(r.out);
}

static void test_datinfo_verbose_cannot_open(void **state)
{
	(void)state;
	char *nosuch[] = {"-v", "no-such-ia", NULL};
	struct run r = run_datinfo(nosuch, NULL);
	expect_status(&r, 1);
	expect(&r, "IA no-such-ia: cannot open: DAT_PROVIDER_NOT_FOUND (DAT_NAME_NOT_REGISTERED)\n");
	expect(&r, "\"no-such-ia\" is not in \"%s\"", shipped());
	expect_not(&r, "DAT_IA_ATTR");
	free(r.out);

	char conf[PATH_MAX];
	snprintf(conf, sizeof conf, "%s/bad.conf", tmpdir);
	write_file(conf, bad_conf);
	char **env = env_with(conf);
	char *ib[] = {"-v", "ib", NULL};
	r = run_datinfo(ib, env);
	expect_status(&r, 1);
	expect(&r, "IA ib: cannot open: DAT_PROVIDER_NOT_FOUND (DAT_NAME_NOT_REGISTERED)\n");
	expect(&r, "ib (%s:9)", conf);
	expect(&r, "transport \"ib\"");
	free(r.out);

	char *v20[] = {"-v", "v20", NULL};
	r = run_datinfo(v20, env);
	expect_status(&r, 1);
	expect(&r, "has no u1.2 entry, only u2.0 at %s:6", conf);
	free(r.out);

	char *shortie[] = {"-v", "short", NULL};
	r = run_datinfo(shortie, env);
	expect_status(&r, 1);
	expect(&r, "%s:3: an entry for short, skipped by libdat as malformed: 7 fields, want 8\n", conf);
	free(r.out);
	unlink(conf);
	free(env);
}

/* ---- datinfo --env -------------------------------------------------------------- */

static void test_datinfo_env(void **state)
{
	(void)state;
	static const char *const drop[] = {"GODAT_LOG_FILE", "GODAT_LOG", NULL};
	static char *add[] = {"GODAT_LOG_FILE=/tmp/datinfo-test.log", NULL};
	char **env = make_env(drop, add);
	char *args[] = {"--env", NULL};
	struct run r = run_datinfo(args, env);
	expect_status(&r, 0);
	size_t nvars = sizeof godat_env / sizeof godat_env[0];
	assert_true(nvars >= 6);
	for (size_t i = 0; i < nvars; i++) {
		const struct godat_env *e = &godat_env[i];
		expect(&r, "\n%s\n    default: %s\n", e->name, *e->def ? e->def : "(unset)");
		expect(&r, "\n    %s\n", e->help);
	}
	/* The names the library reads (README, godat(7)). */
	expect(&r, "\nDAT_OVERRIDE\n");
	expect(&r, "\nGODAT_LOG\n");
	expect(&r, "\nDAT_DBG_TYPE\n");
	expect(&r, "\nGODAT_LOG_FILE\n    default: stderr\n    set here: \"/tmp/datinfo-test.log\"\n");
	expect(&r, "\nGODAT_LOG\n    default: off\n    set here: no\n");
	free(r.out);
	free(env);
}

static void test_datinfo_usage(void **state)
{
	(void)state;
	char *bad[] = {"--bogus", NULL};
	struct run r = run_datinfo(bad, NULL);
	expect_status(&r, 2);
	expect(&r, "usage: datinfo");
	free(r.out);
	char *noarg[] = {"-v", NULL};
	r = run_datinfo(noarg, NULL);
	expect_status(&r, 2);
	free(r.out);
}

static int setup(void **state)
{
	(void)state;
	datinfo_path();
	snprintf(tmpdir, sizeof tmpdir, "/tmp/godat-datinfo-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char out[PATH_MAX];
	snprintf(out, sizeof out, "%s/out", tmpdir);
	unlink(out);
	rmdir(tmpdir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_datinfo_shipped_conf),
		cmocka_unit_test(test_datinfo_malformed_conf),
		cmocka_unit_test(test_datinfo_override_missing),
		cmocka_unit_test(test_datinfo_override_unset),
		cmocka_unit_test(test_datinfo_verbose),
		cmocka_unit_test(test_datinfo_verbose_cannot_open),
		cmocka_unit_test(test_datinfo_env),
		cmocka_unit_test(test_datinfo_usage),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
