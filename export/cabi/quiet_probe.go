package cabi

// The quiet table's C check as the tests see it (quiet_test.go).

/*
#include "cabi.h"

// A probe for the tests: it answers what they set and counts its calls.
static uint64_t godat_test_probe_calls, godat_test_probe_arg, godat_test_probe_val;
static int godat_test_probe_answer;

static int godat_test_probe(uint64_t arg, uint64_t val)
{
	godat_test_probe_calls++;
	godat_test_probe_arg = arg;
	godat_test_probe_val = val;
	return godat_test_probe_answer;
}

static uint64_t godat_test_probe_addr(void) { return (uint64_t)(uintptr_t)&godat_test_probe; }
static void godat_test_probe_set(int answer) { godat_test_probe_answer = answer; }
static uint64_t godat_test_probe_seen(uint64_t *arg, uint64_t *val)
{
	*arg = godat_test_probe_arg;
	*val = godat_test_probe_val;
	return godat_test_probe_calls;
}
*/
import "C"

import "unsafe"

// quietEmpty is what an ABI's C dequeue asks (godat_quiet_empty).
func quietEmpty(h uintptr, out unsafe.Pointer) bool {
	return C.godat_quiet_empty(C.godat_handle(h), out) != 0
}

// quietSetUsed stores an entry's count of answers as a C poller does,
// for a test of a store that lands late, on a newer publication.
func quietSetUsed(h uintptr, used uint32) {
	slot, _ := Handles.decode(h)
	*(*uint32)(unsafe.Pointer(&quietAt(slot).used)) = used
}

// testProbe is the address of a C probe whose answer testProbeAnswer sets.
func testProbe() uint64 { return uint64(C.godat_test_probe_addr()) }

// testProbeAnswer sets what the test probe answers.
func testProbeAnswer(quiet bool) {
	a := C.int(0)
	if quiet {
		a = 1
	}
	C.godat_test_probe_set(a)
}

// testProbeSeen is how often the test probe was called, and its last
// arguments.
func testProbeSeen() (calls, arg, val uint64) {
	var a, v C.uint64_t
	n := C.godat_test_probe_seen(&a, &v)
	return uint64(n), uint64(a), uint64(v)
}
