package soft

import (
	"testing"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// The consumer publishes consumed data slots lazily (lazyCommit). A
// producer with more messages than the ring holds still gets every one
// through when the receives come one at a time, each delivered before the
// next is posted: a full ring is always published.
func TestRingTrickledReceives(t *testing.T) {
	a, b := pair(t)
	const n = dataSlots*2 + 7
	sb, smr := a.buf(t, n, allAccess)
	for i := 0; i < n; i++ {
		sb[i] = byte(i)
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: uint64(i), Flags: rdma.SendSignaled,
			SGL: []rdma.SGE{{Addr: BufAddr(sb) + uint64(i), Length: 1, LKey: smr.LKey()}}}))
	}
	rb, rmr := b.buf(t, n, allAccess)
	for i := 0; i < n; i++ {
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: uint64(i),
			SGL: []rdma.SGE{{Addr: BufAddr(rb) + uint64(i), Length: 1, LKey: rmr.LKey()}}}))
		pollUntil(t, func() bool { return b.rcq.n() == i+1 }, a.qp, b.qp)
	}
	pollUntil(t, func() bool { return a.scq.n() == n }, a.qp, b.qp)
	require.Equal(t, sb, rb)
	for i, c := range b.rcq.take() {
		require.Equal(t, uint64(i), c.Cookie)
	}
}

// A consumer that drains fewer than a quarter of the ring leaves the tail
// unpublished; the producer's view catches up once it finds the ring full.
func TestRingLazyCommit(t *testing.T) {
	m := shm{b: make([]byte, dataRingSize)}
	var prod, cons ring = newRing(m, 0, dataSlots, dataStride), newRing(m, 0, dataSlots, dataStride)
	for i := 0; i < dataSlots; i++ {
		require.True(t, prod.canPut())
		prod.put()
	}
	require.False(t, prod.canPut(), "full")
	for i := 0; i < 3; i++ {
		require.True(t, cons.avail())
		cons.take()
	}
	require.True(t, cons.lazyCommit(), "the producer found the ring full: publish and wake it")
	require.True(t, prod.canPut())
	prod.put()
	cons.take()
	require.False(t, cons.lazyCommit(), "one slot consumed, nobody blocked: not published yet")
	require.Equal(t, uint64(3), m.ld64(ringOffTail))
	for i := 0; i < dataSlots/4; i++ {
		cons.take()
	}
	require.False(t, cons.lazyCommit(), "published at a quarter, nobody to wake")
	require.Equal(t, cons.tail, m.ld64(ringOffTail))
}
