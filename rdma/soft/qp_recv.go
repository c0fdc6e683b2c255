package soft

// Inbound messages: a SEND lands in the next posted receive (or one taken
// from the SRQ when it is placed, never ahead of need), and completes at
// once, in the order the messages arrived.

import (
	"godat/rdma"
)

// nextRecvLocked is the receive the next message lands in: the oldest
// posted one, or one taken from the SRQ into q.srqCur. nil: none (on an
// SRQ the QP is then registered to be resumed by the SRQ's next post).
func (q *qp) nextRecvLocked() *rqe {
	if q.srq == nil {
		if q.rqHead == q.rqTail {
			return nil
		}
		return &q.rq[q.rqHead&q.rqMask]
	}
	if q.srqHeld {
		return &q.srqCur
	}
	if !q.srq.take(q, &q.srqCur) {
		return nil
	}
	q.srqHeld = true
	return &q.srqCur
}

// recvPD is the PD a receive's segments belong to.
func (q *qp) recvPD() uint32 {
	if q.srq != nil {
		return q.srq.pd.id
	}
	return q.pd.id
}

// recvStatus is the status of placing L bytes in r: its segments must still
// be registered (with local write) and hold L bytes.
func (q *qp) recvStatus(r *rqe, L uint64) rdma.WCStatus {
	// The usual receive: one segment in the region the QP's key cache
	// holds, checked in a few inlined compares.
	if r.nsge == 1 && q.kc.holds(q.dev.keys.gen.Load(), &r.sgl[0], q.recvPD(), rdma.AccessLocalWrite) {
		if uint64(r.sgl[0].Length) < L {
			return rdma.WCLocLenErr
		}
		return rdma.WCSuccess
	}
	capacity, ok := q.dev.sglLen(&q.kc, q.recvPD(), r.sgl[:r.nsge], rdma.AccessLocalWrite)
	switch {
	case !ok:
		return rdma.WCLocProtErr
	case capacity < L:
		return rdma.WCLocLenErr
	}
	return rdma.WCSuccess
}

// onSend places an arriving message of connection c (h.len bytes in p).
// errWait: no receive yet (SRQ empty); the wire keeps the message and
// retries it on resume. Another error ends the connection.
func (q *qp) onSend(c *conn, h *hdr, p payload) error {
	q.mu.Lock() // no defer, as in postSend
	err := q.onSendLocked(c, h, p)
	q.mu.Unlock()
	return err
}

// onSendLocked is onSend with q.mu held (released and taken again around
// a placement that is not a copy from memory).
func (q *qp) onSendLocked(c *conn, h *hdr, p payload) error {
	if q.c != c {
		return errGone
	}
	r := q.nextRecvLocked()
	if r == nil {
		if q.srq != nil {
			return errWait
		}
		return errProto // the peer sent beyond our grant
	}
	L := h.len
	st := q.recvStatus(r, L)
	var local, src bool
	var err error
	switch {
	case st != rdma.WCSuccess || L == 0:
		err = p.discard(L)
	case p.inMemory():
		local, src, err = p.place(r.sgl[:r.nsge], L)
	default:
		// A payload that is not in memory yet (a socket, another
		// process): place it without the QP lock, under the teardown
		// barrier. The receive stays ours: a teardown flushes it only
		// after the barrier.
		r.busy = true
		q.mu.Unlock()
		local, src, err = c.placeUnlocked(p, r.sgl[:r.nsge], L)
		q.mu.Lock()
		r.busy = false
		if q.c != c {
			return errGone
		}
	}
	if err != nil {
		return err
	}
	if src {
		// The sender's memory faulted as we read it: its request fails
		// as a local protection error and the connection ends (the stream
		// of its requests cannot go on without this one).
		if h.flags&flAckReq != 0 {
			c.executed++
			c.w.nak(c.executed, rdma.WCLocProtErr)
		}
		q.endLocked(endAbort, rdma.CMBroken)
		return errGone
	}
	if local {
		st = rdma.WCLocProtErr
	}
	var hand *cqHand
	if w, shm := c.w.(*shmWire); shm {
		hand = &q.dev.in.hand // the shm drain holds inbound.mu
		w.heardGrantLocked(w.rxGrant)
	}
	q.completeRecvLocked(r, st, L, h.flags&flSolicited != 0, hand)
	c.placedIn = q.rcq
	q.countExecLocked(c, h, st)
	if q.srq != nil {
		c.w.setGrant(c.grantLocked()) // the window moves with completions
	}
	return nil
}

// placeUnlocked places a payload under the teardown barrier only.
func (c *conn) placeUnlocked(p payload, dst []rdma.SGE, n uint64) (local, src bool, err error) {
	c.placeMu.RLock()
	defer c.placeMu.RUnlock()
	if c.dead.Load() {
		return false, false, errGone
	}
	return p.place(dst, n)
}

// countExecLocked acknowledges a message that asked for it, with the
// sender's view of our verdict: a receive too small is the sender's
// invalid request; one we could not write is a remote operation error.
func (q *qp) countExecLocked(c *conn, h *hdr, st rdma.WCStatus) {
	if h.flags&flAckReq == 0 {
		return
	}
	c.executed++
	switch st {
	case rdma.WCSuccess:
		c.w.ack(c.executed)
	case rdma.WCLocLenErr:
		c.w.nak(c.executed, rdma.WCRemInvReqErr)
	case rdma.WCLocProtErr:
		c.w.nak(c.executed, rdma.WCRemOpErr)
	default:
		c.w.nak(c.executed, st)
	}
}

// completeRecvLocked completes the receive r (the QP's oldest, or the one
// taken from the SRQ), into the slot a polling drainer lent (hand) when
// the CQ takes it there (cq.lent).
func (q *qp) completeRecvLocked(r *rqe, st rdma.WCStatus, L uint64, solicited bool, hand *cqHand) {
	wc := q.rcq.lent(hand)
	push := wc == nil
	if push {
		wc = &q.wc
	}
	// Field by field: a literal is built aside and copied, and the wide
	// loads of that copy wait for the narrow stores that built it.
	*wc = rdma.WC{}
	wc.WRID, wc.QPNum, wc.Status, wc.Opcode = r.wrid, q.Num(), st, rdma.WCRecv
	if st == rdma.WCSuccess {
		wc.ByteLen = uint32(L)
		if solicited {
			wc.Flags = rdma.WCSolicited
		}
	}
	if q.srq != nil {
		q.srqHeld = false
		if q.c != nil {
			q.c.srqDone++
		}
	} else {
		q.rqHead++
	}
	if push {
		q.rcq.push(wc)
	}
}

// flushRecvsLocked completes every receive the QP holds as flushed.
func (q *qp) flushRecvsLocked() {
	for q.rqHead != q.rqTail {
		q.completeRecvLocked(&q.rq[q.rqHead&q.rqMask], rdma.WCWRFlushErr, 0, false, nil)
	}
	if q.srqHeld {
		q.completeRecvLocked(&q.srqCur, rdma.WCWRFlushErr, 0, false, nil)
	}
}

// srqReady: the SRQ got a receive after this QP found it empty.
func (q *qp) srqReady() {
	q.mu.Lock()
	c := q.c
	q.mu.Unlock()
	if c != nil {
		c.w.resume()
	}
}
