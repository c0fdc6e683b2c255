package core

import (
	"sync"
	"sync/atomic"

	"godat/rdma"
)

// SRQ is a shared receive queue (dat_srq_*): receive buffers posted once
// for every EP created with it.
//
// Counting, the rules every watermark and count below follows (the README
// states them for consumers):
//   - available: receives posted to the SRQ and not yet taken by an EP (the
//     backend ring's length). An EP takes a receive when a message arrives
//     and is placed, never ahead of need.
//   - outstanding: receives posted to the SRQ whose completion the consumer
//     has not reaped yet (posted minus dequeued from a recv EVD). Taken
//     receives stay outstanding until their completion is dequeued, so
//     max_recv_dtos bounds every receive buffer the SRQ has handed out.
//   - an EP's held count (the watermarks' "buffers at the EP"): receives the
//     EP has taken for arriving messages, from the SRQ or its own queue,
//     whose completions the consumer has not reaped.
type SRQ struct {
	Object
	ia      *IA
	pz      *PZ
	backend rdma.SRQ
	maxIOV  int

	// outstanding is posted minus reaped; reaping (an EVD dequeue) only
	// decrements it, so checks against it under mu stay valid.
	outstanding atomic.Int64

	mu      sync.Mutex
	maxRecv int
	lw      int
	eps     map[*EP]struct{}
	qps     []rdma.QP // the attached EPs' QPs, copied on write for Query
	sge     [32]rdma.SGE
	wr      rdma.RecvWR
	dead    bool
}

// SRQAttr are the SRQ attributes of DAT_SRQ_ATTR.
type SRQAttr struct {
	MaxRecvDTOs  int
	MaxRecvIOV   int
	LowWatermark int
}

// SRQParams is what dat_srq_query reports. The SRQ is always operational:
// nothing in the software provider puts it in the error state.
type SRQParams struct {
	PZ           *PZ
	MaxRecvDTOs  int
	MaxRecvIOV   int
	LowWatermark int
	Available    int
	Outstanding  int
}

// srqLimit turns the backend's low-watermark notification into the
// asynchronous event of dat_srq_set_lw.
type srqLimit struct{ s *SRQ }

// SRQLimit posts the low-watermark event about the SRQ.
func (l srqLimit) SRQLimit(rdma.SRQ) {
	l.s.ia.asyncError(EventAsyncEPBroken, l.s, ReasonSRQLowWatermark)
}

// CreateSRQ creates a shared receive queue (dat_srq_create). The SRQ holds
// exactly attr.MaxRecvDTOs outstanding receives of attr.MaxRecvIOV segments.
// A non-zero low watermark arms the SRQ at once, and since it starts empty
// the asynchronous event follows immediately, as the page warns.
func (ia *IA) CreateSRQ(pz *PZ, attr SRQAttr) (*SRQ, error) {
	l := ia.attr
	if attr.MaxRecvDTOs <= 0 || attr.MaxRecvDTOs > l.MaxRecvPerSRQ ||
		attr.MaxRecvIOV < 0 || attr.MaxRecvIOV > l.MaxIOVSegments ||
		attr.LowWatermark < 0 || attr.LowWatermark > attr.MaxRecvDTOs {
		return nil, ErrArg(3)
	}
	s, err := ia.createSRQ(pz, attr)
	if err != nil {
		return nil, err
	}
	if attr.LowWatermark > 0 {
		s.backend.ArmLimit(attr.LowWatermark)
	}
	return s, nil
}

func (ia *IA) createSRQ(pz *PZ, attr SRQAttr) (*SRQ, error) {
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if err := ia.liveLocked(); err != nil {
		return nil, err
	}
	if err := pz.usableLocked(ia); err != nil {
		return nil, err
	}
	if len(ia.srqs) >= ia.attr.MaxSRQs {
		return nil, E(KindInsufficientResources, SubResourceSRQ)
	}
	s := &SRQ{ia: ia, pz: pz, maxIOV: attr.MaxRecvIOV, maxRecv: attr.MaxRecvDTOs, lw: attr.LowWatermark,
		eps: map[*EP]struct{}{}}
	s.kind = TypeSRQ
	b, err := ia.dev.CreateSRQ(rdma.SRQConfig{PD: pz.id, MaxWR: attr.MaxRecvDTOs, MaxSGE: attr.MaxRecvIOV,
		Limit: srqLimit{s}})
	if err != nil {
		return nil, mapTransportError(err)
	}
	s.backend = b
	if err := bindLocked(ia, ia.srqs, s); err != nil {
		b.Destroy()
		return nil, err
	}
	pz.users++
	return s, nil
}

// IA is the SRQ's interface adapter.
func (s *SRQ) IA() *IA { return s.ia }

// usableLocked checks that s belongs to ia and is alive; ia.mu is held.
func (s *SRQ) usableLocked(ia *IA) error {
	if s == nil || s.dead || s.ia != ia {
		return ErrHandle(SubHandleSRQ)
	}
	return nil
}

func (s *SRQ) attach(ep *EP) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.eps[ep] = struct{}{}
	s.qps = append(s.qps[:len(s.qps):len(s.qps)], ep.qp)
}

func (s *SRQ) detach(ep *EP) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.eps, ep)
	qps := make([]rdma.QP, 0, len(s.qps))
	for _, q := range s.qps {
		if q != ep.qp {
			qps = append(qps, q)
		}
	}
	s.qps = qps
}

// PostRecv adds a receive buffer (dat_srq_post_recv). The segments are
// checked against the LMRs now, so a bad buffer fails the post instead of a
// later message.
func (s *SRQ) PostRecv(segs []Segment, cookie uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.dead:
		return ErrHandle(SubHandleSRQ)
	case len(segs) > s.maxIOV || len(segs) > len(s.sge):
		return ErrArg(2)
	case s.outstanding.Load() >= int64(s.maxRecv):
		return E(KindInsufficientResources, SubResourceSRQ)
	}
	for i := range segs {
		g := &segs[i]
		s.sge[i] = rdma.SGE{Addr: g.Addr, Length: g.Length, LKey: g.LMRContext}
	}
	s.wr = rdma.RecvWR{Cookie: cookie, SGL: s.sge[:len(segs)]}
	switch err := s.backend.PostRecv(&s.wr); err {
	case nil:
		s.outstanding.Add(1)
		return nil
	case rdma.ErrInvalid:
		return ErrArg(3)
	case rdma.ErrProtection:
		return E(KindProtectionViolation, SubProtectionWrite)
	case rdma.ErrPrivileges:
		return E(KindPrivilegesViolation, SubPrivilegesWrite)
	case rdma.ErrQueueFull:
		return E(KindInsufficientResources, SubResourceSRQ)
	default:
		return mapTransportError(err)
	}
}

// Query reports the SRQ's parameters (dat_srq_query). It first progresses
// the attached EPs, so a message that has arrived shows as a taken buffer
// without the consumer touching a receive EVD.
func (s *SRQ) Query() (SRQParams, error) {
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		return SRQParams{}, ErrHandle(SubHandleSRQ)
	}
	qps := s.qps
	s.mu.Unlock()
	for _, q := range qps {
		q.Progress()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return SRQParams{}, ErrHandle(SubHandleSRQ)
	}
	return SRQParams{PZ: s.pz, MaxRecvDTOs: s.maxRecv, MaxRecvIOV: s.maxIOV, LowWatermark: s.lw,
		Available: s.backend.Available(), Outstanding: int(s.outstanding.Load())}, nil
}

// SetLowWatermark sets and arms the low watermark (dat_srq_set_lw): one
// asynchronous event, the first time fewer than lw buffers are on the SRQ,
// during this call if that is already so. DAT_SRQ_LW_DEFAULT (0) disarms.
//
// The page's Usage paragraph says the event is immediate when the new value
// is below the number of posted buffers; that contradicts its Description
// (an event when the number of buffers is below the watermark), which is
// what this follows: immediate when available < lw.
func (s *SRQ) SetLowWatermark(lw int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.dead:
		return ErrHandle(SubHandleSRQ)
	case lw < 0 || lw > s.maxRecv:
		return ErrArg(2)
	}
	s.lw = lw
	s.backend.ArmLimit(lw)
	return nil
}

// Resize changes the SRQ's size (dat_srq_resize). It never loses a buffer:
// below the outstanding receives (on the SRQ, held by EPs, or completed and
// not reaped) or below the low watermark it fails with DAT_INVALID_STATE
// and changes nothing; otherwise the SRQ takes exactly the new size.
func (s *SRQ) Resize(n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.dead:
		return ErrHandle(SubHandleSRQ)
	case n <= 0 || n > s.ia.attr.MaxRecvPerSRQ:
		return ErrArg(2)
	case int64(n) < s.outstanding.Load(), n < s.lw:
		return ErrState(SubNone)
	}
	if err := s.backend.Resize(n); err != nil {
		return mapTransportError(err)
	}
	s.maxRecv = n
	return nil
}

// Free destroys the SRQ (dat_srq_free); refused while an EP uses it.
func (s *SRQ) Free() error {
	ia := s.ia
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if s.dead {
		return ErrHandle(SubHandleSRQ)
	}
	s.mu.Lock()
	inUse := len(s.eps) > 0
	s.mu.Unlock()
	if inUse {
		return ErrState(SubStateSRQInUse)
	}
	s.destroyLocked()
	return nil
}

// destroyLocked tears the SRQ down; ia.mu is held.
func (s *SRQ) destroyLocked() {
	s.mu.Lock()
	s.dead = true
	s.mu.Unlock()
	s.backend.Destroy()
	s.pz.users--
	delete(s.ia.srqs, s)
	s.ia.handles.Release(s)
}
