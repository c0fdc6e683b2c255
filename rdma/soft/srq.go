package soft

// Shared receive queues. An srq is a ring of posted receives in process
// memory; whichever QP has a message to place takes the oldest receive at
// that moment (qp.nextRecvLocked), never ahead of need. A QP that finds it
// empty is remembered, and the next post resumes it through its wire: the
// message waited (an RNR wait without limit), holding back what follows
// it on that connection.

import (
	"sync"
	"sync/atomic"

	"godat/rdma"
)

type srq struct {
	dev    *device
	pd     *pd
	ctx    uint64
	maxSGE int
	refs   atomic.Int32 // QPs created with it
	dead   atomic.Bool

	mu      sync.Mutex // below qp.mu
	wrid    []uint64
	nsge    []uint8
	sgl     []rdma.SGE // maxSGE entries per slot
	head    uint64
	tail    uint64
	max     uint64
	limit   int   // armed limit; 0 when not armed
	starved []*qp // QPs that found the SRQ empty since the last post
}

// CreateSRQ creates a shared receive queue (ibv_create_srq).
func (d *device) CreateSRQ(attr rdma.SRQInitAttr) (rdma.SRQ, error) {
	if d.closed.Load() {
		return nil, rdma.ErrClosed
	}
	p, ok := d.asPD(attr.PD)
	if !ok || attr.MaxWR <= 0 || attr.MaxWR > maxSRQWR || attr.MaxSGE < 0 || attr.MaxSGE > maxSGE ||
		attr.Limit < 0 || attr.Limit > attr.MaxWR {
		return nil, rdma.ErrInvalid
	}
	s := &srq{dev: d, pd: p, ctx: attr.Context, maxSGE: max(attr.MaxSGE, 1)}
	s.alloc(uint64(attr.MaxWR))
	s.limit = attr.Limit
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		return nil, rdma.ErrClosed
	}
	if p.dead.Load() {
		return nil, rdma.ErrInvalid
	}
	if len(d.srqs) >= maxSRQs {
		return nil, rdma.ErrNoResources
	}
	d.srqs[s] = struct{}{}
	p.refs.Add(1)
	if s.limit > 0 { // created below its limit: it fires at once
		s.limit = 0
		d.async(rdma.AsyncEvent{Type: rdma.AsyncSRQLimitReached, Context: s.ctx})
	}
	return s, nil
}

// alloc sizes the ring for n receives, keeping the posted ones in order;
// s.mu is held (or s is not shared yet).
func (s *srq) alloc(n uint64) {
	c := pow2(n)
	wrid := make([]uint64, c)
	nsge := make([]uint8, c)
	sgl := make([]rdma.SGE, int(c)*s.maxSGE)
	k := uint64(0)
	for i := s.head; i != s.tail; i++ {
		j := i & uint64(len(s.wrid)-1)
		wrid[k], nsge[k] = s.wrid[j], s.nsge[j]
		copy(sgl[int(k)*s.maxSGE:], s.slot(j))
		k++
	}
	s.wrid, s.nsge, s.sgl = wrid, nsge, sgl
	s.head, s.tail, s.max = 0, k, n
}

// slot is the scatter list stored in ring slot j.
func (s *srq) slot(j uint64) []rdma.SGE {
	base := int(j) * s.maxSGE
	return s.sgl[base : base+int(s.nsge[j])]
}

// PostRecv appends a receive (ibv_post_srq_recv) and resumes the QPs that
// found the SRQ empty.
func (s *srq) PostRecv(wr *rdma.RecvWR) error {
	if wr == nil || len(wr.SGL) > s.maxSGE {
		return rdma.ErrInvalid
	}
	s.mu.Lock()
	if s.dead.Load() {
		s.mu.Unlock()
		return rdma.ErrClosed
	}
	if s.tail-s.head >= s.max {
		s.mu.Unlock()
		return rdma.ErrQueueFull
	}
	if err := s.dev.checkSGL(s.pd.id, wr.SGL, rdma.AccessLocalWrite); err != nil {
		s.mu.Unlock()
		return err
	}
	j := s.tail & uint64(len(s.wrid)-1)
	s.wrid[j] = wr.WRID
	base := int(j) * s.maxSGE
	s.nsge[j] = uint8(copy(s.sgl[base:base+s.maxSGE], wr.SGL))
	s.tail++
	var wake []*qp
	if len(s.starved) > 0 {
		wake = append(wake, s.starved...)
		clear(s.starved)
		s.starved = s.starved[:0]
	}
	s.mu.Unlock()
	for _, q := range wake {
		q.srqReady()
	}
	return nil
}

// take moves the oldest receive into dst for q's arriving message; false
// when the SRQ is empty (q is then resumed by the next post).
func (s *srq) take(q *qp, dst *rqe) bool {
	s.mu.Lock()
	if s.dead.Load() || s.head == s.tail {
		if !s.dead.Load() && !containsQP(s.starved, q) {
			s.starved = append(s.starved, q)
		}
		s.mu.Unlock()
		return false
	}
	j := s.head & uint64(len(s.wrid)-1)
	dst.wrid, dst.busy = s.wrid[j], false
	dst.nsge = uint8(copy(dst.sgl[:], s.slot(j)))
	s.head++
	fire := s.limit > 0 && int(s.tail-s.head) < s.limit
	if fire {
		s.limit = 0
	}
	s.mu.Unlock()
	if fire {
		s.dev.async(rdma.AsyncEvent{Type: rdma.AsyncSRQLimitReached, Context: s.ctx})
	}
	return true
}

func containsQP(l []*qp, q *qp) bool {
	for _, x := range l {
		if x == q {
			return true
		}
	}
	return false
}

// forget drops a destroyed QP from the starved list.
func (s *srq) forget(q *qp) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.starved {
		if x == q {
			s.starved = append(s.starved[:i], s.starved[i+1:]...)
			return
		}
	}
}

// Modify resizes the SRQ and/or arms its limit (ibv_modify_srq).
func (s *srq) Modify(attr rdma.SRQAttr, mask rdma.SRQAttrMask) error {
	s.mu.Lock()
	if s.dead.Load() {
		s.mu.Unlock()
		return rdma.ErrClosed
	}
	held := s.tail - s.head
	newMax := s.max
	if mask&rdma.SRQMaxWR != 0 {
		if attr.MaxWR <= 0 || attr.MaxWR > maxSRQWR || uint64(attr.MaxWR) < held {
			s.mu.Unlock()
			return rdma.ErrInvalid
		}
		newMax = uint64(attr.MaxWR)
	}
	if mask&rdma.SRQLimit != 0 && (attr.Limit < 0 || uint64(attr.Limit) > newMax) {
		s.mu.Unlock()
		return rdma.ErrInvalid
	}
	if newMax != s.max {
		if pow2(newMax) != uint64(len(s.wrid)) {
			s.alloc(newMax) // grow, or give memory back
		}
		s.max = newMax
	}
	fire := false
	if mask&rdma.SRQLimit != 0 {
		s.limit = attr.Limit
		if fire = s.limit > 0 && int(held) < s.limit; fire {
			s.limit = 0
		}
	}
	s.mu.Unlock()
	if fire {
		s.dev.async(rdma.AsyncEvent{Type: rdma.AsyncSRQLimitReached, Context: s.ctx})
	}
	return nil
}

// Query reports the SRQ's attributes.
func (s *srq) Query() (rdma.SRQAttr, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead.Load() {
		return rdma.SRQAttr{}, rdma.ErrClosed
	}
	return rdma.SRQAttr{MaxWR: int(s.max), MaxSGE: s.maxSGE, Limit: s.limit}, nil
}

// Destroy frees the SRQ; its receives are dropped (ibv_destroy_srq).
func (s *srq) Destroy() error {
	d := s.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case s.dead.Load():
		return rdma.ErrClosed
	case s.refs.Load() > 0:
		return rdma.ErrBusy
	}
	s.kill()
	delete(d.srqs, s)
	return nil
}

// kill marks the SRQ destroyed and drops its receives; d.mu is held.
func (s *srq) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead.Load() {
		return
	}
	s.dead.Store(true)
	s.wrid, s.nsge, s.sgl, s.starved = nil, nil, nil, nil
	s.head, s.tail = 0, 0
	s.pd.refs.Add(-1)
}
