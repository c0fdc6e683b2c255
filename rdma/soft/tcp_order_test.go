package soft

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// SENDs on several connections between two devices complete in the order
// they were posted, among those that have arrived (tcp_order.go). A turn
// that finds a SEND ahead of its stamps serves the earliest one queued
// first (tcpLoop.earliest), and looks at the epoll set for it meanwhile: the connection whose turn it
// was must not be queued a second time by an arrival then. A second entry
// was served after the first had parked the connection, while its helper
// read the same stream (frames torn apart: in the C suite's
// test_pattern_stream, a 20-byte send took the next frame's header as its
// payload). The sender posts from its own goroutine, small and large
// SENDs in turn, while the receiver polls; every pass of either loop
// leaves each connection queued once at most, and never a parked one.
func TestTCPOrderQueuesAConnectionOnce(t *testing.T) {
	const nqp, rounds, slot, large, depth = 4, 100, 32 << 10, 20 << 10, 4
	a, b := tcpPair(t)
	qa, qb := []rdma.QP{a.qp}, []rdma.QP{b.qp}
	for i := 1; i < nqp; i++ {
		x, y := a.newQP(t, nil), b.newQP(t, nil)
		connectQPs(t, a, b, x, y, nil, nil)
		qa, qb = append(qa, x), append(qb, y)
	}
	var bad atomic.Pointer[string]
	hook := func(run []*tcpWire) {
		for i, w := range run {
			if w.parked {
				s := "a parked connection queued"
				bad.CompareAndSwap(nil, &s)
			}
			for _, v := range run[:i] {
				if v == w {
					s := "a connection queued twice"
					bad.CompareAndSwap(nil, &s)
				}
			}
		}
	}
	testHookPassed.Store(&hook)
	defer testHookPassed.Store(nil)

	src, smr := a.buf(t, nqp*depth*slot, allAccess)
	dst, dmr := b.buf(t, nqp*rounds*slot, allAccess)
	const bigLen = 256 << 10
	big, bmr := a.buf(t, bigLen, allAccess)
	far, fmr := b.buf(t, nqp*bigLen, allAccess)
	for i := 0; i < nqp; i++ {
		for r := 0; r < rounds; r++ {
			off := (r*nqp + i) * slot
			require.NoError(t, qb[i].PostRecv(&rdma.RecvWR{WRID: uint64(r*nqp + i), SGL: []rdma.SGE{sge(dst[off:off+slot], dmr)}}))
		}
	}
	size := func(seq int) int {
		if seq%3 == 0 {
			return large + seq
		}
		return 64
	}
	// The sender: round after round, a SEND on every connection, with its
	// sequence number among all of them first; depth of them outstanding
	// on each connection, a source slot used again once its SEND
	// completed (a connection's SENDs complete in order).
	posted := make(chan error, 1)
	deadline := time.Now().Add(testWait)
	go func() {
		var wc [8]rdma.WC
		var busy [nqp]int
		for seq := 0; seq < nqp*rounds; seq++ {
			i := seq % nqp
			for busy[i] == depth {
				if time.Now().After(deadline) {
					posted <- fmt.Errorf("send %d: no room on its connection within %v", seq, testWait)
					return
				}
				n := a.scq.Poll(wc[:])
				for _, c := range wc[:n] {
					if c.Status != rdma.WCSuccess {
						posted <- rdma.ErrInvalid
						return
					}
					busy[c.WRID%nqp]--
				}
				if n == 0 {
					runtime.Gosched()
				}
			}
			if seq%5 == 0 {
				// A write too large for the post to write itself goes
				// to the polls or the writer goroutine, and the SEND
				// behind it with it: SENDs posted later on the other
				// connections arrive first.
				if err := qa[i].PostSend(&rdma.SendWR{WRID: 1 << 62, Opcode: rdma.WRRDMAWrite,
					SGL: []rdma.SGE{sge(big, bmr)}, RemoteAddr: BufAddr(far) + uint64(i*bigLen), RKey: fmr.RKey()}); err != nil {
					posted <- err
					return
				}
			}
			at := seq % (nqp * depth) * slot
			p := src[at : at+size(seq)]
			binary.LittleEndian.PutUint64(p, uint64(seq))
			for k := 8; k < len(p); k++ {
				p[k] = byte(seq + k)
			}
			if err := qa[i].PostSend(&rdma.SendWR{WRID: uint64(seq), Opcode: rdma.WRSend, Flags: rdma.SendSignaled,
				SGL: []rdma.SGE{sge(p, smr)}}); err != nil {
				posted <- err
				return
			}
			busy[i]++
		}
		posted <- nil
	}()
	// The receiver polls. On each connection the receives complete in
	// order (the k-th message into the k-th receive, whose WRID is the
	// message's sequence number), each message whole. (Across connections
	// the order is kept among the SENDs that have arrived: a turn does
	// not wait for a later one, tcpOrder.skipTo.)
	checkReceive := func(c rdma.WC) {
		require.Equal(t, rdma.WCSuccess, c.Status)
		seq := int(c.WRID)
		off := seq * slot
		m := dst[off : off+int(c.ByteLen)]
		require.Equal(t, uint64(seq), binary.LittleEndian.Uint64(m), "receive %d", seq)
		require.Equal(t, size(seq), len(m), "receive %d", seq)
		for k := 8; k < len(m); k++ {
			if m[k] != byte(seq+k) {
				t.Fatalf("message %d: byte %d wrong", seq, k)
			}
		}
	}
	var wc [16]rdma.WC
	for got := 0; got < nqp*rounds; {
		if s := bad.Load(); s != nil {
			t.Fatal(*s)
		}
		n := b.rcq.Poll(wc[:])
		if n == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d receives within %v", got, nqp*rounds, testWait)
			}
			runtime.Gosched()
			continue
		}
		got += n
		for _, c := range wc[:n] {
			checkReceive(c)
		}
	}
	require.NoError(t, <-posted)
	if s := bad.Load(); s != nil {
		t.Fatal(*s)
	}
}

// A large SEND (over wholeMax: its helper reads it) to a QP whose SRQ is
// empty waits in the helper for a receive. The SRQ's next post wakes the
// helper, which places it; the loop must not take the connection back
// meanwhile (it read the stream beside the helper: frames torn apart).
// The small SEND behind the large one is the loop's again once the helper
// is done.
func TestTCPHelperKeepsItsStreamThroughAnSRQWait(t *testing.T) {
	const n = wholeMax + 1<<20
	a := newEnd(t, rdma.Params{"transport": "tcp"})
	b := newEnd(t, rdma.Params{"transport": "tcp"})
	srq, err := b.dev.CreateSRQ(rdma.SRQInitAttr{PD: b.pd, MaxWR: 8, MaxSGE: 1})
	require.NoError(t, err)
	bq := b.newQP(t, srq)
	connectQPs(t, a, b, a.qp, bq, nil, nil)
	wb := bq.(*qp).c.w.(*tcpWire)
	src, smr := a.buf(t, n+64, allAccess)
	dst, dmr := b.buf(t, n+64, allAccess)
	for i := range src {
		src[i] = byte(i*7 + i>>16)
	}
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 1, Opcode: rdma.WRSend, SGL: []rdma.SGE{sge(src[:n], smr)}}))
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 2, Opcode: rdma.WRSend, Flags: rdma.SendSignaled,
		SGL: []rdma.SGE{sge(src[n:], smr)}}))
	// The helper has the large one, and waits for a receive.
	var wc [4]rdma.WC
	waitFor(t, "the helper", func() bool { return wb.rdMoving.Load() }, func() { b.rcq.Poll(wc[:]) })
	time.Sleep(20 * time.Millisecond) // for it to find the SRQ empty
	for range 20 {
		b.rcq.Poll(wc[:]) // the loop serves meanwhile
	}
	require.NoError(t, srq.PostRecv(&rdma.RecvWR{WRID: 5, SGL: []rdma.SGE{sge(dst[:n], dmr)}}))
	require.NoError(t, srq.PostRecv(&rdma.RecvWR{WRID: 6, SGL: []rdma.SGE{sge(dst[n:], dmr)}}))
	got := pollN(t, b.rcq, 2)
	for i, c := range got {
		require.Equal(t, rdma.WCSuccess, c.Status, "receive %d", i)
	}
	require.Equal(t, uint64(5), got[0].WRID)
	require.Equal(t, uint32(n), got[0].ByteLen)
	require.Equal(t, uint32(64), got[1].ByteLen)
	if !bytes.Equal(src, dst) {
		t.Fatal("the SENDs' bytes are not in place")
	}
	require.Equal(t, rdma.WCSuccess, pollN(t, a.scq, 1)[0].Status)
}

// A connection's reference to the order it shares with its peer device
// is dropped when it ends, also when the end (an abort of the attempt)
// comes before the handshake's goroutine took the reference from the
// peer's answer: that reference is dropped at once, or the order would
// stay in the device's table with every connection to the peer gone.
func TestTCPOrderReleasedWhenAbortComesFirst(t *testing.T) {
	a, _ := tcpPair(t)
	q := a.qp.(*qp)
	q.mu.Lock()
	w := q.c.w.(*tcpWire)
	q.mu.Unlock()
	w.abort()
	const token = 0x5eed
	w.setOrder(token) // as the handshake's goroutine would, the abort first
	d := a.dev.(*device)
	d.tcp.mu.Lock()
	_, kept := d.tcp.orders[orderKey{w.sock.remote.Addr().Unmap(), token}]
	d.tcp.mu.Unlock()
	require.False(t, kept, "an order taken after the abort stayed in the table")
}
