package soft

import (
	"bytes"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"godat/rdma"
)

// newEndOn opens a device with params and one QP on it.
func newEndOn(t testing.TB, pd uint32, params map[string]string) *end {
	t.Helper()
	d, err := Open(params)
	require.NoError(t, err)
	e := &end{dev: d, scq: &sink{}, rcq: &sink{}, ev: newEvents(), pd: pd}
	e.qp, err = d.CreateQP(rdma.QPConfig{PD: pd, SendCQ: e.scq, RecvCQ: e.rcq, Conn: e.ev,
		MaxSend: 512, MaxRecv: 512, MaxSendSGE: 4, MaxRecvSGE: 4})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return e
}

func tcpEnd(t testing.TB, pd uint32) *end {
	return newEndOn(t, pd, map[string]string{"transport": "tcp", "addr": "127.0.0.1"})
}

// connectAt is connect() for a peer listening at addr.
func connectAt(t testing.TB, a, b *end, addr netip.Addr, preq, pacc []byte) (rdma.ConnEvent, rdma.ConnRequest) {
	t.Helper()
	reqs := make(chan rdma.ConnRequest, 1)
	l, err := b.dev.Listen(0, true, lh(func(r rdma.ConnRequest) { reqs <- r }))
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, a.qp.Connect(netip.AddrPortFrom(addr, 0), l.Qual(), preq, testWait))
	var req rdma.ConnRequest
	select {
	case req = <-reqs:
	case <-time.After(testWait):
		t.Fatal("no connection request")
	}
	require.NoError(t, req.Accept(b.qp, pacc))
	ea := a.ev.wait(t, testWait)
	require.Equal(t, rdma.ConnEstablished, ea.Kind)
	eb := b.ev.wait(t, testWait)
	require.Equal(t, rdma.ConnEstablished, eb.Kind)
	return ea, req
}

// cbuf is buf outside the Go heap: memory the peer's RDMA reaches through
// the socket, which the race detector must not mistake for Go data shared
// without synchronization (the ordering comes from the network).
func (e *end) cbuf(t testing.TB, n int, acc rdma.Access) ([]byte, rdma.MR) {
	t.Helper()
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	require.NoError(t, err)
	t.Cleanup(func() { unix.Munmap(b) })
	mr, err := e.dev.RegisterMR(e.pd, BufAddr(b), uint64(n), acc)
	require.NoError(t, err)
	return b, mr
}

func tcpPair(t testing.TB) (*end, *end) {
	a, b := tcpEnd(t, 1), tcpEnd(t, 2)
	connect(t, a, b, nil, nil)
	return a, b
}

func TestTCPPortOf(t *testing.T) {
	require.Equal(t, uint16(1024), tcpPortOf(1024))
	require.Equal(t, uint16(0x1234), tcpPortOf(0x1234))
	require.Equal(t, uint16(65535), tcpPortOf(0xffff_ffff_ffff_ffff))
	require.Equal(t, uint16(64512), tcpPortOf(0))
	require.Equal(t, uint16(64513), tcpPortOf(1<<40|1))
	require.Equal(t, uint16(65535), tcpPortOf(1023))
}

func TestOpenParams(t *testing.T) {
	for _, p := range []map[string]string{
		{"transport": "carrier-pigeon"},
		{"transport": "tcp", "addr": "no-such-interface0"},
		{"transport": "tcp", "timeout": "0"},
		{"transport": "tcp", "timeout": "soon"},
	} {
		_, err := Open(p)
		require.ErrorIs(t, err, rdma.ErrInvalid, "%v", p)
	}
	d, err := Open(map[string]string{"transport": "tcp", "addr": "lo", "timeout": "3"})
	require.NoError(t, err)
	require.Equal(t, netip.MustParseAddr("127.0.0.1"), d.Addr())
	require.Equal(t, "soft-tcp", d.Attr().Name)
	require.Equal(t, 3*time.Second, d.(*tcpDevice).timeout)
	require.NoError(t, d.Close())
	require.ErrorIs(t, d.Close(), rdma.ErrClosed)
	d, err = Open(map[string]string{"transport": "auto"})
	require.NoError(t, err)
	require.Equal(t, "soft-auto", d.Attr().Name)
	require.NoError(t, d.Close())
}

func TestTCPConnectPrivateData(t *testing.T) {
	for _, addr := range []string{"127.0.0.1", "::1"} {
		t.Run(addr, func(t *testing.T) {
			ip := netip.MustParseAddr(addr)
			p := map[string]string{"transport": "tcp", "addr": addr}
			a, b := newEndOn(t, 1, p), newEndOn(t, 1, p)
			ea, req := connectAt(t, a, b, ip, []byte("from-active"), []byte("from-passive"))
			require.Equal(t, []byte("from-passive"), ea.PrivateData)
			require.Equal(t, []byte("from-active"), req.PrivateData())
			require.Equal(t, ip, req.RemoteAddr().Addr())
			require.Equal(t, ip, a.qp.RemoteAddr().Addr())
			require.Equal(t, ip, b.qp.RemoteAddr().Addr())
			require.Equal(t, ip, a.qp.LocalAddr().Addr())
			require.Equal(t, b.qp.LocalAddr(), a.qp.RemoteAddr())
			require.Equal(t, a.qp.LocalAddr(), b.qp.RemoteAddr())
			pingPong(t, a.qp, b.qp, a, b, 20, 100)
		})
	}
}

func TestTCPPrivateDataTooLong(t *testing.T) {
	a := tcpEnd(t, 1)
	require.ErrorIs(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), 1, make([]byte, 257), time.Second), rdma.ErrInvalid)
}

func TestTCPReject(t *testing.T) {
	a, b := tcpEnd(t, 1), tcpEnd(t, 1)
	l, err := b.dev.Listen(0x1234, false, lh(func(r rdma.ConnRequest) {
		require.Equal(t, uint64(0x1234), r.Qual())
		require.NoError(t, r.Reject())
		require.ErrorIs(t, r.Reject(), rdma.ErrState)
	}))
	require.NoError(t, err)
	defer l.Close()
	require.Equal(t, uint64(0x1234), l.Qual())
	require.NoError(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), 0x1234, nil, testWait))
	require.Equal(t, rdma.ConnRejected, a.ev.wait(t, testWait).Kind)
	require.ErrorIs(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), 0x1234, nil, testWait), rdma.ErrState)
	require.NoError(t, a.qp.Reset())
	connect(t, a, b, nil, nil)
}

func TestTCPConnectNoListener(t *testing.T) {
	a, b := tcpEnd(t, 1), tcpEnd(t, 1)
	// Nothing on the port at all.
	require.NoError(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), 0xdead_beef_0000_0401, nil, testWait))
	require.Equal(t, rdma.ConnNonPeerRejected, a.ev.wait(t, testWait).Kind)
	// The port is open for another qualifier that maps to it.
	l, err := b.dev.Listen(0x77_0000_2345, false, lh(func(r rdma.ConnRequest) { t.Error("wrong qualifier delivered") }))
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, a.qp.Reset())
	require.NoError(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), 0x2345, nil, testWait))
	require.Equal(t, rdma.ConnNonPeerRejected, a.ev.wait(t, testWait).Kind)
}

func TestTCPConnectTimeout(t *testing.T) {
	a, b := tcpEnd(t, 1), tcpEnd(t, 1)
	got := make(chan rdma.ConnRequest, 1)
	l, err := b.dev.Listen(0, true, lh(func(r rdma.ConnRequest) { got <- r })) // never answers
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), l.Qual(), nil, 200*time.Millisecond))
	require.Equal(t, rdma.ConnTimedOut, a.ev.wait(t, testWait).Kind)
	// The request outlived the active side: accepting it fails.
	r := <-got
	require.NoError(t, b.qp.Reset())
	// Either the request is known to be gone (the QP ends at once), or the
	// accept goes out and finds no one.
	err = r.Accept(b.qp, nil)
	if err == nil {
		require.Equal(t, rdma.ConnAcceptError, b.ev.wait(t, testWait).Kind)
	} else {
		require.ErrorIs(t, err, rdma.ErrUnreachable)
	}
	require.NoError(t, b.qp.Reset())
	connect(t, a2(t), b, nil, nil)
}

func a2(t *testing.T) *end { return tcpEnd(t, 1) }

func TestTCPConnectUnreachable(t *testing.T) {
	a := tcpEnd(t, 1)
	// TEST-NET-1: no route in a test namespace; elsewhere the bound fires,
	// or a gateway or firewall on the way refuses the connection.
	require.NoError(t, a.qp.Connect(netip.MustParseAddrPort("192.0.2.1:0"), 7, nil, 300*time.Millisecond))
	k := a.ev.wait(t, testWait).Kind
	require.Contains(t, []rdma.ConnEventKind{rdma.ConnUnreachable, rdma.ConnTimedOut, rdma.ConnNonPeerRejected}, k)
}

func TestTCPListenAnyAndDuplicate(t *testing.T) {
	d := tcpEnd(t, 1).dev
	h := lh(func(r rdma.ConnRequest) { r.Reject() })
	seen := map[uint64]bool{}
	for i := 0; i < 20; i++ {
		l, err := d.Listen(0, true, h)
		require.NoError(t, err)
		require.False(t, seen[l.Qual()])
		require.Equal(t, uint64(tcpPortOf(l.Qual())), l.Qual(), "create_any reports the port")
		seen[l.Qual()] = true
		defer l.Close()
	}
	q := uint64(0x5a5a_0000_0000_c001)
	l, err := d.Listen(q, false, h)
	require.NoError(t, err)
	_, err = d.Listen(q, false, h)
	require.ErrorIs(t, err, rdma.ErrQualInUse)
	// Another qualifier of the same IA on the same port shares it.
	l2, err := d.Listen(q^1<<40, false, h)
	require.NoError(t, err)
	// Another IA on this address cannot take the port.
	_, err = tcpEnd(t, 1).dev.Listen(0xc001, false, h)
	require.ErrorIs(t, err, rdma.ErrQualInUse)
	require.NoError(t, l.Close())
	require.ErrorIs(t, l.Close(), rdma.ErrClosed)
	require.NoError(t, l2.Close())
	l, err = tcpEnd(t, 1).dev.Listen(0xc001, false, h)
	require.NoError(t, err)
	l.Close()
}

func TestTCPSendRecvSizes(t *testing.T) {
	a, b := tcpEnd(t, 1), tcpEnd(t, 2)
	sizes := []int{8, 64 << 10, 1 << 20, 0, 100, directMin - 1, directMin, rdBufSize + 1, 4 << 20}
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
		require.Equal(t, b.qp, rc.QP)
		require.Equal(t, rdma.StatusSuccess, sc.Status)
		require.Equal(t, uint64(i), sc.Cookie)
		require.Equal(t, uint64(n), sc.Length)
		require.True(t, bytes.Equal(sb[:n], rbufs[i][:n]), "payload %d", n)
		require.Equal(t, byte(0), rbufs[i][n], "no byte past the message")
	}
}

func TestTCPMultiSGEAndPipelining(t *testing.T) {
	a, b := tcpPair(t)
	for _, n := range []int{100, 300 << 10} {
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
	// Many small messages in flight at once arrive in order.
	const n = 400
	sb, smr := a.buf(t, n*4, allAccess)
	rb, rmr := b.buf(t, n*4, allAccess)
	for i := 0; i < n; i++ {
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: uint64(i),
			SGL: []rdma.SGE{{Addr: BufAddr(rb) + uint64(i*4), Length: 4, LKey: rmr.LKey()}}}))
	}
	for i := 0; i < n; i++ {
		sb[i*4], sb[i*4+1] = byte(i), byte(i>>8)
		fl := rdma.SendFlags(0)
		if i%2 == 0 {
			fl = rdma.SendSignaled
		}
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: uint64(i), Flags: fl,
			SGL: []rdma.SGE{{Addr: BufAddr(sb) + uint64(i*4), Length: 4, LKey: smr.LKey()}}}))
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

func TestTCPWriteVisibleBeforeSend(t *testing.T) {
	a, b := tcpPair(t)
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
	pollUntil(t, func() bool { return a.scq.n() == 2 }, a.qp)
	cs := a.scq.take()
	require.Equal(t, rdma.OpWrite, cs[0].Op)
	require.Equal(t, rdma.StatusSuccess, cs[0].Status)
	require.Equal(t, uint64(4000), cs[0].Length)
	require.Equal(t, rdma.OpSend, cs[1].Op)
}

func TestTCPRDMAReadWriteLarge(t *testing.T) {
	a, b := tcpPair(t)
	const n = 4 << 20
	src, smr := b.cbuf(t, n, rdma.AccessRemoteRead|rdma.AccessLocalWrite)
	fill(src, 5)
	d1, m1 := a.buf(t, n/2, allAccess)
	d2, m2 := a.buf(t, n/2, allAccess)
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpRead, Cookie: 3, SGL: []rdma.SGE{sge(d1, m1), sge(d2, m2)},
		RemoteAddr: BufAddr(src), RKey: smr.RKey(), Flags: rdma.SendSignaled}))
	// The target answers reads without the target consumer's help.
	pollUntil(t, func() bool { return a.scq.n() == 1 }, a.qp)
	cs := a.scq.take()
	require.Equal(t, rdma.StatusSuccess, cs[0].Status)
	require.Equal(t, rdma.OpRead, cs[0].Op)
	require.Equal(t, uint64(n), cs[0].Length)
	require.True(t, bytes.Equal(src[:n/2], d1))
	require.True(t, bytes.Equal(src[n/2:], d2))

	tgt, tmr := b.cbuf(t, n, allAccess)
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpWrite, Cookie: 4, SGL: []rdma.SGE{sge(d2, m2), sge(d1, m1)},
		RemoteAddr: BufAddr(tgt), RKey: tmr.RKey(), Flags: rdma.SendSignaled}))
	pollUntil(t, func() bool { return a.scq.n() == 1 }, a.qp)
	require.Equal(t, rdma.StatusSuccess, a.scq.take()[0].Status)
	require.True(t, bytes.Equal(src[n/2:], tgt[:n/2]))
	require.True(t, bytes.Equal(src[:n/2], tgt[n/2:]))
}

func TestTCPManyReadsAndFence(t *testing.T) {
	a, b := tcpPair(t)
	src, smr := b.cbuf(t, 64*1024, allAccess)
	fill(src, 9)
	dst, dmr := a.buf(t, 64*1024, allAccess)
	// More reads than may be outstanding: the rest wait and go later.
	for i := 0; i < 64; i++ {
		fl := rdma.SendSignaled
		if i == 40 {
			fl |= rdma.SendFence
		}
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpRead, Cookie: uint64(i), Flags: fl,
			SGL:        []rdma.SGE{{Addr: BufAddr(dst) + uint64(i*1024), Length: 1024, LKey: dmr.LKey()}},
			RemoteAddr: BufAddr(src) + uint64(i*1024), RKey: smr.RKey()}))
	}
	pollUntil(t, func() bool { return a.scq.n() == 64 }, a.qp)
	for i, c := range a.scq.take() {
		require.Equal(t, uint64(i), c.Cookie)
		require.Equal(t, rdma.StatusSuccess, c.Status)
	}
	require.Equal(t, src, dst)
}

func TestTCPRemoteAccessErrors(t *testing.T) {
	a, b := tcpPair(t) // a has PD 1, b has PD 2
	tgt, tmr := b.cbuf(t, 4096, allAccess)
	ro, romr := b.cbuf(t, 4096, rdma.AccessRemoteRead)
	wo, womr := b.cbuf(t, 4096, rdma.AccessRemoteWrite|rdma.AccessLocalWrite)
	wrongPD, _ := b.cbuf(t, 4096, 0)
	wmr, err := b.dev.RegisterMR(77, BufAddr(wrongPD), 4096, allAccess)
	require.NoError(t, err)
	dead, dmr := b.cbuf(t, 4096, allAccess)
	require.NoError(t, dmr.Deregister())
	src, smr := a.buf(t, 64<<10, allAccess)
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
		{"large out of bounds", rdma.OpWrite, BufAddr(tgt), tmr.RKey(), 64 << 10},
		{"below start", rdma.OpWrite, BufAddr(tgt) - 1, tmr.RKey(), 16},
		{"no remote write", rdma.OpWrite, BufAddr(ro), romr.RKey(), 16},
		{"wrong pd", rdma.OpWrite, BufAddr(wrongPD), wmr.RKey(), 16},
		{"stale key", rdma.OpWrite, BufAddr(dead), dmr.RKey(), 16},
		{"read out of bounds", rdma.OpRead, BufAddr(tgt) + 4095, tmr.RKey(), 2},
		{"read wrong pd", rdma.OpRead, BufAddr(wrongPD), wmr.RKey(), 16},
		{"no remote read", rdma.OpRead, BufAddr(wo), womr.RKey(), 16},
	}
	rd, rdmr := a.buf(t, 64<<10, allAccess)
	for i, c := range cases {
		s := rdma.SGE{Addr: BufAddr(src), Length: uint64(c.n), LKey: smr.LKey()}
		if c.op == rdma.OpRead {
			s = rdma.SGE{Addr: BufAddr(rd), Length: uint64(c.n), LKey: rdmr.LKey()}
		}
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: c.op, Cookie: uint64(i), SGL: []rdma.SGE{s},
			RemoteAddr: c.addr, RKey: c.key})) // unsignaled: errors still complete
		pollUntil(t, func() bool { return a.scq.n() == 1 }, a.qp)
		cs := a.scq.take()
		require.Equal(t, rdma.StatusRemoteAccess, cs[0].Status, c.name)
		require.Equal(t, uint64(i), cs[0].Cookie)
		require.Equal(t, uint64(0), cs[0].Length)
	}
	zero := make([]byte, 4096)
	require.Equal(t, zero, tgt)
	require.Equal(t, zero, ro)
	require.Equal(t, zero, wo)
	require.Equal(t, zero, wrongPD)
	require.Equal(t, zero, dead)
	require.Equal(t, make([]byte, 64<<10), rd)
	// The connection survives: a good write after the bad ones lands.
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpWrite, Cookie: 99, Flags: rdma.SendSignaled,
		SGL: []rdma.SGE{{Addr: BufAddr(src), Length: 4096, LKey: smr.LKey()}}, RemoteAddr: BufAddr(tgt), RKey: tmr.RKey()}))
	pollUntil(t, func() bool { return a.scq.n() == 1 }, a.qp)
	require.Equal(t, rdma.StatusSuccess, a.scq.take()[0].Status)
	require.Equal(t, src[:4096], tgt)
}

// TestTCPUnmappedRegion: a registered region the owner unmapped faults
// safely: the access fails, the process lives on.
func TestTCPUnmappedRegion(t *testing.T) {
	a, b := tcpPair(t)
	m, err := unix.Mmap(-1, 0, 1<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	require.NoError(t, err)
	addr := BufAddr(m)
	mr, err := b.dev.RegisterMR(2, addr, 1<<20, allAccess)
	require.NoError(t, err)
	require.NoError(t, unix.Munmap(m))
	src, smr := a.buf(t, 1<<20, allAccess)
	for i, n := range []int{64, 1 << 20} { // through the read buffer, and straight from the socket
		for _, op := range []rdma.Op{rdma.OpWrite, rdma.OpRead} {
			require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: op, Cookie: uint64(i),
				SGL: []rdma.SGE{{Addr: BufAddr(src), Length: uint64(n), LKey: smr.LKey()}}, RemoteAddr: addr, RKey: mr.RKey()}))
			pollUntil(t, func() bool { return a.scq.n() == 1 }, a.qp)
			require.Equal(t, rdma.StatusRemoteAccess, a.scq.take()[0].Status, "op %d size %d", op, n)
		}
	}
	pingPong(t, a.qp, b.qp, a, b, 3, 8)
}

func TestTCPLocalErrors(t *testing.T) {
	a, b := tcpPair(t)
	src, smr := a.buf(t, 1<<20, allAccess)
	ronly, romr := a.buf(t, 64, rdma.AccessLocalRead)
	wonly, womr := a.buf(t, 64, rdma.AccessLocalWrite)
	other := make([]byte, 64)
	omr, err := a.dev.RegisterMR(a.pd+1, BufAddr(other), 64, allAccess)
	require.NoError(t, err)
	tgt, tmr := b.cbuf(t, 64, allAccess)
	// Local segments are checked at post time, as on shared memory.
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
	require.ErrorIs(t, a.qp.PostRecv(&rdma.RecvWR{SGL: []rdma.SGE{sge(ronly, romr)}}), rdma.ErrPrivileges)
	require.ErrorIs(t, a.qp.PostRecv(&rdma.RecvWR{SGL: []rdma.SGE{sge(other, omr)}}), rdma.ErrProtection)
	require.Empty(t, a.scq.take())
	require.Equal(t, make([]byte, 64), tgt)

	// A region deregistered while its send waits for a grant: the send
	// completes with a protection error when it is issued.
	gone, gmr := a.buf(t, 64, allAccess)
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: 3, SGL: []rdma.SGE{sge(gone, gmr)}}))
	require.NoError(t, gmr.Deregister())
	ok1, ok1m := b.buf(t, 64, allAccess)
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{SGL: []rdma.SGE{sge(ok1, ok1m)}}))
	pollUntil(t, func() bool { return a.scq.n() == 1 }, a.qp, b.qp)
	c := a.scq.take()[0]
	require.Equal(t, rdma.StatusLocalProtection, c.Status)
	require.Equal(t, uint64(3), c.Cookie)
	// the receive posted for it is still there: use it up
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{{Addr: BufAddr(src), Length: 8, LKey: smr.LKey()}}}))
	pollUntil(t, func() bool { return b.rcq.n() == 1 }, a.qp, b.qp)
	require.Equal(t, rdma.StatusSuccess, b.rcq.take()[0].Status)

	// receive too small, through the buffer and straight from the socket;
	// the stream stays in step for the next message
	ok, okm := b.buf(t, 8, allAccess)
	for _, n := range []int{100, 100 << 10} {
		small, sm := b.buf(t, n-1, allAccess)
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: 5, SGL: []rdma.SGE{sge(small, sm)}}))
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: 6, SGL: []rdma.SGE{sge(ok, okm)}}))
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{{Addr: BufAddr(src), Length: uint64(n), LKey: smr.LKey()}}}))
		src[0] = 0x42
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{{Addr: BufAddr(src), Length: 1, LKey: smr.LKey()}}}))
		pollUntil(t, func() bool { return b.rcq.n() == 2 }, a.qp, b.qp)
		rc := b.rcq.take()
		require.Equal(t, rdma.StatusLocalLength, rc[0].Status)
		require.Equal(t, make([]byte, n-1), small)
		require.Equal(t, rdma.StatusSuccess, rc[1].Status)
		require.Equal(t, byte(0x42), ok[0])
		src[0] = 0
		if n > inlineMax { // a large send hears the receiver's verdict
			pollUntil(t, func() bool { return a.scq.n() == 1 }, a.qp, b.qp)
			require.Equal(t, rdma.StatusRemoteResponder, a.scq.take()[0].Status)
		}
	}
	// a receive whose region was deregistered after it was posted
	rb, rm := b.buf(t, 64, allAccess)
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{SGL: []rdma.SGE{sge(rb, rm)}}))
	require.NoError(t, rm.Deregister())
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{{Addr: BufAddr(src), Length: 8, LKey: smr.LKey()}}}))
	pollUntil(t, func() bool { return b.rcq.n() == 1 }, a.qp, b.qp)
	require.Equal(t, rdma.StatusLocalProtection, b.rcq.take()[0].Status)
	require.Equal(t, make([]byte, 64), rb)

	require.ErrorIs(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: make([]rdma.SGE, 5)}), rdma.ErrInvalid)
	require.ErrorIs(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpRecv}), rdma.ErrInvalid)
}

// TestTCPFlowControl: a sender whose peer posted no receive gets no grant:
// its sends wait in its own queue (nothing is written, nothing buffered at
// the receiver) until receives are posted.
func TestTCPFlowControl(t *testing.T) {
	a, b := tcpPair(t)
	const n, sz = 200, 64 << 10
	sb, smr := a.buf(t, sz, allAccess)
	for i := 0; i < n; i++ {
		sb[0] = byte(i)
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: uint64(i), Flags: rdma.SendSignaled,
			SGL: []rdma.SGE{sge(sb[:1], smr), {Addr: BufAddr(sb) + 1, Length: sz - 1, LKey: smr.LKey()}}}))
	}
	time.Sleep(100 * time.Millisecond)
	for i := 0; i < 10; i++ {
		a.qp.Progress()
		b.qp.Progress()
	}
	require.Equal(t, 0, a.scq.n(), "a send left without a grant")
	require.Equal(t, 0, b.rcq.n())
	tq := a.qp.(*tqp)
	tq.mu.Lock()
	issued := tq.sqExec - tq.sqHead
	tq.mu.Unlock()
	require.Zero(t, issued)
	rb, rmr := b.buf(t, sz, allAccess)
	for i := 0; i < n; i++ {
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: uint64(i), SGL: []rdma.SGE{sge(rb, rmr)}}))
		if i%50 == 49 {
			k := i + 1
			pollUntil(t, func() bool { return b.rcq.n() == k }, a.qp, b.qp)
		}
	}
	pollUntil(t, func() bool { return a.scq.n() == n }, a.qp, b.qp)
	for i, c := range b.rcq.take() {
		require.Equal(t, uint64(i), c.Cookie)
		require.Equal(t, rdma.StatusSuccess, c.Status)
	}
	require.Equal(t, byte(n-1), rb[0])
}

// TestTCPGrantWithoutProgress: a sender waiting for a grant sends as soon as
// the receiver posts, even if the sender's consumer makes no call.
func TestTCPGrantWithoutProgress(t *testing.T) {
	a, b := tcpPair(t)
	sb, smr := a.buf(t, 8, allAccess)
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{sge(sb, smr)}}))
	rb, rmr := b.buf(t, 8, allAccess)
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{SGL: []rdma.SGE{sge(rb, rmr)}}))
	pollUntil(t, func() bool { return b.rcq.n() == 1 }, b.qp) // only b progresses
}

func TestTCPDisconnectFlushes(t *testing.T) {
	for _, graceful := range []bool{false, true} {
		a, b := tcpPair(t)
		ra, rma := a.buf(t, 64, allAccess)
		rb, rmb := b.buf(t, 1<<20, allAccess)
		for i := 0; i < 3; i++ {
			require.NoError(t, a.qp.PostRecv(&rdma.RecvWR{Cookie: uint64(i), SGL: []rdma.SGE{sge(ra, rma)}}))
		}
		big, bm := a.buf(t, 1<<20, allAccess)
		// a send with no grant: it waits
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: 42, SGL: []rdma.SGE{sge(big, bm)}}))
		if graceful {
			require.NoError(t, a.qp.Disconnect(true))
			for i := 0; i < 3; i++ {
				require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: uint64(i), SGL: []rdma.SGE{sge(rb, rmb)}}))
			}
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
		if graceful {
			require.Len(t, cb, 3)
			require.Equal(t, rdma.StatusSuccess, cb[0].Status)
			require.Equal(t, rdma.StatusFlushed, cb[1].Status)
			require.Equal(t, rdma.StatusFlushed, cb[2].Status)
		} else {
			require.Empty(t, cb)
		}
		require.ErrorIs(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend}), rdma.ErrState)
		require.Equal(t, 0, a.qp.Progress())
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: 7, SGL: []rdma.SGE{sge(rb, rmb)}}))
		require.NoError(t, a.qp.Reset())
		require.NoError(t, b.qp.Reset())
		require.Equal(t, rdma.StatusFlushed, b.rcq.take()[0].Status)
		connect(t, a, b, nil, nil)
		pingPong(t, a.qp, b.qp, a, b, 3, 8)
		require.NoError(t, b.qp.Disconnect(false))
		require.Equal(t, rdma.ConnDisconnected, a.ev.wait(t, testWait).Kind)
		require.Equal(t, rdma.ConnDisconnected, b.ev.wait(t, testWait).Kind)
	}
}

func TestTCPDestroyAndCloseSeenByPeer(t *testing.T) {
	a, b := tcpPair(t)
	require.NoError(t, a.qp.Destroy())
	require.Equal(t, rdma.ConnDisconnected, b.ev.wait(t, testWait).Kind)
	require.ErrorIs(t, a.qp.PostRecv(&rdma.RecvWR{}), rdma.ErrClosed)
	require.ErrorIs(t, a.qp.Destroy(), rdma.ErrClosed)

	a, b = tcpPair(t)
	require.NoError(t, b.dev.Close())
	require.Equal(t, rdma.ConnDisconnected, a.ev.wait(t, testWait).Kind)
}

// TestTCPSocketDeath: a connection whose socket dies without a DISC (what a
// killed process leaves) is broken on the survivor, and what had arrived is
// still delivered.
func TestTCPSocketDeath(t *testing.T) {
	a, b := tcpPair(t)
	rb, rmr := b.buf(t, 8, allAccess)
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: 1, SGL: []rdma.SGE{sge(rb, rmr)}}))
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: 2, SGL: []rdma.SGE{sge(rb, rmr)}}))
	sb, smr := a.buf(t, 8, allAccess)
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{sge(sb, smr)}}))
	pollUntil(t, func() bool { return a.qp.(*tqp).allDone() }, a.qp)
	time.Sleep(20 * time.Millisecond)
	a.qp.(*tqp).c.abort()
	require.Equal(t, rdma.ConnBroken, b.ev.wait(t, testWait).Kind)
	require.Equal(t, rdma.ConnBroken, a.ev.wait(t, testWait).Kind)
	cs := b.rcq.take()
	require.Len(t, cs, 2)
	require.Equal(t, rdma.StatusSuccess, cs[0].Status)
	require.Equal(t, rdma.StatusFlushed, cs[1].Status)
}

func (q *tqp) allDone() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.allDoneLocked()
}

func TestTCPPingPongAndDoorbell(t *testing.T) {
	a, b := tcpPair(t)
	pingPong(t, a.qp, b.qp, a, b, 200, 8)
	sa, ma := a.buf(t, 8, allAccess)
	rb, rmr := b.buf(t, 8, allAccess)
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{SGL: []rdma.SGE{sge(rb, rmr)}}))
	time.Sleep(10 * time.Millisecond) // the grant reaches a
	db := b.dev.Doorbell()
	s := db.Seq()
	done := make(chan struct{})
	go func() {
		for b.qp.Progress() == 0 {
			db.Wait(s, testWait)
			s = db.Seq()
		}
		close(done)
	}()
	time.Sleep(10 * time.Millisecond)
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{sge(sa, ma)}}))
	select {
	case <-done:
	case <-time.After(testWait):
		t.Fatal("receiver's doorbell not rung")
	}
}

// TestTCPConcurrent: both directions at once from several goroutines.
func TestTCPConcurrent(t *testing.T) {
	a, b := tcpPair(t)
	const n, sz = 2000, 3000
	run := func(from, to *end, seed uint64) {
		sb, smr := from.buf(t, sz, allAccess)
		fill(sb, seed)
		rb, rmr := to.buf(t, sz*8, allAccess)
		go func() {
			for i := 0; i < n; i++ {
				for {
					err := to.qp.PostRecv(&rdma.RecvWR{Cookie: uint64(i), SGL: []rdma.SGE{{Addr: BufAddr(rb) + uint64(i%8*sz), Length: sz, LKey: rmr.LKey()}}})
					if err == nil {
						break
					}
					time.Sleep(time.Millisecond)
				}
			}
		}()
		go func() {
			for i := 0; i < n; i++ {
				for from.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: uint64(i), Flags: rdma.SendSignaled, SGL: []rdma.SGE{sge(sb, smr)}}) != nil {
					from.qp.Progress()
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	run(a, b, 1)
	run(b, a, 2)
	deadline := time.Now().Add(60 * time.Second)
	got := map[*end]int{}
	for got[a] < n || got[b] < n {
		require.True(t, time.Now().Before(deadline), "stuck at %d/%d", got[a], got[b])
		a.qp.Progress()
		b.qp.Progress()
		for _, e := range []*end{a, b} {
			for _, c := range e.rcq.take() {
				require.Equal(t, rdma.StatusSuccess, c.Status)
				require.Equal(t, uint64(got[e]), c.Cookie)
				got[e]++
			}
		}
		time.Sleep(100 * time.Microsecond)
	}
	pollUntil(t, func() bool { return a.scq.n() >= n && b.scq.n() >= n }, a.qp, b.qp)
}

// TestAutoPicksTransport: an auto IA reaches an shm-capable peer on this
// host through shared memory and a TCP-only one through TCP; receives
// posted before the choice follow it.
func TestAutoPicksTransport(t *testing.T) {
	auto := map[string]string{"transport": "auto", "addr": "127.0.0.1"}
	for _, peer := range []string{"auto", "tcp", "shm"} {
		t.Run(peer, func(t *testing.T) {
			a := newEndOn(t, 1, auto)
			b := newEndOn(t, 2, map[string]string{"transport": peer, "addr": "127.0.0.1"})
			rb, rmr := a.buf(t, 8, allAccess)
			require.NoError(t, a.qp.PostRecv(&rdma.RecvWR{Cookie: 77, SGL: []rdma.SGE{sge(rb, rmr)}}))
			connect(t, a, b, []byte("hi"), []byte("ho"))
			want := int32(autoShm)
			if peer == "tcp" {
				want = autoTCP
			}
			require.Equal(t, want, a.qp.(*aqp).kind.Load())
			sb, smr := b.buf(t, 8, allAccess)
			copy(sb, "payload!")
			require.NoError(t, b.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{sge(sb, smr)}}))
			pollUntil(t, func() bool { return a.rcq.n() == 1 }, a.qp, b.qp)
			c := a.rcq.take()[0]
			require.Equal(t, uint64(77), c.Cookie)
			require.Equal(t, a.qp, c.QP)
			require.Equal(t, "payload!", string(rb))
			pingPong(t, a.qp, b.qp, a, b, 5, 8)
			pingPong(t, b.qp, a.qp, b, a, 5, 8)
			require.NoError(t, a.qp.Disconnect(false))
			require.Equal(t, rdma.ConnDisconnected, a.ev.wait(t, testWait).Kind)
			require.Equal(t, rdma.ConnDisconnected, b.ev.wait(t, testWait).Kind)
			require.NoError(t, a.qp.Reset())
			require.Equal(t, int32(autoNone), a.qp.(*aqp).kind.Load())
		})
	}
	// An auto listener serves TCP-only and shm-only peers on one qualifier.
	s := newEndOn(t, 1, auto)
	reqs := make(chan rdma.ConnRequest, 2)
	l, err := s.dev.Listen(0x4242_0000_9999, false, lh(func(r rdma.ConnRequest) { reqs <- r }))
	require.NoError(t, err)
	defer l.Close()
	for _, peer := range []string{"tcp", "shm"} {
		c := newEndOn(t, 1, map[string]string{"transport": peer})
		require.NoError(t, c.qp.Connect(netip.AddrPortFrom(lo, 0), 0x4242_0000_9999, nil, testWait))
		r := <-reqs
		require.NoError(t, r.Accept(s.qp, nil))
		require.Equal(t, rdma.ConnEstablished, c.ev.wait(t, testWait).Kind)
		require.Equal(t, rdma.ConnEstablished, s.ev.wait(t, testWait).Kind)
		pingPong(t, c.qp, s.qp, c, s, 3, 8)
		require.NoError(t, c.qp.Disconnect(false))
		require.Equal(t, rdma.ConnDisconnected, c.ev.wait(t, testWait).Kind)
		require.Equal(t, rdma.ConnDisconnected, s.ev.wait(t, testWait).Kind)
		require.NoError(t, s.qp.Reset())
	}
}

// TestTCPGarbageClient: a client that is not godat is dropped without a
// request reaching the consumer.
func TestTCPGarbageClient(t *testing.T) {
	b := tcpEnd(t, 1)
	l, err := b.dev.Listen(0, true, lh(func(r rdma.ConnRequest) { t.Error("garbage became a request") }))
	require.NoError(t, err)
	defer l.Close()
	c, err := net.Dial("tcp", netip.AddrPortFrom(lo, uint16(l.Qual())).String())
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write(bytes.Repeat([]byte("GET / HTTP/1.0\r\n"), 4))
	require.NoError(t, err)
	c.SetReadDeadline(time.Now().Add(testWait))
	_, err = c.Read(make([]byte, 16))
	require.Error(t, err) // closed by the listener
	// The listener still works.
	a := tcpEnd(t, 1)
	connect(t, a, tcpEnd(t, 1), nil, nil)
}

// TestTCPSRQShared: connections over TCP share one SRQ; each connection's
// messages complete in its order, in the buffers their cookies name.
func TestTCPSRQShared(t *testing.T) {
	srv := tcpEnd(t, 2)
	s := newSRQ(t, srv, 2, 64, nil)
	var clients, servers []*end
	for i := 0; i < 3; i++ {
		c := tcpEnd(t, 1)
		se := srqEnd(t, srv, s, 2)
		connect(t, c, se, nil, nil)
		clients, servers = append(clients, c), append(servers, se)
	}
	require.ErrorIs(t, servers[0].qp.PostRecv(&rdma.RecvWR{}), rdma.ErrState)
	const per = 10
	for _, n := range []int{64, 100 << 10} { // through the read buffer and straight from the socket
		bufs := postN(t, srv, s, 3*per, n, 1000)
		for i, c := range clients {
			sendTagged(t, c, uint32(i), per, n)
		}
		var qps []rdma.QP
		for i := range clients {
			qps = append(qps, clients[i].qp, servers[i].qp)
		}
		pollUntil(t, func() bool {
			return servers[0].rcq.n()+servers[1].rcq.n()+servers[2].rcq.n() == 3*per
		}, qps...)
		seen := map[uint64]bool{}
		for i, se := range servers {
			cs := se.rcq.take()
			require.Len(t, cs, per, "connection %d", i)
			for seq, c := range cs {
				require.Equal(t, rdma.StatusSuccess, c.Status)
				require.Equal(t, uint64(n), c.Length)
				require.False(t, seen[c.Cookie], "buffer used twice")
				seen[c.Cookie] = true
				b := bufs[c.Cookie-1000]
				require.Equal(t, uint32(i), binary.LittleEndian.Uint32(b[0:]), "tag")
				require.Equal(t, uint32(seq), binary.LittleEndian.Uint32(b[4:]), "per-connection order")
			}
		}
		require.Equal(t, 0, s.Available())
	}
}

// TestTCPSRQEmptyAndWindow: a message that finds the SRQ empty waits until a
// receive is posted to it; and a peer may send only srqWindow messages
// beyond those the receiver has completed.
func TestTCPSRQEmptyAndWindow(t *testing.T) {
	srv := tcpEnd(t, 2)
	s := newSRQ(t, srv, 2, 1024, nil)
	se := srqEnd(t, srv, s, 2)
	c := tcpEnd(t, 1)
	connect(t, c, se, nil, nil)
	sendTagged(t, c, 7, 5, 32)
	time.Sleep(100 * time.Millisecond)
	se.qp.Progress()
	require.Equal(t, 0, se.rcq.n())
	postN(t, srv, s, 5, 32, 0)
	pollUntil(t, func() bool { return se.rcq.n() == 5 }, se.qp)
	for i, r := range se.rcq.take() {
		require.Equal(t, uint64(i), r.Cookie)
		require.Equal(t, rdma.StatusSuccess, r.Status)
	}
	pollUntil(t, func() bool { return c.scq.n() == 5 }, c.qp)
	c.scq.take()

	// The receiver completes nothing: the sender stops after the window.
	postN(t, srv, s, 3*srqWindow, 32, 100)
	sendTagged(t, c, 8, 3*srqWindow, 32)
	time.Sleep(100 * time.Millisecond)
	for i := 0; i < 10; i++ {
		c.qp.Progress()
	}
	require.Equal(t, srqWindow, c.scq.n())
	pollUntil(t, func() bool { return se.rcq.n() == 3*srqWindow }, se.qp, c.qp)
	pollUntil(t, func() bool { return c.scq.n() == 3*srqWindow }, c.qp)
}

// TestAutoSRQ: an auto QP on an SRQ takes its receives from it on either
// transport.
func TestAutoSRQ(t *testing.T) {
	srv := newEndOn(t, 2, map[string]string{"transport": "auto"})
	s := newSRQ(t, srv, 2, 64, nil)
	for _, peer := range []string{"shm", "tcp"} {
		se := srqEnd(t, srv, s, 2)
		c := newEndOn(t, 1, map[string]string{"transport": peer})
		connect(t, c, se, nil, nil)
		postN(t, srv, s, 4, 64, 0)
		sendTagged(t, c, 1, 4, 64)
		pollUntil(t, func() bool { return se.rcq.n() == 4 }, se.qp, c.qp)
		for _, r := range se.rcq.take() {
			require.Equal(t, rdma.StatusSuccess, r.Status)
		}
	}
}

// TestTCPAbruptEndsDrain: an abrupt disconnect during a graceful one's wait
// for posted work ends it at once; the waiting send is flushed.
func TestTCPAbruptEndsDrain(t *testing.T) {
	a, b := tcpPair(t)
	big, bm := a.buf(t, 1<<20, allAccess)
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: 1, SGL: []rdma.SGE{sge(big, bm)}})) // no grant
	require.NoError(t, a.qp.Disconnect(true))
	require.NoError(t, a.qp.Disconnect(true))
	select {
	case ev := <-a.ev.ch:
		t.Fatalf("event %v while draining", ev.Kind)
	case <-time.After(50 * time.Millisecond):
	}
	require.NoError(t, a.qp.Disconnect(false))
	require.Equal(t, rdma.ConnDisconnected, a.ev.wait(t, testWait).Kind)
	require.Equal(t, rdma.ConnDisconnected, b.ev.wait(t, testWait).Kind)
	cs := a.scq.take()
	require.Len(t, cs, 1)
	require.Equal(t, rdma.StatusFlushed, cs[0].Status)
	select {
	case ev := <-a.ev.ch:
		t.Fatalf("second event %v", ev.Kind)
	case <-time.After(50 * time.Millisecond):
	}
}
