/*
 * floors: what the machine itself allows, measured with plain C next to
 * godat in the same `make bench` run. No DAT, no library.
 *
 * The parent starts a second process (posix_spawn of this program) that
 * shares a memfd with it, then measures (one line each: "floor <row>
 * <size> <value>"):
 *   flag    one-way latency (us) of a shared-memory ping-pong: per hop the
 *           sender memcpy()s the message into the shared segment and
 *           raises a flag the receiver spins on. The lower bound of any
 *           one-copy polling transport.
 *   futex   the same ping-pong, but each side sleeps in FUTEX_WAIT and is
 *           woken by FUTEX_WAKE on every hop (no spinning): the cost of one
 *           cross-process wake-up per hop.
 *   memcpy  GB/s of one memcpy() of the buffer, in one process.
 *   pvm_write, pvm_read
 *           GB/s of one process_vm_writev / process_vm_readv per buffer
 *           into / out of the other process (cross-memory attach, one
 *           copy, the syscall godat's RDMA and large sends use).
 * Counts are sized from a probe to take about BENCH_TIME seconds each,
 * split into BENCH_WINDOWS windows with one line each (common.h). The two
 * processes run on two different CPUs (bench_cpu in common.h).
 */
#include "common.h"

#include <inttypes.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#define LAT_MAX MiB
#define BW_MAX (16 * MiB)

enum { OP_NONE, OP_FLAG, OP_FUTEX, OP_EXIT };

struct shared {
	_Alignas(64) _Atomic uint32_t cmd;  /* parent bumps it to start an op */
	_Alignas(64) _Atomic uint32_t done; /* child copies cmd when finished */
	_Alignas(64) _Atomic uint32_t a;    /* parent → child hop counter */
	_Alignas(64) _Atomic uint32_t b;    /* child → parent hop counter */
	_Alignas(64) uint32_t op;
	uint64_t size, count;
	uint64_t child_buf; /* address of the child's BW_MAX buffer */
	_Alignas(4096) char ping[LAT_MAX];
	char pong[LAT_MAX];
};

static long futex(_Atomic uint32_t *w, int op, uint32_t v)
{
	return syscall(SYS_futex, (uint32_t *)w, op, v, NULL, NULL, 0);
}

/* Sleeps until *w != v (no spinning: the floor is the wake-up itself). */
static void futex_await_change(_Atomic uint32_t *w, uint32_t v)
{
	while (atomic_load_explicit(w, memory_order_acquire) == v)
		futex(w, FUTEX_WAIT, v);
}

static void futex_set(_Atomic uint32_t *w, uint32_t v)
{
	atomic_store_explicit(w, v, memory_order_release);
	futex(w, FUTEX_WAKE, 1);
}

static void spin_until(_Atomic uint32_t *w, uint32_t v)
{
	while (atomic_load_explicit(w, memory_order_acquire) != v)
		__builtin_ia32_pause();
}

static int child(int fd)
{
	bench_pin(0); /* the measuring parent takes role 1, like datbench's client */
	struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED) {
		perror("floors child: mmap");
		return 1;
	}
	/* Let the parent use process_vm_* on us under Yama ptrace_scope=1. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	char *priv = alloc_buf(LAT_MAX);
	char *buf = alloc_buf(BW_MAX);
	sh->child_buf = (uint64_t)(uintptr_t)buf;
	uint32_t seen = 0;
	futex_set(&sh->done, 1); /* ready */
	for (;;) {
		futex_await_change(&sh->cmd, seen);
		seen = atomic_load(&sh->cmd);
		uint64_t n = sh->count, size = sh->size;
		switch (sh->op) {
		case OP_FLAG:
			for (uint32_t i = 1; i <= n; i++) {
				spin_until(&sh->a, i);
				memcpy(sh->pong, priv, size);
				atomic_store_explicit(&sh->b, i, memory_order_release);
			}
			break;
		case OP_FUTEX:
			for (uint32_t i = 1; i <= n; i++) {
				futex_await_change(&sh->a, i - 1);
				memcpy(sh->pong, priv, size);
				futex_set(&sh->b, i);
			}
			break;
		case OP_EXIT:
			return 0;
		}
		futex_set(&sh->done, seen + 1);
	}
}

static struct shared *sh;
static pid_t kid;
static char *priv;

/* Starts op in the child; returns after the child has taken it. */
static void start(uint32_t op, uint64_t size, uint64_t count)
{
	atomic_store(&sh->a, 0);
	atomic_store(&sh->b, 0);
	sh->op = op;
	sh->size = size;
	sh->count = count;
	uint32_t c = atomic_load(&sh->cmd) + 1;
	futex_set(&sh->cmd, c);
}

/* Waits until the child has finished the op started last. */
static void finish(void)
{
	uint32_t want = atomic_load(&sh->cmd) + 1, d;
	while ((d = atomic_load(&sh->done)) != want)
		futex_await_change(&sh->done, d);
}

static void report(const char *row, uint64_t size, const struct windows *w, int lat)
{
	for (unsigned i = 0; i < w->got; i++)
		printf("floor %s %" PRIu64 " %.3f\n", row, size, lat ? w->t[i] / 2 * 1e6 : (double)size / w->t[i] / 1e9);
	fflush(stdout);
}

/* n round trips, timed in windows. */
static void pingpong(struct windows *w, int futexes, uint64_t size, uint64_t n)
{
	start(futexes ? OP_FUTEX : OP_FLAG, size, n);
	win_start(w, n, 0);
	for (uint32_t i = 1; i <= n; i++) {
		memcpy(sh->ping, priv, size);
		if (futexes) {
			futex_set(&sh->a, i);
			futex_await_change(&sh->b, i - 1);
		} else {
			atomic_store_explicit(&sh->a, i, memory_order_release);
			spin_until(&sh->b, i);
		}
		win_tick(w);
	}
	finish();
}

static void lat(const char *row, int futexes, uint64_t size)
{
	struct windows w;
	pingpong(&w, futexes, size, futexes ? 100 : 1000);
	pingpong(&w, futexes, size, fill_time(1, win_best(&w), 100, 4000000));
	report(row, size, &w, 1);
}

/* n copies, timed in windows. */
static void copy_run(struct windows *w, int kind, uint64_t size, uint64_t n, char *src, char *dst)
{
	struct iovec l = {.iov_base = kind == 2 ? dst : src, .iov_len = size};
	struct iovec r = {.iov_base = (void *)(uintptr_t)sh->child_buf, .iov_len = size};
	win_start(w, n, 0);
	for (uint64_t i = 0; i < n; i++) {
		ssize_t got = (ssize_t)size;
		if (kind == 0)
			memcpy(dst, src, size);
		else if (kind == 1)
			got = process_vm_writev(kid, &l, 1, &r, 1, 0);
		else
			got = process_vm_readv(kid, &l, 1, &r, 1, 0);
		if (got != (ssize_t)size) {
			perror("floors: process_vm_*");
			exit(1);
		}
		win_tick(w);
	}
}

static void bw(const char *row, int kind, uint64_t size, char *src, char *dst)
{
	struct windows w;
	uint64_t probe = size >= MiB ? 8 : 256;
	copy_run(&w, kind, size, probe, src, dst);
	copy_run(&w, kind, size, fill_time(1, win_best(&w), probe, 100000000), src, dst);
	report(row, size, &w, 0);
}

int main(int argc, char **argv)
{
	alarm(120);
	if (argc == 3 && strcmp(argv[1], "--child") == 0)
		return child(atoi(argv[2]));
	int fd = memfd_create("godat-floors", 0);
	if (fd < 0 || ftruncate(fd, sizeof *sh) != 0) {
		perror("floors: memfd");
		return 1;
	}
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (sh == MAP_FAILED) {
		perror("floors: mmap");
		return 1;
	}
	memset(sh, 0, sizeof *sh);
	char fds[16];
	snprintf(fds, sizeof fds, "%d", fd);
	char *cargv[] = {NULL, "--child", fds, NULL};
	bench_cpus_fix();
	kid = spawn_self(cargv);
	bench_pin(1);
	futex_await_change(&sh->done, 0); /* child mapped and ready */

	priv = alloc_buf(LAT_MAX);
	static const uint64_t lat_sizes[] = {8, 64, 4 * KiB, 64 * KiB, MiB};
	static const uint64_t bw_sizes[] = {4 * KiB, 64 * KiB, MiB, 16 * MiB};
	for (size_t i = 0; i < sizeof lat_sizes / sizeof *lat_sizes; i++)
		lat("flag", 0, lat_sizes[i]);
	for (size_t i = 0; i < sizeof lat_sizes / sizeof *lat_sizes; i++)
		lat("futex", 1, lat_sizes[i]);
	char *src = alloc_buf(BW_MAX), *dst = alloc_buf(BW_MAX);
	for (size_t i = 0; i < sizeof bw_sizes / sizeof *bw_sizes; i++)
		bw("memcpy", 0, bw_sizes[i], src, dst);
	for (size_t i = 0; i < sizeof bw_sizes / sizeof *bw_sizes; i++)
		bw("pvm_write", 1, bw_sizes[i], src, dst);
	for (size_t i = 0; i < sizeof bw_sizes / sizeof *bw_sizes; i++)
		bw("pvm_read", 2, bw_sizes[i], src, dst);

	start(OP_EXIT, 0, 0);
	return reap(kid, "floors");
}
