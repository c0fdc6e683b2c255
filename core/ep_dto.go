package core

import (
	"errors"
	"sync/atomic"

	"godat/rdma"
)

// RemoteSegment is the remote buffer of an RDMA operation: the peer's
// address range and the RMR (or LMR) context that grants access to it.
type RemoteSegment struct {
	Addr       uint64
	Length     uint64
	RMRContext uint32
}

// reqQueue is one work queue's requests in post order, so that a completion
// (which names its request by sequence number) finds the consumer's cookie
// and flags. One poster at a time appends (under the EP's sendMu or
// recvMu); one converter at a time retires (under the EVD's pollMu).
type reqQueue struct {
	slots []reqSlot
	mask  uint32
	tail  atomic.Uint32 // sequence number of the next request
	head  atomic.Uint32 // oldest request whose completion core has not seen
}

type reqSlot struct {
	cookie uint64
	length uint64
	flags  CompletionFlags
	op     rdma.WROpcode
}

// init gives an empty queue room for depth requests.
func (q *reqQueue) init(depth int) {
	n := pow2(depth)
	q.slots, q.mask = make([]reqSlot, n), uint32(n-1)
}

func pow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

// full reports whether depth requests are outstanding.
func (q *reqQueue) full(depth int) bool {
	return q.tail.Load()-q.head.Load() >= uint32(depth)
}

// idle reports that no request is outstanding.
func (q *reqQueue) idle() bool { return q.head.Load() == q.tail.Load() }

// outstanding is the number of requests posted and not seen completed.
func (q *reqQueue) outstanding() int { return int(q.tail.Load() - q.head.Load()) }

// resize gives the queue room for depth requests, keeping the outstanding
// ones; no completion may come meanwhile (dat_ep_modify's states).
func (q *reqQueue) resize(depth int) {
	n := pow2(depth)
	if n == len(q.slots) {
		return
	}
	h, t := q.head.Load(), q.tail.Load()
	if t-h > uint32(n) {
		return // the transport refused a queue this short
	}
	slots := make([]reqSlot, n)
	for i := h; i != t; i++ {
		slots[i&uint32(n-1)] = q.slots[i&q.mask]
	}
	q.slots, q.mask = slots, uint32(n-1)
}

// fillSGL converts segments into buf, checking their count against maxIOV
// and their lengths against the transport's 32-bit entries; it returns the
// entries and the total length.
func fillSGL(buf []rdma.SGE, segs []Segment, maxIOV int) ([]rdma.SGE, uint64, error) {
	if len(segs) > maxIOV || len(segs) > len(buf) {
		return nil, 0, ErrArg(ArgSegmentCount)
	}
	var total uint64
	for i := range segs {
		s := &segs[i]
		if s.Length > 1<<32-1 {
			return nil, 0, ErrLength
		}
		buf[i] = rdma.SGE{Addr: s.Addr, Length: uint32(s.Length), LKey: s.LMRContext}
		total += s.Length
	}
	return buf[:len(segs)], total, nil
}

// PostSend posts a send (dat_ep_post_send).
func (ep *EP) PostSend(segs []Segment, cookie uint64, flags CompletionFlags) error {
	return ep.postRequest(rdma.WRSend, segs, cookie, nil, flags)
}

// PostRDMAWrite posts an RDMA write (dat_ep_post_rdma_write).
func (ep *EP) PostRDMAWrite(segs []Segment, cookie uint64, remote *RemoteSegment, flags CompletionFlags) error {
	return ep.postRequest(rdma.WRRDMAWrite, segs, cookie, remote, flags)
}

// PostRDMARead posts an RDMA read (dat_ep_post_rdma_read).
func (ep *EP) PostRDMARead(segs []Segment, cookie uint64, remote *RemoteSegment, flags CompletionFlags) error {
	return ep.postRequest(rdma.WRRDMARead, segs, cookie, remote, flags)
}

// postError turns a transport post failure into the post pages' codes: a
// full work queue is a resource limit, and local segment faults name the
// access the operation needed (write for receives and RDMA reads).
func postError(err error, write bool) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rdma.ErrQueueFull):
		return E(KindInsufficientResources, SubResourceTEP)
	case errors.Is(err, rdma.ErrProtection):
		if write {
			return E(KindProtectionViolation, SubProtectionWrite)
		}
		return E(KindProtectionViolation, SubProtectionRead)
	case errors.Is(err, rdma.ErrPrivileges):
		if write {
			return E(KindPrivilegesViolation, SubPrivilegesWrite)
		}
		return E(KindPrivilegesViolation, SubPrivilegesRead)
	case errors.Is(err, rdma.ErrInvalid):
		return ErrArg(ArgLocalIOV)
	}
	return mapTransportError(err)
}

// postStateError is the error of a post on an EP that is neither connected
// nor disconnected.
func (ep *EP) postStateError() error {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.dead {
		return ErrHandle(SubHandleEP)
	}
	return ErrState(epStateSub(ep.state))
}

// sendFlags are the transport flags of a request. A suppressed request is
// unsignalled in the transport (its success makes no completion, as in
// verbs), except every so often: the send queue's slots of unsignalled
// requests are only freed by a later completion, so core signals one when
// half the queue is unsignalled, and drops its success itself.
func (ep *EP) sendFlags(f CompletionFlags) (rdma.SendFlags, bool) {
	var s rdma.SendFlags
	if f&CompletionSolicitedWait != 0 {
		s |= rdma.SendSolicited
	}
	if f&CompletionBarrierFence != 0 {
		s |= rdma.SendFence
	}
	if f&CompletionSuppress == 0 {
		ep.unsig = 0
		return s | rdma.SendSignaled, false
	}
	ep.unsig++
	if ep.unsig >= max(len(ep.sq.slots)/2, 1) {
		ep.unsig = 0
		return s | rdma.SendSignaled, true
	}
	return s, false
}

func (ep *EP) postRequest(op rdma.WROpcode, segs []Segment, cookie uint64, remote *RemoteSegment, flags CompletionFlags) error {
	if flags&^completionAll != 0 {
		return ErrArg(ArgCompletionFlags)
	}
	if ep.live.Load() != liveConn {
		return ep.postStateError()
	}
	// attr, reqEVD and the queue sizes change only in dat_ep_modify's
	// states, which are not live, so they are read without ep.mu.
	attr := &ep.attr
	// The unsignalled flag is only valid on an EP configured for it.
	if flags&CompletionUnsignalled != 0 && attr.RequestCompletionFlags&CompletionUnsignalled == 0 {
		return ErrArg(ArgCompletionFlags)
	}
	if ep.reqEVD == nil {
		return ErrState(SubStateEPEVDRequest)
	}
	// Only the transport's real limits apply here, as in the references:
	// segments against the EP's IOV depths (an RDMA IOV left 0 is as deep
	// as the request IOV; a read's never deeper than the device scatters
	// into), lengths against the IA's maxima. The EP's max_message_size
	// and max_rdma_size are checked against the IA when set, not enforced
	// per post: programs leave them 0.
	maxIOV := attr.MaxRequestIOV
	limit := ep.ia.attr.MaxMessageSize
	switch op {
	case rdma.WRRDMAWrite:
		maxIOV, limit = orDefault(attr.MaxRDMAWriteIOV, maxIOV), ep.ia.attr.MaxRDMASize
	case rdma.WRRDMARead:
		maxIOV = min(orDefault(attr.MaxRDMAReadIOV, maxIOV), ep.ia.attr.maxReadIOV)
		limit = ep.ia.attr.MaxRDMASize
	}
	// No defer: it costs a post about 30 instructions, and nothing under
	// the lock panics.
	ep.sendMu.Lock()
	err := ep.postLocked(op, segs, cookie, remote, flags, maxIOV, limit)
	ep.sendMu.Unlock()
	return err
}

// postLocked is postRequest's part under ep.sendMu.
func (ep *EP) postLocked(op rdma.WROpcode, segs []Segment, cookie uint64, remote *RemoteSegment, flags CompletionFlags, maxIOV int, limit uint64) error {
	sgl, total, err := fillSGL(ep.sge[:], segs, maxIOV)
	if err != nil {
		return err
	}
	if total > limit {
		return ErrLength
	}
	// A write must fit the remote buffer; a read moves the remote buffer,
	// which must fit the local one, filling the front segments first.
	switch {
	case op == rdma.WRRDMAWrite && total > remote.Length,
		op == rdma.WRRDMARead && remote.Length > total:
		return ErrLength
	case op == rdma.WRRDMARead && remote.Length < total:
		sgl = trimSGL(sgl, remote.Length)
		total = remote.Length
	}
	depth := len(ep.sq.slots)
	if ep.sq.full(depth) {
		// Slots of unsignalled requests come back only when the request
		// EVD's CQ is polled: poll it now rather than refuse.
		ep.reqEVD.pump(1)
		if ep.sq.full(depth) {
			return E(KindInsufficientResources, SubResourceTEP)
		}
	}
	tf, forced := ep.sendFlags(flags)
	seq := ep.sq.tail.Load()
	slot := &ep.sq.slots[seq&ep.sq.mask]
	slot.cookie, slot.length, slot.flags, slot.op = cookie, total, flags, op
	if forced {
		slot.flags |= completionForced
	}
	// Published before the post: the completion may be polled before
	// PostSend returns.
	ep.sq.tail.Store(seq + 1)
	wr := &ep.wr // field by field, as in recvEvent
	*wr = rdma.SendWR{}
	wr.WRID, wr.Opcode, wr.SGL, wr.Flags = wrid(wrSend, ep.id, seq), op, sgl, tf
	if remote != nil {
		wr.RemoteAddr, wr.RKey = remote.Addr, remote.RMRContext
	}
	err = ep.qp.PostSend(wr)
	wr.SGL = nil
	if err != nil {
		ep.sq.tail.Store(seq)
		if errors.Is(err, rdma.ErrState) {
			// The QP is not connected yet or any more, and core has not
			// heard: report the EP's state.
			return ep.postStateError()
		}
		return postError(err, op == rdma.WRRDMARead)
	}
	return nil
}

// completionForced marks a suppressed request core signalled anyway (see
// sendFlags); it is not a DAT flag.
const completionForced CompletionFlags = 1 << 31

// trimSGL shortens sgl in place to carry exactly n bytes.
func trimSGL(sgl []rdma.SGE, n uint64) []rdma.SGE {
	for i := range sgl {
		if uint64(sgl[i].Length) >= n {
			sgl[i].Length = uint32(n)
			return sgl[:i+1]
		}
		n -= uint64(sgl[i].Length)
	}
	return sgl
}

// PostRecv posts a receive (dat_ep_post_recv). Receives may be posted in any
// state but free; they wait for the connection.
func (ep *EP) PostRecv(segs []Segment, cookie uint64, flags CompletionFlags) error {
	if flags&^completionAll != 0 {
		return ErrArg(ArgCompletionFlags)
	}
	ep.recvMu.Lock() // no defer, as in postRequest
	err := ep.postRecvLocked(segs, cookie, flags)
	ep.recvMu.Unlock()
	return err
}

// postRecvLocked is PostRecv's part under ep.recvMu. What it reads of the
// EP (dead, the receive EVD, the receive attributes) is written under
// recvMu as well as ep.mu, so a post takes no ep.mu (the SRQ is the EP's
// for life).
func (ep *EP) postRecvLocked(segs []Segment, cookie uint64, flags CompletionFlags) error {
	switch {
	case ep.dead:
		return ErrHandle(SubHandleEP)
	case ep.srq != nil:
		return ErrState(SubNone)
	case ep.recvEVD == nil:
		return ErrState(SubStateEPEVDRecv)
	case flags&CompletionUnsignalled != 0 && ep.attr.RecvCompletionFlags&CompletionUnsignalled == 0:
		return ErrArg(ArgCompletionFlags)
	}
	sgl, _, err := fillSGL(ep.rsge[:], segs, ep.attr.MaxRecvIOV)
	if err != nil {
		return err
	}
	if ep.rq.full(len(ep.rq.slots)) {
		return E(KindInsufficientResources, SubResourceTEP)
	}
	seq := ep.rq.tail.Load()
	slot := &ep.rq.slots[seq&ep.rq.mask]
	// Receives always complete: only the notification flag applies.
	slot.cookie, slot.flags = cookie, flags&CompletionUnsignalled
	ep.rq.tail.Store(seq + 1)
	ep.rwr = rdma.RecvWR{WRID: wrid(wrRecv, ep.id, seq), SGL: sgl}
	err = ep.qp.PostRecv(&ep.rwr)
	ep.rwr.SGL = nil
	if err != nil {
		ep.rq.tail.Store(seq)
	}
	return postError(err, true)
}

// sendDone converts a send-queue completion of request seq into out; it
// reports whether it makes an event. Every earlier request without its own
// completion was unsignalled and has completed successfully (verbs
// semantics: a send queue completes in order). Runs under the request
// EVD's pollMu.
func (ep *EP) sendDone(seq uint32, wc *rdma.WC, out *Event) bool {
	q := &ep.sq
	h := q.head.Load()
	if seq-h >= q.tail.Load()-h {
		// Not an outstanding request: a transport that broke the rules.
		Logf(LevelWarn, "EP %#x: completion of request %d, none outstanding there", ep.Handle(), seq)
		return false
	}
	s := q.slots[seq&q.mask]
	q.head.Store(seq + 1)
	status := dtoStatus(wc.Status)
	if status == DTOSuccess && s.flags&CompletionSuppress != 0 {
		return false
	}
	length := s.length
	if status != DTOSuccess {
		length = 0
	}
	*out = Event{Number: EventDTOCompletion, EP: ep, Cookie: s.cookie, Length: length, Status: status,
		notify: s.flags&CompletionUnsignalled == 0}
	return true
}

// recvDone converts a completion of the EP's own receive seq into out;
// reaped says the caller hands out to the consumer at once (recvEvent).
func (ep *EP) recvDone(seq uint32, wc *rdma.WC, out *Event, reaped bool) bool {
	q := &ep.rq
	h := q.head.Load()
	if seq-h >= q.tail.Load()-h {
		Logf(LevelWarn, "EP %#x: completion of receive %d, none outstanding there", ep.Handle(), seq)
		return false
	}
	s := q.slots[seq&q.mask]
	q.head.Store(seq + 1)
	ep.recvEvent(s.cookie, s.flags, wc, nil, out, reaped)
	return true
}

// recvEvent fills out with the event of a receive completion of the EP and
// keeps the receive accounting: a buffer that took a message is held at
// the EP until the consumer reaps its completion. reaped says the consumer
// gets the event now (a dequeue's direct path): the buffer is taken and
// given back in one step, so the watermarks see it counted and the held
// count itself is left alone (two locked additions fewer per receive).
func (ep *EP) recvEvent(cookie uint64, flags CompletionFlags, wc *rdma.WC, srq *SRQ, out *Event, reaped bool) {
	status := dtoStatus(wc.Status)
	length := uint64(wc.ByteLen)
	if status != DTOSuccess {
		length = 0
	}
	// Field by field: a literal is built aside and copied, and the wide
	// loads of that copy wait for the narrow stores that built it.
	*out = Event{}
	out.Number, out.EP, out.Cookie, out.Length, out.Status = EventDTOCompletion, ep, cookie, length, status
	out.notify, out.srq = true, srq
	switch {
	case flags&CompletionUnsignalled != 0:
		out.notify = false
	case status == DTOSuccess && ep.solicitedOnly.Load() && wc.Flags&rdma.WCSolicited == 0 &&
		ep.ia.dev.attr.Caps&rdma.CapSolicitedFlag != 0:
		// Without the flag from the transport every receive notifies:
		// better a waiter woken early than one never woken.
		out.notify = false
	}
	switch {
	case status == DTOFlushed:
	case reaped:
		ep.tookBuffer(ep.held.Load() + 1)
	default:
		out.held = true
		ep.tookBuffer(ep.held.Add(1))
	}
}
