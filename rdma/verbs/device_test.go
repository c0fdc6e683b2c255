package verbs

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"godat/rdma"
)

const bound = 30 * time.Second

// side is a device with a PD, channels, a CQ and a QP.
type side struct {
	t   testing.TB
	dev rdma.Device
	pd  rdma.PD
	ch  rdma.CompChannel
	cm  rdma.CMChannel
	cq  rdma.CQ
	qp  rdma.QP
	ctx uint64
}

func newSide(t testing.TB, async rdma.AsyncHandler, ctx uint64) *side {
	s := &side{t: t, dev: openOrSkip(t, async), ctx: ctx}
	var err error
	s.pd, err = s.dev.AllocPD()
	require.NoError(t, err)
	s.ch, err = s.dev.CreateCompChannel()
	require.NoError(t, err)
	s.cm, err = s.dev.CreateCMChannel()
	require.NoError(t, err)
	s.cq, err = s.dev.CreateCQ(256, s.ch, ctx)
	require.NoError(t, err)
	s.qp, err = s.dev.CreateQP(rdma.QPInitAttr{PD: s.pd, SendCQ: s.cq, RecvCQ: s.cq, CM: s.cm, Context: ctx,
		Cap: rdma.QPCap{MaxSendWR: 64, MaxRecvWR: 64, MaxSendSGE: 2, MaxRecvSGE: 2}})
	require.NoError(t, err)
	return s
}

// event waits for the next CM event of s.
func (s *side) event(want rdma.CMEventType) rdma.CMEvent {
	s.t.Helper()
	var ev rdma.CMEvent
	require.NoError(s.t, s.cm.Get(&ev, bound), "waiting for %v", want)
	require.Equal(s.t, want.String(), ev.Type.String())
	return ev
}

// wc waits for n completions on s's CQ, sleeping on its channel.
func (s *side) wc(n int) []rdma.WC {
	s.t.Helper()
	var out []rdma.WC
	var buf [16]rdma.WC
	deadline := time.Now().Add(bound)
	for len(out) < n {
		seq := s.ch.Seq()
		if k := s.cq.Poll(buf[:]); k > 0 {
			out = append(out, buf[:k]...)
			continue
		}
		require.NoError(s.t, s.cq.Arm(false))
		if k := s.cq.Poll(buf[:]); k > 0 {
			out = append(out, buf[:k]...)
			continue
		}
		require.True(s.t, time.Now().Before(deadline), "%d of %d completions", len(out), n)
		s.ch.Wait(seq, time.Second)
	}
	return out
}

// mem is registered memory outside the Go heap.
func (s *side) mem(n int) ([]byte, rdma.MR) {
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	require.NoError(s.t, err)
	mr, err := s.pd.RegMR(addr(b), uint64(n),
		rdma.AccessLocalWrite|rdma.AccessRemoteWrite|rdma.AccessRemoteRead)
	require.NoError(s.t, err)
	s.t.Cleanup(func() { _ = unix.Munmap(b) })
	return b, mr
}

// pair connects a QP of a new device to one of another, with private data
// both ways; the passive side's receive is posted before it connects.
func pair(t testing.TB) (a, b *side, rb []byte, rmr rdma.MR) {
	a, b = newSide(t, nil, 1), newSide(t, nil, 2)
	rb, rmr = b.mem(4096)
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 77, SGL: []rdma.SGE{{Addr: addr(rb), Length: 4096, LKey: rmr.LKey()}}}))
	l, err := b.dev.Listen(b.cm, 0, true, 4, 99)
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, a.qp.Connect(netip0(b), l.ServiceID(), []byte("hi"), bound))
	req := b.event(rdma.CMConnectRequest)
	require.Equal(t, []byte("hi"), req.Request.PrivateData())
	require.Equal(t, l.ServiceID(), req.Request.ServiceID())
	require.NoError(t, req.Request.Accept(b.qp, []byte("welcome")))
	ev := a.event(rdma.CMEstablished)
	require.Equal(t, []byte("welcome"), ev.PrivateData)
	b.event(rdma.CMEstablished)
	return a, b, rb, rmr
}

func TestSmoke(t *testing.T) {
	a, b, rb, rmr := pair(t)
	sb, smr := a.mem(4096)
	copy(sb, "message posted before the receive side connected")
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 5, Opcode: rdma.WRSend, Flags: rdma.SendSignaled,
		SGL: []rdma.SGE{{Addr: addr(sb), Length: 100, LKey: smr.LKey()}}}))
	wc := a.wc(1)[0]
	require.Equal(t, rdma.WCSuccess, wc.Status, "%+v", wc)
	require.Equal(t, uint64(5), wc.WRID)
	require.Equal(t, rdma.WCSend, wc.Opcode)
	wc = b.wc(1)[0]
	require.Equal(t, rdma.WCSuccess, wc.Status, "%+v", wc)
	require.Equal(t, uint64(77), wc.WRID)
	require.Equal(t, rdma.WCRecv, wc.Opcode)
	require.Equal(t, uint32(100), wc.ByteLen)
	require.Equal(t, b.qp.Num(), wc.QPNum)
	require.Equal(t, sb[:100], rb[:100])

	// RDMA write then read back.
	copy(sb[1000:], "written")
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 6, Opcode: rdma.WRRDMAWrite, Flags: rdma.SendSignaled,
		RemoteAddr: addr(rb) + 2000, RKey: rmr.RKey(), SGL: []rdma.SGE{{Addr: addr(sb) + 1000, Length: 7, LKey: smr.LKey()}}}))
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 7, Opcode: rdma.WRRDMARead, Flags: rdma.SendSignaled,
		RemoteAddr: addr(rb) + 2000, RKey: rmr.RKey(), SGL: []rdma.SGE{{Addr: addr(sb) + 3000, Length: 7, LKey: smr.LKey()}}}))
	wcs := a.wc(2)
	require.Equal(t, rdma.WCRDMAWrite, wcs[0].Opcode)
	require.Equal(t, rdma.WCRDMARead, wcs[1].Opcode)
	require.Equal(t, "written", string(rb[2000:2007]))
	require.Equal(t, "written", string(sb[3000:3007]))

	require.NoError(t, a.qp.Disconnect(false))
	a.event(rdma.CMDisconnected)
	b.event(rdma.CMDisconnected)
}

// netip0 is b's device address, port 0 (the service id picks the port).
func netip0(b *side) netip.AddrPort { return netip.AddrPortFrom(b.dev.Addr(), 0) }
