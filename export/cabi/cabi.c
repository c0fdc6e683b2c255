// The C half of package cabi: the fork flag, the handle region and the
// quiet table.

#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "cabi.h"

volatile int godat_forked;

uintptr_t godat_handle_base;
godat_quiet *godat_quiet_table;
const uint64_t godat_quiet_nothing;

// godat_quiet_region maps the quiet table, one entry per handle slot;
// only the pages of entries in use take memory.
godat_quiet *godat_quiet_region(void)
{
	void *p = mmap(NULL, (size_t)GODAT_HANDLE_SLOTS * sizeof(godat_quiet), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

__thread struct godat_tick godat_tick_self __attribute__((tls_model("initial-exec")));

// The Go side of a yield (tick.go).
extern void godatYield(void);

// tick_gap reports whether a call at now comes a gap after the thread's
// last one: it starts the count again.
static int tick_gap(const struct godat_tick *t, uint64_t now) { return now - t->last >= GODAT_YIELD_NS; }

int godat_tick_at(struct godat_tick *t, uint64_t now)
{
	int yield = 0;
	if (now >= t->next) {
		yield = t->next != 0 && !tick_gap(t, now);
		t->next = now + GODAT_YIELD_NS;
	}
	t->last = now;
	return yield;
}

void godat_tick_note(struct godat_tick *t, uint64_t now)
{
	int gap = tick_gap(t, now);
	int yield = godat_tick_at(t, now);
	if (gap) {
		t->due = 0;
	} else if (t->due == 0) {
		t->due = yield != 0;
	} else if (t->due == 1 && now > t->next - GODAT_YIELD_NS) {
		// godat_tick_at set next a period after the yield came due.
		t->due = 2;
	}
}

void godat_tick_sample(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	godat_tick_note(&godat_tick_self, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
}

void godat_tick_yield(void)
{
	godat_tick_self.due = 0;
	godatYield();
}

static void godat_atfork_child(void) { godat_forked = 1; }

__attribute__((constructor)) static void godat_init(void)
{
	pthread_atfork(NULL, NULL, godat_atfork_child);
}

// godat_handle_region maps `views` consecutive aliases of one shared stub
// array of `bytes` bytes. A handle's address encodes its slot and, through
// the view it lies in, its generation; every alias shows the same stub.
void *godat_handle_region(size_t bytes, unsigned views)
{
	int fd = memfd_create("godat-handles", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)bytes) != 0) {
		close(fd);
		return NULL;
	}
	char *base = mmap(NULL, bytes * views, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	for (unsigned v = 0; v < views; v++) {
		void *p = mmap(base + (size_t)v * bytes, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
		if (p == MAP_FAILED) {
			munmap(base, bytes * views);
			close(fd);
			return NULL;
		}
	}
	close(fd);
	return base;
}
