package soft

import (
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"godat/rdma"
)

const testWait = 10 * time.Second

var lo = netip.MustParseAddr("127.0.0.1")

// end is one side of a test connection.
type end struct {
	dev  rdma.Device
	pd   rdma.PD
	cm   rdma.CMChannel
	ch   rdma.CompChannel
	scq  rdma.CQ
	rcq  rdma.CQ
	qp   rdma.QP
	evs  []rdma.AsyncEvent
	asyn chan rdma.AsyncEvent
}

func openDev(t testing.TB, p rdma.Params, async rdma.AsyncHandler) rdma.Device {
	t.Helper()
	d, err := rdma.Open("soft", p, async)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return d
}

// newEnd opens a device with params p and creates one QP on it.
func newEnd(t testing.TB, p rdma.Params) *end {
	t.Helper()
	e := &end{asyn: make(chan rdma.AsyncEvent, 64)}
	e.dev = openDev(t, p, func(ev rdma.AsyncEvent) {
		select {
		case e.asyn <- ev:
		default:
		}
	})
	var err error
	e.pd, err = e.dev.AllocPD()
	require.NoError(t, err)
	e.cm, err = e.dev.CreateCMChannel()
	require.NoError(t, err)
	e.ch, err = e.dev.CreateCompChannel()
	require.NoError(t, err)
	e.scq, err = e.dev.CreateCQ(1024, e.ch, 1)
	require.NoError(t, err)
	e.rcq, err = e.dev.CreateCQ(1024, e.ch, 2)
	require.NoError(t, err)
	e.qp = e.newQP(t, nil)
	return e
}

func (e *end) newQP(t testing.TB, s rdma.SRQ) rdma.QP {
	t.Helper()
	q, err := e.dev.CreateQP(rdma.QPInitAttr{PD: e.pd, SendCQ: e.scq, RecvCQ: e.rcq, SRQ: s, CM: e.cm, Context: 7,
		Cap: rdma.QPCap{MaxSendWR: 512, MaxRecvWR: 512, MaxSendSGE: 4, MaxRecvSGE: 4}})
	require.NoError(t, err)
	return q
}

// buf maps and registers n bytes (outside the Go heap, as a C program's
// memory is: the race detector cannot see the happens-before edges that go
// through a socket or another process).
func (e *end) buf(t testing.TB, n int, acc rdma.Access) ([]byte, rdma.MR) {
	t.Helper()
	b := mapBuf(t, n)
	mr, err := e.pd.RegMR(BufAddr(b), uint64(n), acc)
	require.NoError(t, err)
	return b, mr
}

const allAccess = rdma.AccessLocalWrite | rdma.AccessRemoteRead | rdma.AccessRemoteWrite

func sge(b []byte, mr rdma.MR) rdma.SGE {
	return rdma.SGE{Addr: BufAddr(b), Length: uint32(len(b)), LKey: mr.LKey()}
}

// event waits for the next CM event on e's channel.
func (e *end) event(t testing.TB) rdma.CMEvent {
	t.Helper()
	var ev rdma.CMEvent
	require.NoError(t, e.cm.Get(&ev, testWait))
	return ev
}

// connect connects a's QP (active) to b's QP (passive).
func connect(t testing.TB, a, b *end, preq, pacc []byte) (rdma.CMEvent, rdma.ConnRequest) {
	t.Helper()
	return connectQPs(t, a, b, a.qp, b.qp, preq, pacc)
}

// connectQPs connects qa of a (active) to qb of b (passive).
func connectQPs(t testing.TB, a, b *end, qa, qb rdma.QP, preq, pacc []byte) (rdma.CMEvent, rdma.ConnRequest) {
	t.Helper()
	l, err := b.dev.Listen(b.cm, 0, true, 4, 99)
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, qa.Connect(netip.AddrPortFrom(lo, 0), l.ServiceID(), preq, testWait))
	ev := b.event(t)
	require.Equal(t, rdma.CMConnectRequest, ev.Type)
	require.Equal(t, uint64(99), ev.Context)
	require.NoError(t, ev.Request.Accept(qb, pacc))
	ea := a.event(t)
	require.Equal(t, rdma.CMEstablished, ea.Type, "active side")
	eb := b.event(t)
	require.Equal(t, rdma.CMEstablished, eb.Type, "passive side")
	return ea, ev.Request
}

// pollN polls cq until n completions arrived.
func pollN(t testing.TB, cq rdma.CQ, n int) []rdma.WC {
	t.Helper()
	out := make([]rdma.WC, 0, n)
	wc := make([]rdma.WC, 16)
	deadline := time.Now().Add(testWait)
	for len(out) < n {
		k := cq.Poll(wc[:min(len(wc), n-len(out))])
		out = append(out, wc[:k]...)
		if k == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d completions within %v", len(out), n, testWait)
			}
			runtime.Gosched()
		}
	}
	return out
}

// pollNone checks that cq stays empty for a while.
func pollNone(t testing.TB, cq rdma.CQ, d time.Duration) {
	t.Helper()
	wc := make([]rdma.WC, 4)
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		require.Zero(t, cq.Poll(wc), "unexpected completion")
		time.Sleep(time.Millisecond)
	}
}

// mapBuf maps n bytes, unmapped at the test's end.
func mapBuf(t testing.TB, n int) []byte {
	t.Helper()
	size := (max(n, 1) + 4095) &^ 4095
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	require.NoError(t, err)
	t.Cleanup(func() { _ = unix.Munmap(b) })
	return b[:n]
}
