package cabi

// The thread's tick state as the tests see it (tick_test.go). Apart from
// tick.go: a file with //export may not define C functions.

/*
#include "cabi.h"

static int tick_due(void) { return godat_tick_self.due; }
static void tick_event(void) { godat_tick_event(); }
*/
import "C"

// tickCalls records n calls of this thread, as n entry points would.
func tickCalls(n int) {
	for i := 0; i < n; i++ {
		C.godat_tick()
	}
}

// tickDue reports whether this thread has a yield due.
func tickDue() bool { return C.tick_due() != 0 }

// tickOverdue reports whether this thread's yield is overdue.
func tickOverdue() bool { return C.tick_due() > 1 }

// tickEvent is the look at the tick of a call that returns an event: it
// yields if one is overdue.
func tickEvent() { C.tick_event() }

// tickIdle is an idle call's look at the tick: it yields if one is due.
func tickIdle() { C.godat_tick_idle() }

// tickSample is GODAT_TICK_SAMPLE.
const tickSample = int(C.GODAT_TICK_SAMPLE)
