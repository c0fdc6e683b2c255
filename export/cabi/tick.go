package cabi

// #include "cabi.h"
import "C"

import "runtime"

// godatYield is a thread's yield when its scheduling tick is due (cabi.h):
// the scheduler runs once on its P, which advances the P's tick, so the
// runtime's monitor sees the thread as a goroutine that gives way, not one
// to preempt, and leaves its P alone while it is in C.
//
//export godatYield
func godatYield() { runtime.Gosched() }

// tickState is a thread's tick state, for tests of the decision.
type tickState C.struct_godat_tick

// at records a call at now (ns) and reports whether the thread would yield.
func (t *tickState) at(now uint64) bool {
	return C.godat_tick_at((*C.struct_godat_tick)(t), C.uint64_t(now)) != 0
}

// note records a sampled call at now in the due state and returns it (0
// none, 1 due, 2 overdue).
func (t *tickState) note(now uint64) int {
	C.godat_tick_note((*C.struct_godat_tick)(t), C.uint64_t(now))
	return int(t.due)
}

// yieldEvery is GODAT_YIELD_NS.
const yieldEvery = uint64(C.GODAT_YIELD_NS)
