package rdmatest

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

var orderTests = []test{
	{"SharedRecvCQRounds", (*suite).orderRounds},
	{"ArrivalOrderAcrossQPs", (*suite).orderArrival},
	{"ThousandQPs", (*suite).orderThousand},
}

// fleet is n connected QP pairs; the QPs of each side share its CQs.
type fleet struct {
	a, b           []*conn
	ascq, arcq     *cqLog
	bscq, brcq     *cqLog
	byNumA, byNumB map[uint32]int
}

// newFleet connects n pairs through one listener, batch at a time; the
// CQs get depth entries each.
func (w *world) newFleet(n, depth int, cp rdma.QPCap) *fleet {
	w.t.Helper()
	as, bs := w.open(), w.open()
	for _, s := range []*side{as, bs} {
		if s.attr.MaxQP < n+1 {
			w.t.Skipf("the device allows %d QPs, the test needs %d", s.attr.MaxQP, n+1)
		}
		if s.attr.MaxCQE < depth {
			w.t.Skipf("the device's deepest CQ holds %d, the test needs %d", s.attr.MaxCQE, depth)
		}
	}
	f := &fleet{ascq: as.newCQ(depth), arcq: as.newCQ(depth), bscq: bs.newCQ(depth), brcq: bs.newCQ(depth),
		byNumA: map[uint32]int{}, byNumB: map[uint32]int{}}
	for i := range n {
		f.a = append(f.a, as.newQP(qpOpts{scq: f.ascq, rcq: f.arcq, cap: cp}))
		f.b = append(f.b, bs.newQP(qpOpts{scq: f.bscq, rcq: f.brcq, cap: cp}))
		f.byNumA[f.a[i].qp.Num()] = i
		f.byNumB[f.b[i].qp.Num()] = i
	}
	require.Len(w.t, f.byNumA, n, "QP numbers are unique")
	require.Len(w.t, f.byNumB, n, "QP numbers are unique")
	const batch = 32
	l := bs.listen(0, true, batch)
	for lo := 0; lo < n; lo += batch {
		hi := min(n, lo+batch)
		for i := lo; i < hi; i++ {
			require.NoError(w.t, f.a[i].qp.Connect(bs.addr(), l.l.ServiceID(), binary.LittleEndian.AppendUint32(nil, uint32(i)), bound))
		}
		for range hi - lo {
			req := w.request(l)
			i := int(binary.LittleEndian.Uint32(req.PrivateData()))
			require.NoError(w.t, req.Accept(f.b[i].qp, nil))
		}
		for i := lo; i < hi; i++ {
			w.expectEvent(f.a[i], rdma.CMEstablished)
			w.expectEvent(f.b[i], rdma.CMEstablished)
		}
	}
	return f
}

// 64 connections share one receive CQ. Round k is sent on every connection
// once round k-1's sends have all completed (so round k-1 has arrived
// everywhere), with the receiver not polling in between: the shared CQ
// must hold every round's 64 receive completions before any of the next
// round's, each connection's in its post order. The sender's shared send
// CQ reports each connection's sends in post order.
func (s *suite) orderRounds(t *testing.T) {
	w := s.world(t)
	const n = 64
	rounds := 16
	probe := w.open()
	rounds = min(rounds, probe.attr.MaxCQE/n, probe.attr.MaxQPWR)
	require.NoError(t, probe.close())
	if rounds < 2 {
		t.Skip("the device's CQs or queues cannot hold two rounds of 64 receives")
	}
	cp := rdma.QPCap{MaxSendWR: rounds, MaxRecvWR: rounds, MaxSendSGE: 1, MaxRecvSGE: 1}
	f := w.newFleet(n, n*rounds, cp)
	const sz = 16
	sb := f.a[0].side.buf(n*rounds*sz, accAll)
	rb := f.b[0].side.buf(n*rounds*sz, accAll)
	slot := func(k, i int) int { return (k*n + i) * sz }
	for i := range n {
		for k := range rounds {
			require.NoError(t, f.b[i].qp.PostRecv(recv(uint64(k<<16|i), rb.sge(slot(k, i), sz))))
		}
	}
	f.brcq.manual = true // not polled until every round is sent
	for k := range rounds {
		for i := range n {
			msg := sb.b[slot(k, i):][:sz]
			binary.LittleEndian.PutUint32(msg, uint32(k))
			binary.LittleEndian.PutUint32(msg[4:], uint32(i))
			require.NoError(t, f.a[i].qp.PostSend(send(uint64(k<<16|i), rdma.SendSignaled, sb.sge(slot(k, i), sz))))
		}
		seen := map[int]bool{}
		for _, wc := range w.take(f.ascq, n) {
			require.Equal(t, rdma.WCSuccess.String(), wc.Status.String())
			i, ok := f.byNumA[wc.QPNum]
			require.True(t, ok, "send completion of an unknown QP %d", wc.QPNum)
			require.False(t, seen[i], "two send completions of QP %d in round %d", i, k)
			seen[i] = true
			require.Equal(t, uint64(k<<16|i), wc.WRID, "send completion of QP %d in round %d", i, k)
		}
	}
	f.brcq.manual = false
	wcs := w.take(f.brcq, n*rounds)
	for j, wc := range wcs {
		k := j / n
		i, ok := f.byNumB[wc.QPNum]
		require.True(t, ok, "receive completion of an unknown QP %d", wc.QPNum)
		require.Equal(t, rdma.WCSuccess.String(), wc.Status.String())
		require.Equal(t, uint64(sz), uint64(wc.ByteLen))
		got := rb.b[slot(int(wc.WRID>>16), i):][:sz]
		gk, gi := binary.LittleEndian.Uint32(got), binary.LittleEndian.Uint32(got[4:])
		require.Equal(t, uint32(i), gi, "message in QP %d's receive", i)
		if int(gk) != k {
			t.Fatalf("completion %d of the shared receive CQ is round %d of QP %d: round %d was still incomplete", j, gk, i, k)
		}
		require.Equal(t, uint64(k<<16|i), wc.WRID, "QP %d's receives complete in post order", i)
	}
}

// Messages sent on four connections in a random order, each after the
// previous one's send completed, come out of the shared receive CQ in that
// order.
func (s *suite) orderArrival(t *testing.T) {
	w := s.world(t)
	const n, msgs = 4, 48
	f := w.newFleet(n, 2*msgs, rdma.QPCap{MaxSendWR: msgs, MaxRecvWR: msgs, MaxSendSGE: 1, MaxRecvSGE: 1})
	sb := f.a[0].side.buf(msgs*8, accAll)
	rb := f.b[0].side.buf(n*msgs*8, accAll)
	for i := range n {
		for k := range msgs {
			require.NoError(t, f.b[i].qp.PostRecv(recv(uint64(i*msgs+k), rb.sge((i*msgs+k)*8, 8))))
		}
	}
	r := rand.New(rand.NewPCG(4, 4))
	order := make([]int, msgs)
	f.brcq.manual = true
	for m := range msgs {
		order[m] = r.IntN(n)
		binary.LittleEndian.PutUint64(sb.b[m*8:], uint64(m))
		require.NoError(t, f.a[order[m]].qp.PostSend(send(uint64(m), rdma.SendSignaled, sb.sge(m*8, 8))))
		wc := w.take1(f.ascq)
		checkWC(t, wc, uint64(m), rdma.WCSuccess, rdma.WCSend, f.a[order[m]])
	}
	f.brcq.manual = false
	for m, wc := range w.take(f.brcq, msgs) {
		i := f.byNumB[wc.QPNum]
		require.Equal(t, order[m], i, "completion %d of the shared receive CQ: connection %d, but message %d went on connection %d", m, i, m, order[m])
		got := binary.LittleEndian.Uint64(rb.b[wc.WRID*8:])
		require.Equal(t, uint64(m), got, "completion %d carries message %d", m, got)
	}
}

// A thousand connections on one CQ per side: one message on each, every
// completion present exactly once, and an empty Poll answers 0.
func (s *suite) orderThousand(t *testing.T) {
	w := s.world(t)
	const n = 1000
	f := w.newFleet(n, 2*n, rdma.QPCap{MaxSendWR: 2, MaxRecvWR: 2, MaxSendSGE: 1, MaxRecvSGE: 1})
	sb := f.a[0].side.buf(n*8, accAll)
	rb := f.b[0].side.buf(n*8, accAll)
	for i := range n {
		require.NoError(t, f.b[i].qp.PostRecv(recv(uint64(i), rb.sge(i*8, 8))))
		binary.LittleEndian.PutUint64(sb.b[i*8:], uint64(i)*7919)
	}
	for i := range n {
		require.NoError(t, f.a[i].qp.PostSend(send(uint64(i), rdma.SendSignaled, sb.sge(i*8, 8))))
	}
	check := func(wcs []rdma.WC, byNum map[uint32]int, what string) {
		seen := make([]bool, n)
		for _, wc := range wcs {
			require.Equal(t, rdma.WCSuccess.String(), wc.Status.String(), what)
			i, ok := byNum[wc.QPNum]
			require.True(t, ok, "%s completion of an unknown QP", what)
			require.Equal(t, uint64(i), wc.WRID, "%s completion of QP %d", what, i)
			require.False(t, seen[i], "two %s completions of QP %d", what, i)
			seen[i] = true
		}
	}
	check(w.take(f.ascq, n), f.byNumA, "send")
	wcs := w.take(f.brcq, n)
	check(wcs, f.byNumB, "receive")
	sameBytes(t, sb.b, rb.b, "%d messages", n)
	var wc [8]rdma.WC
	for range 100 {
		for _, c := range []*cqLog{f.ascq, f.arcq, f.bscq, f.brcq} {
			require.Equal(t, 0, c.cq.Poll(wc[:]), "an empty Poll of a CQ of %d QPs", n)
		}
	}
}

// Bench runs the suite's benchmarks over b: an empty Poll of a CQ that 1
// and 1024 connected QPs complete into (it should cost the same).
func Bench(bt *testing.B, b Backend) {
	s := &suite{b: b}
	for _, n := range []int{1, 1024} {
		bt.Run(fmt.Sprintf("EmptyPoll/QPs=%d", n), func(bt *testing.B) {
			w := s.world(bt)
			f := w.newFleet(n, 2*n, rdma.QPCap{MaxSendWR: 2, MaxRecvWR: 2, MaxSendSGE: 1, MaxRecvSGE: 1})
			var wc [8]rdma.WC
			bt.ResetTimer()
			for bt.Loop() {
				if f.brcq.cq.Poll(wc[:]) != 0 {
					bt.Fatal("an empty CQ returned a completion")
				}
			}
		})
	}
}
