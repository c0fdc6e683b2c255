package cabi

// The quiet table's C check as the tests see it (quiet_test.go).

/*
#include "cabi.h"
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
