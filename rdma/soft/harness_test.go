package soft

import (
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

const testWait = 5 * time.Second

// sink collects completions.
type sink struct {
	mu sync.Mutex
	cs []rdma.Completion
}

func (s *sink) PushCompletion(c *rdma.Completion) {
	s.mu.Lock()
	s.cs = append(s.cs, *c)
	s.mu.Unlock()
}

func (s *sink) n() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.cs)
}

func (s *sink) take() []rdma.Completion {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cs
	s.cs = nil
	return c
}

// events collects connection events.
type events struct{ ch chan rdma.ConnEvent }

func newEvents() *events { return &events{ch: make(chan rdma.ConnEvent, 16)} }

func (e *events) ConnEvent(qp rdma.QP, ev rdma.ConnEvent) { e.ch <- ev }

func (e *events) wait(t testing.TB, d time.Duration) rdma.ConnEvent {
	t.Helper()
	select {
	case ev := <-e.ch:
		return ev
	case <-time.After(d):
		t.Fatalf("no connection event within %v", d)
	}
	return rdma.ConnEvent{}
}

// lh hands connection requests to a function.
type lh func(rdma.ConnRequest)

func (f lh) ConnRequest(r rdma.ConnRequest) { f(r) }

type end struct {
	dev    rdma.Device
	qp     rdma.QP
	scq    *sink
	rcq    *sink
	ev     *events
	pd     uint32
	keep   [][]byte
	closer []func()
}

func newEnd(t testing.TB, pd uint32) *end {
	t.Helper()
	d, err := Open(map[string]string{"transport": "shm", "addr": "127.0.0.1"})
	require.NoError(t, err)
	e := &end{dev: d, scq: &sink{}, rcq: &sink{}, ev: newEvents(), pd: pd}
	e.qp, err = d.CreateQP(rdma.QPConfig{PD: pd, SendCQ: e.scq, RecvCQ: e.rcq, Conn: e.ev,
		MaxSend: 512, MaxRecv: 512, MaxSendSGE: 4, MaxRecvSGE: 4})
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return e
}

// buf allocates and registers n bytes.
func (e *end) buf(t testing.TB, n int, acc rdma.Access) ([]byte, rdma.MR) {
	t.Helper()
	b := make([]byte, n)
	e.keep = append(e.keep, b)
	mr, err := e.dev.RegisterMR(e.pd, BufAddr(b), uint64(n), acc)
	require.NoError(t, err)
	return b, mr
}

const allAccess = rdma.AccessLocalRead | rdma.AccessLocalWrite | rdma.AccessRemoteRead | rdma.AccessRemoteWrite

func sge(b []byte, mr rdma.MR) rdma.SGE {
	return rdma.SGE{Addr: BufAddr(b), Length: uint64(len(b)), LKey: mr.LKey()}
}

// connect connects a (active) to b (passive) with private data.
func connect(t testing.TB, a, b *end, preq, pacc []byte) (rdma.ConnEvent, rdma.ConnRequest) {
	t.Helper()
	reqs := make(chan rdma.ConnRequest, 1)
	l, err := b.dev.Listen(0, true, lh(func(r rdma.ConnRequest) {
		reqs <- r
	}))
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, a.qp.Connect(netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), 0), l.Qual(), preq, testWait))
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

// pollUntil drives progress on the given QPs until cond holds.
func pollUntil(t testing.TB, cond func() bool, qps ...rdma.QP) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within timeout")
		}
		n := 0
		for _, q := range qps {
			n += q.Progress()
		}
		if n == 0 {
			runtime.Gosched()
		}
	}
}
