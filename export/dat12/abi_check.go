//go:build cgotest

package dat12

/*
#include <dat/udat.h>
*/
import "C"

import (
	"testing"
	"unsafe"

	"godat/core"
)

// The checks behind abi_test.go that need C types live here because cgo is
// not allowed in _test.go files.

func checkSegmentLayout(t *testing.T) {
	var seg core.Segment
	var trip C.DAT_LMR_TRIPLET
	if unsafe.Sizeof(seg) != unsafe.Sizeof(trip) ||
		unsafe.Offsetof(seg.LMRContext) != unsafe.Offsetof(trip.lmr_context) ||
		unsafe.Offsetof(seg.Addr) != unsafe.Offsetof(trip.virtual_address) ||
		unsafe.Offsetof(seg.Length) != unsafe.Offsetof(trip.segment_length) {
		t.Fatal("core.Segment does not match DAT_LMR_TRIPLET")
	}
	var rs core.RemoteSegment
	var rt C.DAT_RMR_TRIPLET
	if unsafe.Sizeof(rs) != unsafe.Sizeof(rt) ||
		unsafe.Offsetof(rs.RMRContext) != unsafe.Offsetof(rt.rmr_context) ||
		unsafe.Offsetof(rs.Addr) != unsafe.Offsetof(rt.target_address) ||
		unsafe.Offsetof(rs.Length) != unsafe.Offsetof(rt.segment_length) {
		t.Fatal("core.RemoteSegment does not match DAT_RMR_TRIPLET")
	}
}
