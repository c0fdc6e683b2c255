package core

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// A scripted in-process transport for core's unit tests. Unlike the fake
// fabric (fake_test.go), whose queue pairs talk to each other, a scripted
// queue pair only records what is posted: the test decides when and how
// each request completes (any status) and which connection events arrive,
// and when. It keeps the transport's rules: one completion per signalled
// request (errors always), in post order per queue, pushed one at a time.

type scriptDoorbell struct{ seq atomic.Uint32 }

func (d *scriptDoorbell) Seq() uint32 { return d.seq.Load() }
func (d *scriptDoorbell) Ring()       { d.seq.Add(1) }
func (d *scriptDoorbell) Wait(seq uint32, dur time.Duration) {
	deadline := time.Now().Add(dur)
	for d.seq.Load() == seq && (dur < 0 || time.Now().Before(deadline)) {
		time.Sleep(20 * time.Microsecond)
	}
}

type scriptDev struct {
	db      scriptDoorbell
	mu      sync.Mutex
	qps     []*scriptQP
	lis     map[uint64]*scriptListener
	nextKey uint32
	nextAny uint64
	closed  bool
}

func newScriptDev() *scriptDev { return &scriptDev{lis: map[uint64]*scriptListener{}} }

func (d *scriptDev) Attr() rdma.DeviceAttr {
	return rdma.DeviceAttr{Name: "fake", Vendor: "test", MaxQP: 256, MaxQPWR: 64, MaxSGE: 4, MaxCQE: 4096,
		MaxMR: 256, MaxMRSize: 1 << 30, MaxPD: 256, MaxMsgSize: 1 << 20, MaxRDMASize: 1 << 20,
		MaxReadsPerQP: 4, MaxPrivateData: 64}
}
func (d *scriptDev) Addr() netip.Addr        { return netip.MustParseAddr("127.0.0.1") }
func (d *scriptDev) Doorbell() rdma.Doorbell { return &d.db }

type scriptMR struct{ key uint32 }

func (m *scriptMR) LKey() uint32      { return m.key }
func (m *scriptMR) RKey() uint32      { return m.key }
func (m *scriptMR) Deregister() error { return nil }

func (d *scriptDev) RegisterMR(pd uint32, addr, length uint64, access rdma.Access) (rdma.MR, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextKey++
	return &scriptMR{key: d.nextKey}, nil
}

func (d *scriptDev) CreateQP(cfg rdma.QPConfig) (rdma.QP, error) {
	q := &scriptQP{dev: d, cfg: cfg}
	d.mu.Lock()
	d.qps = append(d.qps, q)
	d.mu.Unlock()
	return q, nil
}

func (d *scriptDev) CreateSRQ(rdma.SRQConfig) (rdma.SRQ, error) {
	return nil, rdma.ErrNoResources
}

type scriptListener struct {
	dev  *scriptDev
	qual uint64
	h    rdma.ListenHandler
}

func (l *scriptListener) Qual() uint64 { return l.qual }
func (l *scriptListener) Close() error {
	l.dev.mu.Lock()
	delete(l.dev.lis, l.qual)
	l.dev.mu.Unlock()
	return nil
}

func (d *scriptDev) Listen(qual uint64, any bool, h rdma.ListenHandler) (rdma.Listener, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if any {
		d.nextAny++
		qual = 1<<40 + d.nextAny
	}
	if _, ok := d.lis[qual]; ok {
		return nil, rdma.ErrQualInUse
	}
	l := &scriptListener{dev: d, qual: qual, h: h}
	d.lis[qual] = l
	return l, nil
}

func (d *scriptDev) Close() error {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	return nil
}

// request delivers a connection request to the listener on qual.
func (d *scriptDev) request(t *testing.T, qual uint64, private []byte) *scriptReq {
	return d.deliver(t, &scriptReq{qual: qual, private: private})
}

// deliver hands r to the listener on r.qual.
func (d *scriptDev) deliver(t *testing.T, r *scriptReq) *scriptReq {
	d.mu.Lock()
	l := d.lis[r.qual]
	d.mu.Unlock()
	require.NotNil(t, l, "no listener on %#x", r.qual)
	l.h.ConnRequest(r)
	return r
}

type scriptReq struct {
	qual     uint64
	private  []byte
	onReject func() // runs in Reject, as if the consumer acted meanwhile
	mu       sync.Mutex
	accepted *scriptQP
	rejected int
}

func (r *scriptReq) RemoteAddr() netip.AddrPort { return netip.MustParseAddrPort("127.0.0.1:0") }
func (r *scriptReq) Qual() uint64               { return r.qual }
func (r *scriptReq) PrivateData() []byte        { return r.private }
func (r *scriptReq) Accept(qp rdma.QP, private []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.accepted = qp.(*scriptQP)
	return nil
}
func (r *scriptReq) Reject() error {
	if r.onReject != nil {
		r.onReject()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rejected++
	return nil
}
func (r *scriptReq) rejects() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rejected
}

type scriptWR struct {
	op     rdma.Op
	cookie uint64
	flags  rdma.SendFlags
}

type scriptQP struct {
	dev *scriptDev
	cfg rdma.QPConfig

	mu        sync.Mutex
	connected bool
	ended     bool // the connection is over; posts fail with ErrState
	sends     []scriptWR
	recvs     []uint64
	destroyed bool
	comp      rdma.Completion
}

func (q *scriptQP) PostSend(wr *rdma.SendWR) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.connected || q.ended {
		return rdma.ErrState
	}
	q.sends = append(q.sends, scriptWR{op: wr.Op, cookie: wr.Cookie, flags: wr.Flags})
	return nil
}

func (q *scriptQP) PostRecv(wr *rdma.RecvWR) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.destroyed {
		return rdma.ErrClosed
	}
	q.recvs = append(q.recvs, wr.Cookie)
	return nil
}

func (q *scriptQP) Progress() int { return 0 }

// Reconfigure records the new protection domain and limits (dat_ep_modify).
func (q *scriptQP) Reconfigure(pd uint32, maxSend, maxRecv, maxSendSGE, maxRecvSGE int) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.cfg.PD, q.cfg.MaxSend, q.cfg.MaxRecv, q.cfg.MaxSendSGE, q.cfg.MaxRecvSGE = pd, maxSend, maxRecv, maxSendSGE, maxRecvSGE
	return nil
}

func (q *scriptQP) Connect(addr netip.AddrPort, qual uint64, private []byte, timeout time.Duration) error {
	return nil
}

// establish makes the QP connected and tells its handler.
func (q *scriptQP) establish(private []byte) {
	q.mu.Lock()
	q.connected, q.ended = true, false
	q.mu.Unlock()
	q.cfg.Conn.ConnEvent(q, rdma.ConnEvent{Kind: rdma.ConnEstablished, PrivateData: private})
}

// end flushes everything posted, as a transport does when a connection
// ends, and delivers kind to the handler unless deliver is false.
func (q *scriptQP) end(kind rdma.ConnEventKind, deliver bool) {
	q.mu.Lock()
	q.ended = true
	q.flushLocked()
	q.mu.Unlock()
	if deliver {
		q.cfg.Conn.ConnEvent(q, rdma.ConnEvent{Kind: kind})
	}
}

func (q *scriptQP) flushLocked() {
	for _, w := range q.sends {
		q.pushLocked(q.cfg.SendCQ, w.op, w.cookie, rdma.StatusFlushed, 0, false)
	}
	q.sends = nil
	for _, c := range q.recvs {
		q.pushLocked(q.cfg.RecvCQ, rdma.OpRecv, c, rdma.StatusFlushed, 0, false)
	}
	q.recvs = nil
}

func (q *scriptQP) pushLocked(sink rdma.CompletionSink, op rdma.Op, cookie uint64, s rdma.Status, n uint64, sol bool) {
	q.comp = rdma.Completion{Op: op, Status: s, Cookie: cookie, Length: n, Solicited: sol, QP: q}
	sink.PushCompletion(&q.comp)
}

// completeSend completes the oldest posted request; it reports whether the
// transport pushed a completion (a success only when signalled).
func (q *scriptQP) completeSend(t *testing.T, s rdma.Status, n uint64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	require.NotEmpty(t, q.sends, "no request posted")
	w := q.sends[0]
	q.sends = q.sends[1:]
	if s == rdma.StatusSuccess && w.flags&rdma.SendSignaled == 0 {
		return false
	}
	q.pushLocked(q.cfg.SendCQ, w.op, w.cookie, s, n, false)
	return true
}

// completeRecv completes the oldest posted receive.
func (q *scriptQP) completeRecv(t *testing.T, s rdma.Status, n uint64, solicited bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	require.NotEmpty(t, q.recvs, "no receive posted")
	c := q.recvs[0]
	q.recvs = q.recvs[1:]
	q.pushLocked(q.cfg.RecvCQ, rdma.OpRecv, c, s, n, solicited)
}

func (q *scriptQP) Disconnect(graceful bool) error {
	q.mu.Lock()
	was := q.connected && !q.ended
	q.mu.Unlock()
	if !was {
		return nil
	}
	q.end(rdma.ConnDisconnected, false)
	go q.cfg.Conn.ConnEvent(q, rdma.ConnEvent{Kind: rdma.ConnDisconnected})
	return nil
}

func (q *scriptQP) Reset() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, c := range q.recvs {
		q.pushLocked(q.cfg.RecvCQ, rdma.OpRecv, c, rdma.StatusFlushed, 0, false)
	}
	q.recvs = nil
	q.connected, q.ended = false, false
	return nil
}

func (q *scriptQP) LocalAddr() netip.AddrPort  { return netip.MustParseAddrPort("127.0.0.1:0") }
func (q *scriptQP) RemoteAddr() netip.AddrPort { return netip.MustParseAddrPort("127.0.0.1:0") }
func (q *scriptQP) Destroy() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.destroyed = true
	q.sends, q.recvs = nil, nil
	return nil
}

// countHandles is a Handles that counts live objects.
type countHandles struct {
	mu   sync.Mutex
	next uintptr
	live map[Obj]bool
}

func (h *countHandles) Bind(o Obj) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.live == nil {
		h.live = map[Obj]bool{}
	}
	h.next += 16
	Base(o).SetHandle(h.next)
	h.live[o] = true
	return nil
}

func (h *countHandles) Release(o Obj) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.live, o)
}

func (h *countHandles) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.live)
}

// scriptIA opens an IA over a fresh fake device.
func scriptIA(t *testing.T) (*IA, *scriptDev, *countHandles) {
	t.Helper()
	dev := newScriptDev()
	h := &countHandles{}
	ia, err := OpenIA(IAConfig{Name: "fake", Device: dev, AsyncQLen: 8, Handles: h})
	require.NoError(t, err)
	return ia, dev, h
}

// fixture is an IA with a PZ, one EVD for DTOs and connection events of
// one EP, and the EP's queue pair.
type fixture struct {
	ia  *IA
	dev *scriptDev
	h   *countHandles
	pz  *PZ
	evd *EVD
	ep  *EP
	qp  *scriptQP
}

func newFixture(t *testing.T, attr *EPAttr) *fixture {
	t.Helper()
	f := &fixture{}
	f.ia, f.dev, f.h = scriptIA(t)
	var err error
	f.pz, err = f.ia.CreatePZ()
	require.NoError(t, err)
	f.evd, err = f.ia.CreateEVD(16, EVDDTO|EVDConnection, nil)
	require.NoError(t, err)
	f.ep, err = f.ia.CreateEP(EPConfig{PZ: f.pz, RecvEVD: f.evd, ReqEVD: f.evd, ConnEVD: f.evd, Attr: attr})
	require.NoError(t, err)
	f.qp = f.ep.qp.(*scriptQP)
	return f
}

// connect brings the fixture's EP to the connected state (active side).
func (f *fixture) connect(t *testing.T) {
	t.Helper()
	require.NoError(t, f.ep.Connect(netip.MustParseAddrPort("127.0.0.1:0"), 0xB0DE, time.Second, nil))
	f.qp.establish([]byte("hi"))
	var ev Event
	require.NoError(t, f.evd.Dequeue(&ev))
	require.Equal(t, EventConnEstablished, ev.Number)
}

func (f *fixture) close(t *testing.T) {
	t.Helper()
	require.NoError(t, f.ia.Close(false))
	require.Zero(t, f.h.count(), "handles left after an abrupt close")
}

var seg1 = []Segment{{LMRContext: 1, Addr: 4096, Length: 64}}
