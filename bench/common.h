/* Helpers shared by the benchmark programs: clocks, sizing, and starting
 * the second process (posix_spawn of our own executable: never fork()
 * after libdat, and so the Go runtime, is loaded). */
#ifndef GODAT_BENCH_COMMON_H
#define GODAT_BENCH_COMMON_H

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <sched.h>
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

/* A measurement is split into BENCH_WINDOWS (default 3) back-to-back
 * windows and every window's figure is printed; the table shows the median
 * over all windows of all rounds, for every tool alike (run.sh runs the
 * peers once per window). On a shared machine a window that another process
 * interrupted, or one that was unusually lucky, does not decide a cell. */
static inline unsigned bench_windows(void)
{
	const char *s = getenv("BENCH_WINDOWS");
	int n = s ? atoi(s) : 3;
	return n >= 1 && n <= 50 ? (unsigned)n : 3;
}

/* Window bookkeeping: tick() once per operation of a run of count. */
struct windows {
	uint64_t per, k;
	unsigned n, skip; /* windows done; leading windows not to count */
	unsigned got;     /* windows recorded in t[] */
	double t0, t[64];
};

static inline void win_start(struct windows *w, uint64_t count, unsigned skip)
{
	unsigned n = bench_windows() + skip;
	w->per = count / n ? count / n : 1;
	w->k = 0;
	w->n = 0;
	w->got = 0;
	w->skip = skip;
	w->t0 = now_s();
}

static inline void win_tick(struct windows *w)
{
	if (++w->k < w->per)
		return;
	double t = now_s();
	if (w->n++ >= w->skip && w->got < sizeof w->t / sizeof *w->t)
		w->t[w->got++] = (t - w->t0) / (double)w->per;
	w->t0 = t;
	w->k = 0;
}

/* Seconds per operation in the fastest window (probes use it to size the
 * real run). */
static inline double win_best(const struct windows *w)
{
	double b = 0;
	for (unsigned i = 0; i < w->got; i++)
		if (b == 0 || w->t[i] < b)
			b = w->t[i];
	return b;
}

/* The two processes of a measurement run on two different CPUs, as run.sh
 * also runs the peers: BENCH_CPUS="A,B" (role 0 on A, role 1 on B), by
 * default the first two CPUs this process may use. With one CPU nothing is
 * pinned. Pinning keeps the scheduler from stacking two spinning processes
 * on one CPU, which would measure time slices instead of the transport. */
static inline int bench_cpu(int role)
{
	const char *s = getenv("BENCH_CPUS");
	int a, b;
	if (s && sscanf(s, "%d,%d", &a, &b) == 2)
		return role ? b : a;
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) < 2)
		return -1;
	for (int c = 0, n = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set) && n++ == role)
			return c;
	return -1;
}

/* Pins the whole process to the CPU of its role, as a launcher's binding of
 * a process does (hwloc's process binding, mpirun --bind-to core): every
 * thread, so that the library's threads share that CPU with the
 * application. A DAT program pins itself once its first DAT call returned:
 * libdat's Go runtime starts on a thread of its own, beside main, and reads
 * the CPUs allowed as it starts. A thread started during the
 * walk inherits its creator's mask, which may be the old one: the walk
 * repeats until a pass finds every thread pinned. A parent calls
 * bench_cpus_fix() first, so that the child it starts, which pins itself
 * after exec, takes the other CPU, and pins itself only after starting the
 * child (a mask is inherited). */
static inline void bench_pin(int role)
{
	int cpu = bench_cpu(role);
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	for (int pass = 0; pass < 16; pass++) {
		DIR *d = opendir("/proc/self/task");
		if (!d) {
			perror("bench: /proc/self/task");
			if (sched_setaffinity(0, sizeof set, &set) != 0)
				perror("bench: sched_setaffinity");
			return;
		}
		int moved = 0;
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			pid_t tid = (pid_t)atoi(e->d_name);
			cpu_set_t cur;
			if (sched_getaffinity(tid, sizeof cur, &cur) == 0 && CPU_EQUAL(&cur, &set))
				continue;
			if (sched_setaffinity(tid, sizeof set, &set) == 0)
				moved = 1;
			else if (errno != ESRCH) /* a thread that ended meanwhile */
				perror("bench: sched_setaffinity");
		}
		closedir(d);
		if (!moved)
			return;
	}
}

/* Fixes BENCH_CPUS for this process and the ones it starts, so that a
 * child pinned after its parent still picks the other CPU. */
static inline void bench_cpus_fix(void)
{
	char v[32];
	int a = bench_cpu(0), b = bench_cpu(1);
	if (a < 0 || b < 0 || getenv("BENCH_CPUS"))
		return;
	snprintf(v, sizeof v, "%d,%d", a, b);
	setenv("BENCH_CPUS", v, 1);
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

/* Touched memory (no page faults inside a measurement), 2 MiB-aligned
 * when large so that every program's buffers get the same page backing
 * (transparent huge pages where the system uses them). */
static inline char *alloc_buf(size_t n)
{
	void *p;
	if (posix_memalign(&p, n >= 2 * MiB ? 2 * MiB : 4096, n)) {
		fprintf(stderr, "out of memory (%zu bytes)\n", n);
		exit(1);
	}
	memset(p, 0x5a, n);
	return p;
}

#endif
