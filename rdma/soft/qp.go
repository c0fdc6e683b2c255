package soft

// Queue pairs: the engine. This file holds the QP object, its creation,
// queries and reconfiguration; qp_post.go the post calls and their checks;
// qp_send.go issuing and completing send-queue work; qp_recv.go inbound
// messages; qp_resp.go the RDMA responder of two-sided wires;
// qp_conn.go the connection states (connect, accept, disconnect, reset,
// destroy) and flush.
//
// Lock order. A lock may be taken while holding those listed above it,
// never one above while holding one below:
//
//	device.mu          object sets: create, destroy, close
//	connReq.mu         a pending connection request
//	inbound.mu         the drain of the device's inbound queue and its
//	                   watched rings (Poll TryLocks it; a sleeper's last
//	                   look and the rescan lock it)
//	tcpLoop.turn       serving a device's TCP connections (Poll TryLocks
//	                   it; its holder reads sockets, ≤64 KiB at a time,
//	                   or a payload the socket holds whole, ≤4 MiB)
//	tcpLoop.wpay       writing the connections the Polls write for
//	                   (Poll TryLocks it; never taken with turn held)
//	qp.mu              a QP's state, queues and current connection
//	conn.placeMu       held while a payload is placed without qp.mu; a
//	                   teardown takes it under qp.mu as a barrier, so a
//	                   placer never takes qp.mu while holding it
//	srq.mu             an SRQ's receives
//	shm ring / tcp wmu a wire's own state
//	cq.mu              a CQ's ring
//	cmChannel.mu, keyTable.mu, compChannel.fdMu, sockWaits.mu,
//	device.deferMu: leaves
//
// No lock that Poll or a post waits for is held across a system call whose
// cost grows with the transfer: payloads that are not already in memory
// are placed under placeMu only (and turn, which Poll only TryLocks), and
// socket writes happen in flush, outside every lock but wpay (TryLocked by
// Poll too). A futex wake (constant cost) may happen under qp.mu.

import (
	"net/netip"
	"sync"
	"sync/atomic"

	"godat/rdma"
)

// sqe is a send-queue entry.
type sqe struct {
	wrid   uint64
	op     rdma.WROpcode
	flags  rdma.SendFlags
	nsge   uint8
	state  uint8 // sqQueued, sqIssued, sqDone
	waitOn uint8 // what an issued request waits for
	status rdma.WCStatus
	seq    uint32 // number among acknowledged requests
	length uint64
	raddr  uint64
	rkey   uint32
	inline []byte // inline payload copied at post (SendInline)
	sgl    [maxSGE]rdma.SGE
}

// Send-queue entry states.
const (
	sqQueued = iota
	sqIssued
	sqDone
)

// What an issued request waits for.
const (
	waitNone  = iota
	waitAck   // the peer's acknowledgement (conn.peerAcked)
	waitRead  // the read response
	waitFence // not issued: an earlier read is outstanding
)

// rqe is a receive-queue entry.
type rqe struct {
	wrid uint64
	nsge uint8
	busy bool // a payload is being placed in it without qp.mu
	sgl  [maxSGE]rdma.SGE
}

type qp struct {
	dev    *device
	slot   int // in dev.qps; Num is slot+1
	ctx    uint64
	cm     *cmChannel
	sigAll bool

	mu        sync.Mutex
	state     rdma.QPState
	active    bool // the connection (attempt) is ours, not accepted
	destroyed bool
	issuing   bool // a thread issues with q.mu released (qp_send.go)
	// issueSGL is the issuing thread's copy of the SGL of the access it
	// runs with q.mu released (owned while issuing is set): a local array
	// handed to the wire's interface would be allocated per access.
	issueSGL   [maxSGE]rdma.SGE
	asyncIssue bool // issueAsync issues: large accesses run in place
	pd         *pd
	scq, rcq   *cq
	srq        *srq
	cap        rdma.QPCap
	initDepth  int   // reads this QP may have outstanding
	c          *conn // the connection or attempt; nil in Init and Error
	gen        uint8 // connection generation (names hints)
	local      netip.AddrPort
	remote     netip.AddrPort
	wc         rdma.WC // scratch for pushes
	hdr        hdr     // scratch for issues
	kc         keyCache

	sq             []sqe
	sqMask         uint64
	sqHead, sqExec uint64 // oldest not completed; next to issue
	sqTail         uint64
	inlineBuf      []byte

	rq             []rqe
	rqMask         uint64
	rqHead, rqTail uint64
	srqCur         rqe  // the receive taken from the SRQ for the message being placed
	srqHeld        bool // srqCur holds a receive not yet completed

	// shmw is the shared-memory wire of the current connection, for the
	// drain to find from a hint without the QP lock.
	shmw atomic.Pointer[shmWire]

	// issueListed (under device.deferMu): a large access deferred by a
	// post waits in device.deferred for a Poll of the device or for its
	// watcher (qp_send.go).
	issueListed bool
}

func clampWR(n int) int {
	if n <= 0 {
		return defaultWR
	}
	return n
}

func clampSGE(n int) int {
	if n <= 0 {
		return maxSGE
	}
	return n
}

// checkAttr validates attr for device d and resolves its objects.
func (d *device) checkAttr(attr *rdma.QPInitAttr) (*pd, *cq, *cq, *srq, *cmChannel, error) {
	p, ok := d.asPD(attr.PD)
	if !ok {
		return nil, nil, nil, nil, nil, rdma.ErrInvalid
	}
	sc, ok1 := attr.SendCQ.(*cq)
	rc, ok2 := attr.RecvCQ.(*cq)
	if !ok1 || !ok2 || sc == nil || rc == nil || sc.dev != d || rc.dev != d || sc.dead.Load() || rc.dead.Load() {
		return nil, nil, nil, nil, nil, rdma.ErrInvalid
	}
	var s *srq
	if attr.SRQ != nil {
		if s, ok = attr.SRQ.(*srq); !ok || s == nil || s.dev != d {
			return nil, nil, nil, nil, nil, rdma.ErrInvalid
		}
	}
	var ch *cmChannel
	if attr.CM != nil {
		if ch, ok = attr.CM.(*cmChannel); !ok || ch == nil || ch.dev != d {
			return nil, nil, nil, nil, nil, rdma.ErrInvalid
		}
	}
	c := attr.Cap
	if c.MaxSendWR > maxQPWR || c.MaxSendSGE > maxSGE || c.MaxInlineData > maxInline || c.MaxInlineData < 0 ||
		s == nil && (c.MaxRecvWR > maxQPWR || c.MaxRecvSGE > maxSGE) ||
		attr.MaxRdAtomic > maxRdAtom || attr.MaxInitRdAtomic > maxRdAtom {
		return nil, nil, nil, nil, nil, rdma.ErrInvalid
	}
	return p, sc, rc, s, ch, nil
}

// grantCap fills in the defaults of a capacity request.
func grantCap(c rdma.QPCap, withSRQ bool) rdma.QPCap {
	c.MaxSendWR, c.MaxSendSGE = clampWR(c.MaxSendWR), clampSGE(c.MaxSendSGE)
	if c.MaxInlineData == 0 {
		c.MaxInlineData = defInline
	}
	if withSRQ {
		c.MaxRecvWR, c.MaxRecvSGE = 0, 0
	} else {
		c.MaxRecvWR, c.MaxRecvSGE = clampWR(c.MaxRecvWR), clampSGE(c.MaxRecvSGE)
	}
	return c
}

// CreateQP creates a reliable-connected queue pair in Init.
func (d *device) CreateQP(attr rdma.QPInitAttr) (rdma.QP, error) {
	if d.closed.Load() {
		return nil, rdma.ErrClosed
	}
	p, sc, rc, s, ch, err := d.checkAttr(&attr)
	if err != nil {
		return nil, err
	}
	q := &qp{dev: d, ctx: attr.Context, cm: ch, sigAll: attr.SigAll, state: rdma.QPSInit,
		pd: p, scq: sc, rcq: rc, srq: s}
	q.cap = grantCap(attr.Cap, s != nil)
	q.initDepth = attr.MaxInitRdAtomic
	if q.initDepth == 0 {
		q.initDepth = maxRdAtom
	}
	q.sizeSQ(q.cap.MaxSendWR, q.cap.MaxInlineData)
	if s == nil {
		q.rq = make([]rqe, pow2(uint64(q.cap.MaxRecvWR)))
		q.rqMask = uint64(len(q.rq) - 1)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		return nil, rdma.ErrClosed
	}
	if p.dead.Load() || sc.dead.Load() || rc.dead.Load() || s != nil && s.dead.Load() {
		return nil, rdma.ErrInvalid
	}
	if d.nqp >= maxQPs {
		return nil, rdma.ErrNoResources
	}
	for i := range d.qps {
		if d.qps[i].Load() == nil {
			q.slot = i
			break
		}
	}
	d.nqp++
	d.qps[q.slot].Store(q)
	q.hold()
	return q, nil
}

// sizeSQ allocates the send queue for n requests with inline room.
func (q *qp) sizeSQ(n, inline int) {
	q.sq = make([]sqe, pow2(uint64(n)))
	q.sqMask = uint64(len(q.sq) - 1)
	q.inlineBuf = make([]byte, len(q.sq)*inline)
	for i := range q.sq {
		q.sq[i].inline = q.inlineBuf[i*inline : (i+1)*inline : (i+1)*inline]
	}
	q.sqHead, q.sqExec, q.sqTail = 0, 0, 0
}

// hold and release count the QP in its PD, CQs and SRQ (ErrBusy).
func (q *qp) hold()    { q.count(1) }
func (q *qp) release() { q.count(-1) }

func (q *qp) count(n int32) {
	q.pd.refs.Add(n)
	q.scq.refs.Add(n)
	q.rcq.refs.Add(n)
	if q.srq != nil {
		q.srq.refs.Add(n)
	}
}

// Num is the queue pair number.
func (q *qp) Num() uint32 { return uint32(q.slot + 1) }

// State is the current state.
func (q *qp) State() rdma.QPState {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.state
}

// Cap is the capacities granted.
func (q *qp) Cap() rdma.QPCap {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.cap
}

// LocalAddr is the connection's local address.
func (q *qp) LocalAddr() netip.AddrPort {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.local
}

// RemoteAddr is the peer's address (also while connecting).
func (q *qp) RemoteAddr() netip.AddrPort {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.remote
}

// Outstanding reports the requests posted and not yet completed.
func (q *qp) Outstanding() (send, recv int, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.destroyed {
		return 0, 0, rdma.ErrClosed
	}
	if q.c != nil {
		q.takeVerdictsLocked(q.c) // verdicts a sender learns when it looks
	}
	recv = int(q.rqTail - q.rqHead)
	if q.srqHeld {
		recv++
	}
	return int(q.sqTail - q.sqHead), recv, nil
}

// Reconfigure changes the PD, CQs and capacities of an unconnected QP,
// keeping its posted receives.
func (q *qp) Reconfigure(attr rdma.QPInitAttr) error {
	d := q.dev
	p, sc, rc, s, _, err := d.checkAttr(&attr)
	if err != nil {
		return err
	}
	d.mu.Lock() // CQ and PD references change under the device lock
	defer d.mu.Unlock()
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.destroyed:
		return rdma.ErrClosed
	case q.state != rdma.QPSInit && q.state != rdma.QPSErr || q.sqHead != q.sqTail:
		return rdma.ErrState
	case s != q.srq:
		return rdma.ErrInvalid // the SRQ is the QP's for life
	case p.dead.Load() || sc.dead.Load() || rc.dead.Load():
		return rdma.ErrInvalid
	}
	c := grantCap(attr.Cap, s != nil)
	posted := q.rqTail - q.rqHead
	if s == nil && uint64(c.MaxRecvWR) < posted {
		return rdma.ErrInvalid
	}
	if c.MaxSendWR != q.cap.MaxSendWR || c.MaxInlineData != q.cap.MaxInlineData {
		q.sizeSQ(c.MaxSendWR, c.MaxInlineData)
	}
	if s == nil && pow2(uint64(c.MaxRecvWR)) != uint64(len(q.rq)) {
		rq := make([]rqe, pow2(uint64(c.MaxRecvWR)))
		for i := uint64(0); i < posted; i++ {
			rq[i] = q.rq[(q.rqHead+i)&q.rqMask]
		}
		q.rq, q.rqMask, q.rqHead, q.rqTail = rq, uint64(len(rq)-1), 0, posted
	}
	q.release()
	q.pd, q.scq, q.rcq, q.cap = p, sc, rc, c
	q.hold()
	if attr.MaxInitRdAtomic > 0 {
		q.initDepth = attr.MaxInitRdAtomic
	}
	return nil
}
