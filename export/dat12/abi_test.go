//go:build cgotest

package dat12

import (
	"testing"

	"godat/core"
)

// core.Sub is numbered as the DAT 1.2 subtypes are, which Call.Return relies
// on: every core minor code must carry the name of the DAT code it becomes.
func TestSubtypeNumbering(t *testing.T) {
	checkSubtypeNumbering(t)
}

// The DTO hot path views the consumer's DAT_LMR_TRIPLET array as
// []core.Segment and DAT_RMR_TRIPLET as core.RemoteSegment without copying.
func TestSegmentLayout(t *testing.T) {
	checkSegmentLayout(t)
}

func TestErrorMapping(t *testing.T) {
	checkErrorMapping(t, core.ErrArg(3), 0x80000000|0x60000|0x26)
	checkErrorMapping(t, core.ErrHandle(core.SubHandleEP), 0x80000000|0x50000|0x0c)
	checkErrorMapping(t, core.ErrNotImplemented, 0xffff0000)
	checkErrorMapping(t, nil, 0)
}
