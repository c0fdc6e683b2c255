/* Helpers for tests that run a child process: a monotonic clock and a
 * bounded wait, so a child that hangs fails the test instead of CI. */
#ifndef GODAT_CTEST_CHILD_H
#define GODAT_CTEST_CHILD_H

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

#endif
