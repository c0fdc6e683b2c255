package core

import "godat/rdma"

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

func (ep *EP) postRequest(op rdma.Op, segs []Segment, cookie uint64, remote *RemoteSegment, flags CompletionFlags) error {
	if flags&^completionAll != 0 {
		if op == rdma.OpSend {
			return ErrArg(5)
		}
		return ErrArg(6)
	}
	ep.mu.Lock()
	if err := ep.checkPostStateLocked(); err != nil {
		ep.mu.Unlock()
		return err
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
	return mapTransportError(err)
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
	sgl, _, err := ep.fillSGLLocked(segs, ep.attr.MaxRecvIOV)
	if err != nil {
		return err
	}
	ep.rwr = rdma.RecvWR{Cookie: cookie, SGL: sgl}
	// Counted before the post: its completion may be pushed before
	// PostRecv returns.
	ep.rqPosted.Add(1)
	err = ep.qp.PostRecv(&ep.rwr)
	if err != nil {
		ep.rqPosted.Add(-1)
	}
	return mapTransportError(err)
}
