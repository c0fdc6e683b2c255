// C declarations of the layer every DAT library built from core shares
// (package cabi): the fork flag, the handle stub and the handle region.
// The ABI packages include this header beside their own DAT headers.
#ifndef GODAT_CABI_H
#define GODAT_CABI_H

#include <stddef.h>
#include <stdint.h>

// Set in a forked child: the Go runtime did not survive the fork. Each
// ABI's entry points test it before entering Go (GODAT_GUARD in the ABI's
// header), since what they return is the ABI's own code.
extern volatile int godat_forked;

// What a handle points at. The first word is the ABI's provider table
// (DAT requires it so the redirection macros work); the ABI package gives
// it to the handle table, which never reads it.
typedef struct godat_stub {
	const void *provider;
	uint32_t slot;
	uint32_t gen;
} godat_stub;

// A handle as Go receives it: an integer, never a pointer. Consumers pass
// garbage, DAT_HANDLE_NULL and the sentinels 0x1/0x2 where handles go; held
// in a pointer-typed Go variable such a value makes the Go runtime abort the
// process ("invalid pointer found on stack") when the stack is copied.
typedef uintptr_t godat_handle;

void *godat_handle_region(size_t bytes, unsigned views);

// The handle region's geometry (handles.go): slots per view, and views,
// one per generation modulo their number.
#define GODAT_HANDLE_SLOTS (1u << 18)
#define GODAT_HANDLE_VIEWS 64u
#define GODAT_VIEW_BYTES ((uintptr_t)GODAT_HANDLE_SLOTS * sizeof(godat_stub))

// The quiet table: one entry per handle slot, where a DTO EVD whose
// dequeue found nothing publishes how to know it is still empty, so that
// the consumer's next empty dequeues are answered here, without entering
// Go (quiet.go, DESIGN.md section 9). Written by Go under a sequence
// count (odd while written); read here. Every address a publication holds
// stays mapped for the life of the process, so a torn or stale one reads
// harmless memory, and the sequence check then rejects it.
typedef struct godat_quiet {
	uint64_t seq;        // odd while written; 0: never published
	uint64_t handle;     // the EVD the publication is for
	uint64_t out;        // the event pointer of the last empty Go dequeue
	uint64_t gen;        // the EVD's change count, bumped by core
	uint64_t snap;       // gen when the publishing dequeue began
	uint64_t epoch;      // the CQ's watch (rdma.QuietWatch): a word...
	uint64_t epoch_val;  // ...and the value it must still hold,
	uint64_t slot;       // the word a peer writes to add work...
	uint64_t slot_val;   // ...and its value
	uint32_t budget;     // answers allowed before Go looks again
	uint32_t used;       // answers given since the publication
	uint64_t probe;      // 0, or a godat_quiet_probe asked after the words...
	uint64_t probe_arg;  // ...with these arguments
	uint64_t probe_val;
	uint64_t pad_[3];    // 128 bytes: no entry shares a line pair
} godat_quiet;

// A CQ the device writes (verbs) has no word to watch: its backend gives
// a probe that polls it (rdma.QuietWatch): 1 while it is still empty, else
// 0 with nothing lost. It never blocks, and answers 0 for a CQ gone.
typedef int (*godat_quiet_probe)(uint64_t arg, uint64_t val);

extern uintptr_t godat_handle_base;
extern godat_quiet *godat_quiet_table;
extern const uint64_t godat_quiet_nothing; // 0, the word of a watch of nothing

godat_quiet *godat_quiet_region(void);

// godat_quiet_empty reports whether the EVD behind h is still as empty as
// the dequeue that published its entry found it (for the same event
// pointer): the publication is complete and for h, its change count and
// watched words unchanged, its budget not spent. Any doubt says no, and
// the call goes to Go.
static inline int godat_quiet_empty(godat_handle h, const void *out)
{
	uintptr_t off = h - godat_handle_base;
	if (godat_quiet_table == NULL || off >= GODAT_VIEW_BYTES * GODAT_HANDLE_VIEWS || off % sizeof(godat_stub) != 0)
		return 0;
	godat_quiet *q = &godat_quiet_table[(off % GODAT_VIEW_BYTES) / sizeof(godat_stub)];
	uint64_t s = __atomic_load_n(&q->seq, __ATOMIC_ACQUIRE);
	if (s == 0 || (s & 1) != 0)
		return 0;
	if (__atomic_load_n(&q->handle, __ATOMIC_RELAXED) != h ||
	    __atomic_load_n(&q->out, __ATOMIC_RELAXED) != (uintptr_t)out)
		return 0;
	uint32_t used = __atomic_load_n(&q->used, __ATOMIC_RELAXED);
	if (used >= __atomic_load_n(&q->budget, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&q->gen, __ATOMIC_RELAXED) != __atomic_load_n(&q->snap, __ATOMIC_RELAXED))
		return 0;
	const uint64_t *epoch = (const uint64_t *)(uintptr_t)__atomic_load_n(&q->epoch, __ATOMIC_RELAXED);
	const uint64_t *slot = (const uint64_t *)(uintptr_t)__atomic_load_n(&q->slot, __ATOMIC_RELAXED);
	if (__atomic_load_n(epoch, __ATOMIC_ACQUIRE) != __atomic_load_n(&q->epoch_val, __ATOMIC_RELAXED) ||
	    __atomic_load_n(slot, __ATOMIC_ACQUIRE) != __atomic_load_n(&q->slot_val, __ATOMIC_RELAXED))
		return 0;
	uint64_t probe = __atomic_load_n(&q->probe, __ATOMIC_RELAXED), parg = 0, pval = 0;
	if (__builtin_expect(probe != 0, 0)) {
		parg = __atomic_load_n(&q->probe_arg, __ATOMIC_RELAXED);
		pval = __atomic_load_n(&q->probe_val, __ATOMIC_RELAXED);
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&q->seq, __ATOMIC_RELAXED) != s)
		return 0;
	// Only a probe read from a whole publication is called: a torn one
	// could pair one backend's function with another's argument.
	if (__builtin_expect(probe != 0, 0) && !((godat_quiet_probe)(uintptr_t)probe)(parg, pval))
		return 0;
	// Concurrent pollers may lose a count, and a late store may land on
	// a newer publication's zero. The count only grows, so a late store
	// can only send a poller to Go sooner: the budget bounds the answers
	// between two looks of Go, not their exact number.
	__atomic_store_n(&q->used, used + 1, __ATOMIC_RELAXED);
	return 1;
}

// The scheduling tick. A C thread keeps its runtime P between calls into
// Go, but the scheduler never runs on it, so the P's tick stands still and
// after 10 ms of calls the runtime's monitor preempts the thread and takes
// its P back each time it is in C (DESIGN.md section 10). A thread whose
// calls have kept coming for GODAT_YIELD_NS therefore yields once in Go,
// which advances the tick. A yield costs tens of microseconds natively, so
// it waits for a call that found nothing to do (an empty dequeue, a wait
// that timed out: the ABI's entry points say which, godat_tick_idle). A
// thread that never finds nothing (a receiver of a stream, whose every
// dequeue returns an event) would wait for one forever, and the monitor,
// every 20 us from its first preemption on, takes the CPU from it when
// they share one (a process bound to a core: a 1 MiB stream over
// godat-shm lost 30%). So a yield still due once the coarse clock has
// moved on is overdue, and a dequeue that returns an event takes it too
// (godat_tick_event); a post never does (it would sit in the post's time,
// DESIGN.md section 10), nor a wait (a waiter sleeps: a yield there cost a
// 1 MiB dat_evd_wait ping-pong 13%). A thread that calls now and then
// never yields: its first call after a gap of GODAT_YIELD_NS or more only
// starts the count, and drops a yield still due (a gap as the coarse clock
// reads it, which in a VM may stand still for several milliseconds: calls
// 6 ms apart then yield now and then, which costs them nothing but the
// yield).
#define GODAT_YIELD_NS 5000000u

// Only every GODAT_TICK_SAMPLE-th call of a thread reads the clock (a read
// costs about 20 ns natively, a tenth of an empty dequeue). "Calls keep
// coming" then means that the sampled calls do: calls denser than
// GODAT_TICK_SAMPLE per GODAT_YIELD_NS, which a polling thread's are
// natively and under TCG alike.
#define GODAT_TICK_SAMPLE 16u

// A thread's tick state: when its next yield is due and when it last
// called (CLOCK_MONOTONIC_COARSE, ns); its calls, counted for the sample;
// whether a yield is due: 0 no, 1 due (its next idle call takes it), 2
// overdue (a dequeue that returns an event takes it too).
struct godat_tick {
	uint64_t next, last;
	uint32_t calls, due;
};

// godat_tick_at records a sampled call at now: 1 when the thread should
// yield.
int godat_tick_at(struct godat_tick *t, uint64_t now);

// godat_tick_note records a sampled call at now in t's due state: a yield
// comes due as godat_tick_at says, is overdue at a later sample that reads
// a later time, and is dropped after a gap.
void godat_tick_note(struct godat_tick *t, uint64_t now);

// Initial-exec, as the Go runtime's own TLS in this library: no call to
// __tls_get_addr on every entry.
extern __thread struct godat_tick godat_tick_self __attribute__((tls_model("initial-exec")));

// godat_tick records a call of this thread (GODAT_GUARD in the ABI's
// header); a sampled call goes on in godat_tick_sample, out of line.
void godat_tick_sample(void);
static inline void godat_tick(void)
{
	if (__builtin_expect(++godat_tick_self.calls % GODAT_TICK_SAMPLE == 0, 0))
		godat_tick_sample();
}

// godat_tick_idle is called by an entry point whose call found nothing to
// do: the thread yields if a yield is due.
void godat_tick_yield(void);
static inline void godat_tick_idle(void)
{
	if (__builtin_expect(godat_tick_self.due != 0, 0))
		godat_tick_yield();
}

// godat_tick_event is called by a dequeue that returns the consumer an
// event: the thread yields if a yield is overdue.
static inline void godat_tick_event(void)
{
	if (__builtin_expect(godat_tick_self.due > 1, 0))
		godat_tick_yield();
}

#endif
