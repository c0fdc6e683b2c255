package verbs

// The watch of an empty CQ (rdma.QuietCQ): a probe the export layer calls
// from C instead of a Poll through Go, so that a polling consumer's empty
// dequeue never leaves C (DESIGN.md section 9).

/*
#include "shim.h"
*/
import "C"

import (
	"unsafe"

	"godat/rdma"
)

// quietBudget bounds a watch's answers: the probe polls the device itself,
// so it never misses a completion, and a Poll now and then costs nothing.
const quietBudget = 1 << 20

// quietProbe is gd_cq_quiet's address, for the watches.
var quietProbe = uint64(C.gd_cq_quiet_fn())

// QuietEpoch implements rdma.QuietCQ. The probe polls the device, so
// nothing that lands between the Poll and the watch is missed: there is no
// epoch to sample.
func (c *cq) QuietEpoch() (uint64, bool) { return 0, true }

// Quiet implements rdma.QuietCQ: the watch is the CQ's probe (gd_cq_quiet),
// which the export layer calls from C instead of a Poll through Go: an
// empty dequeue of a polling consumer then never leaves C. The word
// watched first is the C struct's life count, which moves once the CQ is
// gone (its memory stays, shim.h).
func (c *cq) Quiet(uint64) (rdma.QuietWatch, bool) {
	if C.gd_cq_stash_ready(c.c) != 0 { // refused once the CQ is destroyed
		return rdma.QuietWatch{}, false
	}
	gen := uint64(c.c.gen) // constant while c is reachable: it moves as the C struct is freed
	return rdma.QuietWatch{
		Epoch: uint64(uintptr(unsafe.Pointer(&c.c.gen))), EpochVal: gen,
		Probe: quietProbe, ProbeArg: uint64(uintptr(unsafe.Pointer(c.c))), ProbeVal: gen,
		Budget: quietBudget,
	}, true
}
