package soft

import (
	"bytes"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

var lo = netip.MustParseAddr("127.0.0.1")

func pair(t testing.TB) (*end, *end) {
	a, b := newEnd(t, 1), newEnd(t, 2)
	connect(t, a, b, nil, nil)
	return a, b
}

func TestConnectPrivateData(t *testing.T) {
	a, b := newEnd(t, 1), newEnd(t, 1)
	ea, req := connect(t, a, b, []byte("from-active"), []byte("from-passive"))
	require.Equal(t, []byte("from-passive"), ea.PrivateData)
	require.Equal(t, []byte("from-active"), req.PrivateData())
	require.Equal(t, lo, req.RemoteAddr().Addr())
	require.Equal(t, lo, a.qp.RemoteAddr().Addr())
	require.Equal(t, lo, b.qp.RemoteAddr().Addr())
	// The active side's port qualifier reaches the passive side.
	require.NotZero(t, a.qp.LocalAddr().Port())
	require.Equal(t, a.qp.LocalAddr().Port(), req.RemoteAddr().Port())
	require.Equal(t, a.qp.LocalAddr().Port(), b.qp.RemoteAddr().Port())
}

func TestPrivateDataTooLong(t *testing.T) {
	a := newEnd(t, 1)
	require.ErrorIs(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), 1, make([]byte, 257), time.Second), rdma.ErrInvalid)
}

func TestReject(t *testing.T) {
	a, b := newEnd(t, 1), newEnd(t, 1)
	l, err := b.dev.Listen(0x1234, false, lh(func(r rdma.ConnRequest) {
		require.NoError(t, r.Reject())
		require.ErrorIs(t, r.Reject(), rdma.ErrState)
	}))
	require.NoError(t, err)
	defer l.Close()
	require.Equal(t, uint64(0x1234), l.Qual())
	require.NoError(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), 0x1234, nil, testWait))
	require.Equal(t, rdma.ConnRejected, a.ev.wait(t, testWait).Kind)
	// The QP is disconnected; Reset makes it usable again.
	require.ErrorIs(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), 0x1234, nil, testWait), rdma.ErrState)
	require.NoError(t, a.qp.Reset())
	connect(t, a, b, nil, nil)
}

func TestConnectNoListener(t *testing.T) {
	a := newEnd(t, 1)
	require.NoError(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), 0xdead_beef_0000_0001, nil, testWait))
	require.Equal(t, rdma.ConnNonPeerRejected, a.ev.wait(t, testWait).Kind)
}

func TestConnectUnreachable(t *testing.T) {
	a := newEnd(t, 1)
	require.NoError(t, a.qp.Connect(netip.MustParseAddrPort("192.0.2.1:0"), 7, nil, testWait))
	require.Equal(t, rdma.ConnUnreachable, a.ev.wait(t, testWait).Kind)
}

func TestConnectTimeout(t *testing.T) {
	a, b := newEnd(t, 1), newEnd(t, 1)
	l, err := b.dev.Listen(0, true, lh(func(r rdma.ConnRequest) {})) // never answers
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), l.Qual(), nil, 200*time.Millisecond))
	require.Equal(t, rdma.ConnTimedOut, a.ev.wait(t, testWait).Kind)
}

func TestListenAnyAndDuplicate(t *testing.T) {
	d := newEnd(t, 1).dev
	h := lh(func(r rdma.ConnRequest) { r.Reject() })
	seen := map[uint64]bool{}
	for i := 0; i < 20; i++ {
		l, err := d.Listen(0, true, h)
		require.NoError(t, err)
		require.False(t, seen[l.Qual()])
		seen[l.Qual()] = true
		defer l.Close()
	}
	q := rand.Uint64()
	l, err := d.Listen(q, false, h)
	require.NoError(t, err)
	_, err = d.Listen(q, false, h)
	require.ErrorIs(t, err, rdma.ErrQualInUse)
	// Another device on the same address shares the namespace.
	_, err = newEnd(t, 1).dev.Listen(q, false, h)
	require.ErrorIs(t, err, rdma.ErrQualInUse)
	require.NoError(t, l.Close())
	l, err = d.Listen(q, false, h)
	require.NoError(t, err)
	l.Close()
}

func fill(b []byte, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
}

func TestSendRecvSizes(t *testing.T) {
	a, b := newEnd(t, 1), newEnd(t, 2)
	sizes := []int{8, 64 << 10, 1 << 20, 0, inlineMax, inlineMax + 1}
	var rbufs [][]byte
	for i, n := range sizes {
		// receives posted before the connection exists
		rb, rmr := b.buf(t, n+1, allAccess)
		rbufs = append(rbufs, rb)
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: uint64(100 + i), SGL: []rdma.SGE{sge(rb, rmr)}}))
	}
	connect(t, a, b, nil, nil)
	for i, n := range sizes {
		sb, smr := a.buf(t, n+1, allAccess)
		fill(sb, uint64(i))
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: uint64(i),
			SGL: []rdma.SGE{{Addr: BufAddr(sb), Length: uint64(n), LKey: smr.LKey()}}, Flags: rdma.SendSignaled}))
		pollUntil(t, func() bool { return b.rcq.n() == 1 && a.scq.n() == 1 }, a.qp, b.qp)
		rc, sc := b.rcq.take()[0], a.scq.take()[0]
		require.Equal(t, rdma.StatusSuccess, rc.Status)
		require.Equal(t, rdma.OpRecv, rc.Op)
		require.Equal(t, uint64(100+i), rc.Cookie)
		require.Equal(t, uint64(n), rc.Length)
		require.Equal(t, rdma.StatusSuccess, sc.Status)
		require.Equal(t, uint64(i), sc.Cookie)
		require.Equal(t, uint64(n), sc.Length)
		require.True(t, bytes.Equal(sb[:n], rbufs[i][:n]), "payload %d", n)
	}
}

func TestMultiSGE(t *testing.T) {
	a, b := pair(t)
	for _, n := range []int{100, 300 << 10} { // inline and rendezvous
		s1, m1 := a.buf(t, n/3, allAccess)
		s2, m2 := a.buf(t, n-n/3, allAccess)
		fill(s1, 1)
		fill(s2, 2)
		r1, rm1 := b.buf(t, n/2, allAccess)
		r2, rm2 := b.buf(t, n, allAccess)
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{SGL: []rdma.SGE{sge(r1, rm1), sge(r2, rm2)}}))
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{sge(s1, m1), sge(s2, m2)}, Flags: rdma.SendSolicited}))
		pollUntil(t, func() bool { return b.rcq.n() == 1 }, a.qp, b.qp)
		c := b.rcq.take()[0]
		require.Equal(t, rdma.StatusSuccess, c.Status)
		require.True(t, c.Solicited)
		want := append(append([]byte{}, s1...), s2...)
		got := append(append([]byte{}, r1...), r2[:n-len(r1)]...)
		require.True(t, bytes.Equal(want, got))
	}
	pollUntil(t, func() bool { return true }, a.qp) // unsignaled: no send completions
	require.Equal(t, 0, a.scq.n())
}

func TestWriteVisibleBeforeSend(t *testing.T) {
	a, b := pair(t)
	tgt, tmr := b.buf(t, 4096, allAccess)
	rb, rmr := b.buf(t, 64, allAccess)
	s1, m1 := a.buf(t, 1000, allAccess)
	s2, m2 := a.buf(t, 3000, allAccess)
	fill(s1, 3)
	fill(s2, 4)
	msg, mm := a.buf(t, 8, allAccess)
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: 9, SGL: []rdma.SGE{sge(rb, rmr)}}))
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpWrite, Cookie: 1, SGL: []rdma.SGE{sge(s1, m1), sge(s2, m2)},
		RemoteAddr: BufAddr(tgt) + 10, RKey: tmr.RKey(), Flags: rdma.SendSignaled}))
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: 2, SGL: []rdma.SGE{sge(msg, mm)}, Flags: rdma.SendSignaled}))
	// Only the receiver progresses: the write must already be in place.
	pollUntil(t, func() bool { return b.rcq.n() == 1 }, b.qp)
	require.True(t, bytes.Equal(s1, tgt[10:1010]))
	require.True(t, bytes.Equal(s2, tgt[1010:4010]))
	cs := a.scq.take()
	require.Len(t, cs, 2)
	require.Equal(t, rdma.OpWrite, cs[0].Op)
	require.Equal(t, uint64(4000), cs[0].Length)
	require.Equal(t, rdma.OpSend, cs[1].Op)
}

func TestRDMARead(t *testing.T) {
	a, b := pair(t)
	src, smr := b.buf(t, 1<<20, rdma.AccessRemoteRead|rdma.AccessLocalWrite)
	fill(src, 5)
	d1, m1 := a.buf(t, 1<<19, allAccess)
	d2, m2 := a.buf(t, 1<<19, allAccess)
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpRead, Cookie: 3, SGL: []rdma.SGE{sge(d1, m1), sge(d2, m2)},
		RemoteAddr: BufAddr(src), RKey: smr.RKey(), Flags: rdma.SendSignaled}))
	cs := a.scq.take()
	require.Len(t, cs, 1)
	require.Equal(t, rdma.StatusSuccess, cs[0].Status)
	require.Equal(t, rdma.OpRead, cs[0].Op)
	require.Equal(t, uint64(1<<20), cs[0].Length)
	require.True(t, bytes.Equal(src[:1<<19], d1))
	require.True(t, bytes.Equal(src[1<<19:], d2))
}

func TestRemoteAccessErrors(t *testing.T) {
	a, b := pair(t) // a has PD 1, b has PD 2
	tgt, tmr := b.buf(t, 4096, allAccess)
	ro, romr := b.buf(t, 4096, rdma.AccessRemoteRead)
	wrongPD := make([]byte, 4096)
	wmr, err := b.dev.RegisterMR(77, BufAddr(wrongPD), 4096, allAccess)
	require.NoError(t, err)
	dead, dmr := b.buf(t, 4096, allAccess)
	require.NoError(t, dmr.Deregister())
	require.ErrorIs(t, dmr.Deregister(), rdma.ErrClosed)
	src, smr := a.buf(t, 4096, allAccess)
	fill(src, 6)
	cases := []struct {
		name string
		op   rdma.Op
		addr uint64
		key  uint32
		n    int
	}{
		{"bad rkey", rdma.OpWrite, BufAddr(tgt), tmr.RKey() ^ 0x5555, 16},
		{"zero rkey", rdma.OpWrite, BufAddr(tgt), 0, 16},
		{"out of bounds", rdma.OpWrite, BufAddr(tgt) + 4000, tmr.RKey(), 200},
		{"below start", rdma.OpWrite, BufAddr(tgt) - 1, tmr.RKey(), 16},
		{"no remote write", rdma.OpWrite, BufAddr(ro), romr.RKey(), 16},
		{"wrong pd", rdma.OpWrite, BufAddr(wrongPD), wmr.RKey(), 16},
		{"stale key", rdma.OpWrite, BufAddr(dead), dmr.RKey(), 16},
		{"read out of bounds", rdma.OpRead, BufAddr(tgt) + 4095, tmr.RKey(), 2},
		{"read wrong pd", rdma.OpRead, BufAddr(wrongPD), wmr.RKey(), 16},
	}
	for i, c := range cases {
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: c.op, Cookie: uint64(i), SGL: []rdma.SGE{{Addr: BufAddr(src), Length: uint64(c.n), LKey: smr.LKey()}},
			RemoteAddr: c.addr, RKey: c.key})) // unsignaled: errors still complete
		cs := a.scq.take()
		require.Len(t, cs, 1, c.name)
		require.Equal(t, rdma.StatusRemoteAccess, cs[0].Status, c.name)
		require.Equal(t, uint64(i), cs[0].Cookie)
	}
	zero := make([]byte, 4096)
	require.Equal(t, zero, tgt)
	require.Equal(t, zero, ro)
	require.Equal(t, zero, wrongPD)
	require.Equal(t, zero, dead)
}

func TestLocalErrors(t *testing.T) {
	a, b := pair(t)
	src, smr := a.buf(t, 1<<20, allAccess)
	ronly, romr := a.buf(t, 64, rdma.AccessLocalRead)
	wonly, womr := a.buf(t, 64, rdma.AccessLocalWrite)
	other := make([]byte, 64)
	omr, err := a.dev.RegisterMR(a.pd+1, BufAddr(other), 64, allAccess)
	require.NoError(t, err)
	tgt, tmr := b.buf(t, 64, allAccess)
	// Local segments are checked at post time: bad key or missing right,
	// other protection domain, outside the region.
	bad := []struct {
		wr  rdma.SendWR
		err error
	}{
		{rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{{Addr: BufAddr(src), Length: 8, LKey: smr.LKey() + 1<<mrIdxBits}}}, rdma.ErrPrivileges},
		{rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{{Addr: BufAddr(src) + 1<<20 - 4, Length: 8, LKey: smr.LKey()}}}, rdma.ErrInvalid},
		{rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{sge(wonly, womr)}}, rdma.ErrPrivileges},
		{rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{sge(other, omr)}}, rdma.ErrProtection},
		{rdma.SendWR{Op: rdma.OpWrite, SGL: []rdma.SGE{{Addr: BufAddr(src), Length: 8, LKey: 12345}}, RemoteAddr: BufAddr(tgt), RKey: tmr.RKey()}, rdma.ErrPrivileges},
		{rdma.SendWR{Op: rdma.OpRead, SGL: []rdma.SGE{sge(ronly, romr)}, RemoteAddr: BufAddr(tgt), RKey: tmr.RKey()}, rdma.ErrPrivileges},
	}
	for i := range bad {
		require.ErrorIs(t, a.qp.PostSend(&bad[i].wr), bad[i].err, "case %d", i)
	}
	require.Empty(t, a.scq.take())
	require.Equal(t, make([]byte, 64), tgt)
	require.ErrorIs(t, a.qp.PostRecv(&rdma.RecvWR{SGL: []rdma.SGE{sge(ronly, romr)}}), rdma.ErrPrivileges)
	require.ErrorIs(t, a.qp.PostRecv(&rdma.RecvWR{SGL: []rdma.SGE{sge(other, omr)}}), rdma.ErrProtection)

	// receive too small: inline and rendezvous
	for _, n := range []int{100, 100 << 10} {
		small, sm := b.buf(t, n-1, allAccess)
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: 5, SGL: []rdma.SGE{sge(small, sm)}}))
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: 6, SGL: []rdma.SGE{{Addr: BufAddr(src), Length: uint64(n), LKey: smr.LKey()}}}))
		pollUntil(t, func() bool { return b.rcq.n() == 1 }, a.qp, b.qp)
		rc := b.rcq.take()[0]
		require.Equal(t, rdma.StatusLocalLength, rc.Status)
		require.Equal(t, make([]byte, n-1), small)
		if n > inlineMax {
			pollUntil(t, func() bool { return a.scq.n() == 1 }, a.qp, b.qp)
			require.Equal(t, rdma.StatusRemoteResponder, a.scq.take()[0].Status)
		}
	}
	// a receive whose region is deregistered after the post completes
	// with a protection error
	rb, rm := b.buf(t, 64, allAccess)
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{SGL: []rdma.SGE{sge(rb, rm)}}))
	require.NoError(t, rm.Deregister())
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{{Addr: BufAddr(src), Length: 8, LKey: smr.LKey()}}}))
	pollUntil(t, func() bool { return b.rcq.n() == 1 }, a.qp, b.qp)
	require.Equal(t, rdma.StatusLocalProtection, b.rcq.take()[0].Status)

	// synchronous argument errors
	require.ErrorIs(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: make([]rdma.SGE, 5)}), rdma.ErrInvalid)
	require.ErrorIs(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpRecv}), rdma.ErrInvalid)
	_, err = a.dev.RegisterMR(1, BufAddr(src), 0, allAccess)
	require.ErrorIs(t, err, rdma.ErrInvalid)
}

func TestRingFullInOrder(t *testing.T) {
	a, b := pair(t)
	const n = 300 // more than the ring holds: the rest waits in the send FIFO
	sb, smr := a.buf(t, n*4, allAccess)
	for i := 0; i < n; i++ {
		sb[i*4] = byte(i)
		sb[i*4+1] = byte(i >> 8)
		fl := rdma.SendFlags(0)
		if i%2 == 0 {
			fl = rdma.SendSignaled
		}
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: uint64(i), Flags: fl,
			SGL: []rdma.SGE{{Addr: BufAddr(sb) + uint64(i*4), Length: 4, LKey: smr.LKey()}}}))
	}
	require.Less(t, a.scq.n(), n/2)
	rb, rmr := b.buf(t, n*4, allAccess)
	for i := 0; i < n; i++ {
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: uint64(i),
			SGL: []rdma.SGE{{Addr: BufAddr(rb) + uint64(i*4), Length: 4, LKey: rmr.LKey()}}}))
	}
	pollUntil(t, func() bool { return b.rcq.n() == n && a.scq.n() == n/2 }, a.qp, b.qp)
	require.Equal(t, sb, rb)
	for i, c := range b.rcq.take() {
		require.Equal(t, uint64(i), c.Cookie)
	}
	for i, c := range a.scq.take() {
		require.Equal(t, uint64(2*i), c.Cookie)
	}
}

func TestDisconnectFlushes(t *testing.T) {
	for _, graceful := range []bool{false, true} {
		a, b := pair(t)
		ra, rma := a.buf(t, 64, allAccess)
		rb, rmb := b.buf(t, 1<<20, allAccess)
		for i := 0; i < 3; i++ {
			require.NoError(t, a.qp.PostRecv(&rdma.RecvWR{Cookie: uint64(i), SGL: []rdma.SGE{sge(ra, rma)}}))
			require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: uint64(i), SGL: []rdma.SGE{sge(rb, rmb)}}))
		}
		// a rendezvous send nobody pulls (b does not progress)
		big, bm := a.buf(t, 1<<20, allAccess)
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: 42, SGL: []rdma.SGE{sge(big, bm)}}))
		if graceful {
			// drain: b must progress for the send to finish
			require.NoError(t, a.qp.Disconnect(true))
			pollUntil(t, func() bool { return b.rcq.n() >= 1 }, b.qp)
		} else {
			require.NoError(t, a.qp.Disconnect(false))
		}
		require.Equal(t, rdma.ConnDisconnected, a.ev.wait(t, testWait).Kind)
		require.Equal(t, rdma.ConnDisconnected, b.ev.wait(t, testWait).Kind)
		ca := a.rcq.take()
		require.Len(t, ca, 3)
		for _, c := range ca {
			require.Equal(t, rdma.StatusFlushed, c.Status)
		}
		cs := a.scq.take()
		if graceful {
			require.Empty(t, cs) // unsignaled success
		} else {
			require.Len(t, cs, 1)
			require.Equal(t, rdma.StatusFlushed, cs[0].Status)
			require.Equal(t, uint64(42), cs[0].Cookie)
		}
		cb := b.rcq.take()
		require.Len(t, cb, 3)
		flushed := 0
		for _, c := range cb {
			if c.Status == rdma.StatusFlushed {
				flushed++
			}
		}
		if graceful {
			require.Equal(t, 2, flushed)
		} else {
			require.Equal(t, 3, flushed)
		}
		require.ErrorIs(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend}), rdma.ErrState)
		require.Equal(t, 0, a.qp.Progress())
		// Reset flushes receives posted while disconnected, then reconnect.
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: 7, SGL: []rdma.SGE{sge(rb, rmb)}}))
		require.NoError(t, a.qp.Reset())
		require.NoError(t, b.qp.Reset())
		require.Equal(t, rdma.StatusFlushed, b.rcq.take()[0].Status)
		connect(t, a, b, nil, nil)
		require.NoError(t, b.qp.Disconnect(false))
		require.Equal(t, rdma.ConnDisconnected, a.ev.wait(t, testWait).Kind)
		require.Equal(t, rdma.ConnDisconnected, b.ev.wait(t, testWait).Kind)
	}
}

func TestDestroyPeerSeesDisconnect(t *testing.T) {
	a, b := pair(t)
	require.NoError(t, a.qp.Destroy())
	require.Equal(t, rdma.ConnDisconnected, b.ev.wait(t, testWait).Kind)
	require.ErrorIs(t, a.qp.PostRecv(&rdma.RecvWR{}), rdma.ErrClosed)
}

func TestPingPong100(t *testing.T) {
	a, b := pair(t)
	pingPong(t, a.qp, b.qp, a, b, 100, 8)
}

// pingPong bounces n messages of size sz between two QPs in one goroutine.
func pingPong(t testing.TB, qa, qb rdma.QP, a, b *end, n, sz int) {
	sa, ma := a.buf(t, sz, allAccess)
	sb, mb := b.buf(t, sz, allAccess)
	for i := 0; i < n; i++ {
		require.NoError(t, qb.PostRecv(&rdma.RecvWR{Cookie: uint64(i), SGL: []rdma.SGE{sge(sb, mb)}}))
		sa[0] = byte(i)
		require.NoError(t, qa.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{sge(sa, ma)}}))
		pollUntil(t, func() bool { return b.rcq.n() == 1 }, qb)
		require.Equal(t, byte(i), sb[0])
		b.rcq.take()
		require.NoError(t, qa.PostRecv(&rdma.RecvWR{Cookie: uint64(i), SGL: []rdma.SGE{sge(sa, ma)}}))
		sb[0]++
		require.NoError(t, qb.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{sge(sb, mb)}}))
		pollUntil(t, func() bool { return a.rcq.n() == 1 }, qa)
		require.Equal(t, byte(i+1), sa[0])
		a.rcq.take()
	}
}

func TestDoorbell(t *testing.T) {
	d := newEnd(t, 1).dev
	db := d.Doorbell()
	s := db.Seq()
	start := time.Now()
	db.Wait(s, 20*time.Millisecond)
	require.GreaterOrEqual(t, time.Since(start), 15*time.Millisecond)
	go func() {
		time.Sleep(20 * time.Millisecond)
		db.Ring()
	}()
	db.Wait(s, testWait)
	require.NotEqual(t, s, db.Seq())
	require.Less(t, time.Since(start), testWait)
}

func TestPeerDoorbellRung(t *testing.T) {
	a, b := pair(t)
	sa, ma := a.buf(t, 8, allAccess)
	db := b.dev.Doorbell()
	s := db.Seq()
	done := make(chan struct{})
	go func() {
		db.Wait(s, testWait)
		close(done)
	}()
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{sge(sa, ma)}}))
	select {
	case <-done:
	case <-time.After(testWait):
		t.Fatal("peer doorbell not rung")
	}
}

func TestAttr(t *testing.T) {
	at := newEnd(t, 1).dev.Attr()
	require.GreaterOrEqual(t, at.MaxSGE, 4)
	require.GreaterOrEqual(t, at.MaxMRSize, uint64(1<<30))
	require.Equal(t, 256, at.MaxPrivateData)
	require.GreaterOrEqual(t, at.MaxMsgSize, uint64(1<<30))
}

// An abrupt disconnect while a graceful one drains ends it at once.
func TestAbruptEndsGracefulDrain(t *testing.T) {
	a, b := pair(t)
	big, bm := a.buf(t, 1<<20, allAccess)
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: 9, SGL: []rdma.SGE{sge(big, bm)}}))
	recv, send := a.qp.(rdma.IdleReporter).Idle()
	require.True(t, recv)
	require.False(t, send, "the rendezvous send waits for the peer")
	require.NoError(t, a.qp.Disconnect(true))
	require.NoError(t, a.qp.Disconnect(true)) // no effect while draining
	select {
	case ev := <-a.ev.ch:
		t.Fatalf("graceful disconnect ended while the send was outstanding: %v", ev)
	default:
	}
	require.NoError(t, a.qp.Disconnect(false))
	require.Equal(t, rdma.ConnDisconnected, a.ev.wait(t, testWait).Kind)
	cs := a.scq.take()
	require.Len(t, cs, 1)
	require.Equal(t, rdma.StatusFlushed, cs[0].Status)
	require.Equal(t, rdma.ConnDisconnected, b.ev.wait(t, testWait).Kind)
	_, send = a.qp.(rdma.IdleReporter).Idle()
	require.True(t, send)
}

// Accepting a request whose active side has given up fails, and the QP
// ends disconnected with its receives flushed.
func TestAcceptAfterActiveGaveUp(t *testing.T) {
	a, b := newEnd(t, 1), newEnd(t, 1)
	reqs := make(chan rdma.ConnRequest, 1)
	l, err := b.dev.Listen(0, true, lh(func(r rdma.ConnRequest) { reqs <- r }))
	require.NoError(t, err)
	defer l.Close()
	rb, rm := b.buf(t, 64, allAccess)
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: 3, SGL: []rdma.SGE{sge(rb, rm)}}))
	recv, _ := b.qp.(rdma.IdleReporter).Idle()
	require.False(t, recv)
	require.NoError(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), l.Qual(), nil, 100*time.Millisecond))
	var req rdma.ConnRequest
	select {
	case req = <-reqs:
	case <-time.After(testWait):
		t.Fatal("no connection request")
	}
	require.Equal(t, rdma.ConnTimedOut, a.ev.wait(t, testWait).Kind)
	require.Error(t, req.Accept(b.qp, nil))
	cs := b.rcq.take()
	require.Len(t, cs, 1)
	require.Equal(t, rdma.StatusFlushed, cs[0].Status)
	require.Equal(t, uint64(3), cs[0].Cookie)
	require.NoError(t, b.qp.Reset())
}

// A refused request looks to the active side like no listener.
func TestRefuse(t *testing.T) {
	a, b := newEnd(t, 1), newEnd(t, 1)
	l, err := b.dev.Listen(0, true, lh(func(r rdma.ConnRequest) {
		require.NoError(t, r.(rdma.Refuser).Refuse())
		require.ErrorIs(t, r.Reject(), rdma.ErrState)
	}))
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), l.Qual(), nil, testWait))
	require.Equal(t, rdma.ConnNonPeerRejected, a.ev.wait(t, testWait).Kind)
}

// An idle QP can be resized and moved to another protection domain; posted
// receives are kept.
func TestReconfigure(t *testing.T) {
	a, b := newEnd(t, 1), newEnd(t, 1)
	rb, rm := b.buf(t, 64, allAccess)
	for i := 0; i < 3; i++ {
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: uint64(i), SGL: []rdma.SGE{sge(rb, rm)}}))
	}
	rc := b.qp.(rdma.Reconfigurer)
	require.ErrorIs(t, rc.Reconfigure(1, 4, 2, 4, 4), rdma.ErrInvalid, "3 receives posted")
	require.ErrorIs(t, rc.Reconfigure(1, 4, 8, maxSGE+1, 4), rdma.ErrInvalid)
	require.NoError(t, rc.Reconfigure(1, 2, 3, 4, 4))
	require.ErrorIs(t, b.qp.PostRecv(&rdma.RecvWR{SGL: []rdma.SGE{sge(rb, rm)}}), rdma.ErrQueueFull)
	// Now in PD 2: receives of PD 1 memory are refused.
	require.NoError(t, rc.Reconfigure(2, 2, 8, 4, 4))
	require.ErrorIs(t, b.qp.PostRecv(&rdma.RecvWR{SGL: []rdma.SGE{sge(rb, rm)}}), rdma.ErrProtection)
	require.NoError(t, rc.Reconfigure(1, 2, 8, 4, 4))
	connect(t, a, b, nil, nil)
	require.ErrorIs(t, rc.Reconfigure(1, 2, 8, 4, 4), rdma.ErrState)
	src, sm := a.buf(t, 8, allAccess)
	for i := 0; i < 3; i++ {
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{sge(src, sm)}}))
	}
	pollUntil(t, func() bool { return b.rcq.n() == 3 }, a.qp, b.qp)
	for i, c := range b.rcq.take() {
		require.Equal(t, rdma.StatusSuccess, c.Status)
		require.Equal(t, uint64(i), c.Cookie)
	}
}
