package soft

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"godat/rdma"
)

// Completion rules (see also the package report):
//   - Sends up to inlineMax bytes are copied into the peer's ring at post
//     time (or when ring space frees) and complete then: the buffer is
//     reusable, delivery is not confirmed.
//   - Larger sends are rendezvous: they complete when the receiver has
//     pulled the data (ack on the control ring), with the receiver's
//     verdict: StatusRemoteResponder if the receive was too small or bad,
//     StatusLocalProtection if our memory could not be read.
//   - RDMA write/read execute one-sidedly at post time and complete at once.
//   - Send completions are pushed in post order; a success is pushed only
//     with SendSignaled, errors always. Receives always complete.
//   - The *Completion handed to a sink is only valid during the call, and
//     sinks are called with the QP lock held: they must not call back into
//     the QP.

type qpState uint8

const (
	stIdle qpState = iota
	stConnecting
	stAccepting
	stConnected
	stDisconnecting
	stDisconnected
	stDestroyed
)

type sendEnt struct {
	op     rdma.Op
	flags  rdma.SendFlags
	done   bool
	status rdma.Status
	nsge   int
	cookie uint64
	raddr  uint64
	rkey   uint32
	length uint64
	sgl    [maxSGE]rdma.SGE
}

type recvEnt struct {
	cookie uint64
	nsge   int
	sgl    [maxSGE]rdma.SGE
}

// conn is the live state of one connection.
type conn struct {
	sock    *net.UnixConn
	mem     shm // connection memfd
	peerSeg shm // the peer's IA segment
	peerDB  doorbell
	peerPid int
	peerPD  uint32
	out, in ring
	outC    ring
	inC     ring
	rdvOut  int
	kick    bool
	ending  bool // peer is gone: deliver inline messages only
}

func newConn(mem, peerSeg shm, active bool) *conn {
	c := &conn{mem: mem, peerSeg: peerSeg}
	c.peerDB.m = peerSeg
	tx, rx := 0, dirSize
	if !active {
		tx, rx = dirSize, 0
	}
	c.out = newRing(mem, tx, dataSlots, dataStride)
	c.outC = newRing(mem, tx+dataRingSize, ctrlSlots, ctrlStride)
	c.in = newRing(mem, rx, dataSlots, dataStride)
	c.inC = newRing(mem, rx+dataRingSize, ctrlSlots, ctrlStride)
	return c
}

func (c *conn) release() {
	if c.sock != nil {
		c.sock.Close()
	}
	c.mem.unmap()
	c.peerSeg.unmap()
}

type qp struct {
	dev *device
	cfg rdma.QPConfig
	tab shm // our registration table (local key checks)

	mu    sync.Mutex
	state qpState
	epoch uint64 // bumped at every teardown; stale goroutines compare it
	c     *conn

	// while connecting (active side)
	csock *net.UnixConn
	cmem  shm

	sq                   []sendEnt
	sqMask, maxSend      uint64
	sqHead, sqExec, sqTl uint64

	rq              []recvEnt
	rqMask, maxRecv uint64
	rqHead, rqTl    uint64

	// With a shared receive queue there is no rq: nextRecv takes from srq
	// into srqEnt, checked against the SRQ's protection domain.
	srq    rdma.SRQ
	srqPD  uint32
	srqEnt recvEnt

	maxSendSGE, maxRecvSGE int

	comp       rdma.Completion
	localPort  uint16
	remoteAddr netip.AddrPort
	iovL, iovR [maxSGE]iov
}

func pow2(n uint64) uint64 {
	p := uint64(1)
	for p < n {
		p <<= 1
	}
	return p
}

func clampWR(n int) uint64 {
	if n <= 0 {
		return defaultWR
	}
	if n > maxQPWR {
		n = maxQPWR
	}
	return uint64(n)
}

func clampSGE(n int) int {
	if n <= 0 || n > maxSGE {
		return maxSGE
	}
	return n
}

func (d *device) CreateQP(cfg rdma.QPConfig) (rdma.QP, error) {
	if cfg.SendCQ == nil || cfg.RecvCQ == nil {
		return nil, rdma.ErrInvalid
	}
	if cfg.MaxSend > maxQPWR || cfg.MaxSendSGE > maxSGE ||
		cfg.SRQ == nil && (cfg.MaxRecv > maxQPWR || cfg.MaxRecvSGE > maxSGE) {
		return nil, rdma.ErrInvalid
	}
	q := &qp{dev: d, cfg: cfg, tab: d.seg}
	q.maxSend = clampWR(cfg.MaxSend)
	q.sq = make([]sendEnt, pow2(q.maxSend))
	q.sqMask = uint64(len(q.sq) - 1)
	if cfg.SRQ != nil {
		// No receive queue of its own: that memory is what an SRQ saves.
		q.srq, q.srqPD = cfg.SRQ, cfg.SRQ.PD()
	} else {
		q.maxRecv = clampWR(cfg.MaxRecv)
		q.rq = make([]recvEnt, pow2(q.maxRecv))
		q.rqMask = uint64(len(q.rq) - 1)
	}
	q.maxSendSGE = clampSGE(cfg.MaxSendSGE)
	q.maxRecvSGE = clampSGE(cfg.MaxRecvSGE)
	q.comp.QP = q
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, rdma.ErrClosed
	}
	if len(d.qps) >= maxQPs {
		return nil, rdma.ErrNoResources
	}
	d.qps[q] = struct{}{}
	return q, nil
}

func (q *qp) LocalAddr() netip.AddrPort {
	q.mu.Lock()
	defer q.mu.Unlock()
	return netip.AddrPortFrom(q.dev.addr, q.localPort)
}

func (q *qp) RemoteAddr() netip.AddrPort {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.remoteAddr
}

// Idle reports whether no receive and no send request is outstanding.
func (q *qp) Idle() (recv, send bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.rqHead == q.rqTl, q.sqHead == q.sqTl
}

// Reconfigure changes the protection domain and queue limits of an idle QP.
func (q *qp) Reconfigure(pd uint32, maxSend, maxRecv, maxSendSGE, maxRecvSGE int) error {
	if maxSend > maxQPWR || maxRecv > maxQPWR || maxSendSGE > maxSGE || maxRecvSGE > maxSGE {
		return rdma.ErrInvalid
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.state == stDestroyed:
		return rdma.ErrClosed
	case q.state != stIdle || q.sqHead != q.sqTl:
		return rdma.ErrState
	}
	ms, mr := clampWR(maxSend), clampWR(maxRecv)
	posted := q.rqTl - q.rqHead
	if posted > mr {
		return rdma.ErrInvalid
	}
	if ms != q.maxSend {
		q.sq = make([]sendEnt, pow2(ms))
		q.sqMask = uint64(len(q.sq) - 1)
		q.sqHead, q.sqExec, q.sqTl = 0, 0, 0
		q.maxSend = ms
	}
	if mr != q.maxRecv {
		rq := make([]recvEnt, pow2(mr))
		for i := uint64(0); i < posted; i++ {
			rq[i] = q.rq[(q.rqHead+i)&q.rqMask]
		}
		q.rq, q.rqMask = rq, uint64(len(rq)-1)
		q.rqHead, q.rqTl = 0, posted
		q.maxRecv = mr
	}
	q.maxSendSGE, q.maxRecvSGE = clampSGE(maxSendSGE), clampSGE(maxRecvSGE)
	q.cfg.PD = pd
	return nil
}

// ---- posting ----

func (q *qp) PostSend(wr *rdma.SendWR) error {
	if wr == nil || len(wr.SGL) > q.maxSendSGE {
		return rdma.ErrInvalid
	}
	need := rdma.AccessLocalRead
	switch wr.Op {
	case rdma.OpSend, rdma.OpWrite:
	case rdma.OpRead:
		need = rdma.AccessLocalWrite
	default:
		return rdma.ErrInvalid
	}
	if err := sglVerify(q.tab, q.cfg.PD, wr.SGL, need); err != nil {
		return err
	}
	q.mu.Lock()
	if q.state != stConnected {
		err := rdma.ErrState
		if q.state == stDestroyed {
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
	e.done, e.status, e.length = false, rdma.StatusSuccess, 0
	q.sqTl++
	q.execSends()
	q.completeSends()
	q.kickPeer()
	q.mu.Unlock()
	return nil
}

func (q *qp) PostRecv(wr *rdma.RecvWR) error {
	if wr == nil || len(wr.SGL) > q.maxRecvSGE {
		return rdma.ErrInvalid
	}
	if err := sglVerify(q.tab, q.cfg.PD, wr.SGL, rdma.AccessLocalWrite); err != nil {
		return err
	}
	q.mu.Lock()
	if q.state == stDestroyed {
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
	q.rqTl++
	wake := q.c != nil && (q.state == stConnected || q.state == stDisconnecting) && q.c.in.avail()
	q.mu.Unlock()
	if wake {
		// A message was waiting for this receive: let a sleeping waiter
		// progress it.
		q.dev.db.Ring()
	}
	return nil
}

// ---- progress ----

// Progress drains the control ring (rendezvous acks), matches inbound
// messages to posted receives in FIFO order, retries send requests waiting
// for ring space, and pushes the completions. It returns how many
// completions it pushed.
func (q *qp) Progress() int {
	q.mu.Lock()
	if q.state != stConnected && q.state != stDisconnecting {
		q.mu.Unlock()
		return 0
	}
	c := q.c
	n := 0
	if c.inC.avail() {
		q.drainCtrl()
	}
	if c.in.avail() {
		n += q.drainData()
	}
	if q.sqExec != q.sqTl {
		q.execSends()
	}
	n += q.completeSends()
	q.kickPeer()
	q.mu.Unlock()
	return n
}

func (q *qp) kickPeer() {
	if c := q.c; c != nil && c.kick {
		c.kick = false
		c.peerDB.Ring()
	}
}

func (q *qp) drainCtrl() {
	c := q.c
	for c.inC.avail() {
		off := c.inC.slot(c.inC.tail)
		m := c.mem
		if m.get32(off+ctlOffKind) == ctlAck {
			id := m.get64(off + ctlOffID)
			if id >= q.sqHead && id < q.sqExec {
				e := &q.sq[id&q.sqMask]
				e.done = true
				e.status = rdma.Status(m.get32(off + ctlOffStatus))
				if e.status != rdma.StatusSuccess {
					e.length = 0
				}
			}
			c.rdvOut--
		}
		c.inC.take()
	}
	c.inC.commit() // never blocked by design
}

// nextRecv returns the receive for the message at the head of the inbound
// ring: the next one posted to the QP, or one taken from the SRQ (taken only
// here, when the message is about to be placed; see rdma.SRQ).
func (q *qp) nextRecv() *recvEnt {
	if q.srq == nil {
		if q.rqHead == q.rqTl {
			return nil
		}
		return &q.rq[q.rqHead&q.rqMask]
	}
	e := &q.srqEnt
	cookie, n, ok := q.srq.Take(e.sgl[:])
	if !ok {
		return nil
	}
	e.cookie, e.nsge = cookie, n
	return e
}

// popRecv consumes the receive nextRecv returned (an SRQ's is already gone).
func (q *qp) popRecv() {
	if q.srq == nil {
		q.rqHead++
	}
}

func (q *qp) drainData() int {
	c := q.c
	n := 0
	for c.in.avail() {
		m := c.mem
		off := c.in.slot(c.in.tail)
		kind := m.get32(off + msgOffKind)
		if kind == msgRendezvous && (c.ending || !c.outC.canPut()) {
			// Peer gone (its send was flushed, the buffer may be reused), or
			// no room for the ack (not expected: acks are bounded).
			break
		}
		r := q.nextRecv()
		if r == nil {
			break
		}
		flags := m.get32(off + msgOffFlags)
		L := m.get64(off + msgOffLen)
		status := q.checkRecv(r, L)
		switch kind {
		case msgInline:
			if status == rdma.StatusSuccess {
				q.scatter(r, m.b[off+msgOffData:off+msgOffData+int(L)])
			}
		case msgRendezvous:
			ack := rdma.StatusSuccess
			if status != rdma.StatusSuccess {
				ack = rdma.StatusRemoteResponder
			} else if !q.pull(r, m, off, L) {
				status, ack = rdma.StatusTransport, rdma.StatusLocalProtection
			}
			a := c.outC.slot(c.outC.head)
			m.put32(a+ctlOffKind, ctlAck)
			m.put32(a+ctlOffStatus, uint32(ack))
			m.put64(a+ctlOffID, m.get64(off+msgOffID))
			m.put64(a+ctlOffLen, L)
			c.outC.put()
			c.kick = true
		default:
			status = rdma.StatusBadResponse
		}
		cookie := r.cookie
		q.popRecv()
		c.in.take()
		cp := &q.comp
		cp.Op, cp.Status, cp.Cookie, cp.Solicited = rdma.OpRecv, status, cookie, flags&msgSolicited != 0
		cp.Length = 0
		if status == rdma.StatusSuccess {
			cp.Length = L
		}
		q.cfg.RecvCQ.PushCompletion(cp)
		n++
	}
	if c.in.lazyCommit() {
		c.kick = true
	}
	return n
}

// checkRecv validates a receive for a message of L bytes (an SRQ's
// receives against the SRQ's protection domain).
func (q *qp) checkRecv(r *recvEnt, L uint64) rdma.Status {
	pd := q.cfg.PD
	if q.srq != nil {
		pd = q.srqPD
	}
	return recvStatus(q.tab, pd, r.sgl[:r.nsge], L)
}

// scatter copies an inline payload into the receive's buffers.
func (q *qp) scatter(r *recvEnt, src []byte) {
	for i := 0; i < r.nsge && len(src) > 0; i++ {
		s := &r.sgl[i]
		n := s.Length
		if n > uint64(len(src)) {
			n = uint64(len(src))
		}
		copy(userBytes(s.Addr, n), src[:n])
		src = src[n:]
	}
}

// pull reads a rendezvous payload from the sender straight into r.
func (q *qp) pull(r *recvEnt, m shm, off int, L uint64) bool {
	if L == 0 {
		return true
	}
	nl := q.fillIov(q.iovL[:], r.sgl[:r.nsge], L)
	ns := int(m.get32(off + msgOffNSGE))
	if ns > maxSGE {
		return false
	}
	for i := 0; i < ns; i++ {
		p := off + slotHdr + i*16
		q.iovR[i] = iov{Base: uintptr(m.get64(p)), Len: int(m.get64(p + 8))}
	}
	pid := int(m.get32(off + msgOffPid))
	got, err := vmRW(pid, q.iovL[:nl], q.iovR[:ns], false)
	return err == nil && uint64(got) == L
}

// fillIov builds iovecs for the first L bytes of sgl; it returns the count.
func (q *qp) fillIov(dst []iov, sgl []rdma.SGE, L uint64) int {
	n := 0
	for i := range sgl {
		if L == 0 {
			break
		}
		l := sgl[i].Length
		if l == 0 {
			continue
		}
		if l > L {
			l = L
		}
		dst[n] = iov{Base: uintptr(sgl[i].Addr), Len: int(l)}
		n++
		L -= l
	}
	return n
}

// execSends executes queued send requests in order until one must wait.
func (q *qp) execSends() {
	for q.sqExec != q.sqTl {
		if !q.exec(&q.sq[q.sqExec&q.sqMask], q.sqExec) {
			return
		}
		q.sqExec++
	}
}

func (e *sendEnt) finish(s rdma.Status, n uint64) {
	e.done, e.status, e.length = true, s, n
}

// exec runs one send request; false means "no ring space yet, retry".
func (q *qp) exec(e *sendEnt, pos uint64) bool {
	c := q.c
	sgl := e.sgl[:e.nsge]
	switch e.op {
	case rdma.OpSend:
		L, ok := sglLength(q.tab, q.cfg.PD, sgl, 0)
		if !ok {
			e.finish(rdma.StatusLocalProtection, 0)
			return true
		}
		if L > maxMsgSize {
			e.finish(rdma.StatusLocalLength, 0)
			return true
		}
		rdv := L > inlineMax
		if rdv && c.rdvOut >= ctrlSlots {
			return false
		}
		if !c.out.canPut() {
			return false
		}
		m := c.mem
		off := c.out.slot(c.out.head)
		var fl uint32
		if e.flags&rdma.SendSolicited != 0 {
			fl = msgSolicited
		}
		m.put32(off+msgOffFlags, fl)
		m.put64(off+msgOffLen, L)
		if !rdv {
			m.put32(off+msgOffKind, msgInline)
			dst := m.b[off+msgOffData : off+msgOffData+int(L)]
			for i := range sgl {
				n := copy(dst, userBytes(sgl[i].Addr, sgl[i].Length))
				dst = dst[n:]
			}
			e.finish(rdma.StatusSuccess, L)
		} else {
			m.put32(off+msgOffKind, msgRendezvous)
			m.put64(off+msgOffID, pos)
			m.put32(off+msgOffPid, uint32(q.dev.pid))
			ns := 0
			for i := range sgl {
				if sgl[i].Length == 0 {
					continue
				}
				p := off + slotHdr + ns*16
				m.put64(p, sgl[i].Addr)
				m.put64(p+8, sgl[i].Length)
				ns++
			}
			m.put32(off+msgOffNSGE, uint32(ns))
			e.length = L
			c.rdvOut++
		}
		c.out.put()
		c.kick = true
		return true
	case rdma.OpWrite, rdma.OpRead:
		need, rneed := rdma.Access(0), rdma.AccessRemoteWrite
		if e.op == rdma.OpRead {
			need, rneed = rdma.AccessLocalWrite, rdma.AccessRemoteRead
		}
		L, ok := sglLength(q.tab, q.cfg.PD, sgl, need)
		if !ok {
			e.finish(rdma.StatusLocalProtection, 0)
			return true
		}
		if L > maxMsgSize {
			e.finish(rdma.StatusLocalLength, 0)
			return true
		}
		if !mrCheck(c.peerSeg, e.rkey, c.peerPD, e.raddr, L, rneed) {
			e.finish(rdma.StatusRemoteAccess, 0)
			return true
		}
		if L == 0 {
			e.finish(rdma.StatusSuccess, 0)
			return true
		}
		nl := q.fillIov(q.iovL[:], sgl, L)
		q.iovR[0] = iov{Base: uintptr(e.raddr), Len: int(L)}
		got, err := vmRW(c.peerPid, q.iovL[:nl], q.iovR[:1], e.op == rdma.OpWrite)
		switch {
		case err == nil && uint64(got) == L:
			e.finish(rdma.StatusSuccess, L)
		case err == nil || isFault(err):
			// registered but unmapped memory on one side
			e.finish(rdma.StatusRemoteAccess, 0)
		default:
			e.finish(rdma.StatusTransport, 0)
		}
		return true
	}
	e.finish(rdma.StatusLocalEP, 0)
	return true
}

// completeSends pushes finished send requests in post order.
func (q *qp) completeSends() int {
	n := 0
	for q.sqHead != q.sqExec {
		e := &q.sq[q.sqHead&q.sqMask]
		if !e.done {
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

func (q *qp) pushSend(e *sendEnt, s rdma.Status) {
	cp := &q.comp
	cp.Op, cp.Status, cp.Cookie, cp.Solicited = e.op, s, e.cookie, false
	cp.Length = 0
	if s == rdma.StatusSuccess {
		cp.Length = e.length
	}
	q.cfg.SendCQ.PushCompletion(cp)
}

// flushLocked completes every outstanding request: finished successes as
// usual, everything else StatusFlushed. push=false drops them (Destroy).
func (q *qp) flushLocked(push bool) {
	for ; q.sqHead != q.sqTl; q.sqHead++ {
		e := &q.sq[q.sqHead&q.sqMask]
		if !push {
			continue
		}
		if e.done && e.status == rdma.StatusSuccess {
			if e.flags&rdma.SendSignaled != 0 {
				q.pushSend(e, rdma.StatusSuccess)
			}
			continue
		}
		if e.done {
			q.pushSend(e, e.status)
		} else {
			q.pushSend(e, rdma.StatusFlushed)
		}
	}
	q.sqExec = q.sqTl
	q.flushRecvLocked(push)
}

func (q *qp) flushRecvLocked(push bool) {
	for ; q.rqHead != q.rqTl; q.rqHead++ {
		if !push {
			continue
		}
		r := &q.rq[q.rqHead&q.rqMask]
		cp := &q.comp
		cp.Op, cp.Status, cp.Cookie, cp.Length, cp.Solicited = rdma.OpRecv, rdma.StatusFlushed, r.cookie, 0, false
		q.cfg.RecvCQ.PushCompletion(cp)
	}
}

// ---- teardown ----

// teardownLocked ends the current connection attempt or connection: state
// becomes disconnected, outstanding requests are flushed (pushed when push),
// the socket closes and the mappings go.
func (q *qp) teardownLocked(push bool) {
	q.epoch++
	q.state = stDisconnected
	q.flushLocked(push)
	if q.c != nil {
		q.c.release()
		q.c = nil
	}
	if q.csock != nil {
		q.csock.Close()
		q.csock = nil
	}
	q.cmem.unmap()
}

func (q *qp) event(kind rdma.ConnEventKind, priv []byte) {
	if q.cfg.Conn != nil {
		q.cfg.Conn.ConnEvent(q, rdma.ConnEvent{Kind: kind, PrivateData: priv})
	}
	q.dev.db.Ring()
}

// sendDiscLocked tells the peer we are going (best effort, bounded).
func (q *qp) sendDiscLocked() {
	if q.c != nil && q.c.sock != nil {
		q.c.sock.SetWriteDeadline(time.Now().Add(time.Second))
		q.c.sock.Write(encodeMsg(msgDisc, 0, nil))
	}
}

func (q *qp) Disconnect(graceful bool) error {
	q.mu.Lock()
	switch q.state {
	case stIdle:
		q.mu.Unlock()
		return rdma.ErrState
	case stDestroyed:
		q.mu.Unlock()
		return rdma.ErrClosed
	case stDisconnected:
		q.mu.Unlock()
		return nil
	case stDisconnecting:
		// A graceful disconnect is draining; an abrupt one ends it now
		// (the teardown's new epoch stops the drain).
		if graceful {
			q.mu.Unlock()
			return nil
		}
		q.sendDiscLocked()
	case stConnected:
		if graceful && q.sqHead != q.sqTl {
			q.state = stDisconnecting
			go q.drainThenDisconnect(q.epoch)
			q.mu.Unlock()
			return nil
		}
		q.sendDiscLocked()
	}
	// connected (abortive), connecting, accepting
	q.teardownLocked(true)
	q.mu.Unlock()
	// The flushes are pushed above, synchronously; the event comes from a
	// goroutine so the handler never runs inside the caller's Disconnect.
	go q.event(rdma.ConnDisconnected, nil)
	return nil
}

// drainThenDisconnect lets the send queue empty (bounded), then sends the
// disconnect.
func (q *qp) drainThenDisconnect(ep uint64) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		q.mu.Lock()
		if q.epoch != ep || q.state != stDisconnecting {
			q.mu.Unlock()
			return
		}
		if q.sqHead == q.sqTl || time.Now().After(deadline) {
			q.sendDiscLocked()
			q.teardownLocked(true)
			q.mu.Unlock()
			q.event(rdma.ConnDisconnected, nil)
			return
		}
		q.mu.Unlock()
		seq := q.dev.db.Seq()
		if q.Progress() == 0 {
			q.dev.db.Wait(seq, time.Millisecond)
		}
	}
}

// peerEnded handles the end of the CM socket for connection epoch ep:
// orderly is true when the peer sent a disconnect message.
func (q *qp) peerEnded(ep uint64, orderly bool) {
	q.mu.Lock()
	if q.epoch != ep {
		q.mu.Unlock()
		return
	}
	var kind rdma.ConnEventKind
	switch q.state {
	case stConnected, stDisconnecting:
		kind = rdma.ConnBroken
		if orderly {
			kind = rdma.ConnDisconnected
		}
	case stAccepting:
		kind = rdma.ConnAcceptError
		if orderly {
			kind = rdma.ConnDisconnected
		}
	default:
		q.mu.Unlock()
		return
	}
	// Deliver what already arrived before flushing the rest.
	if q.state != stAccepting {
		q.c.ending = true
		q.mu.Unlock()
		q.Progress()
		q.mu.Lock()
		if q.epoch != ep {
			q.mu.Unlock()
			return
		}
	}
	q.teardownLocked(true)
	q.mu.Unlock()
	q.event(kind, nil)
}

func (q *qp) Reset() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch q.state {
	case stIdle:
		return nil
	case stDisconnected:
		q.flushRecvLocked(true)
		q.state = stIdle
		q.remoteAddr = netip.AddrPort{}
		q.localPort = 0
		return nil
	case stDestroyed:
		return rdma.ErrClosed
	}
	return rdma.ErrState
}

func (q *qp) Destroy() error {
	q.mu.Lock()
	if q.state == stDestroyed {
		q.mu.Unlock()
		return rdma.ErrClosed
	}
	if q.state == stConnected || q.state == stDisconnecting {
		q.sendDiscLocked()
	}
	q.teardownLocked(false)
	q.state = stDestroyed
	q.mu.Unlock()
	q.dev.mu.Lock()
	delete(q.dev.qps, q)
	q.dev.mu.Unlock()
	return nil
}
