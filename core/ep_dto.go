package core

import (
	"errors"
	"sync/atomic"

	"godat/rdma"
)

// RemoteSegment is the remote buffer of an RDMA operation (DAT_RMR_TRIPLET).
type RemoteSegment struct {
	RMRContext uint32
	_          uint32
	Addr       uint64
	Length     uint64
}

// fillSGL converts segments into the EP's reusable SGE buffer; ep.mu held.
func (ep *EP) fillSGLLocked(segs []Segment, maxIOV int) ([]rdma.SGE, uint64, error) {
	if len(segs) > maxIOV || len(segs) > len(ep.sge) {
		return nil, 0, ErrArg(2)
	}
	var total uint64
	for i := range segs {
		s := &segs[i]
		ep.sge[i] = rdma.SGE{Addr: s.Addr, Length: s.Length, LKey: s.LMRContext}
		total += s.Length
	}
	return ep.sge[:len(segs)], total, nil
}

func (ep *EP) checkPostStateLocked() error {
	if ep.dead {
		return ErrHandle(SubHandleEP)
	}
	if ep.state != EPConnected && ep.state != EPDisconnected {
		return ErrState(epStateSub(ep.state))
	}
	return nil
}

// flush completes a request posted on a disconnected EP at once with
// DAT_DTO_ERR_FLUSHED, as the post pages require. It never went to the
// transport, so it is not in the sink's queue of outstanding requests.
func (ep *EP) flush(sink *epSink, cookie uint64, flags CompletionFlags) {
	sink.complete(cookie, DTOFlushed, 0, false, flags)
}

// sendFlags are the transport flags of a request. Every request is
// signalled: suppression is the sink's business (see epSink).
func sendFlags(f CompletionFlags) rdma.SendFlags {
	s := rdma.SendSignaled
	if f&CompletionSolicitedWait != 0 {
		s |= rdma.SendSolicited
	}
	if f&CompletionBarrierFence != 0 {
		s |= rdma.SendFence
	}
	return s
}

// PostSend posts a send (dat_ep_post_send).
func (ep *EP) PostSend(segs []Segment, cookie uint64, flags CompletionFlags) error {
	return ep.postRequest(rdma.OpSend, segs, cookie, nil, flags)
}

// PostRDMAWrite posts an RDMA write (dat_ep_post_rdma_write).
func (ep *EP) PostRDMAWrite(segs []Segment, cookie uint64, remote *RemoteSegment, flags CompletionFlags) error {
	return ep.postRequest(rdma.OpWrite, segs, cookie, remote, flags)
}

// PostRDMARead posts an RDMA read (dat_ep_post_rdma_read).
func (ep *EP) PostRDMARead(segs []Segment, cookie uint64, remote *RemoteSegment, flags CompletionFlags) error {
	return ep.postRequest(rdma.OpRead, segs, cookie, remote, flags)
}

// postError turns a backend post failure into the post pages' codes: a
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
		return ErrArg(3) // local_iov
	}
	return mapTransportError(err)
}

func (ep *EP) postRequest(op rdma.Op, segs []Segment, cookie uint64, remote *RemoteSegment, flags CompletionFlags) error {
	flagsArg := 6
	if op == rdma.OpSend {
		flagsArg = 5
	}
	if flags&^completionAll != 0 {
		return ErrArg(flagsArg)
	}
	ep.mu.Lock()
	if err := ep.checkPostStateLocked(); err != nil {
		ep.mu.Unlock()
		return err
	}
	// The unsignalled flag is only valid on an EP configured for it.
	if flags&CompletionUnsignalled != 0 && ep.attr.RequestCompletionFlags&CompletionUnsignalled == 0 {
		ep.mu.Unlock()
		return ErrArg(flagsArg)
	}
	if ep.reqEVD == nil {
		ep.mu.Unlock()
		return ErrState(SubStateEPEVDRequest)
	}
	// Only the transport's real limits apply here, as in the references
	// (issue 13): segments against the EP's IOV depths (an RDMA IOV left 0
	// is as deep as the request IOV), lengths against the IA's maxima. The
	// EP's max_message_size and max_rdma_size are checked against the IA
	// when set, not enforced per post: programs leave them 0.
	maxIOV := ep.attr.MaxRequestIOV
	limit := ep.ia.attr.MaxMessageSize
	switch op {
	case rdma.OpWrite:
		maxIOV, limit = orDefault(ep.attr.MaxRDMAWriteIOV, maxIOV), ep.ia.attr.MaxRDMASize
	case rdma.OpRead:
		maxIOV, limit = orDefault(ep.attr.MaxRDMAReadIOV, maxIOV), ep.ia.attr.MaxRDMASize
	}
	sgl, total, err := ep.fillSGLLocked(segs, maxIOV)
	if err != nil {
		ep.mu.Unlock()
		return err
	}
	if total > limit {
		ep.mu.Unlock()
		return ErrLength
	}
	// A write must fit the remote buffer; a read moves the remote buffer,
	// which must fit the local one, filling the front segments first.
	switch {
	case op == rdma.OpWrite && total > remote.Length,
		op == rdma.OpRead && remote.Length > total:
		ep.mu.Unlock()
		return ErrLength
	case op == rdma.OpRead && remote.Length < total:
		sgl = trimSGL(sgl, remote.Length)
	}
	if ep.state == EPDisconnected {
		ep.mu.Unlock()
		ep.flush(&ep.reqSink, cookie, flags)
		return nil
	}
	// Recorded before the post: its completion may be pushed before
	// PostSend returns.
	if !ep.reqSink.posted.push(cookie, flags) {
		ep.mu.Unlock()
		return E(KindInsufficientResources, SubResourceTEP)
	}
	wr := &ep.wr
	*wr = rdma.SendWR{Op: op, Cookie: cookie, SGL: sgl, Flags: sendFlags(flags)}
	if remote != nil {
		wr.RemoteAddr, wr.RKey = remote.Addr, remote.RMRContext
	}
	err = ep.qp.PostSend(wr)
	if err != nil {
		ep.reqSink.posted.unpush()
	}
	ep.mu.Unlock()
	if errors.Is(err, rdma.ErrState) {
		// The connection ended and its event is on its way: the EP is
		// disconnected in all but name, and a post there is flushed.
		ep.flush(&ep.reqSink, cookie, flags)
		return nil
	}
	return postError(err, op == rdma.OpRead)
}

// trimSGL shortens sgl in place to carry exactly n bytes.
func trimSGL(sgl []rdma.SGE, n uint64) []rdma.SGE {
	for i := range sgl {
		if sgl[i].Length >= n {
			sgl[i].Length = n
			return sgl[:i+1]
		}
		n -= sgl[i].Length
	}
	return sgl
}

// PostRecv posts a receive (dat_ep_post_recv). Receives may be posted in any
// state but free; they wait for the connection.
func (ep *EP) PostRecv(segs []Segment, cookie uint64, flags CompletionFlags) error {
	if flags&^completionAll != 0 {
		return ErrArg(5)
	}
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.dead {
		return ErrHandle(SubHandleEP)
	}
	if ep.srq != nil {
		return ErrState(SubNone)
	}
	if ep.recvEVD == nil {
		return ErrState(SubStateEPEVDRecv)
	}
	if flags&CompletionUnsignalled != 0 && ep.attr.RecvCompletionFlags&CompletionUnsignalled == 0 {
		return ErrArg(5)
	}
	sgl, _, err := ep.fillSGLLocked(segs, ep.attr.MaxRecvIOV)
	if err != nil {
		return err
	}
	// Receives always complete: only the notification flag applies.
	flags &= CompletionUnsignalled
	if ep.state == EPDisconnected {
		// Accepted and flushed at once, as for the request posts; the
		// flush's completion counts it out again.
		ep.rqPosted.Add(1)
		ep.flush(&ep.recvSink, cookie, flags)
		return nil
	}
	if !ep.recvSink.posted.push(cookie, flags) {
		return E(KindInsufficientResources, SubResourceTEP)
	}
	ep.rwr = rdma.RecvWR{Cookie: cookie, SGL: sgl}
	// Counted before the post: its completion may be pushed before
	// PostRecv returns.
	ep.rqPosted.Add(1)
	err = ep.qp.PostRecv(&ep.rwr)
	if err != nil {
		ep.rqPosted.Add(-1)
		ep.recvSink.posted.unpush()
	}
	return postError(err, true)
}

// wrQueue is a work queue's outstanding requests in post order: one
// producer (the poster, under ep.mu) and one consumer (the transport, which
// pushes a queue's completions one at a time, in post order; see
// rdma.CompletionSink).
type wrQueue struct {
	ents       []wrEnt
	head, tail atomic.Uint64
}

type wrEnt struct {
	cookie uint64
	flags  CompletionFlags
}

// newWRQueue tracks a queue of depth requests, the depth the transport's
// queue was given, so the transport refuses a post before this queue does.
func newWRQueue(depth int) wrQueue {
	return wrQueue{ents: make([]wrEnt, pow2(depth))}
}

func pow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

// resize gives the queue room for depth requests, keeping the outstanding
// ones; no completion may be pushed meanwhile (the caller holds ep.mu in a
// state without traffic).
func (q *wrQueue) resize(depth int) {
	n := pow2(depth)
	if n == len(q.ents) {
		return
	}
	h, t := q.head.Load(), q.tail.Load()
	if t-h > uint64(n) {
		return // the transport refused a queue this short
	}
	ents := make([]wrEnt, n)
	for i := h; i < t; i++ {
		ents[i-h] = q.ents[i&uint64(len(q.ents)-1)]
	}
	q.ents = ents
	q.head.Store(0)
	q.tail.Store(t - h)
}

// push records a request about to be posted; false when the queue is full.
func (q *wrQueue) push(cookie uint64, flags CompletionFlags) bool {
	t := q.tail.Load()
	if t-q.head.Load() >= uint64(len(q.ents)) {
		return false
	}
	q.ents[t&uint64(len(q.ents)-1)] = wrEnt{cookie, flags}
	q.tail.Store(t + 1)
	return true
}

// unpush forgets the last request pushed: the transport refused it, so no
// completion will come for it.
func (q *wrQueue) unpush() { q.tail.Add(^uint64(0)) }

// pop takes the oldest request; ok is false when there was none or it does
// not carry cookie (a transport that broke the ordering rule).
func (q *wrQueue) pop(cookie uint64) (CompletionFlags, bool) {
	h := q.head.Load()
	if h == q.tail.Load() {
		return 0, false
	}
	e := q.ents[h&uint64(len(q.ents)-1)]
	q.head.Store(h + 1)
	return e.flags, e.cookie == cookie
}

// idle reports that no request is outstanding.
func (q *wrQueue) idle() bool { return q.head.Load() == q.tail.Load() }
