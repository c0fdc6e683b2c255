package core

import "godat/rdma"

// RMR is a remote memory region: a window onto part of an LMR that a peer
// may access with the RMR context the bind produced.
type RMR struct {
	Object
	ia   *IA
	pz   *PZ
	mr   rdma.MR // nil while unbound
	lmr  *LMR    // the LMR the RMR is bound to, nil while unbound
	seg  Segment
	priv MemPriv
	dead bool
}

// CreateRMR creates an unbound RMR (dat_rmr_create).
func (pz *PZ) CreateRMR() (*RMR, error) {
	ia := pz.ia
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if err := ia.liveLocked(); err != nil {
		return nil, err
	}
	if err := pz.usableLocked(ia); err != nil {
		return nil, err
	}
	if len(ia.rmrs) >= ia.attr.MaxRMRs {
		return nil, E(KindInsufficientResources, SubResourceMemoryRegion)
	}
	r := &RMR{ia: ia, pz: pz}
	r.kind = TypeRMR
	if err := bindLocked(ia, ia.rmrs, r); err != nil {
		return nil, err
	}
	pz.users++
	return r, nil
}

// RMRInfo is what dat_rmr_query reports.
type RMRInfo struct {
	PZ         *PZ
	Segment    Segment
	Priv       MemPriv
	RMRContext uint32
}

// IA is the RMR's interface adapter.
func (r *RMR) IA() *IA { return r.ia }

// Query reports the RMR's parameters.
func (r *RMR) Query() (RMRInfo, error) {
	r.ia.mu.Lock()
	defer r.ia.mu.Unlock()
	if r.dead {
		return RMRInfo{}, ErrHandle(SubHandleRMR)
	}
	i := RMRInfo{PZ: r.pz, Segment: r.seg, Priv: r.priv}
	if r.mr != nil {
		i.RMRContext = r.mr.RKey()
	}
	return i, nil
}

// Bind binds the RMR to seg of an LMR with remote privileges priv through ep
// (dat_rmr_bind), completing with an RMR bind event on ep's request EVD. A
// zero-length segment unbinds. The previous context stops working at once.
func (r *RMR) Bind(seg Segment, priv MemPriv, ep *EP, cookie uint64, flags CompletionFlags) (uint32, error) {
	if priv&^(PrivRemoteRead|PrivRemoteWrite|PrivLocalRead|PrivLocalWrite) != 0 {
		return 0, ErrArg(ArgMemPriv)
	}
	if flags&^completionAll != 0 {
		return 0, ErrArg(ArgCompletionFlags)
	}
	ia := r.ia
	ia.mu.Lock()
	if r.dead {
		ia.mu.Unlock()
		return 0, ErrHandle(SubHandleRMR)
	}
	if ep == nil || ep.ia != ia {
		ia.mu.Unlock()
		return 0, ErrHandle(SubHandleEP)
	}
	ep.mu.Lock()
	st, dead, evd, reqFlags := ep.state, ep.dead, ep.reqEVD, ep.attr.RequestCompletionFlags
	ep.mu.Unlock()
	if dead {
		ia.mu.Unlock()
		return 0, ErrHandle(SubHandleEP)
	}
	if flags&CompletionUnsignalled != 0 && reqFlags&CompletionUnsignalled == 0 {
		// dat_rmr_bind(3DAT): only valid when the EP's request
		// completion flags have DAT_COMPLETION_UNSIGNALLED_FLAG.
		ia.mu.Unlock()
		return 0, ErrArg(ArgCompletionFlags)
	}
	if st != EPConnected && st != EPDisconnected {
		ia.mu.Unlock()
		return 0, ErrState(epStateSub(st))
	}
	if ep.pz != r.pz {
		ia.mu.Unlock()
		return 0, E(KindProtectionViolation, SubNone)
	}
	var mr rdma.MR
	var l *LMR
	if seg.Length != 0 {
		l = ia.lmrByContextLocked(seg.LMRContext)
		if l == nil {
			ia.mu.Unlock()
			return 0, ErrArg(ArgLocalIOV)
		}
		if seg.Addr < l.addr || seg.Addr+seg.Length > l.addr+l.length || seg.Addr+seg.Length < seg.Addr {
			ia.mu.Unlock()
			return 0, ErrArg(ArgLocalIOV)
		}
		if priv&PrivRemoteRead != 0 && l.priv&PrivLocalRead == 0 ||
			priv&PrivRemoteWrite != 0 && l.priv&PrivLocalWrite == 0 {
			ia.mu.Unlock()
			return 0, E(KindPrivilegesViolation, SubNone)
		}
		if l.pz != r.pz {
			ia.mu.Unlock()
			return 0, E(KindProtectionViolation, SubNone)
		}
		// The window's local rights are the LMR's, which were checked to
		// cover the remote ones (the transport wants local write under
		// remote write).
		access := priv.access() | (l.priv & (PrivLocalRead | PrivLocalWrite)).access()
		if st == EPDisconnected {
			return r.flushBindLocked(evd, cookie, flags)
		}
		var err error
		if mr, err = r.pz.pd.RegMR(seg.Addr, seg.Length, access); err != nil {
			ia.mu.Unlock()
			return 0, mapTransportError(err)
		}
	} else if st == EPDisconnected {
		return r.flushBindLocked(evd, cookie, flags)
	}
	if r.mr != nil {
		r.mr.Dereg()
	}
	if r.lmr != nil {
		r.lmr.users--
	}
	if l != nil {
		l.users++
	}
	r.mr, r.lmr, r.seg, r.priv = mr, l, seg, priv
	var ctx uint32
	if mr != nil {
		ctx = mr.RKey()
	}
	ia.mu.Unlock()

	if evd != nil && flags&CompletionSuppress == 0 {
		evd.push(&Event{Number: EventRMRBindCompletion, RMR: r, Cookie: cookie, Status: DTOSuccess,
			notify: flags&CompletionUnsignalled == 0})
	}
	return ctx, nil
}

// flushBindLocked completes a bind posted on a disconnected EP: flushed at
// once, as any post there, and binding nothing. It unlocks ia.mu.
func (r *RMR) flushBindLocked(evd *EVD, cookie uint64, flags CompletionFlags) (uint32, error) {
	var ctx uint32
	if r.mr != nil {
		ctx = r.mr.RKey()
	}
	r.ia.mu.Unlock()
	if evd != nil {
		evd.push(&Event{Number: EventRMRBindCompletion, RMR: r, Cookie: cookie, Status: DTOFlushed,
			notify: flags&CompletionUnsignalled == 0})
	}
	return ctx, nil
}

// Free destroys the RMR (dat_rmr_free); its context stops working.
func (r *RMR) Free() error {
	r.ia.mu.Lock()
	defer r.ia.mu.Unlock()
	if r.dead {
		return ErrHandle(SubHandleRMR)
	}
	r.destroyLocked()
	return nil
}

func (r *RMR) destroyLocked() {
	r.dead = true
	if r.mr != nil {
		r.mr.Dereg()
		r.mr = nil
	}
	if r.lmr != nil {
		r.lmr.users--
		r.lmr = nil
	}
	r.pz.users--
	delete(r.ia.rmrs, r)
	r.ia.handles.Release(r)
}
