package soft

// Posting work requests, with the one post-time check of local segments
// against the registration table (CapPostCheck).

import (
	"godat/rdma"
)

// checkSGL checks local segments against our registrations: every
// non-empty segment must lie inside a live region of pd with the rights
// need (ErrPrivileges: unknown key or missing right; ErrProtection: another
// PD; ErrInvalid: outside the region).
func (d *device) checkSGL(kc *keyCache, pd uint32, sgl []rdma.SGE, need rdma.Access) error {
	g := d.keys.gen.Load()
	for i := range sgl {
		s := &sgl[i]
		if s.Length == 0 || kc.holds(g, s, pd, need) {
			continue
		}
		r, ok := d.keys.lookupCached(kc, s.LKey)
		if !ok {
			return rdma.ErrPrivileges
		}
		if err := rdma.SegmentError(r.pd == pd, r.access, need, r.covers(s.Addr, uint64(s.Length))); err != nil {
			return err
		}
	}
	return nil
}

// sglLen is the total length of sgl, or ok=false when a segment no longer
// lies in a live region of pd with the rights need (checked again when a
// request executes: a region may go while the request waits).
func (d *device) sglLen(kc *keyCache, pd uint32, sgl []rdma.SGE, need rdma.Access) (uint64, bool) {
	var n uint64
	g := d.keys.gen.Load()
	for i := range sgl {
		s := &sgl[i]
		if s.Length == 0 {
			continue
		}
		if kc.holds(g, s, pd, need) {
			n += uint64(s.Length)
			continue
		}
		r, ok := d.keys.lookupCached(kc, s.LKey)
		if !ok || r.pd != pd || r.access&need != need || !r.covers(s.Addr, uint64(s.Length)) {
			return 0, false
		}
		n += uint64(s.Length)
	}
	return n, true
}

// localNeed is the right a request needs on its local segments: local
// read is always allowed, an RDMA read writes its local buffers.
func localNeed(op rdma.WROpcode) rdma.Access {
	if op == rdma.WRRDMARead {
		return rdma.AccessLocalWrite
	}
	return 0
}

// PostSend appends a send-queue request (ibv_post_send) and issues what
// the connection allows now.
func (q *qp) PostSend(wr *rdma.SendWR) error {
	w, err := q.postSend(wr)
	if w != nil {
		w.flushPosted()
	}
	return err
}

// postSend is PostSend under the QP lock; it returns the wire to flush.
func (q *qp) postSend(wr *rdma.SendWR) (wire, error) {
	if wr == nil || len(wr.SGL) > maxSGE {
		return nil, rdma.ErrInvalid
	}
	switch wr.Opcode {
	case rdma.WRSend, rdma.WRRDMAWrite, rdma.WRRDMARead:
	default:
		return nil, rdma.ErrInvalid // the immediate-data opcodes are not implemented
	}
	// No defer: it costs a post about 30 instructions, and nothing under
	// the lock panics (copies of the consumer's memory recover their own
	// faults).
	q.mu.Lock()
	w, err := q.postSendLocked(wr)
	q.mu.Unlock()
	return w, err
}

// postSendLocked is postSend with q.mu held.
func (q *qp) postSendLocked(wr *rdma.SendWR) (wire, error) {
	inline := wr.Flags&rdma.SendInline != 0 && wr.Opcode != rdma.WRRDMARead
	switch {
	case q.destroyed:
		return nil, rdma.ErrClosed
	case q.state != rdma.QPSRTS && q.state != rdma.QPSSQD && q.state != rdma.QPSErr:
		return nil, rdma.ErrState
	case len(wr.SGL) > q.cap.MaxSendSGE:
		return nil, rdma.ErrInvalid
	case q.sqTail-q.sqHead >= uint64(q.cap.MaxSendWR):
		return nil, rdma.ErrQueueFull
	}
	var n uint64
	if inline {
		for i := range wr.SGL {
			n += uint64(wr.SGL[i].Length)
		}
		if n > uint64(q.cap.MaxInlineData) {
			return nil, rdma.ErrInvalid
		}
	} else if err := q.dev.checkSGL(&q.kc, q.pd.id, wr.SGL, localNeed(wr.Opcode)); err != nil {
		return nil, err
	}
	e := &q.sq[q.sqTail&q.sqMask]
	e.wrid, e.op, e.flags = wr.WRID, wr.Opcode, wr.Flags
	if q.sigAll {
		e.flags |= rdma.SendSignaled
	}
	e.raddr, e.rkey = wr.RemoteAddr, wr.RKey
	e.state, e.waitOn, e.status, e.length, e.seq, e.nsge = sqQueued, waitNone, rdma.WCSuccess, 0, 0, 0
	if inline {
		if !q.copyInline(e, wr.SGL, n) {
			// The buffers faulted: the request completes as a local
			// protection error, in order.
			e.state, e.status = sqDone, rdma.WCLocProtErr
		}
	} else {
		e.flags &^= rdma.SendInline
		e.nsge = uint8(copy(e.sgl[:], wr.SGL))
	}
	q.sqTail++
	if q.state == rdma.QPSErr {
		q.flushSendsLocked()
		return nil, nil
	}
	flush := q.issueLocked(true)
	q.completeSendsLocked()
	if flush && q.c != nil {
		return q.c.w, nil
	}
	return nil, nil
}

// copyInline copies an inline payload of n bytes into e's inline room and
// describes it as e's only segment.
func (q *qp) copyInline(e *sqe, sgl []rdma.SGE, n uint64) bool {
	dst := e.inline[:n]
	for i := range sgl {
		l := uint64(sgl[i].Length)
		if l == 0 {
			continue
		}
		if !copyIn(dst[:l], sgl[i].Addr) {
			return false
		}
		dst = dst[l:]
	}
	e.flags |= rdma.SendInline
	e.length = n
	if n > 0 {
		e.sgl[0] = rdma.SGE{Addr: BufAddr(e.inline), Length: uint32(n)}
		e.nsge = 1
	}
	return true
}

// PostRecv appends a receive (ibv_post_recv); a connection's peer learns
// of the grant it makes.
func (q *qp) PostRecv(wr *rdma.RecvWR) error {
	w, err := q.postRecv(wr)
	if w != nil {
		w.flushGrant()
	}
	return err
}

func (q *qp) postRecv(wr *rdma.RecvWR) (wire, error) {
	if wr == nil || len(wr.SGL) > maxSGE {
		return nil, rdma.ErrInvalid
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.destroyed:
		return nil, rdma.ErrClosed
	case q.srq != nil:
		return nil, rdma.ErrState
	case q.state == rdma.QPSReset:
		return nil, rdma.ErrState
	case len(wr.SGL) > q.cap.MaxRecvSGE:
		return nil, rdma.ErrInvalid
	case q.rqTail-q.rqHead >= uint64(q.cap.MaxRecvWR):
		return nil, rdma.ErrQueueFull
	}
	if err := q.dev.checkSGL(&q.kc, q.pd.id, wr.SGL, rdma.AccessLocalWrite); err != nil {
		return nil, err
	}
	r := &q.rq[q.rqTail&q.rqMask]
	r.wrid, r.busy = wr.WRID, false
	r.nsge = uint8(copy(r.sgl[:], wr.SGL))
	q.rqTail++
	switch {
	case q.state == rdma.QPSErr:
		q.flushRecvsLocked()
	case q.c != nil && q.c.w != nil:
		q.c.w.setGrant(q.c.grantLocked())
		return q.c.w, nil
	}
	return nil, nil
}
