package soft

// Issuing send-queue requests and completing them in post order.

import (
	"time"

	"godat/rdma"
)

// What issueOne asks of issueLocked.
const (
	actNext   = iota // issued (or failed): go on with the next request
	actIO            // issued, and the wire has I/O to flush
	actWait          // must wait: retried when the wire or a grant calls back
	actWaitIO        // must wait, and the wire has I/O to flush (a NEED)
	actAccess        // a one-sided access, done by issueLocked without the lock
	actDefer         // a large RDMA read on a message wire: left to the next Poll
)

// issueLocked issues queued requests in order until one must wait (no
// grant, no room on the wire, a fence, the read limit). fresh says that the
// newest request was checked by the post that calls us, so its segments
// need no second look. It reports whether the wire has I/O to flush.
//
// A one-sided access (a process_vm_* call whose cost grows with the
// transfer) runs with q.mu released and q.issuing set, so that no other
// thread issues past it meanwhile: requests posted then are issued by this
// loop when the access is done. RDMA writes stay visible before any later
// send of the QP, and a read's data is in place before any later request
// issues (fenced or not). An access of asyncAccessMin bytes or more, and
// on a message wire (TCP) the request of such an RDMA read, is left to the
// device's next Poll or its watcher (issueAsync), so that a post returns in
// bounded time.
func (q *qp) issueLocked(fresh bool) (flush bool) {
	c := q.c
	if c == nil || q.issuing || q.state != rdma.QPSRTS && q.state != rdma.QPSSQD {
		return false
	}
issue:
	for q.sqExec != q.sqTail {
		e := &q.sq[q.sqExec&q.sqMask]
		if e.state == sqDone { // failed at post (inline copy)
			q.sqExec++
			continue
		}
		switch q.issueOne(c, e, fresh && q.sqExec+1 == q.sqTail) {
		case actWait:
			break issue
		case actWaitIO:
			flush = true
			break issue
		case actIO:
			flush = true
		case actDefer:
			q.issuing = true
			q.deferIssueLocked()
			break issue
		case actAccess:
			op, L, raddr, rkey := e.op, e.length, e.raddr, e.rkey
			if L >= asyncAccessMin && !q.asyncIssue {
				// A post returns in bounded time whatever the size: a large
				// access, and what is queued behind it, is issued by the
				// next Poll of the device, or by its watcher; q.issuing
				// keeps the order meanwhile.
				q.issuing = true
				q.deferIssueLocked()
				break issue
			}
			n := copy(q.issueSGL[:], e.sgl[:e.nsge])
			q.issuing = true
			q.mu.Unlock()
			st := c.accessUnlocked(op, q.issueSGL[:n], L, raddr, rkey)
			q.mu.Lock()
			q.issuing = false
			if q.c != c {
				return flush // torn down meanwhile: the request was flushed
			}
			if st != rdma.WCSuccess {
				L = 0
			}
			e.finish(st, L)
			if st == rdma.WCRemAccessErr {
				// The target refused (key, bounds, right, PD, or its memory
				// is gone): the connection breaks (verbs QP access error)
				// and the target raises its async event.
				q.sqExec++
				q.fatalLocked(endAccess)
				return flush
			}
			if e.flags&rdma.SendSignaled != 0 && q.sqHead != q.sqExec {
				q.watchVerdictsLocked(c)
			}
		}
		if q.c != c { // an access violation ended it
			return flush
		}
		q.sqExec++
	}
	// Verdicts that came without a notification, looked at now and then:
	// the word is the peer's, and reading it on every post would cost a
	// cache miss each time. Looked at once the request is on the wire, so
	// that the miss is not on its way (what they complete is completed by
	// the caller, after us).
	if out := q.sqTail - q.sqHead; out&15 == 0 || out >= uint64(q.cap.MaxSendWR)/2 {
		q.readVerdictsLocked(c)
	}
	return flush
}

// watchVerdictsLocked looks at the peer's verdicts for a signalled access
// that finished behind requests still waiting for theirs. Those came
// unsignalled, so their verdicts come unannounced, and the access itself
// sends the peer nothing that could announce them: without a look, and a
// kick from the peer when the count moves (or from ourselves, if it moved
// already), the access's completion would wait for the sender's next
// post. (A target that neither polls nor posts never kicks on its own.)
func (q *qp) watchVerdictsLocked(c *conn) {
	q.readVerdictsLocked(c)
	if after(c.acked, c.peerAcked) {
		c.w.watchAcks(c.peerAcked)
	}
}

// asyncAccessMin is the size from which a one-sided access leaves the
// posting thread (issueLocked). Below it the access costs about what the
// post does anyway.
const asyncAccessMin = 64 << 10

// deferredIssueFallback is the watcher's tick (watchDeferred): a
// deferred access no Poll took within one to two ticks is issued by the
// watcher, so that a consumer that posts and then neither polls nor waits
// on the IA still sees its transfer happen. A tick wakes a thread, which
// may take the CPU from a polling consumer: a millisecond keeps that rare
// (and the runtime's timers are about that fine when every thread is idle
// anyway).
var deferredIssueFallback = time.Millisecond

// deferredWatchIdle is how many ticks the watcher waits with nothing
// listed before it ends: a consumer posting large accesses one after the
// other does not start a goroutine (a thread wake-up) per post.
const deferredWatchIdle = 16

// deferredWatchMax is the longest tick: while a consumer keeps polling
// (its Polls take the deferred accesses), the tick doubles up to it, so
// that the watcher seldom takes the CPU from it (a tick a millisecond put
// 30-70 µs on the 99th percentile of a 4 MiB post, 3 µs without). A
// consumer that stops polling right after a post waits two such ticks at
// most (the first still sees its last Poll).
const deferredWatchMax = 16 * time.Millisecond

// deferIssueLocked leaves the send queue, from a large access on, to the
// next Poll of the device (the consumer's own thread, which is polling
// for the completion anyway, as UCX and libfabric's manual progress do
// their transfers), or to the device's watcher if no Poll comes. Neither
// a goroutine nor a timer per post: each would wake a thread per post,
// which takes the CPU from the polling consumer (a timer armed per post
// put 25 µs on the 99th percentile of a post). q.issuing stays set until
// issueAsync runs, so q is never listed twice (and issueListed is a
// guard only).
func (q *qp) deferIssueLocked() {
	d := q.dev
	d.deferMu.Lock()
	if !q.issueListed {
		q.issueListed = true
		d.deferred = append(d.deferred, q)
		d.ndeferred.Store(int32(len(d.deferred)))
		d.bump()
	}
	if !d.deferWatching {
		d.deferWatching = true
		go d.watchDeferred()
	}
	d.deferMu.Unlock()
}

// popDeferred takes the last listed QP off the list (nil: none left).
func (d *device) popDeferred() *qp {
	d.deferMu.Lock()
	defer d.deferMu.Unlock()
	k := len(d.deferred)
	if k == 0 {
		return nil
	}
	q := d.deferred[k-1]
	d.deferred[k-1] = nil
	d.deferred = d.deferred[:k-1]
	d.ndeferred.Store(int32(k - 1))
	q.issueListed = false
	return q
}

// issueDeferred issues the sends of at most n listed QPs: those listed
// when its caller looked; QPs listed meanwhile wait for the next look, so
// that a consumer posting from another thread cannot keep one Poll busy
// for ever.
func (d *device) issueDeferred(n int) {
	for ; n > 0; n-- {
		q := d.popDeferred()
		if q == nil {
			return
		}
		q.issueAsync()
	}
}

// runDeferred is Poll's share (when ndeferred is not 0).
func (d *device) runDeferred() {
	d.deferPolled.Store(true)
	d.issueDeferred(int(d.ndeferred.Load()))
}

// watchDeferred is the fallback for deferred accesses: every tick it
// issues those still listed, unless a Poll took some since the last tick
// (a consumer is polling: its Polls take them, and the tick doubles); it
// ends when the list has been empty for deferredWatchIdle ticks.
func (d *device) watchDeferred() {
	idle, tick := 0, d.deferTick
	for {
		time.Sleep(tick)
		polled := d.deferPolled.Swap(false)
		if polled {
			tick = min(2*tick, max(deferredWatchMax, d.deferTick))
		} else {
			tick = d.deferTick
		}
		d.deferMu.Lock()
		n := len(d.deferred)
		if n == 0 {
			if idle++; idle >= deferredWatchIdle {
				d.deferWatching = false
				d.deferMu.Unlock()
				return
			}
		} else {
			idle = 0
		}
		d.deferMu.Unlock()
		if !polled {
			d.issueDeferred(n)
		}
	}
}

// issueAsync issues the send queue outside the post that deferred it
// (issueDeferred: a Poll or the device's watcher), where large accesses run
// in place (the posting thread set q.issuing and left them to us); then
// the requests behind them go as a post would issue them. A teardown
// meanwhile flushed the request: the current connection, if any, is
// issued anyway, since posts made while the flag was set left their
// requests queued.
func (q *qp) issueAsync() {
	q.mu.Lock()
	q.issuing = false
	q.asyncIssue = true
	flush := q.issueLocked(false)
	q.asyncIssue = false
	q.completeSendsLocked()
	var w wire
	if flush && q.c != nil {
		w = q.c.w
	}
	q.mu.Unlock()
	if w != nil {
		w.flush()
	}
}

// accessUnlocked performs a one-sided access under the teardown barrier.
func (c *conn) accessUnlocked(op rdma.WROpcode, sgl []rdma.SGE, L, raddr uint64, rkey uint32) rdma.WCStatus {
	c.placeMu.RLock()
	defer c.placeMu.RUnlock()
	if c.dead.Load() {
		return rdma.WCWRFlushErr
	}
	return c.w.access(op, sgl, L, raddr, rkey)
}

func (e *sqe) finish(st rdma.WCStatus, n uint64) {
	e.state, e.status, e.length = sqDone, st, n
}

// issueOne issues one request on c.
func (q *qp) issueOne(c *conn, e *sqe, fresh bool) int {
	sgl := e.sgl[:e.nsge]
	var L uint64
	switch {
	case e.flags&rdma.SendInline != 0:
		L = e.length
	case fresh:
		for i := range sgl {
			L += uint64(sgl[i].Length)
		}
	default:
		var ok bool
		if L, ok = q.dev.sglLen(&q.kc, q.pd.id, sgl, localNeed(e.op)); !ok {
			e.finish(rdma.WCLocProtErr, 0)
			return actNext
		}
	}
	if L > maxMsgSize {
		e.finish(rdma.WCLocLenErr, 0)
		return actNext
	}
	if e.flags&rdma.SendFence != 0 && c.readsOut() > 0 {
		e.waitOn = waitFence
		return actWait
	}
	w := c.w
	switch e.op {
	case rdma.WRSend:
		if g := w.peerGrant(c.sends); !after(g, c.sends) {
			// An RNR wait without limit: the send stays queued; ask once
			// per grant seen.
			if !c.asked || c.askedAt != g {
				c.asked, c.askedAt = true, g
				w.askGrant(g)
				return actWaitIO
			}
			return actWait
		}
		h := &q.hdr // a scratch header: the wire copies it (no allocation)
		*h = hdr{typ: msgSend, flags: flAckReq, len: L}
		if e.flags&rdma.SendSolicited != 0 {
			h.flags |= flSolicited
		}
		h.flags |= q.notifyFlag(e)
		return q.issued(c, e, w.send(h, sgl), L)
	case rdma.WRRDMARead:
		if c.readsOut() >= q.initDepth {
			return actWait
		}
	}
	if w.oneSided() {
		e.length = L
		return actAccess
	}
	h := &q.hdr
	*h = hdr{typ: msgWrite, flags: q.notifyFlag(e), aux: e.rkey, addr: e.raddr, len: L}
	if e.op == rdma.WRRDMARead {
		if L >= asyncAccessMin && !q.asyncIssue {
			// As a large access on a one-sided wire: its request goes out
			// with the next Poll (or the watcher), not in the post. The
			// post's sendmsg, small as the request is, ran the kernel's
			// leftovers of the previous large transfer (freeing its
			// buffers): apppat, a 4 MiB read post 12-15 us median against
			// 4-5 us for 4 KiB.
			return actDefer
		}
		h.flags = 0
		h.typ = msgReadReq
		if w.send(h, nil) == issuedFull {
			return actWait
		}
		c.reads[c.rdTail%maxRdAtom] = q.sqExec
		c.rdTail++
		e.state, e.waitOn, e.length = sqIssued, waitRead, L
		return actIO
	}
	return q.issued(c, e, w.send(h, sgl), L)
}

// notifyFlag asks the responder to tell us of its verdict at once when
// someone waits for it: a signalled request's completion, or room in a
// send queue half full. Other verdicts ride on whatever comes back next
// (or a sender reads them when it looks, on shared memory).
func (q *qp) notifyFlag(e *sqe) uint8 {
	if e.flags&rdma.SendSignaled != 0 || q.sqTail-q.sqHead >= uint64(q.cap.MaxSendWR)/2 {
		return flNotify
	}
	return 0
}

// issued records what the wire did with a send or write of L bytes.
func (q *qp) issued(c *conn, e *sqe, r issued, L uint64) int {
	switch r {
	case issuedFull:
		return actWait
	case issuedFault:
		e.finish(rdma.WCLocProtErr, 0)
		return actNext
	}
	if e.op == rdma.WRSend {
		c.sends++
	}
	e.length = L
	c.acked++
	e.state, e.waitOn, e.seq = sqIssued, waitAck, c.acked
	return actIO
}

// doneLocked reports (and records) whether an issued request finished.
func (q *qp) doneLocked(e *sqe) bool {
	if e.state == sqDone {
		return true
	}
	c := q.c
	if c == nil || e.state != sqIssued {
		return false
	}
	if e.waitOn == waitAck && !after(e.seq, c.peerAcked) {
		e.finish(rdma.WCSuccess, e.length)
	}
	return e.state == sqDone
}

// completeSendsLocked pushes finished requests in post order: successes
// only when signalled, errors always.
func (q *qp) completeSendsLocked() { q.completeLocked(false) }

// fatalLocked ends the connection after a request failed in a way that
// breaks it: the requests before the failed one complete as they finished,
// the failed one with its error, and every later one is flushed, even one
// the wire already carried (verbs: the QP is in Error from that error on).
func (q *qp) fatalLocked(how endHow) {
	q.completeLocked(true)
	q.endLocked(how, rdma.CMBroken)
}

func (q *qp) completeLocked(stopAtError bool) {
	for q.sqHead != q.sqExec {
		e := &q.sq[q.sqHead&q.sqMask]
		if !q.doneLocked(e) {
			break
		}
		if e.status != rdma.WCSuccess || e.flags&rdma.SendSignaled != 0 {
			q.pushSend(e, e.status)
		}
		q.sqHead++
		if stopAtError && e.status != rdma.WCSuccess {
			return
		}
	}
	if q.state == rdma.QPSSQD && q.sqHead == q.sqTail {
		q.dev.ringSelf() // the graceful disconnect sleeps on the bell
	}
}

// wcOpcode is the completion opcode of a send-queue request.
func wcOpcode(op rdma.WROpcode) rdma.WCOpcode {
	switch op {
	case rdma.WRRDMAWrite:
		return rdma.WCRDMAWrite
	case rdma.WRRDMARead:
		return rdma.WCRDMARead
	}
	return rdma.WCSend
}

func (q *qp) pushSend(e *sqe, st rdma.WCStatus) {
	wc := &q.wc
	*wc = rdma.WC{WRID: e.wrid, QPNum: q.Num(), Status: st, Opcode: wcOpcode(e.op)}
	if st == rdma.WCSuccess {
		wc.ByteLen = uint32(e.length)
	}
	q.scq.push(wc)
}

// ---- callbacks from the wire ----

// kick: something an issue waited for may be there now (a grant, ring
// room); retry. It returns the wire to flush.
func (q *qp) kickLocked(c *conn) bool {
	if q.c != c {
		return false
	}
	flush := q.issueLocked(false)
	q.completeSendsLocked()
	return flush
}

// readVerdictsLocked takes the peer's verdict count as the wire shows it
// to a sender that looks (shared memory: its word, unless a NAK it covers
// is not applied yet); a wire that tells verdicts in messages shows none.
func (q *qp) readVerdictsLocked(c *conn) {
	if n, ok := c.w.ackedNow(); ok {
		q.ackedLocked(c, n)
	}
}

// acked: the peer acknowledged requests up to n (never past what we
// numbered).
func (q *qp) ackedLocked(c *conn, n uint32) {
	if after(n, c.peerAcked) && !after(n, c.acked) {
		c.peerAcked = n
	}
}

// naked: the peer refused acknowledged request k with st. A remote access
// violation ends the connection.
func (q *qp) nakedLocked(c *conn, k uint32, st rdma.WCStatus) {
	for p := q.sqHead; p != q.sqExec; p++ {
		e := &q.sq[p&q.sqMask]
		if e.state == sqIssued && e.waitOn == waitAck && e.seq == k {
			e.finish(st, 0)
			break
		}
	}
	if after(k, c.peerAcked) {
		c.peerAcked = k
	}
	if st == rdma.WCRemAccessErr || st == rdma.WCLocProtErr {
		q.fatalLocked(endAbort) // the peer ends it too
		return
	}
	q.completeSendsLocked()
}

// kick retries what the send queue of c waits for (a grant, ring room).
func (q *qp) kick(c *conn) {
	q.mu.Lock()
	flush := q.kickLocked(c)
	q.mu.Unlock()
	if flush {
		c.w.flush()
	}
}

// verdict takes the peer's acknowledgement (msgAck: requests up to num) or
// NAK (msgNak: request num failed with st); it reports whether the
// connection goes on. Acknowledging a request never asked about is a
// protocol violation.
func (q *qp) verdict(c *conn, typ uint8, num uint32, st rdma.WCStatus) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.c != c {
		return false
	}
	if after(num, c.acked) {
		q.endLocked(endAbort, rdma.CMBroken)
		return false
	}
	if typ == msgAck {
		q.ackedLocked(c, num)
		q.completeSendsLocked()
	} else {
		q.nakedLocked(c, num, st)
	}
	return q.c == c
}

// wireFault: the wire could not read our memory for the acknowledged
// request numbered seq after its header left: the request fails as a
// local protection error and the connection ends (the stream cannot go on
// without it).
func (q *qp) wireFault(c *conn, seq uint32) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.c != c {
		return
	}
	for p := q.sqHead; p != q.sqExec; p++ {
		e := &q.sq[p&q.sqMask]
		if e.state == sqIssued && e.waitOn == waitAck && e.seq == seq {
			e.finish(rdma.WCLocProtErr, 0)
			break
		}
	}
	q.fatalLocked(endAbort)
}
