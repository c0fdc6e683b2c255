package soft

// The RDMA responder of two-sided wires (TCP): the peer's writes and read
// requests arrive as messages, are checked against our registration table
// (key, bounds, right, the QP's PD) and executed straight into or out of
// the registered memory. A violation ends the connection as on verbs: the
// initiator's request fails with WCRemAccessErr (NAK, or the read's
// status), we raise AsyncQPAccessErr, both sides get CMBroken, and not a
// byte is written. And the initiator's side of reads: responses are placed
// into the read's local segments.

import (
	"godat/rdma"
)

// remoteRegion checks the peer's access to [addr, addr+n) with key.
func (q *qp) remoteRegion(key uint32, addr, n uint64, need rdma.Access) bool {
	r, ok := q.dev.keys.lookup(key)
	return ok && r.pd == q.pd.id && r.access&need == need && r.covers(addr, n)
}

// accessViolationLocked ends the connection after the peer violated our
// access rights; the frames already queued (the NAK) go out first.
func (q *qp) accessViolationLocked() {
	q.dev.async(rdma.AsyncEvent{Type: rdma.AsyncQPAccessErr, Context: q.ctx})
	q.endLocked(endFlush, rdma.CMBroken)
}

// onWrite executes the peer's RDMA write of h.len bytes at h.addr.
func (q *qp) onWrite(c *conn, h *hdr, p payload) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.c != c {
		return errGone
	}
	if !q.remoteRegion(h.aux, h.addr, h.len, rdma.AccessRemoteWrite) {
		if err := p.discard(h.len); err != nil {
			return err
		}
		c.executed++
		c.w.nak(c.executed, rdma.WCRemAccessErr)
		q.accessViolationLocked()
		return errGone
	}
	var local bool
	if h.len > 0 {
		// The message size limit keeps a write within one segment.
		c.writeSeg[0] = rdma.SGE{Addr: h.addr, Length: uint32(h.len)}
		var err error
		q.mu.Unlock()
		local, _, err = c.placeUnlocked(p, c.writeSeg[:], h.len)
		q.mu.Lock()
		if q.c != c {
			return errGone
		}
		if err != nil {
			return err
		}
	}
	c.executed++
	if local {
		// Registered but no longer mapped here: refused like a bad key.
		c.w.nak(c.executed, rdma.WCRemAccessErr)
		q.accessViolationLocked()
		return errGone
	}
	c.w.ack(c.executed)
	return nil
}

// onReadReq answers the peer's RDMA read: the region is checked now and
// read as the response is written.
func (q *qp) onReadReq(c *conn, h *hdr) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.c != c {
		return errGone
	}
	if c.readsIn >= maxRdAtom {
		return errProto // the peer ignores the reads-outstanding limit
	}
	c.readsIn++
	if !q.remoteRegion(h.aux, h.addr, h.len, rdma.AccessRemoteRead) {
		c.w.readResp(0, 0, rdma.WCRemAccessErr)
		q.accessViolationLocked()
		return errGone
	}
	c.w.readResp(h.addr, h.len, rdma.WCSuccess)
	return nil
}

// readAnswered: a read response of ours goes on the wire now (two-sided
// wires): before its first byte, so that the peer, which may post its next
// read once it has the response, never finds this one still counted.
func (q *qp) readAnswered(c *conn) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.c == c && c.readsIn > 0 {
		c.readsIn--
	}
}

// oldestReadLocked is the read the next response answers.
func (q *qp) oldestReadLocked(c *conn) *sqe {
	if c.rdHead == c.rdTail {
		return nil
	}
	return &q.sq[c.reads[c.rdHead%maxRdAtom]&q.sqMask]
}

// onReadResp places a read response's h.len bytes (0 when the target
// refused) into the oldest outstanding read's segments.
func (q *qp) onReadResp(c *conn, h *hdr, p payload) error {
	q.mu.Lock()
	e := q.oldestReadLocked(c)
	switch {
	case q.c != c:
		q.mu.Unlock()
		return errGone
	case e == nil || h.len != 0 && h.len != e.length:
		q.mu.Unlock()
		return errProto
	}
	sgl := e.sgl[:e.nsge]
	q.mu.Unlock()
	c.inRead, c.readFault, c.readLen = true, false, h.len
	if h.len == 0 {
		return nil
	}
	// e stays ours until the done message: a teardown flushes it only
	// after the placement barrier.
	local, _, err := c.placeUnlocked(p, sgl, h.len)
	c.readFault = local
	return err
}

// onReadDone completes the oldest read with the target's verdict.
func (q *qp) onReadDone(c *conn, st rdma.WCStatus) error {
	if !c.inRead {
		return errProto
	}
	c.inRead = false
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.c != c {
		return errGone
	}
	e := q.oldestReadLocked(c)
	switch {
	case e == nil:
		return errProto
	case st == rdma.WCSuccess && c.readLen != e.length:
		return errProto
	case st == rdma.WCSuccess && c.readFault:
		st = rdma.WCLocProtErr
	case st != rdma.WCSuccess && st != rdma.WCRemAccessErr:
		return errProto
	}
	c.rdHead++
	n := e.length
	if st != rdma.WCSuccess {
		n = 0
	}
	e.finish(st, n)
	if st == rdma.WCRemAccessErr {
		q.fatalLocked(endAbort)
		return errGone
	}
	// A fenced request or one beyond the read limit may go now (the
	// reader flushes what this queues before it reads again).
	q.issueLocked(false)
	q.completeSendsLocked()
	return nil
}

// responderFault: a read response's source (our registered region) faulted
// as it was written; the initiator got WCRemAccessErr in its trailer, and
// the connection ends as for any access violation. The report comes once
// the trailer is written, so the initiator may have had it and closed, and
// our reader ended the connection (BROKEN), before it: the access error
// still happened on this QP's connection, and the async event is still
// due (as IBV_EVENT_QP_ACCESS_ERR at a verbs responder). Without it the C
// suite's test_bad_region saw BROKEN and no EP_BROKEN in about one run in
// 30 over godat-tcp.
func (q *qp) responderFault(c *conn) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if c.respFault {
		return // one event per connection
	}
	switch {
	case q.c == c:
		c.respFault = true
		q.accessViolationLocked()
	case q.c == nil && c.dead.Load() && !q.destroyed:
		c.respFault = true
		q.dev.async(rdma.AsyncEvent{Type: rdma.AsyncQPAccessErr, Context: q.ctx})
	}
}
