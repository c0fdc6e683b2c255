package soft

// Connection states of a queue pair: connect, accept, establishment,
// disconnect (with the graceful drain), peer loss, reset, destroy, and the
// flush that ends a connection.

import (
	"net/netip"
	"time"

	"godat/rdma"
)

const (
	// defaultConnectTimeout bounds a connect whose caller gave no bound.
	defaultConnectTimeout = 30 * time.Second
	// drainTimeout bounds a graceful disconnect's wait for posted work.
	drainTimeout = 5 * time.Second
	// cmTimeout bounds each half of a passive handshake: the request after
	// the transport connection, the confirmation after our accept.
	cmTimeout = 5 * time.Second
)

// eventLocked queues a CM event of this QP; q.mu is held, so the events of
// one QP queue in the order they happened.
func (q *qp) eventLocked(t rdma.CMEventType, priv []byte) {
	q.cm.put(rdma.CMEvent{Type: t, Context: q.ctx, PrivateData: priv})
}

// bindLocked starts connection c (an attempt: RTR).
func (q *qp) bindLocked(c *conn, active bool) {
	q.c = c
	q.active = active
	q.state = rdma.QPSRTR
}

// establishLocked makes c's connection RTS and reports it.
func (q *qp) establishLocked(c *conn, priv []byte) {
	q.state = rdma.QPSRTS
	c.w.setGrant(c.grantLocked())
	q.eventLocked(rdma.CMEstablished, priv)
}

// established: the handshake of c completed (priv: the peer's accept
// private data on the active side).
func (q *qp) established(c *conn, priv []byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.c != c || q.state != rdma.QPSRTR {
		return false
	}
	q.establishLocked(c, priv)
	return true
}

// attemptFailed ends the attempt c with event ev (and the peer's private
// data, for a consumer reject).
func (q *qp) attemptFailed(c *conn, ev rdma.CMEventType, priv []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.c != c || q.state != rdma.QPSRTR {
		return
	}
	q.endLocked(endAbort, 0)
	q.eventLocked(ev, priv)
}

// peerEnded: connection c ended on the peer's side, in order (orderly) or
// not. What already arrived was delivered by the wire first.
func (q *qp) peerEnded(c *conn, orderly bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.c != c {
		return
	}
	ev := rdma.CMBroken
	switch {
	case orderly:
		ev = rdma.CMDisconnected
	case q.state == rdma.QPSRTR && !q.active:
		ev = rdma.CMAcceptError
	case q.state == rdma.QPSRTR:
		return // the connecting goroutine reports the attempt's outcome
	}
	q.endLocked(endAbort, ev)
}

// peerViolated: the peer reports that it violated our access rights (a
// one-sided wire checks them at the initiator).
func (q *qp) peerViolated(c *conn) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.c != c {
		return
	}
	q.dev.async(rdma.AsyncEvent{Type: rdma.AsyncQPAccessErr, Context: q.ctx})
	q.endLocked(endAbort, rdma.CMBroken)
}

// endLocked ends the current connection or attempt: the QP goes to Error,
// the wire is shut down (how), every outstanding request is flushed to the
// CQs, and ev (unless 0) is queued.
func (q *qp) endLocked(how endHow, ev rdma.CMEventType) {
	q.teardownLocked(how)
	q.flushSendsLocked()
	q.flushRecvsLocked()
	if ev != 0 {
		q.eventLocked(ev, nil)
	}
}

// teardownLocked detaches and shuts down the connection. Once it returns
// no payload is being placed in our memory for it.
func (q *qp) teardownLocked(how endHow) {
	c := q.c
	q.c = nil
	if q.state != rdma.QPSInit || c != nil {
		q.state = rdma.QPSErr
	}
	if c == nil {
		return
	}
	c.dead.Store(true)
	if c.cancel != nil {
		c.cancel()
	}
	if c.w != nil {
		c.w.shutdown(how)
	}
	c.placeMu.Lock()
	c.placeMu.Unlock() //nolint:staticcheck // a barrier: wait for a placement in progress
	if q.srq != nil && !q.destroyed {
		q.dev.async(rdma.AsyncEvent{Type: rdma.AsyncQPLastWQE, Context: q.ctx})
	}
}

// flushSendsLocked completes every request not yet completed: one that
// failed with its error, every other as flushed (verbs: a request not
// completed when the QP enters Error is flushed, whether or not the wire
// carried it).
func (q *qp) flushSendsLocked() {
	for ; q.sqHead != q.sqTail; q.sqHead++ {
		e := &q.sq[q.sqHead&q.sqMask]
		if e.state == sqDone && e.status != rdma.WCSuccess {
			q.pushSend(e, e.status)
		} else {
			q.pushSend(e, rdma.WCWRFlushErr)
		}
	}
	q.sqExec = q.sqTail
}

// Disconnect ends the connection or attempt (rdma_disconnect).
func (q *qp) Disconnect(graceful bool) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.destroyed:
		return rdma.ErrClosed
	case q.state == rdma.QPSInit:
		return rdma.ErrState
	case q.state == rdma.QPSErr:
		return nil
	case q.state == rdma.QPSSQD && graceful:
		return nil // already draining
	case q.state == rdma.QPSRTS && graceful && q.sqHead != q.sqTail:
		q.state = rdma.QPSSQD
		go q.drainThenDisconnect(q.c)
		return nil
	}
	how := endDisc
	if q.state == rdma.QPSRTR {
		how = endAbort
	}
	q.endLocked(how, rdma.CMDisconnected)
	return nil
}

// drainThenDisconnect lets the send queue of c finish (at most
// drainTimeout), then disconnects. It sleeps on the bell and drains the
// inbound queue, so shared-memory acknowledgements progress without the
// consumer; completions ring the bell when the queue empties in SQD.
func (q *qp) drainThenDisconnect(c *conn) {
	d := q.dev
	deadline := time.Now().Add(drainTimeout)
	for {
		if !d.bellEnter() {
			return
		}
		seq := d.bell.ld32(bellOffSeq)
		d.drainInbound()
		q.mu.Lock()
		if q.c != c || q.state != rdma.QPSSQD {
			q.mu.Unlock()
			d.bellLeave()
			return
		}
		left := time.Until(deadline)
		if q.sqHead == q.sqTail || left <= 0 {
			q.endLocked(endDisc, rdma.CMDisconnected)
			q.mu.Unlock()
			d.bellLeave()
			return
		}
		q.mu.Unlock()
		d.sleepOnBell(seq, min(left, 100*time.Millisecond))
		d.bellLeave()
	}
}

// Reset returns a QP in Error to Init (ibv_modify_qp to RESET, then INIT).
func (q *qp) Reset() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.destroyed:
		return rdma.ErrClosed
	case q.state == rdma.QPSInit:
		return nil
	case q.state != rdma.QPSErr:
		return rdma.ErrState
	}
	q.flushRecvsLocked()
	q.state = rdma.QPSInit
	q.local, q.remote = netip.AddrPort{}, netip.AddrPort{}
	return nil
}

// Destroy frees the QP; a connection ends abruptly for us (nothing more
// completes) and in order for the peer (it gets CMDisconnected).
func (q *qp) Destroy() error {
	q.mu.Lock()
	if q.destroyed {
		q.mu.Unlock()
		return rdma.ErrClosed
	}
	q.destroyed = true
	how := endAbort
	if q.state == rdma.QPSRTS || q.state == rdma.QPSSQD {
		how = endDisc
	}
	q.teardownLocked(how)
	q.state = rdma.QPSReset
	q.sqHead, q.sqExec = q.sqTail, q.sqTail
	q.rqHead = q.rqTail
	q.srqHeld = false
	q.mu.Unlock()
	if q.srq != nil {
		q.srq.forget(q)
	}
	d := q.dev
	d.mu.Lock()
	d.qps[q.slot].Store(nil)
	d.nqp--
	q.release()
	d.mu.Unlock()
	return nil
}

// Connect starts an active connection (rdma_connect).
func (q *qp) Connect(addr netip.AddrPort, serviceID uint64, priv []byte, timeout time.Duration) error {
	if len(priv) > maxPrivData {
		return rdma.ErrInvalid
	}
	if timeout <= 0 {
		timeout = defaultConnectTimeout
	}
	a := addr.Addr().Unmap()
	useShm := q.dev.tr == trShm || q.dev.tr == trAuto && q.dev.shmReachable(a, serviceID)
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.destroyed:
		return rdma.ErrClosed
	case q.state != rdma.QPSInit:
		return rdma.ErrState
	}
	p := append([]byte(nil), priv...)
	if useShm {
		return q.connectShmLocked(a, serviceID, p, timeout)
	}
	return q.connectTCPLocked(a, serviceID, p, timeout)
}

// protocolError: the peer of c broke the protocol; the connection ends.
func (q *qp) protocolError(c *conn) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.c == c {
		q.endLocked(endAbort, rdma.CMBroken)
	}
}
