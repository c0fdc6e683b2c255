package verbs

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"godat/rdma"
	"godat/rdma/rdmatest"
)

// The backend's costs on a real device (compare with perftest's ib_send_lat
// and ib_write_bw on the same device; make bench does, in the VM):
//
//	go test -c -o build/verbs.test ./rdma/verbs
//	vm/verbs-vm.sh -- build/verbs.test -test.run '^$' -test.bench .

func BenchmarkConformance(b *testing.B) { rdmatest.Bench(b, backend) }

// pollUntil busy-polls cq until n completions arrived, failing after bound.
func pollUntil(b *testing.B, cq rdma.CQ, wc []rdma.WC, n int) {
	deadline := time.Now().Add(bound)
	for got := 0; got < n; {
		k := cq.Poll(wc)
		for i := range wc[:k] {
			if wc[i].Status != rdma.WCSuccess {
				b.Fatalf("completion %+v", wc[i])
			}
		}
		got += k
		if k == 0 && time.Now().After(deadline) {
			b.Fatalf("%d of %d completions", got, n)
		}
	}
}

// BenchmarkPingPong8 is an 8-byte send/receive round trip between two QPs
// of the device, each side on a thread of its own busy-polling its CQ, as
// ib_send_lat runs (ns/op is the round trip: half of it compares with
// ib_send_lat's one-way latency).
func BenchmarkPingPong8(b *testing.B) {
	a, c, rb, rmr := pair(b)
	sb, smr := a.mem(4096)
	cb, cmr := c.mem(4096)
	ab, amr := a.mem(4096)
	arecv := &rdma.RecvWR{WRID: 1, SGL: []rdma.SGE{{Addr: addr(ab), Length: 64, LKey: amr.LKey()}}}
	crecv := &rdma.RecvWR{WRID: 2, SGL: []rdma.SGE{{Addr: addr(rb), Length: 64, LKey: rmr.LKey()}}}
	ping := &rdma.SendWR{WRID: 3, Opcode: rdma.WRSend, Flags: rdma.SendInline,
		SGL: []rdma.SGE{{Addr: addr(sb), Length: 8, LKey: smr.LKey()}}}
	pong := &rdma.SendWR{WRID: 4, Opcode: rdma.WRSend, Flags: rdma.SendInline,
		SGL: []rdma.SGE{{Addr: addr(cb), Length: 8, LKey: cmr.LKey()}}}
	if a.dev.Query().MaxInline < 8 {
		ping.Flags, pong.Flags = 0, 0
	}
	// Sends are unsignalled but every 32nd, so that the send queues
	// drain (the receives say when a message arrived).
	const every = 32
	n := b.N
	// c answers every ping; its first receive was posted by pair().
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		var wc [4]rdma.WC
		for i := range n {
			if err := waitRecv(c.cq, wc[:]); err != nil {
				done <- err
				return
			}
			pong.Flags &^= rdma.SendSignaled
			if i%every == every-1 {
				pong.Flags |= rdma.SendSignaled
			}
			if c.qp.PostRecv(crecv) != nil || c.qp.PostSend(pong) != nil {
				done <- errors.New("post")
				return
			}
		}
		done <- nil
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var wc [4]rdma.WC
	// The median round trip too: on a shared or emulated machine the mean
	// (ns/op) is its outliers' (perftest reports t_typical, the median).
	rtt := make([]time.Duration, n)
	b.ResetTimer()
	for i := range n {
		ping.Flags &^= rdma.SendSignaled
		if i%every == every-1 {
			ping.Flags |= rdma.SendSignaled
		}
		t0 := time.Now()
		if a.qp.PostRecv(arecv) != nil || a.qp.PostSend(ping) != nil {
			b.Fatal("post")
		}
		if err := waitRecv(a.cq, wc[:]); err != nil {
			b.Fatal(err)
		}
		rtt[i] = time.Since(t0)
	}
	b.StopTimer()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	slices.Sort(rtt)
	b.ReportMetric(float64(rtt[n/2].Nanoseconds())/2/1000, "µs-one-way-median")
	// The tail: under TCG the mean is several times the median.
	b.ReportMetric(float64(rtt[n*9/10].Nanoseconds())/2/1000, "µs-one-way-p90")
	b.ReportMetric(float64(rtt[n*99/100].Nanoseconds())/2/1000, "µs-one-way-p99")
}

// waitRecv busy-polls cq until a receive completes (send completions pass).
func waitRecv(cq rdma.CQ, wc []rdma.WC) error {
	deadline := time.Now().Add(bound)
	for spins := 0; ; spins++ {
		k := cq.Poll(wc)
		for i := range wc[:k] {
			if wc[i].Status != rdma.WCSuccess {
				return fmt.Errorf("completion %+v", wc[i])
			}
			if wc[i].Opcode == rdma.WCRecv {
				return nil
			}
		}
		if spins%4096 == 4095 && time.Now().After(deadline) {
			return errors.New("no receive within the bound")
		}
	}
}

// BenchmarkWrite1M streams 1 MiB RDMA writes, 8 outstanding (b.SetBytes:
// the MB/s column compares with ib_write_bw's).
func BenchmarkWrite1M(b *testing.B) {
	const size, depth = 1 << 20, 8
	a, c, _, _ := pair(b)
	src, smr := a.mem(size)
	dst, dmr := c.mem(size)
	wr := &rdma.SendWR{WRID: 1, Opcode: rdma.WRRDMAWrite, Flags: rdma.SendSignaled, RemoteAddr: addr(dst), RKey: dmr.RKey(),
		SGL: []rdma.SGE{{Addr: addr(src), Length: size, LKey: smr.LKey()}}}
	var wc [depth]rdma.WC
	b.SetBytes(size)
	inflight := 0
	for b.Loop() {
		if inflight == depth {
			pollUntil(b, a.cq, wc[:1], 1)
			inflight--
		}
		if err := a.qp.PostSend(wr); err != nil {
			b.Fatal(err)
		}
		inflight++
	}
	pollUntil(b, a.cq, wc[:], inflight)
}

// BenchmarkCgoCall is the price of one call into C, which every post and
// poll pays once.
func BenchmarkCgoCall(b *testing.B) {
	for b.Loop() {
		cgoNoop()
	}
}

// BenchmarkPingPong8C is BenchmarkPingPong8's exchange driven from C
// threads through the same shim calls: the difference is the Go side's
// (cgo calls, the runtime around system calls).
func BenchmarkPingPong8C(b *testing.B) {
	a, c, _, _ := pair(b)
	ab, amr := a.mem(4096)
	cb, cmr := c.mem(4096)
	// c's first receive was posted by pair(); each side posts the next
	// one before it answers.
	b.ResetTimer()
	if r := pingPongC(a.qp, c.qp, addr(ab), addr(cb), amr.LKey(), cmr.LKey(), b.N); r != 0 {
		b.Fatalf("ping-pong failed (%d)", r)
	}
}
