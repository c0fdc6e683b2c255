package soft

import (
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// wordAt is the word at address a, which is no Go memory (vet would take
// a plain conversion for a lost pointer).
func wordAt(a uint64) *atomic.Uint64 {
	u := uintptr(a)
	return *(**atomic.Uint64)(unsafe.Pointer(&u))
}

// holds reads a watch as the export layer's C code does.
func holds(w rdma.QuietWatch) bool {
	return wordAt(w.Epoch).Load() == w.EpochVal && wordAt(w.Slot).Load() == w.SlotVal
}

// quietAfterPoll polls q empty and returns its watch, which must exist.
func quietAfterPoll(t *testing.T, q rdma.CQ) rdma.QuietWatch {
	t.Helper()
	qc := q.(rdma.QuietCQ)
	ep, ok := qc.QuietEpoch()
	require.True(t, ok, "an shm CQ without a hot connection has no watch")
	var wc [4]rdma.WC
	require.Zero(t, q.Poll(wc[:]))
	w, ok := qc.Quiet(ep)
	require.True(t, ok, "no watch of an empty shm CQ")
	require.True(t, holds(w))
	return w
}

// The watch of an empty CQ holds while nothing comes, through empty Polls
// of it and of the device's other CQs, and no longer once a peer's
// message is hinted to the device: the hint lands in the watched slot.
func TestQuietWatchEndsWithAHintedMessage(t *testing.T) {
	a, b := shmPair(t)
	w := quietAfterPoll(t, b.rcq)
	var wc [4]rdma.WC
	for i := 0; i < 100; i++ {
		require.Zero(t, b.rcq.Poll(wc[:]))
		require.Zero(t, b.scq.Poll(wc[:]))
	}
	require.True(t, holds(w), "empty Polls moved the watched words")
	require.Equal(t, uint32(quietBudget), w.Budget, "no watched rings: the plain budget")

	rb, rmr := b.buf(t, 8, allAccess)
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 5, SGL: []rdma.SGE{sge(rb, rmr)}}))
	require.True(t, holds(w), "a receive posted is no completion")
	sb, smr := a.buf(t, 8, allAccess)
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{sge(sb, smr)}}))
	require.False(t, holds(w), "the watch holds with a message hinted")
	require.Equal(t, uint64(5), pollN(t, b.rcq, 1)[0].WRID)

	// The receive CQ is now hot: its next message comes without a hint,
	// so it has no watch.
	qc := b.rcq.(rdma.QuietCQ)
	_, ok := qc.QuietEpoch()
	require.False(t, ok, "a hot CQ may have a watch")
	ep := devOf(b).epoch.Load()
	require.Zero(t, b.rcq.Poll(wc[:]))
	_, ok = qc.Quiet(ep)
	require.False(t, ok, "a hot CQ has a watch")
}

// A completion pushed to any CQ of the device, and the device's close, end
// the watch; so does a Poll's look that began before a change (the epoch
// the caller sampled is stale); the words stay readable after the close.
func TestQuietWatchEndsOnEveryChange(t *testing.T) {
	a, _ := shmPair(t)
	d := devOf(a)
	w := quietAfterPoll(t, a.scq)
	a.rcq.(*cq).push(&rdma.WC{WRID: 9})
	require.False(t, holds(w), "a completion on another CQ of the device left the watch")
	require.Equal(t, uint64(9), pollN(t, a.rcq, 1)[0].WRID)

	qc := a.scq.(rdma.QuietCQ)
	ep, _ := qc.QuietEpoch()
	var wc [4]rdma.WC
	require.Zero(t, a.scq.Poll(wc[:]))
	d.bump()
	_, ok := qc.Quiet(ep)
	require.False(t, ok, "a watch from before a change")

	w = quietAfterPoll(t, a.scq)
	require.NoError(t, a.dev.Close())
	require.False(t, holds(w), "the watch of a closed device holds")
}

// No watch while a Poll has work the words do not show: a deferred large
// access, or sockets (a device with a TCP connection).
func TestQuietNoWatchWithPollWork(t *testing.T) {
	defer func(d time.Duration) { deferredIssueFallback = d }(deferredIssueFallback)
	deferredIssueFallback = time.Hour // only a Poll issues
	a, _, sb, rb, smr, rmr := deferredPair(t)
	w := quietAfterPoll(t, a.scq)
	require.NoError(t, a.qp.PostSend(bigWrite(sb, rb, smr, rmr)))
	require.False(t, holds(w), "the watch holds over a deferred access")
	qc := a.rcq.(rdma.QuietCQ)
	ep, _ := qc.QuietEpoch()
	var wc [4]rdma.WC
	require.Zero(t, a.rcq.Poll(wc[:0])) // a Poll that takes nothing leaves the deferral
	_, ok := qc.Quiet(ep)
	require.False(t, ok, "a watch with an access deferred")
	pollN(t, a.scq, 1)

	ta, _ := tcpPair(t)
	// The connection joins its device's loop (and the epoch moves, dropping
	// any watch taken before) only after the established event: look then.
	loopOf(t, ta)
	qc = ta.scq.(rdma.QuietCQ)
	_, ok = qc.QuietEpoch()
	require.False(t, ok, "a device that reads sockets may have a watch")
	ep = devOf(ta).epoch.Load()
	require.Zero(t, ta.scq.Poll(wc[:]))
	_, ok = qc.Quiet(ep)
	require.False(t, ok, "a watch of a device that reads sockets")
}

// With watched rings (a hot connection's, whose messages come without
// hints), the watch gives watchEvery-1 answers, and the Poll after it
// drains those rings, as every watchEvery-th Poll does.
func TestQuietWatchBudgetWithWatchedRings(t *testing.T) {
	p := newWatchPair(t)
	p.unhintedWaits(t, func() {})
	pollN(t, p.b.rcq, 1)
	require.NotZero(t, p.d.in.nwatch.Load())
	w := quietAfterPoll(t, p.b.scq)
	require.Equal(t, uint32(watchEvery-1), w.Budget)
	require.Equal(t, uint32(watchEvery-1), p.b.scq.(*cq).idle.Load()%watchEvery, "the next Poll does not drain")
}
