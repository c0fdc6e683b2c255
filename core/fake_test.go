package core

import (
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// An in-process transport for core's tests, implementing the rdma contract
// (registered as backend "fake"). Queue pairs of one fabric connect by
// reference; a send hands the peer a message descriptor (length, solicited)
// that takes the peer's oldest receive. No payload moves: core has no unsafe
// to read the consumer's memory with, and the backends' conformance suite
// (rdma/rdmatest) covers data. In a scripted fabric, queue pairs only record
// what is posted and the test decides when and how each request completes
// and which connection events arrive.

func init() { rdma.Register("fake", openFake) }

var (
	fabricsMu sync.Mutex
	fabrics   = map[string]*fabric{}
	fabricSeq int
)

type fabric struct {
	id     string
	script bool
	sgeRd  int // the devices' MaxSGERd (0: MaxSGE), set before they open
	mu     sync.Mutex
	lis    map[uint64]*fakeListener
	next   uint64
}

func newFabric() *fabric { return makeFabric(false) }

func makeFabric(script bool) *fabric {
	fabricsMu.Lock()
	defer fabricsMu.Unlock()
	fabricSeq++
	f := &fabric{id: strconv.Itoa(fabricSeq), script: script, lis: map[uint64]*fakeListener{}, next: 1000}
	fabrics[f.id] = f
	return f
}

// config is an IAConfig for an IA on the fabric; every IA opened with the
// same name shares one device, as IAs of one dat.conf entry do.
func (f *fabric) config(name string) IAConfig {
	return IAConfig{Name: "fake", Backend: "fake", Params: rdma.Params{"fabric": f.id, "dev": name},
		AsyncQLen: 64, Handles: &fakeHandles{}}
}

func openFake(p rdma.Params, async rdma.AsyncHandler) (rdma.Device, error) {
	fabricsMu.Lock()
	f := fabrics[p["fabric"]]
	fabricsMu.Unlock()
	if f == nil {
		return nil, rdma.ErrNoDevice
	}
	return &fakeDev{fab: f, async: async, mrs: map[uint32]*fakeMR{}}, nil
}

type fakeDev struct {
	fab   *fabric
	async rdma.AsyncHandler

	mu      sync.Mutex
	mrs     map[uint32]*fakeMR
	nextKey uint32
	nextQPN uint32
	nextPD  uint32
	qps     []*fakeQP
	closed  bool
}

const fakeCaps = rdma.CapSRQ | rdma.CapSRQLimit | rdma.CapSolicitedFlag | rdma.CapQPOutstanding |
	rdma.CapQPReconfigure | rdma.CapCQGrow | rdma.CapAnyServiceID | rdma.CapPostCheck | rdma.CapSRQPDDifference

func (d *fakeDev) Query() rdma.DeviceAttr {
	return rdma.DeviceAttr{Name: "fake", Vendor: "test", Caps: fakeCaps, MaxQP: 4096, MaxQPWR: 1024, MaxSGE: 8,
		MaxSGERd: d.fab.sgeRd,
		MaxCQ:    4096, MaxCQE: 4096, MaxMR: 1024, MaxMRSize: 1 << 30, MaxPD: 64, MaxMsgSize: 1 << 20,
		MaxQPRdAtom: 4, MaxQPInitRdAtom: 4, MaxSRQ: 4, MaxSRQWR: 1024, MaxSRQSGE: 8, MaxPrivateData: 64}
}

func (d *fakeDev) Addr() netip.Addr { return netip.MustParseAddr("127.0.0.1") }

func (d *fakeDev) Close() error {
	d.mu.Lock()
	qps := d.qps
	d.qps, d.closed = nil, true
	d.mu.Unlock()
	for _, q := range qps {
		q.Destroy()
	}
	return nil
}

type fakePD struct {
	dev *fakeDev
	id  uint32
}

func (d *fakeDev) AllocPD() (rdma.PD, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextPD++
	return &fakePD{dev: d, id: d.nextPD}, nil
}

func (p *fakePD) Dealloc() error { return nil }

type fakeMR struct {
	key          uint32
	pd           *fakePD
	addr, length uint64
	access       rdma.Access
}

func (m *fakeMR) LKey() uint32 { return m.key }
func (m *fakeMR) RKey() uint32 { return m.key }
func (m *fakeMR) Dereg() error {
	d := m.pd.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.mrs, m.key)
	return nil
}

func (p *fakePD) RegMR(addr, length uint64, access rdma.Access) (rdma.MR, error) {
	d := p.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextKey++
	m := &fakeMR{key: d.nextKey, pd: p, addr: addr, length: length, access: access}
	d.mrs[m.key] = m
	return m, nil
}

// check classifies a local SGE as CapPostCheck asks.
func (d *fakeDev) check(g rdma.SGE, pd *fakePD, write bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := d.mrs[g.LKey]
	switch {
	case m == nil:
		return rdma.ErrPrivileges
	case m.pd != pd:
		return rdma.ErrProtection
	case write && m.access&rdma.AccessLocalWrite == 0:
		return rdma.ErrPrivileges
	case g.Addr < m.addr || g.Addr+uint64(g.Length) > m.addr+m.length:
		return rdma.ErrInvalid
	}
	return nil
}

func (d *fakeDev) checkSGL(sgl []rdma.SGE, pd rdma.PD, write bool) error {
	if d.fab.script {
		return nil // scripted tests use made-up keys
	}
	for _, g := range sgl {
		if g.Length == 0 {
			continue
		}
		if err := d.check(g, pd.(*fakePD), write); err != nil {
			return err
		}
	}
	return nil
}

// ---- completion channel and queues ----

type fakeChan struct {
	mu  sync.Mutex
	seq uint32
	ch  chan struct{}
}

func (d *fakeDev) CreateCompChannel() (rdma.CompChannel, error) { return &fakeChan{}, nil }

func (c *fakeChan) Fd() int { return -1 }
func (c *fakeChan) Seq() uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}
func (c *fakeChan) Wait(seq uint32, t time.Duration) bool {
	c.mu.Lock()
	if c.seq != seq {
		c.mu.Unlock()
		return false
	}
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	ch := c.ch
	c.mu.Unlock()
	if t < 0 {
		t = time.Hour
	}
	select {
	case <-ch:
	case <-time.After(t):
	}
	return false
}
func (c *fakeChan) Wake() {
	c.mu.Lock()
	c.seq++
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
	c.mu.Unlock()
}
func (c *fakeChan) Destroy() error { return nil }

type fakeCQ struct {
	rdma.CQDefaults
	dev   *fakeDev
	ch    rdma.CompChannel
	ctx   uint64
	depth int
	mu    sync.Mutex
	wcs   []rdma.WC
	armed bool
	over  bool
	polls atomic.Int64
	epoch atomic.Uint64 // bumped by push (rdma.QuietCQ, evd_quiet_test.go)
}

func (d *fakeDev) CreateCQ(depth int, ch rdma.CompChannel, ctx uint64) (rdma.CQ, error) {
	if depth < 1 {
		return nil, rdma.ErrInvalid
	}
	return &fakeCQ{dev: d, ch: ch, ctx: ctx, depth: depth}, nil
}

func (q *fakeCQ) push(wc rdma.WC) {
	q.mu.Lock()
	q.wcs = append(q.wcs, wc)
	q.epoch.Add(1)
	overrun := len(q.wcs) > q.depth && !q.over
	if overrun {
		q.over = true
	}
	notify := q.armed && q.ch != nil
	q.armed = false
	q.mu.Unlock()
	if notify {
		q.ch.Wake()
	}
	if overrun {
		q.dev.async(rdma.AsyncEvent{Type: rdma.AsyncCQOverrun, Context: q.ctx})
	}
}

func (q *fakeCQ) Poll(wc []rdma.WC) int {
	q.polls.Add(1)
	q.mu.Lock()
	defer q.mu.Unlock()
	n := copy(wc, q.wcs)
	q.wcs = q.wcs[n:]
	if len(q.wcs) <= q.depth {
		q.over = false
	}
	return n
}

func (q *fakeCQ) Arm(bool) error {
	q.mu.Lock()
	q.armed = true
	q.mu.Unlock()
	return nil
}

func (q *fakeCQ) Destroy() error { return nil }

// ---- connection manager ----

type fakeCM struct {
	mu     sync.Mutex
	evs    []rdma.CMEvent
	ch     chan struct{}
	closed bool
}

func (d *fakeDev) CreateCMChannel() (rdma.CMChannel, error) { return &fakeCM{}, nil }

func (c *fakeCM) Fd() int { return -1 }

func (c *fakeCM) post(ev rdma.CMEvent) {
	c.mu.Lock()
	c.evs = append(c.evs, ev)
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
	c.mu.Unlock()
}

func (c *fakeCM) Get(ev *rdma.CMEvent, d time.Duration) error {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return rdma.ErrClosed
		}
		if len(c.evs) > 0 {
			*ev = c.evs[0]
			c.evs = c.evs[1:]
			c.mu.Unlock()
			return nil
		}
		if c.ch == nil {
			c.ch = make(chan struct{})
		}
		ch := c.ch
		c.mu.Unlock()
		if d < 0 {
			<-ch
			continue
		}
		select {
		case <-ch:
		case <-time.After(d):
			return rdma.ErrTimeout
		}
	}
}

func (c *fakeCM) Destroy() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
	return nil
}

type fakeListener struct {
	dev     *fakeDev
	ch      *fakeCM
	id, ctx uint64
}

func (l *fakeListener) ServiceID() uint64 { return l.id }
func (l *fakeListener) Close() error {
	f := l.dev.fab
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lis[l.id] == l {
		delete(f.lis, l.id)
	}
	return nil
}

func (d *fakeDev) Listen(ch rdma.CMChannel, id uint64, any bool, backlog int, ctx uint64) (rdma.Listener, error) {
	f := d.fab
	f.mu.Lock()
	defer f.mu.Unlock()
	if any {
		f.next++
		id = 1<<40 + f.next
	}
	if f.lis[id] != nil {
		return nil, rdma.ErrServiceInUse
	}
	l := &fakeListener{dev: d, ch: ch.(*fakeCM), id: id, ctx: ctx}
	f.lis[id] = l
	return l, nil
}

type fakeReq struct {
	l       *fakeListener
	active  *fakeQP // nil for a scripted request
	private []byte
	mu      sync.Mutex
	done    bool
	// scripted requests record what the consumer did
	accepted *fakeQP
	rejected int
	reason   rdma.RejectReason
	onReject func() // runs in Reject, as if the consumer acted meanwhile
}

func (r *fakeReq) RemoteAddr() netip.AddrPort { return netip.MustParseAddrPort("127.0.0.1:7") }
func (r *fakeReq) ServiceID() uint64          { return r.l.id }
func (r *fakeReq) PrivateData() []byte        { return r.private }

func (r *fakeReq) Accept(qpi rdma.QP, priv []byte) error {
	q := qpi.(*fakeQP)
	r.mu.Lock()
	if r.done {
		r.mu.Unlock()
		return rdma.ErrState
	}
	r.done, r.accepted = true, q
	a := r.active
	r.mu.Unlock()
	if a == nil {
		return nil // scripted: the test establishes
	}
	a.mu.Lock()
	gone := a.state != rdma.QPSRTR
	a.mu.Unlock()
	if gone {
		q.mu.Lock()
		q.state = rdma.QPSErr
		q.mu.Unlock()
		q.event(rdma.CMAcceptError, nil)
		return nil
	}
	q.link(a)
	q.event(rdma.CMEstablished, nil)
	a.event(rdma.CMEstablished, priv)
	return nil
}

func (r *fakeReq) Reject(reason rdma.RejectReason, priv []byte) error {
	if r.onReject != nil {
		r.onReject()
	}
	r.mu.Lock()
	if r.done && r.active != nil {
		r.mu.Unlock()
		return rdma.ErrState
	}
	r.done = true
	r.rejected++
	r.reason = reason
	a := r.active
	r.mu.Unlock()
	if a != nil {
		a.fail(map[rdma.RejectReason]rdma.CMEventType{rdma.RejectConsumer: rdma.CMRejected, rdma.RejectRefused: rdma.CMRefused}[reason])
	}
	return nil
}

func (r *fakeReq) rejects() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rejected
}

// ---- queue pairs ----

type fakeMsg struct {
	length    uint32
	solicited bool
}

type fakeQP struct {
	dev *fakeDev
	num uint32

	mu    sync.Mutex
	attr  rdma.QPInitAttr
	state rdma.QPState
	peer  *fakeQP
	sends []rdma.SendWR // scripted: posted, not completed
	recvs []rdma.RecvWR
	inbox []fakeMsg // messages waiting for a receive
}

// fakeSRQ is an SRQ by the contract: the oldest receive goes to whichever
// QP has a message to place.
type fakeSRQ struct {
	dev   *fakeDev
	attr  rdma.SRQInitAttr
	mu    sync.Mutex
	q     []rdma.RecvWR
	max   int
	limit int
	qps   []*fakeQP // QPs with a message waiting for a receive
	takes atomic.Int64
}

func (d *fakeDev) CreateQP(attr rdma.QPInitAttr) (rdma.QP, error) {
	if attr.PD == nil || attr.SendCQ == nil || attr.RecvCQ == nil {
		return nil, rdma.ErrInvalid
	}
	if attr.Cap.MaxSendWR == 0 {
		attr.Cap.MaxSendWR = 64
	}
	if attr.Cap.MaxRecvWR == 0 {
		attr.Cap.MaxRecvWR = 64
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, rdma.ErrClosed
	}
	d.nextQPN++
	q := &fakeQP{dev: d, num: d.nextQPN, attr: attr, state: rdma.QPSInit}
	d.qps = append(d.qps, q)
	return q, nil
}

func (q *fakeQP) Num() uint32 { return q.num }
func (q *fakeQP) State() rdma.QPState {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.state
}
func (q *fakeQP) Cap() rdma.QPCap {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.attr.Cap
}
func (q *fakeQP) LocalAddr() netip.AddrPort  { return netip.MustParseAddrPort("127.0.0.1:9") }
func (q *fakeQP) RemoteAddr() netip.AddrPort { return netip.MustParseAddrPort("127.0.0.1:7") }

func (q *fakeQP) cq(send bool) *fakeCQ {
	if send {
		return q.attr.SendCQ.(*fakeCQ)
	}
	return q.attr.RecvCQ.(*fakeCQ)
}

// event queues a CM event for the QP on its channel.
func (q *fakeQP) event(t rdma.CMEventType, priv []byte) {
	q.attr.CM.(*fakeCM).post(rdma.CMEvent{Type: t, Context: q.attr.Context, PrivateData: priv})
}

func (q *fakeQP) link(a *fakeQP) {
	q.mu.Lock()
	q.peer, q.state = a, rdma.QPSRTS
	q.mu.Unlock()
	a.mu.Lock()
	a.peer, a.state = q, rdma.QPSRTS
	a.mu.Unlock()
}

// fail ends a connection attempt with t.
func (q *fakeQP) fail(t rdma.CMEventType) {
	q.mu.Lock()
	q.state = rdma.QPSErr
	q.flushLocked()
	q.mu.Unlock()
	q.event(t, nil)
}

func (q *fakeQP) wcOf(wr *rdma.SendWR) rdma.WC {
	op := map[rdma.WROpcode]rdma.WCOpcode{rdma.WRSend: rdma.WCSend, rdma.WRRDMAWrite: rdma.WCRDMAWrite, rdma.WRRDMARead: rdma.WCRDMARead}[wr.Opcode]
	var n uint32
	for _, g := range wr.SGL {
		n += g.Length
	}
	return rdma.WC{WRID: wr.WRID, Opcode: op, QPNum: q.num, ByteLen: n}
}

// flushLocked completes everything posted with WCWRFlushErr.
func (q *fakeQP) flushLocked() {
	for i := range q.sends {
		wc := q.wcOf(&q.sends[i])
		wc.Status, wc.ByteLen = rdma.WCWRFlushErr, 0
		q.cq(true).push(wc)
	}
	q.sends = nil
	for _, r := range q.recvs {
		q.cq(false).push(rdma.WC{WRID: r.WRID, Opcode: rdma.WCRecv, QPNum: q.num, Status: rdma.WCWRFlushErr})
	}
	q.recvs = nil
}

func (q *fakeQP) PostSend(wr *rdma.SendWR) error {
	if err := q.dev.checkSGL(wr.SGL, q.attr.PD, wr.Opcode == rdma.WRRDMARead); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch q.state {
	case rdma.QPSErr:
		wc := q.wcOf(wr)
		wc.Status, wc.ByteLen = rdma.WCWRFlushErr, 0
		q.cq(true).push(wc)
		return nil
	case rdma.QPSRTS:
	default:
		return rdma.ErrState
	}
	if q.dev.fab.script {
		if len(q.sends) >= q.attr.Cap.MaxSendWR {
			return rdma.ErrQueueFull
		}
		c := *wr
		c.SGL = append([]rdma.SGE(nil), wr.SGL...)
		q.sends = append(q.sends, c)
		return nil
	}
	wc := q.wcOf(wr)
	if wr.Opcode == rdma.WRSend {
		q.peer.deliver(fakeMsg{length: wc.ByteLen, solicited: wr.Flags&rdma.SendSolicited != 0})
	}
	if wr.Flags&rdma.SendSignaled != 0 || q.attr.SigAll {
		q.cq(true).push(wc)
	}
	return nil
}

// deliver places a message in the QP's next receive, or keeps it until
// one is posted (an RNR wait without limit).
func (q *fakeQP) deliver(m fakeMsg) {
	q.mu.Lock()
	q.inbox = append(q.inbox, m)
	q.mu.Unlock()
	q.match()
}

// match places waiting messages in posted receives, in order.
func (q *fakeQP) match() {
	for {
		q.mu.Lock()
		if len(q.inbox) == 0 || q.state != rdma.QPSRTS {
			q.mu.Unlock()
			return
		}
		var r rdma.RecvWR
		if s, ok := q.attr.SRQ.(*fakeSRQ); ok {
			var got bool
			if r, got = s.take(q); !got {
				q.mu.Unlock()
				return
			}
		} else {
			if len(q.recvs) == 0 {
				q.mu.Unlock()
				return
			}
			r = q.recvs[0]
			q.recvs = q.recvs[1:]
		}
		m := q.inbox[0]
		q.inbox = q.inbox[1:]
		wc := rdma.WC{WRID: r.WRID, Opcode: rdma.WCRecv, QPNum: q.num, ByteLen: m.length}
		if m.solicited {
			wc.Flags = rdma.WCSolicited
		}
		var capacity uint32
		for _, g := range r.SGL {
			capacity += g.Length
		}
		if capacity < m.length {
			wc.Status, wc.ByteLen = rdma.WCLocLenErr, 0
		}
		q.cq(false).push(wc)
		q.mu.Unlock()
	}
}

func (q *fakeQP) PostRecv(wr *rdma.RecvWR) error {
	if q.attr.SRQ != nil {
		return rdma.ErrState
	}
	if err := q.dev.checkSGL(wr.SGL, q.attr.PD, true); err != nil {
		return err
	}
	q.mu.Lock()
	if q.state == rdma.QPSErr {
		q.cq(false).push(rdma.WC{WRID: wr.WRID, Opcode: rdma.WCRecv, QPNum: q.num, Status: rdma.WCWRFlushErr})
		q.mu.Unlock()
		return nil
	}
	if len(q.recvs) >= q.attr.Cap.MaxRecvWR {
		q.mu.Unlock()
		return rdma.ErrQueueFull
	}
	q.recvs = append(q.recvs, rdma.RecvWR{WRID: wr.WRID, SGL: append([]rdma.SGE(nil), wr.SGL...)})
	q.mu.Unlock()
	if !q.dev.fab.script {
		q.match()
	}
	return nil
}

func (q *fakeQP) Connect(addr netip.AddrPort, id uint64, priv []byte, timeout time.Duration) error {
	q.mu.Lock()
	if q.state != rdma.QPSInit {
		q.mu.Unlock()
		return rdma.ErrState
	}
	q.state = rdma.QPSRTR
	q.mu.Unlock()
	f := q.dev.fab
	if f.script {
		return nil // the test establishes or fails it
	}
	f.mu.Lock()
	l := f.lis[id]
	f.mu.Unlock()
	if l == nil {
		go q.fail(rdma.CMRefused)
		return nil
	}
	r := &fakeReq{l: l, active: q, private: priv}
	l.ch.post(rdma.CMEvent{Type: rdma.CMConnectRequest, Context: l.ctx, Request: r, PrivateData: priv})
	return nil
}

// end tears a connection down on both sides with kind.
func (q *fakeQP) end(kind rdma.CMEventType) {
	q.mu.Lock()
	if q.state == rdma.QPSErr || q.state == rdma.QPSInit {
		q.mu.Unlock()
		return
	}
	q.state = rdma.QPSErr
	q.flushLocked()
	p := q.peer
	q.peer = nil
	q.mu.Unlock()
	q.event(kind, nil)
	if p != nil {
		p.end(kind)
	}
}

func (q *fakeQP) Disconnect(graceful bool) error {
	q.mu.Lock()
	switch q.state {
	case rdma.QPSInit:
		q.mu.Unlock()
		return rdma.ErrState
	case rdma.QPSErr:
		q.mu.Unlock()
		return nil
	}
	// The QP is in error from the call's return; the events follow.
	q.state = rdma.QPSErr
	q.flushLocked()
	p := q.peer
	q.peer = nil
	q.mu.Unlock()
	go func() {
		q.event(rdma.CMDisconnected, nil)
		if p != nil {
			p.end(rdma.CMDisconnected)
		}
	}()
	return nil
}

func (q *fakeQP) Reset() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch q.state {
	case rdma.QPSInit:
		return nil
	case rdma.QPSErr:
		q.flushLocked()
		q.state, q.peer, q.inbox = rdma.QPSInit, nil, nil
		return nil
	}
	return rdma.ErrState
}

func (q *fakeQP) Outstanding() (send, recv int, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.sends), len(q.recvs), nil
}

func (q *fakeQP) Reconfigure(attr rdma.QPInitAttr) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.state != rdma.QPSInit && q.state != rdma.QPSErr {
		return rdma.ErrState
	}
	if attr.Cap.MaxRecvWR < len(q.recvs) && attr.SRQ == nil {
		return rdma.ErrInvalid
	}
	attr.CM, attr.Context = q.attr.CM, q.attr.Context
	q.attr = attr
	return nil
}

func (q *fakeQP) Destroy() error {
	q.mu.Lock()
	p := q.peer
	q.peer, q.state, q.sends, q.recvs = nil, rdma.QPSErr, nil, nil
	q.mu.Unlock()
	if p != nil {
		p.end(rdma.CMDisconnected)
	}
	return nil
}

// ---- scripted control ----

// scriptIA opens an IA over a scripted fabric.
func scriptIA(t *testing.T) (*IA, *fabric, *countHandles) {
	t.Helper()
	return scriptIAOn(t, makeFabric(true))
}

// scriptIAOn opens an IA over the scripted fabric f.
func scriptIAOn(t *testing.T, f *fabric) (*IA, *fabric, *countHandles) {
	t.Helper()
	h := &countHandles{}
	cfg := f.config("script")
	cfg.AsyncQLen, cfg.Handles = 8, h
	ia, err := OpenIA(cfg)
	require.NoError(t, err)
	return ia, f, h
}

// request delivers a scripted connection request to the listener on id.
func (f *fabric) request(t *testing.T, id uint64, private []byte) *fakeReq {
	f.mu.Lock()
	l := f.lis[id]
	f.mu.Unlock()
	require.NotNil(t, l, "no listener on %#x", id)
	return f.deliver(t, &fakeReq{l: l, private: private})
}

// deliver hands r to its listener.
func (f *fabric) deliver(t *testing.T, r *fakeReq) *fakeReq {
	r.l.ch.post(rdma.CMEvent{Type: rdma.CMConnectRequest, Context: r.l.ctx, Request: r, PrivateData: r.private})
	return r
}

// establish makes a scripted QP connected and tells core.
func (q *fakeQP) establish(private []byte) {
	q.mu.Lock()
	q.state = rdma.QPSRTS
	q.mu.Unlock()
	q.event(rdma.CMEstablished, private)
}

// endScript flushes everything posted, as a transport does when a
// connection ends, and delivers kind unless deliver is false.
func (q *fakeQP) endScript(kind rdma.CMEventType, deliver bool) {
	q.mu.Lock()
	q.state = rdma.QPSErr
	q.flushLocked()
	q.mu.Unlock()
	if deliver {
		q.event(kind, nil)
	}
}

// completeSend completes the oldest posted request; it reports whether the
// transport made a completion (a success only when signalled).
func (q *fakeQP) completeSend(t *testing.T, s rdma.WCStatus) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	require.NotEmpty(t, q.sends, "no request posted")
	w := q.sends[0]
	q.sends = q.sends[1:]
	if s == rdma.WCSuccess && w.Flags&rdma.SendSignaled == 0 {
		return false
	}
	wc := q.wcOf(&w)
	wc.Status = s
	q.cq(true).push(wc)
	return true
}

// completeRecv completes the oldest posted receive.
func (q *fakeQP) completeRecv(t *testing.T, s rdma.WCStatus, n uint32, solicited bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	require.NotEmpty(t, q.recvs, "no receive posted")
	r := q.recvs[0]
	q.recvs = q.recvs[1:]
	wc := rdma.WC{WRID: r.WRID, Opcode: rdma.WCRecv, QPNum: q.num, Status: s, ByteLen: n}
	if solicited {
		wc.Flags = rdma.WCSolicited
	}
	q.cq(false).push(wc)
}

// ---- shared receive queues ----

func (d *fakeDev) CreateSRQ(attr rdma.SRQInitAttr) (rdma.SRQ, error) {
	s := &fakeSRQ{dev: d, attr: attr, max: attr.MaxWR}
	if attr.Limit > 0 {
		s.Modify(rdma.SRQAttr{Limit: attr.Limit}, rdma.SRQLimit)
	}
	return s, nil
}

func (s *fakeSRQ) PostRecv(wr *rdma.RecvWR) error {
	if err := s.dev.checkSGL(wr.SGL, s.attr.PD, true); err != nil {
		return err
	}
	s.mu.Lock()
	if len(s.q) >= s.max {
		s.mu.Unlock()
		return rdma.ErrQueueFull
	}
	s.q = append(s.q, rdma.RecvWR{WRID: wr.WRID, SGL: append([]rdma.SGE(nil), wr.SGL...)})
	starved := s.qps
	s.qps = nil
	s.mu.Unlock()
	for _, q := range starved {
		q.match()
	}
	return nil
}

// take gives q the oldest receive, or records that q waits for one.
func (s *fakeSRQ) take(q *fakeQP) (rdma.RecvWR, bool) {
	s.mu.Lock()
	if len(s.q) == 0 {
		s.qps = append(s.qps, q)
		s.mu.Unlock()
		return rdma.RecvWR{}, false
	}
	r := s.q[0]
	s.q = s.q[1:]
	fire := s.limit > 0 && len(s.q) < s.limit
	if fire {
		s.limit = 0
	}
	s.mu.Unlock()
	s.takes.Add(1)
	if fire {
		s.dev.async(rdma.AsyncEvent{Type: rdma.AsyncSRQLimitReached, Context: s.attr.Context})
	}
	return r, true
}

func (s *fakeSRQ) Modify(attr rdma.SRQAttr, mask rdma.SRQAttrMask) error {
	s.mu.Lock()
	fire := false
	if mask&rdma.SRQMaxWR != 0 {
		if attr.MaxWR < len(s.q) {
			s.mu.Unlock()
			return rdma.ErrInvalid
		}
		s.max = attr.MaxWR
	}
	if mask&rdma.SRQLimit != 0 {
		s.limit = max(attr.Limit, 0)
		fire = s.limit > 0 && len(s.q) < s.limit
		if fire {
			s.limit = 0
		}
	}
	s.mu.Unlock()
	if fire {
		s.dev.async(rdma.AsyncEvent{Type: rdma.AsyncSRQLimitReached, Context: s.attr.Context})
	}
	return nil
}

func (s *fakeSRQ) Query() (rdma.SRQAttr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return rdma.SRQAttr{MaxWR: s.max, MaxSGE: s.attr.MaxSGE, Limit: s.limit}, nil
}

func (s *fakeSRQ) Destroy() error { return nil }

// ---- handles ----

// fakeHandles gives every object a distinct non-zero handle.
type fakeHandles struct{ n atomic.Uintptr }

func (h *fakeHandles) Bind(o Obj) error {
	Base(o).SetHandle(h.n.Add(16))
	return nil
}
func (h *fakeHandles) Release(Obj) {}

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
