package soft

import (
	"net/netip"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// countSink counts completions without allocating.
type countSink struct {
	n   atomic.Int64
	bad atomic.Int64
}

func (s *countSink) PushCompletion(c *rdma.Completion) {
	if c.Status != rdma.StatusSuccess {
		s.bad.Add(1)
	}
	s.n.Add(1)
}

type bend struct {
	dev rdma.Device
	qp  rdma.QP
	scq countSink
	rcq countSink
	ev  *events
}

func benchPair(b *testing.B) (*bend, *bend) {
	mk := func() *bend {
		d, err := Open(nil)
		require.NoError(b, err)
		e := &bend{dev: d, ev: newEvents()}
		e.qp, err = d.CreateQP(rdma.QPConfig{PD: 1, SendCQ: &e.scq, RecvCQ: &e.rcq, Conn: e.ev, MaxSend: 256, MaxRecv: 256})
		require.NoError(b, err)
		b.Cleanup(func() { d.Close() })
		return e
	}
	x, y := mk(), mk()
	reqs := make(chan rdma.ConnRequest, 1)
	l, err := y.dev.Listen(0, true, lh(func(r rdma.ConnRequest) { reqs <- r }))
	require.NoError(b, err)
	defer l.Close()
	require.NoError(b, x.qp.Connect(netip.AddrPortFrom(lo, 0), l.Qual(), nil, testWait))
	require.NoError(b, (<-reqs).Accept(y.qp, nil))
	require.Equal(b, rdma.ConnEstablished, x.ev.wait(b, testWait).Kind)
	require.Equal(b, rdma.ConnEstablished, y.ev.wait(b, testWait).Kind)
	return x, y
}

func (e *bend) reg(b *testing.B, n int) ([]byte, rdma.SGE) {
	buf := make([]byte, n)
	mr, err := e.dev.RegisterMR(1, BufAddr(buf), uint64(n), allAccess)
	require.NoError(b, err)
	return buf, rdma.SGE{Addr: BufAddr(buf), Length: uint64(n), LKey: mr.LKey()}
}

// waitRecv polls q until its receive count reaches n.
func waitRecv(q rdma.QP, s *countSink, n int64, stop *atomic.Bool) bool {
	for s.n.Load() < n {
		if q.Progress() == 0 {
			if stop != nil && stop.Load() {
				return false
			}
			runtime.Gosched()
		}
	}
	return true
}

// BenchmarkPingPong8: one round trip of an 8-byte message between two
// goroutines, each polling its own QP.
func BenchmarkPingPong8(b *testing.B) {
	x, y := benchPair(b)
	_, xs := x.reg(b, 8)
	_, ys := y.reg(b, 8)
	xsgl, ysgl := []rdma.SGE{xs}, []rdma.SGE{ys}
	rx := &rdma.RecvWR{SGL: xsgl}
	ry := &rdma.RecvWR{SGL: ysgl}
	sx := &rdma.SendWR{Op: rdma.OpSend, SGL: xsgl}
	sy := &rdma.SendWR{Op: rdma.OpSend, SGL: ysgl}
	var stop atomic.Bool
	done := make(chan struct{})
	require.NoError(b, y.qp.PostRecv(ry))
	go func() {
		defer close(done)
		for i := int64(1); ; i++ {
			if !waitRecv(y.qp, &y.rcq, i, &stop) {
				return
			}
			y.qp.PostRecv(ry)
			y.qp.PostSend(sy)
		}
	}()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x.qp.PostRecv(rx)
		x.qp.PostSend(sx)
		waitRecv(x.qp, &x.rcq, int64(i+1), nil)
	}
	b.StopTimer()
	stop.Store(true)
	<-done
	require.Zero(b, x.rcq.bad.Load()+y.rcq.bad.Load())
}

// BenchmarkSend1MiB: streaming 1 MiB sends (rendezvous), 8 in flight.
func BenchmarkSend1MiB(b *testing.B) {
	const sz, window = 1 << 20, 8
	x, y := benchPair(b)
	_, xs := x.reg(b, sz)
	var rws [window]*rdma.RecvWR
	for i := range rws {
		_, s := y.reg(b, sz)
		rws[i] = &rdma.RecvWR{Cookie: uint64(i), SGL: []rdma.SGE{s}}
		require.NoError(b, y.qp.PostRecv(rws[i]))
	}
	var stop atomic.Bool
	done := make(chan struct{})
	go func() { // receiver: re-post each consumed receive
		defer close(done)
		for i := int64(1); ; i++ {
			if !waitRecv(y.qp, &y.rcq, i, &stop) {
				return
			}
			y.qp.PostRecv(rws[i%window])
		}
	}()
	sw := &rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{xs}, Flags: rdma.SendSignaled}
	b.SetBytes(sz)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for int64(i)-x.scq.n.Load() >= window {
			if x.qp.Progress() == 0 {
				runtime.Gosched()
			}
		}
		if err := x.qp.PostSend(sw); err != nil {
			b.Fatal(err)
		}
	}
	for x.scq.n.Load() < int64(b.N) {
		if x.qp.Progress() == 0 {
			runtime.Gosched()
		}
	}
	b.StopTimer()
	stop.Store(true)
	<-done
	require.Zero(b, x.scq.bad.Load()+y.rcq.bad.Load())
}

// BenchmarkProgressIdle: cost of Progress with nothing to do.
func BenchmarkProgressIdle(b *testing.B) {
	x, _ := benchPair(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		x.qp.Progress()
	}
}

// BenchmarkDoorbellPingPong: two goroutines bounce a wake-up between two
// devices' doorbells (Ring on one, Wait on the other): one round trip is
// two wake-ups through spin-then-futex.
func BenchmarkDoorbellPingPong(b *testing.B) {
	x, y := benchPair(b)
	dx, dy := x.dev.Doorbell(), y.dev.Doorbell()
	var stop atomic.Bool
	done := make(chan struct{})
	sy := dy.Seq()
	go func() {
		defer close(done)
		s := sy
		for !stop.Load() {
			dy.Wait(s, 100*time.Millisecond)
			if n := dy.Seq(); n != s {
				s = n
				dx.Ring()
			}
		}
	}()
	b.ResetTimer()
	s := dx.Seq()
	for i := 0; i < b.N; i++ {
		dy.Ring()
		for dx.Seq() == s {
			dx.Wait(s, 100*time.Millisecond)
		}
		s = dx.Seq()
	}
	b.StopTimer()
	stop.Store(true)
	dy.Ring()
	<-done
}
