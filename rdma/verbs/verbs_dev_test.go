package verbs

import (
	"encoding/binary"
	"errors"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"godat/rdma"
)

// asyncLog collects a device's asynchronous events.
type asyncLog struct {
	mu  sync.Mutex
	evs []rdma.AsyncEvent
	c   chan struct{}
}

func newAsyncLog() *asyncLog { return &asyncLog{c: make(chan struct{}, 64)} }

func (l *asyncLog) add(ev rdma.AsyncEvent) {
	l.mu.Lock()
	l.evs = append(l.evs, ev)
	l.mu.Unlock()
	select {
	case l.c <- struct{}{}:
	default:
	}
}

func (l *asyncLog) count(t rdma.AsyncEventType, ctx uint64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, ev := range l.evs {
		if ev.Type == t && ev.Context == ctx {
			n++
		}
	}
	return n
}

// waitFor waits until count(t, ctx) reaches n.
func (l *asyncLog) waitFor(tb testing.TB, t rdma.AsyncEventType, ctx uint64, n int) {
	tb.Helper()
	deadline := time.After(bound)
	for l.count(t, ctx) < n {
		select {
		case <-l.c:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			tb.Fatalf("%d asynchronous events %d of context %d not within %v: %v", n, t, ctx, bound, l.evs)
		}
	}
}

// send sends n bytes of sb from s and waits for the send's completion.
func (s *side) send(sb []byte, mr rdma.MR, n int, id uint64) {
	s.t.Helper()
	require.NoError(s.t, s.qp.PostSend(&rdma.SendWR{WRID: id, Opcode: rdma.WRSend, Flags: rdma.SendSignaled,
		SGL: []rdma.SGE{{Addr: addr(sb), Length: uint32(n), LKey: mr.LKey()}}}))
	wc := s.wc(1)[0]
	require.Equal(s.t, rdma.WCSuccess.String(), wc.Status.String(), "%+v", wc)
}

// connect connects a's QP to b's through a listener made for it.
func connect(t *testing.T, a, b *side) {
	t.Helper()
	l, err := b.dev.Listen(b.cm, 0, true, 4, 99)
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, a.qp.Connect(netip0(b), l.ServiceID(), nil, bound))
	req := b.event(rdma.CMConnectRequest)
	require.NoError(t, req.Request.Accept(b.qp, nil))
	a.event(rdma.CMEstablished)
	b.event(rdma.CMEstablished)
}

// The SRQ limit comes from the device when armed above what the SRQ holds
// (IBV_EVENT_SRQ_LIMIT_REACHED), from the backend when armed below it,
// once per arm.
func TestSRQLimitFromDevice(t *testing.T) {
	log := newAsyncLog()
	a := newSide(t, nil, 1)
	b := &side{t: t, dev: openOrSkip(t, log.add), ctx: 2}
	if b.dev.Query().Caps&rdma.CapSRQLimit == 0 {
		t.Skip("the device has no SRQ limit")
	}
	var err error
	b.pd, err = b.dev.AllocPD()
	require.NoError(t, err)
	b.ch, err = b.dev.CreateCompChannel()
	require.NoError(t, err)
	b.cm, err = b.dev.CreateCMChannel()
	require.NoError(t, err)
	b.cq, err = b.dev.CreateCQ(64, b.ch, 2)
	require.NoError(t, err)
	srq, err := b.dev.CreateSRQ(rdma.SRQInitAttr{PD: b.pd, MaxWR: 16, MaxSGE: 1, Context: 42})
	require.NoError(t, err)
	b.qp, err = b.dev.CreateQP(rdma.QPInitAttr{PD: b.pd, SendCQ: b.cq, RecvCQ: b.cq, SRQ: srq, CM: b.cm, Context: 2})
	require.NoError(t, err)
	connect(t, a, b)

	sb, smr := a.mem(4096)
	rb, rmr := b.mem(4096)
	for i := range 8 {
		require.NoError(t, srq.PostRecv(&rdma.RecvWR{WRID: uint64(i), SGL: []rdma.SGE{{Addr: addr(rb) + uint64(i*64), Length: 64, LKey: rmr.LKey()}}}))
	}
	require.NoError(t, srq.Modify(rdma.SRQAttr{Limit: 4}, rdma.SRQLimit))
	for i := range 5 { // 8 held, then 3: below 4
		binary.LittleEndian.PutUint64(sb, uint64(i))
		a.send(sb, smr, 8, uint64(i))
		wc := b.wc(1)[0]
		require.Equal(t, uint64(i), wc.WRID)
	}
	log.waitFor(t, rdma.AsyncSRQLimitReached, 42, 1)
	fired, emulated := srqCounts(srq)
	require.Equal(t, 1, fired, "limit events from the device")
	require.Zero(t, emulated, "limit events raised at arming")
	q, err := srq.Query()
	require.NoError(t, err)
	require.Zero(t, q.Limit, "the device disarmed the limit")

	a.send(sb, smr, 8, 5) // 2 held, unarmed: nothing
	b.wc(1)
	require.NoError(t, srq.Modify(rdma.SRQAttr{Limit: 3}, rdma.SRQLimit)) // 2 held: at once
	log.waitFor(t, rdma.AsyncSRQLimitReached, 42, 2)
	fired, emulated = srqCounts(srq)
	require.Equal(t, 1, fired, "limit events from the device")
	require.Equal(t, 1, emulated, "limit events raised at arming")
	require.Equal(t, 2, log.count(rdma.AsyncSRQLimitReached, 42), "events: %v", log.evs)
}

// A registration beyond RLIMIT_MEMLOCK fails with ErrNoResources and a
// message naming the limit and how to raise it. The test runs itself again
// without CAP_IPC_LOCK (which lifts the limit) under a small limit.
func TestMemlockMessage(t *testing.T) {
	openOrSkip(t, nil)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("needs root and setpriv to run without CAP_IPC_LOCK")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(setpriv, "--bounding-set=-ipc_lock", "--inh-caps=-ipc_lock", "--",
		exe, "-test.run=^TestMemlockChild$", "-test.v")
	cmd.Env = append(os.Environ(), "GODAT_VERBS_MEMLOCK_CHILD=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	require.NoError(t, err)
	require.Contains(t, string(out), "--- PASS: TestMemlockChild")
}

func TestMemlockChild(t *testing.T) {
	if os.Getenv("GODAT_VERBS_MEMLOCK_CHILD") == "" {
		t.Skip("run by TestMemlockMessage")
	}
	lim := unix.Rlimit{Cur: 256 << 10, Max: 256 << 10}
	require.NoError(t, unix.Setrlimit(unix.RLIMIT_MEMLOCK, &lim))
	d := openOrSkip(t, nil)
	pd, err := d.AllocPD()
	require.NoError(t, err)
	const n = 8 << 20
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	require.NoError(t, err)
	defer unix.Munmap(b)
	_, err = pd.RegMR(addr(b), n, rdma.AccessLocalWrite)
	require.Error(t, err)
	t.Logf("registration error: %v", err)
	require.ErrorIs(t, err, rdma.ErrNoResources)
	require.Contains(t, err.Error(), "RLIMIT_MEMLOCK")
	require.Contains(t, err.Error(), "256 KiB")
	require.Contains(t, err.Error(), "ulimit -l")
}

// Posting and polling allocate nothing.
func TestPostPollNoAlloc(t *testing.T) {
	a, b, rb, rmr := pair(t)
	var wc [8]rdma.WC
	// Take the receive pair() posted.
	sb, smr := a.mem(4096)
	a.send(sb, smr, 8, 1)
	b.wc(1)
	rwr := &rdma.RecvWR{WRID: 2, SGL: []rdma.SGE{{Addr: addr(rb), Length: 64, LKey: rmr.LKey()}}}
	swr := &rdma.SendWR{WRID: 3, Opcode: rdma.WRSend, Flags: rdma.SendSignaled, SGL: []rdma.SGE{{Addr: addr(sb), Length: 8, LKey: smr.LKey()}}}
	stuck := false
	allocs := testing.AllocsPerRun(200, func() {
		if b.qp.PostRecv(rwr) != nil || a.qp.PostSend(swr) != nil {
			stuck = true
			return
		}
		deadline := time.Now().Add(bound)
		for got := 0; got < 2 && !stuck; {
			got += a.cq.Poll(wc[:]) + b.cq.Poll(wc[:])
			stuck = time.Now().After(deadline)
		}
	})
	require.False(t, stuck, "a post failed or a completion did not come")
	require.Zero(t, allocs, "allocations per post/post/poll round")
	require.Zero(t, testing.AllocsPerRun(1000, func() { a.cq.Poll(wc[:]) }), "allocations per empty Poll")
}

// Several threads wait on one channel for different CQs: each wakes for
// its own completion, none is lost.
func TestChannelManyWaiters(t *testing.T) {
	const n = 4
	a := newSide(t, nil, 1)
	b := newSide(t, nil, 2)
	type conn struct {
		a, b *side
	}
	conns := make([]conn, n)
	for i := range conns {
		as := &side{t: t, dev: a.dev, pd: a.pd, ch: a.ch, cm: a.cm, cq: a.cq, ctx: uint64(10 + i)}
		bs := &side{t: t, dev: b.dev, pd: b.pd, ch: b.ch, cm: b.cm, ctx: uint64(20 + i)}
		var err error
		bs.cq, err = b.dev.CreateCQ(16, b.ch, bs.ctx) // all on b's one channel
		require.NoError(t, err)
		as.qp, err = a.dev.CreateQP(rdma.QPInitAttr{PD: a.pd, SendCQ: a.cq, RecvCQ: a.cq, CM: a.cm, Context: as.ctx})
		require.NoError(t, err)
		bs.qp, err = b.dev.CreateQP(rdma.QPInitAttr{PD: b.pd, SendCQ: bs.cq, RecvCQ: bs.cq, CM: b.cm, Context: bs.ctx})
		require.NoError(t, err)
		connect(t, as, bs)
		conns[i] = conn{as, bs}
	}
	sb, smr := a.mem(4096)
	rb, rmr := b.mem(4096)
	for round := range 20 {
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i, c := range conns {
			require.NoError(t, c.b.qp.PostRecv(&rdma.RecvWR{WRID: uint64(i), SGL: []rdma.SGE{{Addr: addr(rb) + uint64(i*64), Length: 64, LKey: rmr.LKey()}}}))
			wg.Add(1)
			go func() { // the consumer's wait: Seq, poll, arm, poll, Wait
				defer wg.Done()
				var wc [1]rdma.WC
				deadline := time.Now().Add(bound)
				for time.Now().Before(deadline) {
					seq := b.ch.Seq()
					if c.b.cq.Poll(wc[:]) == 1 {
						return
					}
					if err := c.b.cq.Arm(false); err != nil {
						errs <- err
						return
					}
					if c.b.cq.Poll(wc[:]) == 1 {
						return
					}
					b.ch.Wait(seq, time.Until(deadline))
				}
				errs <- errors.New("no completion within the bound")
			}()
		}
		for i, c := range conns {
			require.NoError(t, c.a.qp.PostSend(&rdma.SendWR{WRID: uint64(i), Opcode: rdma.WRSend, Flags: rdma.SendSignaled,
				SGL: []rdma.SGE{{Addr: addr(sb), Length: 8, LKey: smr.LKey()}}}))
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		a.wc(n)
	}
}

// A signal handler interrupts a Wait (poller and sleeper alike); the Go
// runtime's preemption signal does not.
func TestWaitInterrupted(t *testing.T) {
	s := newSide(t, nil, 1)
	sig := make(chan os.Signal, 16)
	signal.Notify(sig, syscall.SIGUSR1)
	defer signal.Stop(sig)

	// wait runs a Wait on a thread of its own and sends that thread signo
	// every few milliseconds until the Wait returns; ok is false when it
	// did not return within the bound.
	type result struct{ intr, ok bool }
	wait := func(signo syscall.Signal, d time.Duration) result {
		tids := make(chan int, 1)
		done := make(chan bool, 1)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			tids <- unix.Gettid()
			done <- s.ch.Wait(s.ch.Seq(), d)
		}()
		tid := <-tids
		deadline := time.After(bound)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case intr := <-done:
				return result{intr, true}
			case <-tick.C:
				_ = unix.Tgkill(unix.Getpid(), tid, signo)
			case <-deadline:
				return result{}
			}
		}
	}
	// Two at once: one polls the channel's fd, the other sleeps on the
	// futex; both must report the signal.
	results := make(chan result, 2)
	for range 2 {
		go func() { results <- wait(syscall.SIGUSR1, 3*bound) }()
	}
	for range 2 {
		r := <-results
		require.True(t, r.ok, "a Wait a signal handler interrupted did not return")
		require.True(t, r.intr, "Wait did not report the signal handler")
	}
	r := wait(syscall.SIGURG, 300*time.Millisecond)
	require.True(t, r.ok)
	require.False(t, r.intr, "SIGURG (the runtime's preemption signal) reported as an interruption")
}

// A graceful disconnect drains the sends posted before it even when the
// consumer only waits for the disconnect (the event thread polls them into
// the CQ's stash); then the completions are there, successful, in order.
func TestGracefulWithoutPolling(t *testing.T) {
	a, b, _, _ := pair(t) // b has one receive of 4096 bytes posted
	const size = 4096
	rb, rmr := b.mem(3 * size)
	for i := range 3 {
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: uint64(10 + i), SGL: []rdma.SGE{{Addr: addr(rb) + uint64(i*size), Length: size, LKey: rmr.LKey()}}}))
	}
	sb, smr := a.mem(size)
	for i := range 4 {
		fl := rdma.SendSignaled
		if i == 3 {
			fl = 0 // the last one unsignalled: only the marker tells it is done
		}
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: uint64(i), Opcode: rdma.WRSend, Flags: fl,
			SGL: []rdma.SGE{{Addr: addr(sb), Length: size, LKey: smr.LKey()}}}))
	}
	require.NoError(t, a.qp.Disconnect(true))
	a.event(rdma.CMDisconnected)
	wcs := a.wc(3)
	for k, wc := range wcs {
		require.Equal(t, rdma.WCSuccess.String(), wc.Status.String(), "%+v", wc)
		require.Equal(t, uint64(k), wc.WRID)
	}
	var more [4]rdma.WC
	require.Zero(t, a.cq.Poll(more[:]), "the drain's marker is the backend's own")
	require.Len(t, b.wc(4), 4, "receives of the drained sends")
}

// A peer that vanishes without a word (a host that died: its QP stops
// answering, its CM says nothing) breaks the connection within the QP's
// transport timeout: the sender's request fails with WCRetryExcErr and the
// connection ends with CMBroken.
func TestSilentPeerBreaks(t *testing.T) {
	a, b, _, _ := pair(t)
	to, retry, rnr, ok := qpTimeouts(a.qp)
	require.True(t, ok)
	t.Logf("QP transport: ack timeout exponent %d (%v per try), retry count %d, RNR retry %d",
		to, time.Duration(4096<<to)*time.Nanosecond, retry, rnr)
	require.Equal(t, 7, rnr, "RNR retry: 7 waits for a receive forever")
	require.Less(t, retry, 7, "retry count: rxe takes 7 as forever")
	require.True(t, killQPSilently(b.qp))
	sb, smr := a.mem(4096)
	start := time.Now()
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 9, Opcode: rdma.WRRDMAWrite, Flags: rdma.SendSignaled,
		SGL: []rdma.SGE{{Addr: addr(sb), Length: 64, LKey: smr.LKey()}}, RemoteAddr: 4096, RKey: 1}))
	wc := a.wc(1)[0]
	require.Equal(t, rdma.WCRetryExcErr.String(), wc.Status.String(), "%+v", wc)
	a.event(rdma.CMBroken)
	t.Logf("the dead peer was noticed after %v", time.Since(start))
}

// Port down and up are the contract's asynchronous events (the test takes
// the device's interface down: only where GODAT_VERBS_PORT_TEST=1, in the
// VM harness).
func TestPortEvents(t *testing.T) {
	if os.Getenv("GODAT_VERBS_PORT_TEST") != "1" {
		t.Skip("takes the device's network interface down: set GODAT_VERBS_PORT_TEST=1 (the VM harness does)")
	}
	log := newAsyncLog()
	d := openOrSkip(t, log.add)
	ifname := ""
	ifs, err := net.Interfaces()
	require.NoError(t, err)
	for _, ifi := range ifs {
		for _, a := range ifaceAddrs(&ifi) {
			if a == d.Addr() {
				ifname = ifi.Name
			}
		}
	}
	require.NotEmpty(t, ifname, "the interface of %s", d.Addr())
	ip := func(args ...string) {
		out, err := exec.Command("ip", args...).CombinedOutput()
		require.NoError(t, err, "ip %s: %s", strings.Join(args, " "), out)
	}
	ip("link", "set", ifname, "down")
	defer exec.Command("ip", "link", "set", ifname, "up").Run()
	log.waitFor(t, rdma.AsyncPortDown, 0, 1)
	ip("link", "set", ifname, "up")
	log.waitFor(t, rdma.AsyncPortUp, 0, 1)
}
