package core

import (
	"errors"

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
// DAT_DTO_ERR_FLUSHED, as the post pages require.
func (ep *EP) flush(sink *epSink, cookie uint64) {
	sink.PushCompletion(&rdma.Completion{Status: rdma.StatusFlushed, Cookie: cookie, QP: ep.qp})
}

func sendFlags(f CompletionFlags) rdma.SendFlags {
	var s rdma.SendFlags
	if f&CompletionSuppress == 0 {
		s |= rdma.SendSignaled
	}
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
	maxIOV := ep.attr.MaxRequestIOV
	switch op {
	case rdma.OpWrite:
		maxIOV = ep.attr.MaxRDMAWriteIOV
	case rdma.OpRead:
		maxIOV = ep.attr.MaxRDMAReadIOV
	}
	sgl, total, err := ep.fillSGLLocked(segs, maxIOV)
	if err != nil {
		ep.mu.Unlock()
		return err
	}
	limit := ep.attr.MaxMessageSize
	if op != rdma.OpSend {
		limit = ep.attr.MaxRDMASize
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
		ep.flush(&ep.reqSink, cookie)
		return nil
	}
	wr := &ep.wr
	*wr = rdma.SendWR{Op: op, Cookie: cookie, SGL: sgl, Flags: sendFlags(flags)}
	if remote != nil {
		wr.RemoteAddr, wr.RKey = remote.Addr, remote.RMRContext
	}
	err = ep.qp.PostSend(wr)
	ep.mu.Unlock()
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
	if ep.state == EPDisconnected {
		// Accepted and flushed at once, as for the request posts; the
		// flush's completion counts it out again.
		ep.rqPosted.Add(1)
		ep.flush(&ep.recvSink, cookie)
		return nil
	}
	ep.rwr = rdma.RecvWR{Cookie: cookie, SGL: sgl}
	// Counted before the post: its completion may be pushed before
	// PostRecv returns.
	ep.rqPosted.Add(1)
	err = ep.qp.PostRecv(&ep.rwr)
	if err != nil {
		ep.rqPosted.Add(-1)
	}
	return postError(err, true)
}
