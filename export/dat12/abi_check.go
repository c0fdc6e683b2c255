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

// The checks behind abi_test.go live here because cgo is not allowed in
// _test.go files.

var subNames = map[core.Sub]string{
	core.SubNone: "DAT_NO_SUBTYPE", core.SubResourceSRQ: "DAT_RESOURCE_SRQ", core.SubHandleIA: "DAT_INVALID_HANDLE_IA",
	core.SubHandleSRQ: "DAT_INVALID_HANDLE_SRQ", core.SubHandle1: "DAT_INVALID_HANDLE1", core.SubArg1: "DAT_INVALID_ARG1",
	core.SubArg10: "DAT_INVALID_ARG10", core.SubStateEPUnconnected: "DAT_INVALID_STATE_EP_UNCONNECTED",
	core.SubStateCNOInUse: "DAT_INVALID_STATE_CNO_IN_USE", core.SubStateEVDWaiter: "DAT_INVALID_STATE_EVD_WAITER",
	core.SubStateIAInUse: "DAT_INVALID_STATE_IA_IN_USE", core.SubStateSRQInUse: "DAT_INVALID_STATE_SRQ_IN_USE",
	core.SubPrivilegesRead: "DAT_PRIVILEGES_READ", core.SubProtectionRDMAWrite: "DAT_PROTECTION_RDMA_WRITE",
	core.SubAddressMalformed: "DAT_INVALID_ADDRESS_MALFORMED", core.SubNameNotRegistered: "DAT_NAME_NOT_REGISTERED",
	core.SubThreadSafetyNotFound: "DAT_THREAD_SAFETY_NOT_FOUND",
}

func checkSubtypeNumbering(t *testing.T) {
	// DAT 1.2 (OFED) has the codes core has; minorNames adds the illumos
	// DAT_INVALID_RO_COOKIE after them.
	if core.SubCount != len(minorNames)-1 {
		t.Fatalf("core has %d minor codes, DAT 1.2 has %d", core.SubCount, len(minorNames)-1)
	}
	for s, name := range subNames {
		if minorNames[s] != name {
			t.Errorf("core.Sub %d maps to %s, want %s", s, minorNames[s], name)
		}
	}
}

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

func checkErrorMapping(t *testing.T, err error, want uint32) {
	if got := NewCall("test").Return(err); got != want {
		t.Errorf("datReturn(%v) = %#x, want %#x", err, got, want)
	}
}
