package cabi

import (
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// quietWords stand in for a watch's epoch and peer slot: in a global, so
// that they never move (a goroutine's stack does, under the C code's feet).
var quietWords [2]atomic.Uint64

// The C check answers an object's dequeue only while its publication is
// complete and its own (handle and event pointer), its change count and
// watched words unmoved, and its budget not spent; never after the handle
// is released, and never for a value that is no handle.
func TestQuietCheck(t *testing.T) {
	a := &obj{}
	require.NoError(t, Handles.Bind(a))
	h := a.Handle()
	s := Handles.QuietSink(a)
	require.NotNil(t, s)
	var out [64]byte
	op := unsafe.Pointer(&out[0])
	require.False(t, quietEmpty(h, op), "answered before any publication")

	words := &quietWords
	words[0].Store(5)
	w := rdma.QuietWatch{Epoch: uint64(uintptr(unsafe.Pointer(&words[0]))), EpochVal: 5,
		Slot: uint64(uintptr(unsafe.Pointer(&words[1]))), SlotVal: 0, Budget: 2}
	s.Publish(s.Gen(), w)
	require.False(t, quietEmpty(h, op), "answered for a pointer no Go dequeue checked")
	QuietOut(h, op)
	require.True(t, quietEmpty(h, op))
	require.False(t, quietEmpty(h, unsafe.Add(op, 8)), "answered for another event pointer")
	require.False(t, quietEmpty(h+stubSize, op), "answered for another handle")

	words[1].Store(1) // a peer added work
	require.False(t, quietEmpty(h, op))
	words[1].Store(0)
	words[0].Add(1) // the backend saw a change
	require.False(t, quietEmpty(h, op))
	words[0].Store(5)
	require.True(t, quietEmpty(h, op), "the budget's second answer")
	require.False(t, quietEmpty(h, op), "the budget is spent")

	// A poller that read an older publication stores its count late,
	// over the newer one's zero: that only sends the next look to Go, the
	// newer budget is never extended.
	s.Publish(s.Gen(), w)
	quietSetUsed(h, 1000)
	require.False(t, quietEmpty(h, op), "a late count extended nothing")

	s.Publish(s.Gen(), w)
	require.True(t, quietEmpty(h, op))
	s.Bump()
	require.False(t, quietEmpty(h, op), "answered after the object changed")
	s.Publish(s.Gen()-1, w)
	require.False(t, quietEmpty(h, op), "a publication from before the change")

	s.Publish(s.Gen(), rdma.QuietWatch{Budget: 1}) // nothing to watch: the object's count alone
	require.True(t, quietEmpty(h, op))
	require.False(t, quietEmpty(h, op))

	s.Publish(s.Gen(), w)
	require.True(t, quietEmpty(h, op))
	Handles.Release(a)
	require.False(t, quietEmpty(h, op), "answered for a released handle")

	for _, v := range []uintptr{0, 1, 2, Handles.base - stubSize, Handles.base + 8,
		Handles.base + viewBytes*handleViews, ^uintptr(0)} {
		require.False(t, quietEmpty(v, op), "answered for %#x", v)
	}
}

// A watch with a probe (a CQ the device writes, as on verbs): C asks the
// probe, with the publication's arguments, only once the words and the
// count hold; a "no" goes to Go and spends no budget.
func TestQuietProbe(t *testing.T) {
	a := &obj{}
	require.NoError(t, Handles.Bind(a))
	defer Handles.Release(a)
	h := a.Handle()
	s := Handles.QuietSink(a)
	require.NotNil(t, s)
	var out [64]byte
	op := unsafe.Pointer(&out[0])
	QuietOut(h, op)

	words := &quietWords
	words[0].Store(3)
	words[1].Store(0)
	w := rdma.QuietWatch{Epoch: uint64(uintptr(unsafe.Pointer(&words[0]))), EpochVal: 3,
		Probe: testProbe(), ProbeArg: 0xa1, ProbeVal: 0xb2, Budget: 2}
	s.Publish(s.Gen(), w)
	n0, _, _ := testProbeSeen()

	testProbeAnswer(false)
	require.False(t, quietEmpty(h, op), "answered although the probe said no")
	require.False(t, quietEmpty(h, op))
	n, arg, val := testProbeSeen()
	require.Equal(t, n0+2, n)
	require.Equal(t, uint64(0xa1), arg)
	require.Equal(t, uint64(0xb2), val)

	testProbeAnswer(true)
	require.True(t, quietEmpty(h, op), "the probe's no spent the budget")
	require.True(t, quietEmpty(h, op))
	require.False(t, quietEmpty(h, op), "the budget is spent")

	s.Publish(s.Gen(), w)
	words[0].Add(1) // the word moved: the probe is not asked
	n, _, _ = testProbeSeen()
	require.False(t, quietEmpty(h, op))
	n2, _, _ := testProbeSeen()
	require.Equal(t, n, n2, "the probe was asked although the word moved")
	words[0].Store(3)
	s.Bump()
	require.False(t, quietEmpty(h, op))
	n3, _, _ := testProbeSeen()
	require.Equal(t, n, n3, "the probe was asked although the object changed")

	// A publication without a probe clears the last one's.
	w.Probe = 0
	testProbeAnswer(false)
	s.Publish(s.Gen(), w)
	require.True(t, quietEmpty(h, op))
}
