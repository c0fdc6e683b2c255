/* The TCP transport on loopback: client/server scenarios of the xfer
 * program (ctest/tcp/xfer.c) over godat-tcp (IPv4 and IPv6), between an
 * auto IA and a TCP-only one, and with one side killed by SIGKILL in the
 * middle of a transfer (the survivor sees the end of the connection and
 * reconnects to a restarted peer). A basic client breaks two connections
 * on purpose with remote access violations before its last one (xfer.c),
 * so a server serves three connections per basic client. Across network
 * namespaces the same scenarios run from tcp/netns.sh. */
#define _GNU_SOURCE
#include "child.h"
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>

struct proc {
	pid_t pid;
	int out;
	char buf[8192];
	size_t len;
};

static char xfer[4096];

static int setup_all(void **state)
{
	(void)state;
	const char *bin = getenv("GODAT_CTEST_BIN");
	if (!bin)
		bin = ".";
	snprintf(xfer, sizeof xfer, "%s/xfer", bin);
	return access(xfer, X_OK) == 0 ? 0 : -1;
}

/* start runs xfer with args; its stdout comes back through a pipe. */
static void start(struct proc *p, const char *const args[])
{
	int fds[2];
	char *argv[8];
	int i = 0;
	argv[i++] = xfer;
	for (; args[i - 1] && i < 7; i++)
		argv[i] = (char *)args[i - 1];
	argv[i] = NULL;
	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	assert_int_equal(posix_spawn(&p->pid, xfer, &fa, NULL, argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	p->out = fds[0];
	p->len = 0;
}

/* expect reads p's output until a line starting with prefix arrives (copied
 * to line) or limit_ms pass; it fails the test on timeout or EOF. */
static void expect(struct proc *p, const char *prefix, char *line, size_t cap, int limit_ms)
{
	long deadline = now_ns() + (long)limit_ms * 1000000L;
	for (;;) {
		char *nl;
		while ((nl = memchr(p->buf, '\n', p->len)) != NULL) {
			size_t n = (size_t)(nl - p->buf);
			*nl = 0;
			int match = strncmp(p->buf, prefix, strlen(prefix)) == 0;
			if (match && line) {
				size_t k = n < cap - 1 ? n : cap - 1;
				memcpy(line, p->buf, k);
				line[k] = 0;
			}
			memmove(p->buf, nl + 1, p->len - n - 1);
			p->len -= n + 1;
			if (match)
				return;
		}
		long left = (deadline - now_ns()) / 1000000L;
		if (left <= 0)
			fail_msg("no \"%s\" line from xfer (pid %d) within %d ms", prefix, p->pid, limit_ms);
		struct pollfd pf = {.fd = p->out, .events = POLLIN};
		if (poll(&pf, 1, (int)left) <= 0)
			continue;
		ssize_t r = read(p->out, p->buf + p->len, sizeof p->buf - p->len - 1);
		if (r <= 0)
			fail_msg("xfer (pid %d) ended before printing \"%s\"", p->pid, prefix);
		p->len += (size_t)r;
	}
}

/* finish waits (bounded) for p and checks it exited 0. */
static void finish(struct proc *p, int limit_s)
{
	int status;
	if (wait_bounded(p->pid, limit_s, &status) != 0)
		fail_msg("xfer (pid %d) did not end within %d s", p->pid, limit_s);
	close(p->out);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("xfer (pid %d) failed: status 0x%x", p->pid, status);
}

static void sigkill(struct proc *p)
{
	int status;
	kill(p->pid, SIGKILL);
	waitpid(p->pid, &status, 0);
	close(p->out);
}

/* The server's next "END ..." line is exactly want. */
static void expect_end(struct proc *s, const char *want)
{
	char end[64];
	expect(s, "END ", end, sizeof end, 10000);
	if (strcmp(end, want) != 0)
		fail_msg("server: \"%s\", want \"%s\"", end, want);
}

/* What the server prints for the three connections of a basic client:
 * the first two end with the client's remote access violations, which
 * break them (xfer.c), the third in order. */
static void expect_basic_ends(struct proc *s)
{
	expect_end(s, "END BROKEN ACCESS");
	expect_end(s, "END BROKEN ACCESS");
	expect_end(s, "END DISCONNECTED");
}

/* A server on one IA, a basic client on another. */
static void pair(const char *sia, const char *cia, const char *addr)
{
	struct proc s, c;
	char line[128];
	start(&s, (const char *const[]){"server", sia, "any", "3", NULL});
	expect(&s, "QUAL ", line, sizeof line, 10000);
	start(&c, (const char *const[]){"client", cia, addr, line + 5, "basic", NULL});
	finish(&c, 60);
	expect_basic_ends(&s);
	finish(&s, 20);
}

static void test_tcp_ipv4(void **state)
{
	(void)state;
	pair("godat-tcp", "godat-tcp", "127.0.0.1");
}

static void test_tcp_ipv6(void **state)
{
	(void)state;
	pair("godat-tcp6", "godat-tcp6", "::1");
}

/* auto to a TCP-only server on this host goes over TCP, and a TCP-only
 * client reaches an auto server. */
static void test_tcp_auto_interop(void **state)
{
	(void)state;
	pair("godat-tcp", "godat", "127.0.0.1");
	pair("godat", "godat-tcp", "127.0.0.1");
}

static char qual_s[32];

static const char *fixed_qual(void)
{
	snprintf(qual_s, sizeof qual_s, "%llu", 0x5eedULL << 32 | (unsigned long long)(20000 + getpid() % 20000));
	return qual_s;
}

/* The server dies mid-transfer: the client sees BROKEN (or DISCONNECTED)
 * and reconnects to a server restarted on the same qualifier. */
static void test_tcp_kill_server(void **state)
{
	(void)state;
	struct proc s, s2, c;
	char line[128];
	const char *q = fixed_qual();
	start(&s, (const char *const[]){"server", "godat-tcp", q, "1", NULL});
	expect(&s, "QUAL ", NULL, 0, 10000);
	start(&c, (const char *const[]){"client", "godat-tcp", "127.0.0.1", q, "survive", NULL});
	expect(&c, "STREAMING", NULL, 0, 20000);
	long t0 = now_ns();
	sigkill(&s);
	expect(&c, "EVENT ", line, sizeof line, 10000);
	print_message("client saw \"%s\" %.1f ms after the SIGKILL\n", line, (now_ns() - t0) / 1e6);
	assert_true(strcmp(line, "EVENT BROKEN") == 0 || strcmp(line, "EVENT DISCONNECTED") == 0);
	start(&s2, (const char *const[]){"server", "godat-tcp", q, "3", NULL});
	expect(&c, "RECONNECTED", NULL, 0, 40000);
	finish(&c, 20);
	expect_basic_ends(&s2);
	finish(&s2, 20);
}

/* The client dies mid-transfer: the server sees BROKEN and serves the
 * next client on the same EP. */
static void test_tcp_kill_client(void **state)
{
	(void)state;
	struct proc s, c1, c2;
	char line[128];
	start(&s, (const char *const[]){"server", "godat-tcp", "any", "4", NULL});
	expect(&s, "QUAL ", line, sizeof line, 10000);
	start(&c1, (const char *const[]){"client", "godat-tcp", "127.0.0.1", line + 5, "stream", NULL});
	expect(&c1, "STREAMING", NULL, 0, 20000);
	long t0 = now_ns();
	sigkill(&c1);
	char end[64];
	expect(&s, "END ", end, sizeof end, 10000);
	print_message("server saw \"%s\" %.1f ms after the SIGKILL\n", end, (now_ns() - t0) / 1e6);
	assert_string_equal(end, "END BROKEN");
	start(&c2, (const char *const[]){"client", "godat-tcp", "127.0.0.1", line + 5, "basic", NULL});
	finish(&c2, 60);
	expect_basic_ends(&s);
	finish(&s, 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_ipv4),
		cmocka_unit_test(test_tcp_ipv6),
		cmocka_unit_test(test_tcp_auto_interop),
		cmocka_unit_test(test_tcp_kill_server),
		cmocka_unit_test(test_tcp_kill_client),
	};
	return cmocka_run_group_tests_name("tcp", tests, setup_all, NULL);
}
