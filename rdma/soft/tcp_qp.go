package soft

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"godat/rdma"
)

// Completion rules of a TCP queue pair:
//   - A send of up to inlineMax bytes completes once its last byte is handed
//     to the kernel (its buffer is reusable; delivery is not confirmed), as
//     an inline send on shared memory does. A larger send completes when
//     the receiver has placed it, with the receiver's verdict:
//     StatusRemoteResponder when the receive was too small or bad. A send
//     leaves only against a grant, so it always lands in a posted receive.
//   - An RDMA write completes when the target acknowledges it: success once
//     the bytes are in place, StatusRemoteAccess when the target refused the
//     key, bounds or rights (nothing written) or faulted on the region.
//   - An RDMA read completes when the response is in place, with the
//     target's verdict.
//   - Send-queue completions are pushed in post order; a success only with
//     SendSignaled, errors always. Receives complete in order.
//   - With a shared receive queue, an arriving message takes the oldest
//     receive of the SRQ when it is placed. The QP grants its peer
//     srqWindow messages beyond those it has completed; a message that finds
//     the SRQ empty waits at the head of the connection (nothing behind it
//     is read) until the SRQ gets a receive: an RNR wait without limit.
//   - The reader goroutine marks work done and rings the doorbell;
//     completions are pushed only by Progress (and by the flush of a
//     teardown), with the QP lock held: sinks must not call back into it.

type tstate uint8

// srqWindow is how many messages a QP that takes its receives from an SRQ
// lets its peer send beyond those it has completed.
const srqWindow = 64

const (
	tIdle tstate = iota
	tConnecting
	tAccepting
	tConnected
	tDisconnecting
	tDisconnected
	tDestroyed
)

type tsendEnt struct {
	op     rdma.Op
	flags  rdma.SendFlags
	done   bool
	acked  bool // completes on the peer's ack (writes, large sends)
	status rdma.Status
	nsge   int
	seq    uint32 // number among the acked requests, or among eager sends
	cookie uint64
	raddr  uint64
	rkey   uint32
	length uint64
	sgl    [maxSGE]rdma.SGE
}

type trecvEnt struct {
	cookie    uint64
	nsge      int
	sgl       [maxSGE]rdma.SGE
	done      bool
	solicited bool
	status    rdma.Status
	length    uint64
}

// tqp is a queue pair over one TCP connection.
type tqp struct {
	dev         *tcpDevice
	cfg         rdma.QPConfig
	self        rdma.QP // what completions and events name (an auto QP wraps us)
	tab         shm
	maxReadsOut int

	mu     sync.Mutex
	state  tstate
	epoch  uint64 // bumped at every teardown
	c      *tconn
	cancel context.CancelFunc // the dial in progress

	sq                   []tsendEnt
	sqMask, maxSend      uint64
	sqHead, sqExec, sqTl uint64
	sends                uint32 // SEND frames issued on this connection (grants)
	eager                uint32 // sends that complete when written
	writes               uint32 // requests that complete on the peer's ack
	rdq                  [maxReadsPerQ]uint64
	rdHead, rdTl         uint32
	readsOut             int
	asked                bool
	askedAt              uint32

	rq                 []trecvEnt
	rqMask, maxRecv    uint64
	rqHead, rqRd, rqTl uint64 // rqRd: next receive the reader fills
	recvBase           uint64

	// With a shared receive queue, rq only tracks the receives taken from
	// it until their completions are pushed.
	srq   rdma.SRQ
	srqPD uint32

	maxSendSGE, maxRecvSGE int

	comp          rdma.Completion
	local, remote netip.AddrPort
}

func (d *tcpDevice) newTQP(cfg rdma.QPConfig) (*tqp, error) {
	if cfg.SendCQ == nil || cfg.RecvCQ == nil {
		return nil, rdma.ErrInvalid
	}
	if cfg.MaxSend > maxQPWR || cfg.MaxSendSGE > maxSGE ||
		cfg.SRQ == nil && (cfg.MaxRecv > maxQPWR || cfg.MaxRecvSGE > maxSGE) {
		return nil, rdma.ErrInvalid
	}
	q := &tqp{dev: d, cfg: cfg, tab: d.seg}
	q.self = q
	q.maxSend = clampWR(cfg.MaxSend)
	q.maxRecv = clampWR(cfg.MaxRecv)
	if cfg.SRQ != nil {
		q.srq, q.srqPD = cfg.SRQ, cfg.SRQ.PD()
		q.maxRecv = srqWindow
	}
	q.sq = make([]tsendEnt, pow2(q.maxSend))
	q.sqMask = uint64(len(q.sq) - 1)
	q.rq = make([]trecvEnt, pow2(q.maxRecv))
	q.rqMask = uint64(len(q.rq) - 1)
	q.maxSendSGE = clampSGE(cfg.MaxSendSGE)
	q.maxRecvSGE = clampSGE(cfg.MaxRecvSGE)
	q.maxReadsOut = cfg.MaxReadsOut
	if q.maxReadsOut <= 0 || q.maxReadsOut > maxReadsPerQ {
		q.maxReadsOut = maxReadsPerQ
	}
	d.tmu.Lock()
	defer d.tmu.Unlock()
	if d.closed {
		return nil, rdma.ErrClosed
	}
	if len(d.tqps) >= maxQPs {
		return nil, rdma.ErrNoResources
	}
	d.tqps[q] = struct{}{}
	return q, nil
}

func (q *tqp) LocalAddr() netip.AddrPort {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.local.IsValid() {
		return netip.AddrPortFrom(q.dev.addr, 0)
	}
	return q.local
}

func (q *tqp) RemoteAddr() netip.AddrPort {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.remote
}

// ---- posting ----

func (q *tqp) PostSend(wr *rdma.SendWR) error {
	if wr == nil || len(wr.SGL) > q.maxSendSGE {
		return rdma.ErrInvalid
	}
	if wr.Op != rdma.OpSend && wr.Op != rdma.OpWrite && wr.Op != rdma.OpRead {
		return rdma.ErrInvalid
	}
	if err := sglVerify(q.tab, q.cfg.PD, wr.SGL, localNeed(wr.Op)); err != nil {
		return err
	}
	q.mu.Lock()
	if q.state != tConnected {
		err := rdma.ErrState
		if q.state == tDestroyed {
			err = rdma.ErrClosed
		}
		q.mu.Unlock()
		return err
	}
	if q.sqTl-q.sqHead >= q.maxSend {
		q.mu.Unlock()
		return rdma.ErrQueueFull
	}
	e := &q.sq[q.sqTl&q.sqMask]
	e.op, e.flags, e.cookie = wr.Op, wr.Flags, wr.Cookie
	e.raddr, e.rkey = wr.RemoteAddr, wr.RKey
	e.nsge = copy(e.sgl[:], wr.SGL)
	e.done, e.acked, e.status, e.length, e.seq = false, false, rdma.StatusSuccess, 0, 0
	q.sqTl++
	enq := q.execSends()
	failed := e.done // a local error: complete it without waiting for I/O
	c := q.c
	q.mu.Unlock()
	if enq {
		c.flush()
	}
	if failed {
		q.dev.db.Ring()
	}
	return nil
}

func (q *tqp) PostRecv(wr *rdma.RecvWR) error {
	if wr == nil || len(wr.SGL) > q.maxRecvSGE {
		return rdma.ErrInvalid
	}
	if err := sglVerify(q.tab, q.cfg.PD, wr.SGL, rdma.AccessLocalWrite); err != nil {
		return err
	}
	q.mu.Lock()
	if q.state == tDestroyed {
		q.mu.Unlock()
		return rdma.ErrClosed
	}
	if q.srq != nil {
		q.mu.Unlock()
		return rdma.ErrState
	}
	if q.rqTl-q.rqHead >= q.maxRecv {
		q.mu.Unlock()
		return rdma.ErrQueueFull
	}
	e := &q.rq[q.rqTl&q.rqMask]
	e.cookie = wr.Cookie
	e.nsge = copy(e.sgl[:], wr.SGL)
	e.done, e.solicited, e.status, e.length = false, false, rdma.StatusSuccess, 0
	q.rqTl++
	c := q.c
	if c != nil {
		c.grant.Store(uint32(q.rqTl - q.recvBase))
	}
	q.mu.Unlock()
	if c != nil && c.starved.Load() {
		c.flush() // the peer waits for this grant
	}
	return nil
}

// localNeed is the access a request needs on its local segments.
func localNeed(op rdma.Op) rdma.Access {
	if op == rdma.OpRead {
		return rdma.AccessLocalWrite
	}
	return rdma.AccessLocalRead
}

// Idle reports whether no receive and no send request is outstanding.
func (q *tqp) Idle() (recv, send bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.rqHead == q.rqTl, q.sqHead == q.sqTl
}

// Reconfigure changes the protection domain and queue limits of an idle QP;
// posted receives are kept.
func (q *tqp) Reconfigure(pd uint32, maxSend, maxRecv, maxSendSGE, maxRecvSGE int) error {
	if maxSend > maxQPWR || maxRecv > maxQPWR || maxSendSGE > maxSGE || maxRecvSGE > maxSGE {
		return rdma.ErrInvalid
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.state == tDestroyed:
		return rdma.ErrClosed
	case q.state != tIdle || q.sqHead != q.sqTl:
		return rdma.ErrState
	}
	ms, mr := clampWR(maxSend), clampWR(maxRecv)
	if q.srq != nil {
		mr = q.maxRecv // receives come from the SRQ
	}
	posted := q.rqTl - q.rqHead
	if posted > mr {
		return rdma.ErrInvalid
	}
	if ms != q.maxSend {
		q.sq = make([]tsendEnt, pow2(ms))
		q.sqMask = uint64(len(q.sq) - 1)
		q.sqHead, q.sqExec, q.sqTl = 0, 0, 0
		q.maxSend = ms
	}
	if mr != q.maxRecv {
		rq := make([]trecvEnt, pow2(mr))
		for i := uint64(0); i < posted; i++ {
			rq[i] = q.rq[(q.rqHead+i)&q.rqMask]
		}
		q.rq, q.rqMask = rq, uint64(len(rq)-1)
		q.rqHead, q.rqRd, q.rqTl = 0, 0, posted
		q.maxRecv = mr
	}
	q.maxSendSGE, q.maxRecvSGE = clampSGE(maxSendSGE), clampSGE(maxRecvSGE)
	q.cfg.PD = pd
	return nil
}

// ---- issuing ----

// execSends issues queued requests in order until one must wait (no grant,
// too many reads, a fence). It reports whether it queued frames; the
// caller flushes after dropping the QP lock.
func (q *tqp) execSends() bool {
	c := q.c
	if c == nil {
		return false
	}
	enq := false
	c.wmu.Lock()
	for q.sqExec != q.sqTl {
		e := &q.sq[q.sqExec&q.sqMask]
		queued, wait := q.issueLocked(c, e)
		if wait {
			break
		}
		enq = enq || queued
		q.sqExec++
	}
	enq = enq || c.needAsk
	c.wmu.Unlock()
	return enq
}

// issueLocked turns one request into a frame (c.wmu held).
func (q *tqp) issueLocked(c *tconn, e *tsendEnt) (queued, wait bool) {
	sgl := e.sgl[:e.nsge]
	L, ok := sglLength(q.tab, q.cfg.PD, sgl, localNeed(e.op))
	switch {
	case !ok:
		e.done, e.status = true, rdma.StatusLocalProtection
		return false, false
	case L > maxMsgSize:
		e.done, e.status = true, rdma.StatusLocalLength
		return false, false
	case e.flags&rdma.SendFence != 0 && q.readsOut > 0:
		return false, true
	}
	it := c.newItemLocked(0)
	switch e.op {
	case rdma.OpSend:
		g := c.peerGrant.Load()
		if !after(g, q.sends) {
			if !q.asked || q.askedAt != g {
				q.asked, q.askedAt = true, g
				c.needAsk, c.askAt = true, g
			}
			c.freeItemLocked(it)
			return false, true
		}
		q.sends++
		it.h.typ = frSend
		if e.flags&rdma.SendSolicited != 0 {
			it.h.flags = flSolicited
		}
		if L > inlineMax {
			q.writes++
			e.seq, e.acked = q.writes, true
			it.h.flags |= flAckReq
		} else {
			q.eager++
			e.seq = q.eager
			it.send = true
		}
	case rdma.OpWrite:
		q.writes++
		e.seq, e.acked = q.writes, true
		it.h.typ = frWrite
		it.h.aux, it.h.addr = e.rkey, e.raddr
	case rdma.OpRead:
		if q.readsOut >= q.maxReadsOut {
			c.freeItemLocked(it)
			return false, true
		}
		q.rdq[q.rdTl%maxReadsPerQ] = q.sqExec
		q.rdTl++
		q.readsOut++
		it.h.typ = frReadReq
		it.h.aux, it.h.addr, it.h.len = e.rkey, e.raddr, L
	}
	e.length = L
	if e.op != rdma.OpRead {
		it.h.len = L
		for i := range sgl {
			if sgl[i].Length > 0 {
				it.pay[it.npay] = iov{Base: uintptr(sgl[i].Addr), Len: int(sgl[i].Length)}
				it.npay++
			}
		}
		it.payLen = int(L)
		it.total = hdrSize + int(L)
	}
	c.items = append(c.items, it)
	return true, false
}

// ---- progress ----

// Progress issues requests that waited and pushes finished work; it returns
// the number of completions pushed. Cheap when idle.
func (q *tqp) Progress() int {
	q.mu.Lock()
	if q.state != tConnected && q.state != tDisconnecting {
		q.mu.Unlock()
		return 0
	}
	enq := false
	if q.sqExec != q.sqTl {
		enq = q.execSends()
	}
	n := q.completeRecvs() + q.completeSends()
	c := q.c
	q.mu.Unlock()
	if enq || q.srq != nil && c.starved.Load() {
		c.flush()
	}
	return n
}

// finishedLocked reports (and records) whether the transport is done with
// an issued request.
func (q *tqp) finishedLocked(c *tconn, e *tsendEnt) bool {
	if e.done || c == nil {
		return e.done
	}
	switch {
	case e.acked:
		e.done = !after(e.seq, c.peerAck.Load())
	case e.op == rdma.OpSend:
		e.done = !after(e.seq, c.sentSends.Load())
	}
	return e.done
}

func (q *tqp) completeSends() int {
	n := 0
	for q.sqHead != q.sqExec {
		e := &q.sq[q.sqHead&q.sqMask]
		if !q.finishedLocked(q.c, e) {
			break
		}
		if e.status != rdma.StatusSuccess || e.flags&rdma.SendSignaled != 0 {
			q.pushSend(e, e.status)
			n++
		}
		q.sqHead++
	}
	return n
}

func (q *tqp) completeRecvs() int {
	n := 0
	for q.rqHead != q.rqRd {
		r := &q.rq[q.rqHead&q.rqMask]
		if !r.done {
			break
		}
		q.pushRecv(r, r.status)
		q.rqHead++
		n++
	}
	if n > 0 && q.srq != nil && q.c != nil {
		q.c.grant.Store(q.srqGrant())
	}
	return n
}

// srqGrant is the grant of a QP on an SRQ: srqWindow messages beyond the
// ones completed on this connection.
func (q *tqp) srqGrant() uint32 { return uint32(srqWindow + q.rqHead - q.recvBase) }

func (q *tqp) pushSend(e *tsendEnt, s rdma.Status) {
	cp := &q.comp
	cp.QP, cp.Op, cp.Status, cp.Cookie, cp.Solicited = q.self, e.op, s, e.cookie, false
	cp.Length = 0
	if s == rdma.StatusSuccess {
		cp.Length = e.length
	}
	q.cfg.SendCQ.PushCompletion(cp)
}

func (q *tqp) pushRecv(r *trecvEnt, s rdma.Status) {
	cp := &q.comp
	cp.QP, cp.Op, cp.Status, cp.Cookie = q.self, rdma.OpRecv, s, r.cookie
	cp.Solicited = s == rdma.StatusSuccess && r.solicited
	cp.Length = 0
	if s == rdma.StatusSuccess {
		cp.Length = r.length
	}
	q.cfg.RecvCQ.PushCompletion(cp)
}

// ---- the reader's side ----

// checkRecv validates a receive for a message of L bytes (an SRQ's
// receives against the SRQ's protection domain).
func (q *tqp) checkRecv(r *trecvEnt, L uint64) rdma.Status {
	pd := q.cfg.PD
	if q.srq != nil {
		pd = q.srqPD
	}
	return recvStatus(q.tab, pd, r.sgl[:r.nsge], L)
}

// onSend places an arriving message in the next posted receive.
func (q *tqp) onSend(c *tconn, h *fhdr) error {
	q.mu.Lock()
	if q.c != c {
		q.mu.Unlock()
		return errDead
	}
	if q.srq != nil {
		if err := q.takeSRQLocked(c); err != nil {
			q.mu.Unlock()
			return err
		}
	}
	if q.rqRd == q.rqTl {
		q.mu.Unlock()
		return errProto // a send beyond our grant
	}
	r := &q.rq[q.rqRd&q.rqMask]
	q.rqRd++
	status := q.checkRecv(r, h.len)
	q.mu.Unlock()
	if status != rdma.StatusSuccess {
		if err := c.rd.discard(h.len); err != nil {
			return err
		}
	} else if h.len > 0 {
		// r stays ours: a teardown flushes it only after placeMu.
		c.placeMu.Lock()
		if c.dead.Load() {
			c.placeMu.Unlock()
			return errDead
		}
		fault, err := c.rd.place(r.sgl[:r.nsge], h.len)
		c.placeMu.Unlock()
		if err != nil {
			return err
		}
		if fault {
			status = rdma.StatusLocalProtection
		}
	}
	q.mu.Lock()
	if q.c == c {
		r.done, r.status, r.length = true, status, h.len
		r.solicited = h.flags&flSolicited != 0
	}
	q.mu.Unlock()
	c.rdRing = true
	if h.flags&flAckReq != 0 {
		verdict := rdma.StatusSuccess
		if status != rdma.StatusSuccess {
			verdict = rdma.StatusRemoteResponder
		}
		c.acked(verdict)
	}
	return nil
}

// takeSRQLocked takes a receive from the SRQ for the arriving message into
// the tracking ring (q.mu held; it is dropped while waiting). An empty SRQ
// stops the reader here until a receive is posted to it (its post rings the
// doorbell) or the connection ends.
func (q *tqp) takeSRQLocked(c *tconn) error {
	if q.rqTl-q.rqHead >= uint64(len(q.rq)) {
		return errProto // beyond srqWindow: the peer ignored our grant
	}
	db := &q.dev.db
	for {
		r := &q.rq[q.rqTl&q.rqMask]
		cookie, n, ok := q.srq.Take(r.sgl[:])
		if ok {
			r.cookie, r.nsge = cookie, n
			r.done, r.solicited, r.status, r.length = false, false, rdma.StatusSuccess, 0
			q.rqTl++
			return nil
		}
		seq := db.Seq()
		q.mu.Unlock()
		c.publish()
		db.Wait(seq, 50*time.Millisecond)
		q.mu.Lock()
		if q.c != c {
			return errDead
		}
	}
}

// oldestRead returns the read the next response answers.
func (q *tqp) oldestRead() *tsendEnt {
	if q.rdHead == q.rdTl {
		return nil
	}
	return &q.sq[q.rdq[q.rdHead%maxReadsPerQ]&q.sqMask]
}

func (q *tqp) onReadResp(c *tconn, h *fhdr) error {
	q.mu.Lock()
	if q.c != c {
		q.mu.Unlock()
		return errDead
	}
	e := q.oldestRead()
	if e == nil || (h.len != 0 && h.len != e.length) {
		q.mu.Unlock()
		return errProto
	}
	q.mu.Unlock()
	c.inRead, c.readFault, c.readLen = true, false, h.len
	if h.len == 0 {
		return nil
	}
	c.placeMu.Lock()
	if c.dead.Load() {
		c.placeMu.Unlock()
		return errDead
	}
	fault, err := c.rd.place(e.sgl[:e.nsge], h.len)
	c.placeMu.Unlock()
	c.readFault = fault
	return err
}

func (q *tqp) onReadDone(c *tconn, h *fhdr) error {
	if !c.inRead || h.aux > uint32(rdma.StatusPartialPacket) {
		return errProto
	}
	c.inRead = false
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.c != c {
		return errDead
	}
	e := q.oldestRead()
	if e == nil {
		return errProto
	}
	status := rdma.Status(h.aux)
	switch {
	case status == rdma.StatusSuccess && c.readLen != e.length:
		return errProto
	case status == rdma.StatusSuccess && c.readFault:
		status = rdma.StatusLocalProtection
	}
	q.rdHead++
	q.readsOut--
	e.done, e.status = true, status
	c.rdRing, c.rdExec = true, true
	return nil
}

// onNak fails the write (or large send) the peer refused; it arrives before
// any ack that covers it.
func (q *tqp) onNak(c *tconn, h *fhdr) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.c != c {
		return
	}
	for p := q.sqHead; p != q.sqExec; p++ {
		e := &q.sq[p&q.sqMask]
		if e.acked && e.seq == h.ack && !e.done {
			e.done, e.status = true, rdma.Status(h.aux)
			break
		}
	}
	c.rdRing = true
}

// execFromReader issues requests that waited for a grant or a read slot,
// so they leave without waiting for the consumer's next call.
func (q *tqp) execFromReader(c *tconn) {
	q.mu.Lock()
	enq := false
	if q.c == c && (q.state == tConnected || q.state == tDisconnecting) && q.sqExec != q.sqTl {
		enq = q.execSends()
	}
	q.mu.Unlock()
	if enq {
		c.flush()
	}
}

// ---- connection state ----

// bindLocked attaches a fresh connection.
func (q *tqp) bindLocked(c *tconn) {
	q.c = c
	c.q = q
	c.epoch = q.epoch
	q.sends, q.eager, q.writes = 0, 0, 0
	q.rdHead, q.rdTl, q.readsOut = 0, 0, 0
	q.asked = false
	q.recvBase = q.rqRd
	if q.srq != nil {
		c.grant.Store(q.srqGrant())
	} else {
		c.grant.Store(uint32(q.rqTl - q.recvBase))
	}
}

// rtu: the active side confirmed our accept.
func (q *tqp) rtu(c *tconn) bool {
	q.mu.Lock()
	if q.c != c || q.state != tAccepting {
		q.mu.Unlock()
		return false
	}
	q.state = tConnected
	q.mu.Unlock()
	q.event(rdma.ConnEstablished, nil)
	return true
}

// teardownLocked ends the connection or attempt: the state becomes
// disconnected and outstanding work is flushed (pushed when push).
func (q *tqp) teardownLocked(push, disc bool) {
	q.epoch++
	q.state = tDisconnected
	if q.cancel != nil {
		q.cancel()
		q.cancel = nil
	}
	c := q.c
	q.c = nil
	if c != nil {
		c.shutdown(disc)
	}
	for ; q.sqHead != q.sqTl; q.sqHead++ {
		e := &q.sq[q.sqHead&q.sqMask]
		if !push {
			continue
		}
		if q.sqHead < q.sqExec && q.finishedLocked(c, e) {
			if e.status != rdma.StatusSuccess || e.flags&rdma.SendSignaled != 0 {
				q.pushSend(e, e.status)
			}
			continue
		}
		q.pushSend(e, rdma.StatusFlushed)
	}
	q.sqExec = q.sqTl
	q.rdHead, q.rdTl, q.readsOut = 0, 0, 0
	q.flushRecvLocked(push)
}

// flushRecvLocked completes every posted receive: those the reader filled
// with their status, the rest as flushed.
func (q *tqp) flushRecvLocked(push bool) {
	for ; q.rqHead != q.rqTl; q.rqHead++ {
		if !push {
			continue
		}
		r := &q.rq[q.rqHead&q.rqMask]
		if q.rqHead < q.rqRd && r.done {
			q.pushRecv(r, r.status)
		} else {
			q.pushRecv(r, rdma.StatusFlushed)
		}
	}
	q.rqRd = q.rqTl
}

func (q *tqp) event(kind rdma.ConnEventKind, priv []byte) {
	if q.cfg.Conn != nil {
		q.cfg.Conn.ConnEvent(q.self, rdma.ConnEvent{Kind: kind, PrivateData: priv})
	}
	q.dev.db.Ring()
}

// peerEnded: the connection c ended on the peer's side (orderly: it sent a
// DISC) or failed.
func (q *tqp) peerEnded(c *tconn, orderly bool) {
	q.mu.Lock()
	if q.c != c {
		q.mu.Unlock()
		return
	}
	var kind rdma.ConnEventKind
	switch q.state {
	case tConnected, tDisconnecting:
		kind = rdma.ConnBroken
	case tAccepting:
		kind = rdma.ConnAcceptError
	default:
		q.mu.Unlock()
		return
	}
	if orderly {
		kind = rdma.ConnDisconnected
	}
	q.teardownLocked(true, false)
	q.mu.Unlock()
	q.event(kind, nil)
}

// allDoneLocked: every posted request has been issued and finished.
func (q *tqp) allDoneLocked() bool {
	if q.sqExec != q.sqTl {
		return false
	}
	for p := q.sqHead; p != q.sqExec; p++ {
		if !q.finishedLocked(q.c, &q.sq[p&q.sqMask]) {
			return false
		}
	}
	return true
}

func (q *tqp) Disconnect(graceful bool) error {
	q.mu.Lock()
	switch q.state {
	case tIdle:
		q.mu.Unlock()
		return rdma.ErrState
	case tDestroyed:
		q.mu.Unlock()
		return rdma.ErrClosed
	case tDisconnected:
		q.mu.Unlock()
		return nil
	case tDisconnecting:
		if graceful {
			q.mu.Unlock()
			return nil // already draining
		}
		// Abrupt: stop waiting for the posted work.
		q.teardownLocked(true, true)
	case tConnected:
		if graceful && !q.allDoneLocked() {
			q.state = tDisconnecting
			go q.drainThenDisconnect(q.epoch)
			q.mu.Unlock()
			return nil
		}
		q.teardownLocked(true, true)
	default: // connecting, accepting
		q.teardownLocked(true, false)
	}
	q.mu.Unlock()
	// The flushes are pushed above; the event comes from a goroutine so the
	// handler never runs inside the caller's Disconnect.
	go q.event(rdma.ConnDisconnected, nil)
	return nil
}

// drainThenDisconnect lets the posted requests finish (bounded), then
// disconnects.
func (q *tqp) drainThenDisconnect(ep uint64) {
	deadline := time.Now().Add(5 * time.Second)
	db := &q.dev.db
	for {
		seq := db.Seq()
		q.mu.Lock()
		if q.epoch != ep || q.state != tDisconnecting {
			q.mu.Unlock()
			return
		}
		if q.allDoneLocked() || time.Now().After(deadline) {
			q.teardownLocked(true, true)
			q.mu.Unlock()
			q.event(rdma.ConnDisconnected, nil)
			return
		}
		q.mu.Unlock()
		db.Wait(seq, 10*time.Millisecond)
	}
}

func (q *tqp) Reset() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch q.state {
	case tIdle:
		return nil
	case tDisconnected:
		q.flushRecvLocked(true)
		q.state = tIdle
		q.local, q.remote = netip.AddrPort{}, netip.AddrPort{}
		return nil
	case tDestroyed:
		return rdma.ErrClosed
	}
	return rdma.ErrState
}

func (q *tqp) Destroy() error {
	q.mu.Lock()
	if q.state == tDestroyed {
		q.mu.Unlock()
		return rdma.ErrClosed
	}
	disc := q.state == tConnected || q.state == tDisconnecting
	q.teardownLocked(false, disc)
	q.state = tDestroyed
	q.mu.Unlock()
	q.dev.tmu.Lock()
	delete(q.dev.tqps, q)
	q.dev.tmu.Unlock()
	return nil
}
