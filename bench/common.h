/* Helpers shared by the benchmark programs: clocks, sizing, and starting
 * the second process (posix_spawn of our own executable: never fork()
 * after libdat, and so the Go runtime, is loaded). */
#ifndef GODAT_BENCH_COMMON_H
#define GODAT_BENCH_COMMON_H

#define _GNU_SOURCE
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define KiB (1024ull)
#define MiB (1024ull * 1024)

static inline double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Seconds each timed measurement aims for (BENCH_TIME, default 0.2). */
static inline double bench_time(void)
{
	const char *s = getenv("BENCH_TIME");
	double t = s ? atof(s) : 0.2;
	return t > 0.001 && t < 60 ? t : 0.2;
}

/* How many iterations fill the measurement time, given that a probe of
 * probe_n iterations took probe_s seconds; clamped to [lo, hi]. */
static inline uint64_t fill_time(uint64_t probe_n, double probe_s, uint64_t lo, uint64_t hi)
{
	double per = probe_s / (double)(probe_n ? probe_n : 1);
	double n = per > 0 ? bench_time() / per : (double)hi;
	if (n < (double)lo)
		return lo;
	if (n > (double)hi)
		return hi;
	return (uint64_t)n;
}

/* Starts our own executable again with argv (argv[0] is replaced). */
static inline pid_t spawn_self(char **argv)
{
	static char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	pid_t pid;
	if (n < 0) {
		perror("readlink /proc/self/exe");
		exit(1);
	}
	self[n] = 0;
	argv[0] = self;
	if (posix_spawn(&pid, self, NULL, NULL, argv, environ) != 0) {
		perror("posix_spawn");
		exit(1);
	}
	return pid;
}

/* Waits for a spawned child; a failure of the child is ours too. */
static inline int reap(pid_t pid, const char *who)
{
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "%s: child process failed\n", who);
		return 1;
	}
	return 0;
}

/* Page-aligned, touched memory (no page faults inside a measurement). */
static inline char *alloc_buf(size_t n)
{
	void *p;
	if (posix_memalign(&p, 4096, n)) {
		fprintf(stderr, "out of memory (%zu bytes)\n", n);
		exit(1);
	}
	memset(p, 0x5a, n);
	return p;
}

#endif
