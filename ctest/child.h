/* Helpers for tests that run a child process: a monotonic clock and a
 * bounded wait, so a child that hangs fails the test instead of CI. */
#ifndef GODAT_CTEST_CHILD_H
#define GODAT_CTEST_CHILD_H

#include "common.h"
#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/wait.h>

static inline long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Waits for pid at most limit_s seconds; on timeout kills and reaps it and
 * returns -1. Otherwise returns 0 with the wait status in *status. */
static inline int wait_bounded(pid_t pid, int limit_s, int *status)
{
	long deadline = now_ns() + (long)limit_s * 1000000000L;
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);
		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return -1;
		if (now_ns() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			return -1;
		}
		usleep(10000);
	}
}

extern char **environ;

/* A copy of the environment without the variables in drop[] and with
 * add[] appended, built before fork so the child only has to exec. */
static inline char **make_env(const char *const *drop, char *const *add)
{
	size_t n = 0, k = 0, na = 0;
	while (environ[n])
		n++;
	while (add[na])
		na++;
	char **env = calloc(n + na + 1, sizeof *env);
	assert_non_null(env);
	for (size_t i = 0; i < n; i++) {
		int skip = 0;
		for (const char *const *d = drop; *d; d++) {
			size_t l = strlen(*d);
			if (strncmp(environ[i], *d, l) == 0 && environ[i][l] == '=')
				skip = 1;
		}
		if (!skip)
			env[k++] = environ[i];
	}
	for (size_t i = 0; i < na; i++)
		env[k++] = add[i];
	env[k] = NULL;
	return env;
}

#endif
