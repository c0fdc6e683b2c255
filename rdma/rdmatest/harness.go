package rdmatest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"godat/rdma"
)

// bound limits every wait of the suite. It is long because the machines the
// suite runs on may be small, shared or virtual; a test never asserts that
// something took less than it, only that it happened before it ran out.
// GODAT_RDMATEST_BOUND (a Go duration) changes it: longer for a slow VM,
// shorter to see failing tests fail fast.
var bound = boundFromEnv()

func boundFromEnv() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("GODAT_RDMATEST_BOUND")); err == nil && d > 0 {
		return d
	}
	return 30 * time.Second
}

// accAll is every access right a buffer of the suite usually gets.
const accAll = rdma.AccessLocalWrite | rdma.AccessRemoteWrite | rdma.AccessRemoteRead

// world is one test's devices, memory and completions. Every wait goes
// through until, which polls every CQ of the world and drains every CM
// channel, so that a backend progressing in software inside Poll is driven
// on both ends of a connection by the one test goroutine.
type world struct {
	t     testing.TB
	s     *suite
	sides []*side
	cqs   []*cqLog
	maps  []*mapping
	ctx   uint64
	wc    [32]rdma.WC
}

type mapping struct {
	b    []byte
	gone bool
}

// world starts a test's world. Its memory is unmapped after its devices are
// closed (cleanups run last-registered first).
func (s *suite) world(t testing.TB) *world {
	w := &world{t: t, s: s, ctx: 0xc0de_0000}
	t.Cleanup(func() {
		for _, m := range w.maps {
			if !m.gone {
				_ = unix.Munmap(m.b)
			}
		}
	})
	return w
}

// nextCtx is a fresh context value for a QP, CQ, SRQ or listener.
func (w *world) nextCtx() uint64 {
	w.ctx++
	return w.ctx
}

// side is one opened device with a protection domain, a completion channel
// and a CM channel, as core keeps per IA.
type side struct {
	w      *world
	dev    rdma.Device
	attr   rdma.DeviceAttr
	pd     rdma.PD
	ch     rdma.CompChannel
	cm     rdma.CMChannel
	async  *asyncLog
	events []rdma.CMEvent // drained from cm, not yet taken by a test
	closed bool
}

// asyncLog records a device's asynchronous events.
type asyncLog struct {
	mu  sync.Mutex
	evs []rdma.AsyncEvent
}

func (l *asyncLog) add(ev rdma.AsyncEvent) {
	l.mu.Lock()
	l.evs = append(l.evs, ev)
	l.mu.Unlock()
}

// count is how many events of type typ with context ctx were raised.
func (l *asyncLog) count(typ rdma.AsyncEventType, ctx uint64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, ev := range l.evs {
		if ev.Type == typ && ev.Context == ctx {
			n++
		}
	}
	return n
}

func (l *asyncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.evs)
}

// open opens a device of the backend with its PD and channels.
func (w *world) open() *side {
	w.t.Helper()
	s := &side{w: w, async: &asyncLog{}}
	dev, err := w.s.b.Open(s.async.add)
	require.NoError(w.t, err, "open %s", w.s.b.Name)
	s.dev = dev
	w.t.Cleanup(func() {
		if !s.closed {
			_ = dev.Close()
		}
	})
	s.attr = dev.Query()
	s.pd, err = dev.AllocPD()
	require.NoError(w.t, err)
	s.ch, err = dev.CreateCompChannel()
	require.NoError(w.t, err)
	s.cm, err = dev.CreateCMChannel()
	require.NoError(w.t, err)
	w.sides = append(w.sides, s)
	return s
}

// close closes the side's device; its CQs and channels are no longer used.
func (s *side) close() error {
	s.closed = true
	for _, c := range s.w.cqs {
		if c.side == s {
			c.dead = true
		}
	}
	return s.dev.Close()
}

// need skips the test unless every side's device has caps.
func (w *world) need(caps rdma.Caps) {
	w.t.Helper()
	for _, s := range w.sides {
		if miss := caps &^ s.attr.Caps; miss != 0 {
			w.t.Skipf("the device lacks %s", capNames(miss))
		}
	}
}

var capNameList = []struct {
	c    rdma.Caps
	name string
}{
	{rdma.CapSRQ, "CapSRQ"}, {rdma.CapSRQLimit, "CapSRQLimit"}, {rdma.CapSolicitedFlag, "CapSolicitedFlag"},
	{rdma.CapQPOutstanding, "CapQPOutstanding"}, {rdma.CapQPReconfigure, "CapQPReconfigure"},
	{rdma.CapCQGrow, "CapCQGrow"}, {rdma.CapAnyServiceID, "CapAnyServiceID"},
	{rdma.CapMemoryWindows, "CapMemoryWindows"}, {rdma.CapPostCheck, "CapPostCheck"},
	{rdma.CapSRQPDDifference, "CapSRQPDDifference"},
}

func capNames(c rdma.Caps) string {
	s := ""
	for _, n := range capNameList {
		if c&n.c != 0 {
			if s != "" {
				s += "+"
			}
			s += n.name
		}
	}
	return s
}

// cqLog is a CQ and the completions polled from it and not yet taken.
type cqLog struct {
	cq     rdma.CQ
	side   *side
	ctx    uint64
	wcs    []rdma.WC
	manual bool // the test polls it itself: until leaves it alone
	dead   bool
}

// newCQ creates a CQ of depth entries on the side's completion channel.
func (s *side) newCQ(depth int) *cqLog {
	s.w.t.Helper()
	ctx := s.w.nextCtx()
	cq, err := s.dev.CreateCQ(depth, s.ch, ctx)
	require.NoError(s.w.t, err, "CreateCQ(%d)", depth)
	c := &cqLog{cq: cq, side: s, ctx: ctx}
	s.w.cqs = append(s.w.cqs, c)
	return c
}

// defaultDepth is the depth of the CQs a test does not size itself.
func (s *side) defaultDepth() int { return min(s.attr.MaxCQE, 1024) }

// conn is a QP with its CQs and context.
type conn struct {
	side     *side
	qp       rdma.QP
	scq, rcq *cqLog
	ctx      uint64
}

// qpOpts are what a test changes of the QPs it creates; zero values take
// the suite's defaults (own CQs, the side's PD, 128 work requests each way,
// up to 4 SGEs).
type qpOpts struct {
	scq, rcq *cqLog
	srq      rdma.SRQ
	pd       rdma.PD
	cap      rdma.QPCap
	sigAll   bool
}

// newQP creates a QP in Init.
func (s *side) newQP(o qpOpts) *conn {
	s.w.t.Helper()
	if o.scq == nil {
		o.scq = s.newCQ(s.defaultDepth())
	}
	if o.rcq == nil {
		o.rcq = s.newCQ(s.defaultDepth())
	}
	if o.pd == nil {
		o.pd = s.pd
	}
	if o.cap == (rdma.QPCap{}) {
		o.cap = s.defaultCap()
	}
	ctx := s.w.nextCtx()
	qp, err := s.dev.CreateQP(rdma.QPInitAttr{PD: o.pd, SendCQ: o.scq.cq, RecvCQ: o.rcq.cq, SRQ: o.srq,
		Cap: o.cap, SigAll: o.sigAll, CM: s.cm, Context: ctx})
	require.NoError(s.w.t, err, "CreateQP")
	return &conn{side: s, qp: qp, scq: o.scq, rcq: o.rcq, ctx: ctx}
}

func (s *side) defaultCap() rdma.QPCap {
	wr, sge := min(128, s.attr.MaxQPWR), min(4, s.attr.MaxSGE)
	return rdma.QPCap{MaxSendWR: wr, MaxRecvWR: wr, MaxSendSGE: sge, MaxRecvSGE: sge}
}

// addr is the side's address to connect to.
func (s *side) addr() netip.AddrPort { return netip.AddrPortFrom(s.dev.Addr(), 0) }

// pump polls every CQ of the world and drains every CM channel once.
func (w *world) pump() {
	for _, c := range w.cqs {
		if c.manual || c.dead {
			continue
		}
		for range 1 << 12 {
			n := c.cq.Poll(w.wc[:])
			if n < 0 || n > len(w.wc) {
				w.t.Fatalf("Poll returned %d for a slice of %d", n, len(w.wc))
			}
			c.wcs = append(c.wcs, w.wc[:n]...)
			if n < len(w.wc) {
				break
			}
		}
	}
	for _, s := range w.sides {
		if s.closed {
			continue
		}
		for {
			var ev rdma.CMEvent
			if s.cm.Get(&ev, 0) != nil {
				break
			}
			s.events = append(s.events, ev)
		}
	}
}

// until drives the world until cond holds, failing the test after bound.
// cond is evaluated before anything is polled, then after every round.
// Between rounds it arms every CQ and sleeps briefly on one side's channel:
// notification is not what is tested here, so the sleep is short.
func (w *world) until(what string, cond func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(bound)
	for i := 0; ; i++ {
		if cond() { // first: a test polling a CQ itself does so before the others
			return
		}
		w.pump()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("rdmatest: %s: not within %v", what, bound)
		}
		var s *side
		for j := range w.sides {
			if c := w.sides[(i+j)%len(w.sides)]; !c.closed {
				s = c
				break
			}
		}
		if s == nil {
			time.Sleep(time.Millisecond)
			continue
		}
		seq := s.ch.Seq()
		for _, c := range w.cqs {
			if !c.manual && !c.dead {
				_ = c.cq.Arm(false)
			}
		}
		w.pump()
		if cond() {
			return
		}
		s.ch.Wait(seq, 2*time.Millisecond)
	}
}

// take waits for n completions on c and returns them, oldest first.
func (w *world) take(c *cqLog, n int) []rdma.WC {
	w.t.Helper()
	w.until(fmt.Sprintf("%d completions (have %d)", n, len(c.wcs)), func() bool { return len(c.wcs) >= n })
	out := append([]rdma.WC(nil), c.wcs[:n]...)
	c.wcs = c.wcs[n:]
	return out
}

// take1 waits for one completion on c.
func (w *world) take1(c *cqLog) rdma.WC { w.t.Helper(); return w.take(c, 1)[0] }

// take1Polled waits for one completion on c as a program that only polls
// does: it polls every CQ and never sleeps on a channel (whose wake-ups
// may do work that a polling program's calls never get).
func (w *world) take1Polled(c *cqLog) rdma.WC {
	w.t.Helper()
	deadline := time.Now().Add(bound)
	for len(c.wcs) == 0 {
		if time.Now().After(deadline) {
			w.t.Fatalf("rdmatest: a completion, polling only: not within %v", bound)
		}
		w.pump()
	}
	wc := c.wcs[0]
	c.wcs = c.wcs[1:]
	return wc
}

// event waits for the next CM event of ctx on s.
func (w *world) event(s *side, ctx uint64) rdma.CMEvent {
	w.t.Helper()
	var ev rdma.CMEvent
	w.until(fmt.Sprintf("a CM event for context %#x", ctx), func() bool {
		for i, e := range s.events {
			if e.Context == ctx {
				ev = e
				s.events = append(s.events[:i:i], s.events[i+1:]...)
				return true
			}
		}
		return false
	})
	return ev
}

// expectEvent waits for the next CM event of c and checks its type.
func (w *world) expectEvent(c *conn, typ rdma.CMEventType) rdma.CMEvent {
	w.t.Helper()
	ev := w.event(c.side, c.ctx)
	require.Equal(w.t, typ.String(), ev.Type.String(), "CM event of QP %#x", c.ctx)
	return ev
}

// listener is a listening service id with its context.
type listener struct {
	l    rdma.Listener
	side *side
	ctx  uint64
}

// listen listens on id (any: a picked one) with a backlog.
func (s *side) listen(id uint64, any bool, backlog int) *listener {
	s.w.t.Helper()
	ctx := s.w.nextCtx()
	l, err := s.dev.Listen(s.cm, id, any, backlog, ctx)
	require.NoError(s.w.t, err, "Listen(%#x, %v)", id, any)
	s.w.t.Cleanup(func() { _ = l.Close() })
	return &listener{l: l, side: s, ctx: ctx}
}

// request waits for the next connection request on l.
func (w *world) request(l *listener) rdma.ConnRequest {
	w.t.Helper()
	ev := w.event(l.side, l.ctx)
	require.Equal(w.t, rdma.CMConnectRequest.String(), ev.Type.String())
	require.NotNil(w.t, ev.Request)
	return ev.Request
}

// connectVia connects a to b through l, with private data both ways, and
// returns a's CMEstablished event and the request b accepted.
func (w *world) connectVia(l *listener, a, b *conn, privA, privB []byte) (rdma.CMEvent, rdma.ConnRequest) {
	w.t.Helper()
	require.NoError(w.t, a.qp.Connect(b.side.addr(), l.l.ServiceID(), privA, bound))
	req := w.request(l)
	require.NoError(w.t, req.Accept(b.qp, privB))
	ea := w.expectEvent(a, rdma.CMEstablished)
	w.expectEvent(b, rdma.CMEstablished)
	return ea, req
}

// connect connects a to b through a listener made for it.
func (w *world) connect(a, b *conn) {
	w.t.Helper()
	l := b.side.listen(0, true, 4)
	w.connectVia(l, a, b, nil, nil)
	require.NoError(w.t, l.l.Close())
}

// pair opens two devices and connects a QP of each.
func (w *world) pair() (a, b *conn) {
	w.t.Helper()
	a, b = w.open().newQP(qpOpts{}), w.open().newQP(qpOpts{})
	w.connect(a, b)
	return a, b
}

// mem maps n zeroed bytes (at least a page) that the garbage collector
// never moves; they stay mapped until the world's devices are closed.
func (w *world) mem(n int) []byte {
	w.t.Helper()
	size := max(n, 1)
	page := unix.Getpagesize()
	size = (size + page - 1) / page * page
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	require.NoError(w.t, err)
	w.maps = append(w.maps, &mapping{b: b})
	return b[:n]
}

// unmap unmaps b (from mem) and keeps its addresses reserved with an
// inaccessible mapping, so that no later mapping of the process can land
// there and make stale addresses valid again; to the backend the range
// faults as an unmapped one does.
func (w *world) unmap(b []byte) {
	w.t.Helper()
	for _, m := range w.maps {
		if addrOf(m.b) != addrOf(b) {
			continue
		}
		full := m.b[:cap(m.b)]
		require.NoError(w.t, unix.Munmap(full))
		m.gone = true
		if release, ok := reserve(addrOf(full), len(full)); ok {
			w.t.Cleanup(release)
		}
		return
	}
	w.t.Fatal("rdmatest: unmap of memory not from mem")
}

// buf is registered memory.
type buf struct {
	b    []byte
	addr uint64
	mr   rdma.MR
}

// buf maps n bytes and registers them in the side's PD with acc.
func (s *side) buf(n int, acc rdma.Access) *buf { s.w.t.Helper(); return s.bufPD(s.pd, n, acc) }

// bufPD maps n bytes and registers them in pd with acc.
func (s *side) bufPD(pd rdma.PD, n int, acc rdma.Access) *buf {
	s.w.t.Helper()
	b := s.w.mem(n)
	mr, err := pd.RegMR(addrOf(b), uint64(max(n, 1)), acc)
	require.NoError(s.w.t, err, "RegMR of %d bytes", n)
	return &buf{b: b, addr: addrOf(b), mr: mr}
}

// sge is the entry for n bytes at off.
func (b *buf) sge(off, n int) rdma.SGE {
	return rdma.SGE{Addr: b.addr + uint64(off), Length: uint32(n), LKey: b.mr.LKey()}
}

// all is the entry for the whole buffer.
func (b *buf) all() rdma.SGE { return b.sge(0, len(b.b)) }

// fill writes a pattern of seed into b.
func fill(b []byte, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	for i := 0; i+8 <= len(b); i += 8 {
		v := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	for i := len(b) &^ 7; i < len(b); i++ {
		b[i] = byte(r.Uint32())
	}
}

// pattern is a fresh slice filled with seed's pattern.
func pattern(n int, seed uint64) []byte {
	b := make([]byte, n)
	fill(b, seed)
	return b
}

// sameBytes checks got against want byte for byte, naming the first
// difference (require.Equal would print megabytes).
func sameBytes(t testing.TB, want, got []byte, what string, args ...any) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: length %d, want %d", fmt.Sprintf(what, args...), len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			t.Fatalf("%s: byte %d is %#x, want %#x", fmt.Sprintf(what, args...), i, got[i], want[i])
		}
	}
}

// zeros checks that b is all zero: nothing was written there.
func zeros(t testing.TB, b []byte, what string, args ...any) {
	t.Helper()
	for i, v := range b {
		if v != 0 {
			t.Fatalf("%s: byte %d was written (%#x)", fmt.Sprintf(what, args...), i, v)
		}
	}
}

// send is a send request of the given segments.
func send(id uint64, fl rdma.SendFlags, sgl ...rdma.SGE) *rdma.SendWR {
	return &rdma.SendWR{WRID: id, Opcode: rdma.WRSend, Flags: fl, SGL: sgl}
}

// write is an RDMA write of sgl to raddr.
func write(id uint64, fl rdma.SendFlags, raddr uint64, rkey uint32, sgl ...rdma.SGE) *rdma.SendWR {
	return &rdma.SendWR{WRID: id, Opcode: rdma.WRRDMAWrite, Flags: fl, SGL: sgl, RemoteAddr: raddr, RKey: rkey}
}

// read is an RDMA read from raddr into sgl.
func read(id uint64, fl rdma.SendFlags, raddr uint64, rkey uint32, sgl ...rdma.SGE) *rdma.SendWR {
	return &rdma.SendWR{WRID: id, Opcode: rdma.WRRDMARead, Flags: fl, SGL: sgl, RemoteAddr: raddr, RKey: rkey}
}

// recv is a receive request.
func recv(id uint64, sgl ...rdma.SGE) *rdma.RecvWR { return &rdma.RecvWR{WRID: id, SGL: sgl} }

// checkWC checks a completion's id, status, opcode and QP.
func checkWC(t testing.TB, wc rdma.WC, id uint64, st rdma.WCStatus, op rdma.WCOpcode, c *conn) {
	t.Helper()
	require.Equal(t, st.String(), wc.Status.String(), "status of wr %#x (completion %+v)", id, wc)
	require.Equal(t, id, wc.WRID, "wr id (completion %+v)", wc)
	require.Equal(t, op, wc.Opcode, "opcode of wr %#x (completion %+v)", id, wc)
	require.Equal(t, c.qp.Num(), wc.QPNum, "QP number of wr %#x", id)
	if st != rdma.WCSuccess {
		require.Zero(t, wc.ByteLen, "ByteLen of an error completion")
	}
}

// wcOp is the completion opcode of a send-queue request.
func wcOp(op rdma.WROpcode) rdma.WCOpcode {
	switch op {
	case rdma.WRRDMAWrite, rdma.WRRDMAWriteWithImm:
		return rdma.WCRDMAWrite
	case rdma.WRRDMARead:
		return rdma.WCRDMARead
	}
	return rdma.WCSend
}

// isErr is errors.Is with the error named in the message.
func isErr(t testing.TB, err, want error, what string, args ...any) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got error %v, want %v", fmt.Sprintf(what, args...), err, want)
	}
}

// state checks a QP's state.
func state(t testing.TB, c *conn, want rdma.QPState) {
	t.Helper()
	require.Equal(t, stateName(want), stateName(c.qp.State()), "state of QP %#x", c.ctx)
}

func stateName(s rdma.QPState) string {
	names := [...]string{"Reset", "Init", "RTR", "RTS", "SQD", "SQE", "Error"}
	if int(s) < len(names) {
		return names[s]
	}
	return fmt.Sprintf("state %d", s)
}

// flushedAll checks that wcs are flushes of ids, in that order, on c.
func flushedAll(t testing.TB, wcs []rdma.WC, ids []uint64, op func(i int) rdma.WCOpcode, c *conn) {
	t.Helper()
	require.Len(t, wcs, len(ids))
	for i, wc := range wcs {
		checkWC(t, wc, ids[i], rdma.WCWRFlushErr, op(i), c)
	}
}

// pollReadable waits up to bound for fd to poll readable.
func pollReadable(t testing.TB, fd int) bool {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(time.Until(deadline).Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		require.NoError(t, err, "poll")
		return n == 1 && fds[0].Revents&unix.POLLIN != 0
	}
}

// protectReadOnly makes b (from mem) read-only.
func protectReadOnly(b []byte) error { return unix.Mprotect(b[:cap(b)], unix.PROT_READ) }

// reserve maps n inaccessible bytes at addr, where nothing is mapped, and
// returns how to unmap them; ok is false when something else got there
// first. (A raw mmap: the address is a number here, never a Go pointer.)
func reserve(addr uint64, n int) (release func(), ok bool) {
	r, _, errno := unix.Syscall6(unix.SYS_MMAP, uintptr(addr), uintptr(n), unix.PROT_NONE,
		unix.MAP_ANON|unix.MAP_PRIVATE|unix.MAP_FIXED_NOREPLACE, ^uintptr(0), 0)
	if errno != 0 {
		return nil, false
	}
	release = func() { _, _, _ = unix.Syscall(unix.SYS_MUNMAP, r, uintptr(n), 0) }
	if uint64(r) != addr {
		release()
		return nil, false
	}
	return release, true
}
