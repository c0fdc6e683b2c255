package core

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"godat/rdma"
)

// An in-process transport for core's tests: queue pairs of one fabric are
// connected by reference and a send appends a message descriptor (length,
// solicited) to the peer's inbox. No payload moves (core has no unsafe to
// read the consumer's memory with); the software provider's tests cover
// data. It implements rdma.SRQ by the contract in rdma.go, so core's SRQ
// semantics are tested against the contract, not one backend.

type fabric struct {
	mu   sync.Mutex
	lsns map[uint64]*fakeListener
	next uint64
}

func newFabric() *fabric { return &fabric{lsns: map[uint64]*fakeListener{}, next: 1000} }

type fakeDoorbell struct {
	mu  sync.Mutex
	seq uint32
	ch  chan struct{}
}

func (d *fakeDoorbell) Seq() uint32 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.seq
}

func (d *fakeDoorbell) Wait(seq uint32, t time.Duration) {
	d.mu.Lock()
	if d.seq != seq {
		d.mu.Unlock()
		return
	}
	if d.ch == nil {
		d.ch = make(chan struct{})
	}
	ch := d.ch
	d.mu.Unlock()
	if t < 0 {
		t = time.Hour
	}
	select {
	case <-ch:
	case <-time.After(t):
	}
}

func (d *fakeDoorbell) Ring() {
	d.mu.Lock()
	d.seq++
	if d.ch != nil {
		close(d.ch)
		d.ch = nil
	}
	d.mu.Unlock()
}

type fakeMR struct {
	key          uint32
	pd           uint32
	addr, length uint64
	access       rdma.Access
	dev          *fakeDev
	deregistered bool
}

func (m *fakeMR) LKey() uint32 { return m.key }
func (m *fakeMR) RKey() uint32 { return m.key }
func (m *fakeMR) Deregister() error {
	m.dev.mu.Lock()
	defer m.dev.mu.Unlock()
	delete(m.dev.mrs, m.key)
	return nil
}

type fakeDev struct {
	fab     *fabric
	db      fakeDoorbell
	mu      sync.Mutex
	mrs     map[uint32]*fakeMR
	nextKey uint32
}

func newFakeDev(f *fabric) *fakeDev { return &fakeDev{fab: f, mrs: map[uint32]*fakeMR{}} }

func (d *fakeDev) Attr() rdma.DeviceAttr {
	return rdma.DeviceAttr{Name: "fake", Vendor: "test", MaxQP: 64, MaxQPWR: 1024, MaxSGE: 8, MaxCQE: 4096,
		MaxMR: 1024, MaxMRSize: 1 << 30, MaxPD: 64, MaxMsgSize: 1 << 20, MaxRDMASize: 1 << 20,
		MaxReadsPerQP: 4, MaxSRQ: 4, MaxSRQWR: 1024, MaxPrivateData: 64}
}
func (d *fakeDev) Addr() netip.Addr        { return netip.MustParseAddr("127.0.0.1") }
func (d *fakeDev) Doorbell() rdma.Doorbell { return &d.db }
func (d *fakeDev) Close() error            { return nil }

func (d *fakeDev) RegisterMR(pd uint32, addr, length uint64, access rdma.Access) (rdma.MR, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nextKey++
	m := &fakeMR{key: d.nextKey, pd: pd, addr: addr, length: length, access: access, dev: d}
	d.mrs[m.key] = m
	return m, nil
}

// check classifies an SGE as the SRQ contract asks.
func (d *fakeDev) check(g rdma.SGE, pd uint32) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := d.mrs[g.LKey]
	switch {
	case m == nil:
		return rdma.ErrPrivileges
	case m.pd != pd:
		return rdma.ErrProtection
	case m.access&rdma.AccessLocalWrite == 0:
		return rdma.ErrPrivileges
	case g.Addr < m.addr || g.Addr+g.Length > m.addr+m.length:
		return rdma.ErrInvalid
	}
	return nil
}

type fakeListener struct {
	fab  *fabric
	qual uint64
	h    rdma.ListenHandler
}

func (l *fakeListener) Qual() uint64 { return l.qual }
func (l *fakeListener) Close() error {
	l.fab.mu.Lock()
	delete(l.fab.lsns, l.qual)
	l.fab.mu.Unlock()
	return nil
}

func (d *fakeDev) Listen(qual uint64, any bool, h rdma.ListenHandler) (rdma.Listener, error) {
	f := d.fab
	f.mu.Lock()
	defer f.mu.Unlock()
	if any {
		f.next++
		qual = f.next
	}
	if f.lsns[qual] != nil {
		return nil, rdma.ErrQualInUse
	}
	l := &fakeListener{fab: f, qual: qual, h: h}
	f.lsns[qual] = l
	return l, nil
}

type fakeMsg struct {
	length    uint64
	solicited bool
}

type fakeQP struct {
	dev  *fakeDev
	cfg  rdma.QPConfig
	mu   sync.Mutex
	conn bool
	peer *fakeQP
	in   []fakeMsg
	rq   []rdma.RecvWR
	sgl  [8]rdma.SGE
	comp rdma.Completion
}

func (d *fakeDev) CreateQP(cfg rdma.QPConfig) (rdma.QP, error) {
	q := &fakeQP{dev: d, cfg: cfg}
	q.comp.QP = q
	return q, nil
}

func (q *fakeQP) PostSend(wr *rdma.SendWR) error {
	var n uint64
	for _, g := range wr.SGL {
		n += g.Length
	}
	q.mu.Lock()
	p := q.peer
	ok := q.conn
	if ok && wr.Flags&rdma.SendSignaled != 0 {
		q.comp.Op, q.comp.Status, q.comp.Cookie, q.comp.Length = wr.Op, rdma.StatusSuccess, wr.Cookie, n
		q.cfg.SendCQ.PushCompletion(&q.comp)
	}
	q.mu.Unlock()
	if !ok {
		return rdma.ErrState
	}
	p.mu.Lock()
	p.in = append(p.in, fakeMsg{length: n, solicited: wr.Flags&rdma.SendSolicited != 0})
	p.mu.Unlock()
	p.dev.db.Ring()
	return nil
}

func (q *fakeQP) PostRecv(wr *rdma.RecvWR) error {
	if q.cfg.SRQ != nil {
		return rdma.ErrState
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.rq = append(q.rq, rdma.RecvWR{Cookie: wr.Cookie, SGL: append([]rdma.SGE(nil), wr.SGL...)})
	return nil
}

// Progress places inbox messages into receives in order: the QP's own, or
// ones taken from the SRQ at that moment (the rdma.SRQ contract).
func (q *fakeQP) Progress() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for q.conn && len(q.in) > 0 {
		var cookie uint64
		var sgl []rdma.SGE
		if s := q.cfg.SRQ; s != nil {
			c, k, ok := s.Take(q.sgl[:])
			if !ok {
				break
			}
			cookie, sgl = c, q.sgl[:k]
		} else {
			if len(q.rq) == 0 {
				break
			}
			cookie, sgl = q.rq[0].Cookie, q.rq[0].SGL
			q.rq = q.rq[1:]
		}
		m := q.in[0]
		q.in = q.in[1:]
		var capacity uint64
		for _, g := range sgl {
			capacity += g.Length
		}
		q.comp.Op, q.comp.Cookie, q.comp.Solicited = rdma.OpRecv, cookie, m.solicited
		q.comp.Status, q.comp.Length = rdma.StatusSuccess, m.length
		if capacity < m.length {
			q.comp.Status, q.comp.Length = rdma.StatusLocalLength, 0
		}
		q.cfg.RecvCQ.PushCompletion(&q.comp)
		n++
	}
	return n
}

func (q *fakeQP) event(k rdma.ConnEventKind) {
	go func() {
		q.cfg.Conn.ConnEvent(q, rdma.ConnEvent{Kind: k})
		q.dev.db.Ring()
	}()
}

type fakeReq struct {
	from *fakeQP
	qual uint64
}

func (r *fakeReq) RemoteAddr() netip.AddrPort { return netip.AddrPortFrom(r.from.dev.Addr(), 1) }
func (r *fakeReq) Qual() uint64               { return r.qual }
func (r *fakeReq) PrivateData() []byte        { return nil }
func (r *fakeReq) Reject() error              { r.from.event(rdma.ConnRejected); return nil }

func (r *fakeReq) Accept(qpi rdma.QP, _ []byte) error {
	q := qpi.(*fakeQP)
	a := r.from
	a.mu.Lock()
	a.peer, a.conn = q, true
	a.mu.Unlock()
	q.mu.Lock()
	q.peer, q.conn = a, true
	q.mu.Unlock()
	a.event(rdma.ConnEstablished)
	q.event(rdma.ConnEstablished)
	return nil
}

func (q *fakeQP) Connect(_ netip.AddrPort, qual uint64, _ []byte, _ time.Duration) error {
	f := q.dev.fab
	f.mu.Lock()
	l := f.lsns[qual]
	f.mu.Unlock()
	if l == nil {
		q.event(rdma.ConnNonPeerRejected)
		return nil
	}
	go l.h.ConnRequest(&fakeReq{from: q, qual: qual})
	return nil
}

// flushLocked completes the QP's own receives as flushed.
func (q *fakeQP) flushLocked() {
	for _, r := range q.rq {
		q.comp.Op, q.comp.Cookie, q.comp.Status, q.comp.Length = rdma.OpRecv, r.Cookie, rdma.StatusFlushed, 0
		q.cfg.RecvCQ.PushCompletion(&q.comp)
	}
	q.rq = nil
}

func (q *fakeQP) Disconnect(bool) error {
	q.mu.Lock()
	if !q.conn {
		q.mu.Unlock()
		return nil
	}
	p := q.peer
	q.conn, q.peer, q.in = false, nil, nil
	q.flushLocked()
	q.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		live := p.conn
		p.conn, p.peer, p.in = false, nil, nil
		p.flushLocked()
		p.mu.Unlock()
		if live {
			p.event(rdma.ConnDisconnected)
		}
	}
	q.event(rdma.ConnDisconnected)
	return nil
}

func (q *fakeQP) Reset() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.flushLocked()
	return nil
}

func (q *fakeQP) LocalAddr() netip.AddrPort  { return netip.AddrPortFrom(q.dev.Addr(), 1) }
func (q *fakeQP) RemoteAddr() netip.AddrPort { return netip.AddrPortFrom(q.dev.Addr(), 2) }
func (q *fakeQP) Destroy() error {
	q.mu.Lock()
	q.conn = false
	q.mu.Unlock()
	return nil
}

// fakeSRQ implements rdma.SRQ by its contract.
type fakeSRQ struct {
	dev     *fakeDev
	cfg     rdma.SRQConfig
	mu      sync.Mutex
	q       []rdma.RecvWR
	max     int
	limit   int
	starved bool
	takes   atomic.Int64
}

func (d *fakeDev) CreateSRQ(cfg rdma.SRQConfig) (rdma.SRQ, error) {
	if cfg.MaxWR <= 0 {
		return nil, rdma.ErrInvalid
	}
	return &fakeSRQ{dev: d, cfg: cfg, max: cfg.MaxWR}, nil
}

func (s *fakeSRQ) PD() uint32 { return s.cfg.PD }

func (s *fakeSRQ) PostRecv(wr *rdma.RecvWR) error {
	if len(wr.SGL) > s.cfg.MaxSGE {
		return rdma.ErrInvalid
	}
	for _, g := range wr.SGL {
		if g.Length == 0 {
			continue
		}
		if err := s.dev.check(g, s.cfg.PD); err != nil {
			return err
		}
	}
	s.mu.Lock()
	if len(s.q) >= s.max {
		s.mu.Unlock()
		return rdma.ErrQueueFull
	}
	s.q = append(s.q, rdma.RecvWR{Cookie: wr.Cookie, SGL: append([]rdma.SGE(nil), wr.SGL...)})
	wake := s.starved
	s.starved = false
	s.mu.Unlock()
	if wake {
		s.dev.db.Ring()
	}
	return nil
}

func (s *fakeSRQ) Take(sgl []rdma.SGE) (uint64, int, bool) {
	s.mu.Lock()
	if len(s.q) == 0 {
		s.starved = true
		s.mu.Unlock()
		return 0, 0, false
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
		s.cfg.Limit.SRQLimit(s)
	}
	return r.Cookie, copy(sgl, r.SGL), true
}

func (s *fakeSRQ) Available() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.q)
}

func (s *fakeSRQ) Resize(n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < len(s.q) {
		return rdma.ErrState
	}
	s.max = n
	return nil
}

func (s *fakeSRQ) ArmLimit(limit int) {
	s.mu.Lock()
	s.limit = max(limit, 0)
	fire := s.limit > 0 && len(s.q) < s.limit
	if fire {
		s.limit = 0
	}
	s.mu.Unlock()
	if fire {
		s.cfg.Limit.SRQLimit(s)
	}
}

func (s *fakeSRQ) Destroy() error { return nil }

// fakeHandles gives every object a distinct non-zero handle.
type fakeHandles struct{ n atomic.Uintptr }

func (h *fakeHandles) Bind(o Obj) error {
	Base(o).SetHandle(h.n.Add(16))
	return nil
}
func (h *fakeHandles) Release(Obj) {}
