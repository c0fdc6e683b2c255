package soft

import (
	"fmt"
	"net/netip"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// bside is one side of a benchmark: a device, one PD, one CQ per
// direction shared by its QPs.
type bside struct {
	dev rdma.Device
	pd  rdma.PD
	cm  rdma.CMChannel
	scq rdma.CQ
	rcq rdma.CQ
	qps []rdma.QP
}

func benchSide(b *testing.B, tr string) *bside {
	s := &bside{}
	var err error
	s.dev, err = rdma.Open("soft", rdma.Params{"transport": tr}, nil)
	require.NoError(b, err)
	b.Cleanup(func() { s.dev.Close() })
	s.pd, _ = s.dev.AllocPD()
	s.cm, _ = s.dev.CreateCMChannel()
	s.scq, err = s.dev.CreateCQ(4096, nil, 0)
	require.NoError(b, err)
	s.rcq, err = s.dev.CreateCQ(4096, nil, 0)
	require.NoError(b, err)
	return s
}

func (s *bside) qp(b *testing.B) rdma.QP {
	q, err := s.dev.CreateQP(rdma.QPInitAttr{PD: s.pd, SendCQ: s.scq, RecvCQ: s.rcq, CM: s.cm,
		Cap: rdma.QPCap{MaxSendWR: 256, MaxRecvWR: 256, MaxSendSGE: 1, MaxRecvSGE: 1}})
	require.NoError(b, err)
	s.qps = append(s.qps, q)
	return q
}

func (s *bside) get(b *testing.B, want rdma.CMEventType) rdma.CMEvent {
	var ev rdma.CMEvent
	require.NoError(b, s.cm.Get(&ev, testWait))
	require.Equal(b, want, ev.Type)
	return ev
}

// benchPairs connects n QPs of x to n QPs of y.
func benchPairs(b *testing.B, tr string, n int) (x, y *bside) {
	x, y = benchSide(b, tr), benchSide(b, tr)
	l, err := y.dev.Listen(y.cm, 0, true, 64, 0)
	require.NoError(b, err)
	defer l.Close()
	for i := 0; i < n; i++ {
		xq, yq := x.qp(b), y.qp(b)
		require.NoError(b, xq.Connect(netip.AddrPortFrom(lo, 0), l.ServiceID(), nil, testWait))
		require.NoError(b, y.get(b, rdma.CMConnectRequest).Request.Accept(yq, nil))
		x.get(b, rdma.CMEstablished)
		y.get(b, rdma.CMEstablished)
	}
	return x, y
}

func (s *bside) reg(b *testing.B, n int) rdma.SGE {
	buf := mapBuf(b, n)
	mr, err := s.pd.RegMR(BufAddr(buf), uint64(n), allAccess)
	require.NoError(b, err)
	return rdma.SGE{Addr: BufAddr(buf), Length: uint32(n), LKey: mr.LKey()}
}

// pollOne polls cq until it yields a completion; false when stop is set
// first.
func pollOne(cq rdma.CQ, wc []rdma.WC, stop *atomic.Bool) bool {
	for {
		if cq.Poll(wc[:1]) == 1 {
			return true
		}
		if stop != nil && stop.Load() {
			return false
		}
		runtime.Gosched()
	}
}

// BenchmarkPingPong8: one round trip of an 8-byte message between two
// goroutines, each posting and polling its own receive CQ (sends are
// unsignalled).
func BenchmarkPingPong8(b *testing.B) {
	for _, tr := range []string{"shm", "tcp"} {
		b.Run(tr, func(b *testing.B) {
			x, y := benchPairs(b, tr, 1)
			xs, ys := x.reg(b, 8), y.reg(b, 8)
			rx := &rdma.RecvWR{SGL: []rdma.SGE{xs}}
			ry := &rdma.RecvWR{SGL: []rdma.SGE{ys}}
			sx := &rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{xs}}
			sy := &rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{ys}}
			xq, yq := x.qps[0], y.qps[0]
			var stop atomic.Bool
			done := make(chan struct{})
			require.NoError(b, yq.PostRecv(ry))
			go func() {
				defer close(done)
				var wc [1]rdma.WC
				for pollOne(y.rcq, wc[:], &stop) {
					if wc[0].Status != rdma.WCSuccess {
						panic(wc[0].Status.String())
					}
					_ = yq.PostRecv(ry)
					_ = yq.PostSend(sy)
				}
			}()
			var wc [1]rdma.WC
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = xq.PostRecv(rx)
				_ = xq.PostSend(sx)
				pollOne(x.rcq, wc[:], nil)
				if wc[0].Status != rdma.WCSuccess {
					b.Fatal(wc[0].Status)
				}
			}
			b.StopTimer()
			stop.Store(true)
			<-done
		})
	}
}

// BenchmarkPollEmpty: an empty Poll of a CQ that 1 or 1024 connected QPs
// complete into (shared memory).
func BenchmarkPollEmpty(b *testing.B) {
	for _, n := range []int{1, 1024} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			x, _ := benchPairs(b, "shm", n)
			var wc [8]rdma.WC
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if x.rcq.Poll(wc[:]) != 0 {
					b.Fatal("a completion")
				}
			}
		})
	}
}

// BenchmarkSend1MiB: streaming 1 MiB sends (rendezvous), 8 in flight,
// measured at the sender (its completions).
func BenchmarkSend1MiB(b *testing.B) {
	const sz, window = 1 << 20, 8
	for _, tr := range []string{"shm", "tcp"} {
		b.Run(tr, func(b *testing.B) {
			x, y := benchPairs(b, tr, 1)
			xq, yq := x.qps[0], y.qps[0]
			xs := x.reg(b, sz)
			var rws [window]*rdma.RecvWR
			for i := range rws {
				rws[i] = &rdma.RecvWR{WRID: uint64(i), SGL: []rdma.SGE{y.reg(b, sz)}}
				require.NoError(b, yq.PostRecv(rws[i]))
			}
			var stop atomic.Bool
			done := make(chan struct{})
			go func() { // the receiver reposts each consumed receive
				defer close(done)
				var wc [1]rdma.WC
				for pollOne(y.rcq, wc[:], &stop) {
					_ = yq.PostRecv(rws[wc[0].WRID])
				}
			}()
			sw := &rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{xs}, Flags: rdma.SendSignaled}
			var wc [1]rdma.WC
			b.SetBytes(sz)
			b.ReportAllocs()
			b.ResetTimer()
			out := 0
			for i := 0; i < b.N; i++ {
				for out >= window {
					pollOne(x.scq, wc[:], nil)
					out--
				}
				if err := xq.PostSend(sw); err != nil {
					b.Fatal(err)
				}
				out++
			}
			for ; out > 0; out-- {
				pollOne(x.scq, wc[:], nil)
			}
			b.StopTimer()
			stop.Store(true)
			<-done
		})
	}
}

// BenchmarkRoundTripOneThread: the software cost of an 8-byte round trip
// (post, poll, repost, reply, poll) with both sides driven by one
// goroutine: no cross-core latency, no scheduler.
func BenchmarkRoundTripOneThread(b *testing.B) {
	x, y := benchPairs(b, "shm", 1)
	xs, ys := x.reg(b, 8), y.reg(b, 8)
	rx := &rdma.RecvWR{SGL: []rdma.SGE{xs}}
	ry := &rdma.RecvWR{SGL: []rdma.SGE{ys}}
	sx := &rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{xs}}
	sy := &rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{ys}}
	xq, yq := x.qps[0], y.qps[0]
	var wc [1]rdma.WC
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = yq.PostRecv(ry)
		_ = xq.PostRecv(rx)
		_ = xq.PostSend(sx)
		if y.rcq.Poll(wc[:]) != 1 {
			b.Fatal("no receive at y")
		}
		_ = yq.PostSend(sy)
		if x.rcq.Poll(wc[:]) != 1 {
			b.Fatal("no receive at x")
		}
	}
}

// BenchmarkPostRDMA: the time spent inside PostSend for a signalled RDMA
// write or read of 4 KiB, 64 KiB and 4 MiB (median and p99 of the post
// call alone; each request completes before the next is posted).
func BenchmarkPostRDMA(b *testing.B) {
	for _, tr := range []string{"shm", "tcp"} {
		for _, op := range []rdma.WROpcode{rdma.WRRDMAWrite, rdma.WRRDMARead} {
			for _, sz := range []int{4 << 10, 64 << 10, 4 << 20} {
				name := fmt.Sprintf("%s/%s/%d", tr, map[rdma.WROpcode]string{rdma.WRRDMAWrite: "write", rdma.WRRDMARead: "read"}[op], sz)
				b.Run(name, func(b *testing.B) {
					x, y := benchPairs(b, tr, 1)
					xs, ys := x.reg(b, sz), y.reg(b, sz)
					ymr, err := y.pd.RegMR(ys.Addr, uint64(sz), allAccess)
					require.NoError(b, err)
					wr := &rdma.SendWR{Opcode: op, Flags: rdma.SendSignaled, SGL: []rdma.SGE{xs},
						RemoteAddr: ys.Addr, RKey: ymr.RKey()}
					var wc [1]rdma.WC
					ts := make([]time.Duration, 0, b.N)
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						t0 := time.Now()
						if err := x.qps[0].PostSend(wr); err != nil {
							b.Fatal(err)
						}
						ts = append(ts, time.Since(t0))
						pollOne(x.scq, wc[:], nil)
						if wc[0].Status != rdma.WCSuccess {
							b.Fatal(wc[0].Status)
						}
					}
					b.StopTimer()
					slices.Sort(ts)
					b.ReportMetric(float64(ts[len(ts)/2].Nanoseconds())/1e3, "us-post-p50")
					b.ReportMetric(float64(ts[len(ts)*99/100].Nanoseconds())/1e3, "us-post-p99")
				})
			}
		}
	}
}
