package soft

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// watchPair is two shared-memory connections from a to b whose receives
// complete into b's one receive CQ: x (a.qp to b.qp) and y.
type watchPair struct {
	a, b   *end
	d      *device // b's
	ay, by rdma.QP
	sb     []byte
	smr    rdma.MR
	rb     []byte
	rmr    rdma.MR
}

func newWatchPair(t *testing.T) *watchPair {
	a, b := shmPair(t)
	p := &watchPair{a: a, b: b, d: devOf(b)}
	a2, b2 := *a, *b
	a2.qp, b2.qp = a.newQP(t, nil), b.newQP(t, nil)
	connect(t, &a2, &b2, nil, nil)
	p.ay, p.by = a2.qp, b2.qp
	p.sb, p.smr = a.buf(t, 8, allAccess)
	p.rb, p.rmr = b.buf(t, 64*8, allAccess)
	return p
}

// recv posts a receive with id on q (its own 8 bytes of rb).
func (p *watchPair) recv(t *testing.T, q rdma.QP, id uint64) {
	t.Helper()
	s := sge(p.rb[id%64*8:id%64*8+8], p.rmr)
	require.NoError(t, q.PostRecv(&rdma.RecvWR{WRID: id, SGL: []rdma.SGE{s}}))
}

// send sends from q and reports whether a hint was appended to b's queue.
func (p *watchPair) send(t *testing.T, q rdma.QP) (hinted bool) {
	t.Helper()
	tail := p.d.bell.ld64(bellOffTail)
	require.NoError(t, q.PostSend(&rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{sge(p.sb, p.smr)}}))
	return p.d.bell.ld64(bellOffTail) != tail
}

func (p *watchPair) wire(q rdma.QP) *shmWire { return q.(*qp).shmw.Load() }

// unhintedWaits makes x hot (a first message, hinted, taken by a Poll of
// b's receive CQ), runs before, then sends on x a second message (receive
// 2), which goes unhinted and waits in x's ring.
func (p *watchPair) unhintedWaits(t *testing.T, before func()) {
	t.Helper()
	p.recv(t, p.b.qp, 1)
	p.recv(t, p.b.qp, 2)
	require.True(t, p.send(t, p.a.qp))
	pollN(t, p.b.rcq, 1)
	before()
	require.False(t, p.send(t, p.a.qp), "hinted though x is watched")
}

func wrids(wc []rdma.WC) []uint64 {
	var ids []uint64
	for _, c := range wc {
		ids = append(ids, c.WRID)
	}
	return ids
}

// A hot connection's sender appends no hints, and its messages keep their
// arrival order against the hinted ones of another connection of the same
// CQ, whichever thread's drain takes them: one published before another
// connection's hinted message completes first (the drain looks at the
// watched ring before each hint), and when the other connection becomes
// hot, the unhinted message the first one published meanwhile still
// completes in its place, and its next message is hinted.
func TestWatchedRingKeepsArrivalOrder(t *testing.T) {
	p := newWatchPair(t)
	bx := p.b.qp
	for id := uint64(1); id <= 5; id++ {
		p.recv(t, bx, id)
		p.recv(t, p.by, 10+id)
	}
	require.True(t, p.send(t, p.a.qp), "the first message of a cold connection is hinted")
	require.Equal(t, []uint64{1}, wrids(pollN(t, p.b.rcq, 1)))
	wx := p.wire(bx)
	require.True(t, wx.watched, "x is hot and watched")

	// x (watched) then y (hinted), taken by a drain that is not the CQ's
	// Poll (a waiter's, or another CQ's).
	require.False(t, p.send(t, p.a.qp), "a watched ring's message is hinted")
	require.True(t, p.send(t, p.ay))
	p.d.drainInbound()
	require.EqualValues(t, 2, p.b.rcq.(*cq).n.Load(), "the drain placed both")
	require.Equal(t, []uint64{2, 11}, wrids(pollN(t, p.b.rcq, 2)))
	require.False(t, wx.watched, "y is the CQ's hot connection now")
	require.True(t, p.wire(p.by).watched)

	// y (watched, hot) then x (hinted); x hot again, then y (hinted) and
	// x (watched): the drain takes y's first, which makes y hot and x
	// cold with x's message published unhinted; it still comes next.
	require.False(t, p.send(t, p.ay))
	require.True(t, p.send(t, p.a.qp))
	require.Equal(t, []uint64{12, 3}, wrids(pollN(t, p.b.rcq, 2)))
	require.True(t, wx.watched)
	require.True(t, p.send(t, p.ay))
	require.False(t, p.send(t, p.a.qp))
	p.d.drainInbound()
	require.EqualValues(t, 2, p.b.rcq.(*cq).n.Load(), "the drain placed both")
	require.False(t, wx.watched)
	require.True(t, p.send(t, p.a.qp), "a ring no longer watched is hinted")
	require.Equal(t, []uint64{13, 4, 5}, wrids(pollN(t, p.b.rcq, 3)))
}

// A sleeper takes an unhinted message published before it counted itself:
// its last look before the futex covers the watched rings, so the armed
// CQ's notification ends the sleep rather than its timeout.
func TestSleeperTakesUnhintedMessage(t *testing.T) {
	p := newWatchPair(t)
	p.unhintedWaits(t, func() { require.NoError(t, p.b.rcq.Arm(false)) })
	seq := p.d.bell.ld32(bellOffSeq)
	p.d.sleepOnBell(seq, 2*time.Second)
	require.NotEqual(t, seq, p.d.bell.ld32(bellOffSeq), "slept through the message")
	require.Equal(t, []uint64{2}, wrids(pollN(t, p.b.rcq, 1)))
}

// A consumer that polls only its request CQ still gets the messages of a
// watched ring placed (every watchEvery Polls), as it would through their
// hints: its peer's sends complete on their placement.
func TestRequestCQPollsServeWatchedRings(t *testing.T) {
	p := newWatchPair(t)
	p.unhintedWaits(t, func() {})
	var wc [4]rdma.WC
	for i := 0; i < watchEvery; i++ {
		require.Zero(t, p.b.scq.Poll(wc[:]))
	}
	require.EqualValues(t, 1, p.b.rcq.(*cq).n.Load(), "the message was not placed")
}

// The rescan's walk of every connection (which finds messages whose hints
// were lost) goes in slot order: a message published after its hint loop,
// behind a hint now waiting, is left to that hint's drain, so y's message
// still completes before x's, posted after it on the lower slot.
func TestRescanKeepsArrivalOrder(t *testing.T) {
	p := newWatchPair(t)
	p.recv(t, p.b.qp, 1)
	p.recv(t, p.by, 11)
	rescanHook = func() {
		rescanHook = nil
		require.True(t, p.send(t, p.ay))
		require.True(t, p.send(t, p.a.qp))
	}
	t.Cleanup(func() { rescanHook = nil })
	p.d.rescanNow()
	require.Equal(t, []uint64{11, 1}, wrids(pollN(t, p.b.rcq, 2)))
}
