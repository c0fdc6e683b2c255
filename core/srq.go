package core

import (
	"errors"
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
	id      uint32 // names the SRQ to the transport (context, work-request ids)
	pz      *PZ
	backend rdma.SRQ
	maxIOV  int

	// outstanding is posted minus reaped; reaping (an EVD dequeue) only
	// decrements it, so checks against it under mu stay valid. completed
	// counts the receives whose completion core has seen: posted minus
	// completed is what is still on the SRQ (or just taken by an EP).
	outstanding atomic.Int64
	posted      atomic.Int64
	completed   atomic.Int64

	mu      sync.Mutex
	maxRecv int
	lw      int
	eps     map[*EP]struct{}
	recvs   []*EVD // the attached EPs' receive EVDs, copied on write for Query
	sge     [maxIOV]rdma.SGE
	wr      rdma.RecvWR
	dead    bool

	// The cookies of posted receives, by slot: a receive's work-request id
	// names its slot. Completions come from the CQs of every EP on the
	// SRQ, so the free list has its own lock.
	slotMu  sync.Mutex
	cookies []uint64
	free    []uint32
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

// drainNoCQ takes the completions of receives that EPs without a receive
// EVD took from an SRQ: nobody reaps them, so their buffers are back at
// once (only SRQ receives complete there: other posts need an EVD).
func (ia *IA) drainNoCQ() {
	ia.mu.Lock()
	cq := ia.noCQ
	ia.mu.Unlock()
	if cq == nil {
		return
	}
	ia.noCQMu.Lock()
	defer ia.noCQMu.Unlock()
	var ev Event
	for {
		n := cq.Poll(ia.noCQWCs[:])
		if n == 0 {
			return
		}
		for i := 0; i < n; i++ {
			wc := &ia.noCQWCs[i]
			if kind, id, slot := wridSplit(wc.WRID); kind == wrSRQ {
				if s := srqIDs.get(id); s != nil && s.recvDone(slot, wc, &ev, true) {
					ev.reaped()
				}
			}
		}
	}
}

// limitReached posts the low-watermark event of dat_srq_set_lw when the
// transport's armed SRQ limit fires.
func (s *SRQ) limitReached() {
	s.ia.asyncError(EventAsyncEPBroken, s, ReasonSRQLowWatermark)
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
		return nil, ErrArg(ArgSRQAttr)
	}
	s, err := ia.createSRQ(pz, attr)
	if err != nil {
		return nil, err
	}
	if attr.LowWatermark > 0 {
		if err := s.backend.Modify(rdma.SRQAttr{Limit: attr.LowWatermark}, rdma.SRQLimit); err != nil {
			Logf(LevelWarn, "dat_srq_create: SRQ %#x: low watermark not armed: %v", s.Handle(), err)
		}
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
	s.growSlots(attr.MaxRecvDTOs)
	id, ok := srqIDs.add(s)
	if !ok {
		return nil, E(KindInsufficientResources, SubResourceSRQ)
	}
	s.id = id
	b, err := ia.dev.dev.CreateSRQ(rdma.SRQInitAttr{PD: pz.pd, MaxWR: attr.MaxRecvDTOs, MaxSGE: max(attr.MaxRecvIOV, 1),
		Context: uint64(id)})
	if err != nil {
		srqIDs.remove(id)
		return nil, mapTransportError(err)
	}
	s.backend = b
	if err := bindLocked(ia, ia.srqs, s); err != nil {
		b.Destroy()
		srqIDs.remove(id)
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
	s.recvsLocked()
}

func (s *SRQ) detach(ep *EP) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.eps, ep)
	s.recvsLocked()
}

// recvsLocked rebuilds the list of receive EVDs of the attached EPs.
func (s *SRQ) recvsLocked() {
	seen := map[*EVD]bool{}
	var evds []*EVD
	for ep := range s.eps {
		if e := ep.recvEVD; e != nil && !seen[e] {
			seen[e] = true
			evds = append(evds, e)
		}
	}
	s.recvs = evds
}

// growSlots gives the slot table room for n posted receives.
func (s *SRQ) growSlots(n int) {
	s.slotMu.Lock()
	defer s.slotMu.Unlock()
	for i := len(s.cookies); i < n; i++ {
		s.free = append(s.free, uint32(i))
	}
	if n > len(s.cookies) {
		s.cookies = append(s.cookies, make([]uint64, n-len(s.cookies))...)
	}
}

// takeSlot stores cookie in a free slot; false when none is free.
func (s *SRQ) takeSlot(cookie uint64) (uint32, bool) {
	s.slotMu.Lock()
	defer s.slotMu.Unlock()
	if len(s.free) == 0 {
		return 0, false
	}
	i := s.free[len(s.free)-1]
	s.free = s.free[:len(s.free)-1]
	s.cookies[i] = cookie
	return i, true
}

// putSlot frees slot i and returns its cookie.
func (s *SRQ) putSlot(i uint32) (uint64, bool) {
	s.slotMu.Lock()
	defer s.slotMu.Unlock()
	if int(i) >= len(s.cookies) {
		return 0, false
	}
	s.free = append(s.free, i)
	return s.cookies[i], true
}

// recvDone converts a completion of the SRQ's receive in slot into out;
// the EP is the one whose QP took the receive (reaped: as in
// EP.recvEvent). Runs under the receive EVD's pollMu.
func (s *SRQ) recvDone(slot uint32, wc *rdma.WC, out *Event, reaped bool) bool {
	cookie, ok := s.putSlot(slot)
	if !ok {
		Logf(LevelWarn, "SRQ %#x: completion of receive slot %d, which does not exist", s.Handle(), slot)
		return false
	}
	s.completed.Add(1)
	ep := s.ia.dev.epOfQP(wc.QPNum)
	if ep == nil || ep.srq != s {
		// The EP is gone: nobody will reap the completion.
		s.outstanding.Add(-1)
		return false
	}
	ep.recvEvent(cookie, 0, wc, s, out, reaped)
	return true
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
		return ErrArg(ArgSegmentCount)
	case s.outstanding.Load() >= int64(s.maxRecv):
		return E(KindInsufficientResources, SubResourceSRQ)
	}
	sgl, _, err := fillSGL(s.sge[:], segs, s.maxIOV)
	if err != nil {
		return err
	}
	slot, ok := s.takeSlot(cookie)
	if !ok {
		return E(KindInsufficientResources, SubResourceSRQ)
	}
	s.wr = rdma.RecvWR{WRID: wrid(wrSRQ, s.id, slot), SGL: sgl}
	// Counted before the post: the completion may be polled before
	// PostRecv returns.
	s.outstanding.Add(1)
	s.posted.Add(1)
	err = s.backend.PostRecv(&s.wr)
	s.wr.SGL = nil
	if err == nil {
		return nil
	}
	s.outstanding.Add(-1)
	s.posted.Add(-1)
	s.putSlot(slot)
	switch {
	case errors.Is(err, rdma.ErrInvalid):
		return ErrArg(ArgLocalIOV)
	case errors.Is(err, rdma.ErrProtection):
		return E(KindProtectionViolation, SubProtectionWrite)
	case errors.Is(err, rdma.ErrPrivileges):
		return E(KindPrivilegesViolation, SubPrivilegesWrite)
	case errors.Is(err, rdma.ErrQueueFull):
		return E(KindInsufficientResources, SubResourceSRQ)
	}
	return mapTransportError(err)
}

// Query reports the SRQ's parameters (dat_srq_query). It first polls the
// attached EPs' receive CQs, so a message that has arrived shows as a taken
// buffer without the consumer dequeuing anything.
func (s *SRQ) Query() (SRQParams, error) {
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		return SRQParams{}, ErrHandle(SubHandleSRQ)
	}
	recvs := s.recvs
	s.mu.Unlock()
	for _, e := range recvs {
		e.pump(-1)
	}
	s.ia.drainNoCQ()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return SRQParams{}, ErrHandle(SubHandleSRQ)
	}
	return SRQParams{PZ: s.pz, MaxRecvDTOs: s.maxRecv, MaxRecvIOV: s.maxIOV, LowWatermark: s.lw,
		Available: int(s.posted.Load() - s.completed.Load()), Outstanding: int(s.outstanding.Load())}, nil
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
		return ErrArg(ArgLowWatermark)
	}
	s.lw = lw
	if err := s.backend.Modify(rdma.SRQAttr{Limit: lw}, rdma.SRQLimit); err != nil {
		return mapTransportError(err)
	}
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
		return ErrArg(ArgQLen)
	case int64(n) < s.outstanding.Load(), n < s.lw:
		return ErrState(SubNone)
	}
	if err := s.backend.Modify(rdma.SRQAttr{MaxWR: n}, rdma.SRQMaxWR); err != nil {
		return mapTransportError(err)
	}
	s.growSlots(n)
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
	srqIDs.remove(s.id)
	s.pz.users--
	delete(s.ia.srqs, s)
	s.ia.handles.Release(s)
}
