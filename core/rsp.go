package core

import "godat/rdma"

// RSP is a reserved service point: a qualifier bound to one EP, good for
// one connection request.
type RSP struct {
	Object
	ia   *IA
	qual uint64
	ep   *EP
	evd  *EVD
	lis  rdma.Listener
	id   uint32 // names the RSP to the transport (the listener's context)
	dead bool
}

// CreateRSP reserves qual for ep (dat_rsp_create); ep moves to the reserved
// state until a request arrives.
func (ia *IA) CreateRSP(qual uint64, ep *EP, evd *EVD) (*RSP, error) {
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if err := ia.liveLocked(); err != nil {
		return nil, err
	}
	if ep == nil || ep.ia != ia {
		return nil, ErrHandle(SubHandleEP)
	}
	// Any live request EVD will do, of this IA or another (see CreateEP).
	if evd == nil || !evd.acquire(EVDCR) {
		return nil, ErrHandle(SubHandleEVDCR)
	}
	ep.mu.Lock()
	if ep.dead {
		ep.mu.Unlock()
		evd.use(-1)
		return nil, ErrHandle(SubHandleEP)
	}
	if ep.state != EPUnconnected {
		s := ep.state
		ep.mu.Unlock()
		evd.use(-1)
		return nil, ErrState(epStateSub(s))
	}
	ep.mu.Unlock()
	r := &RSP{ia: ia, qual: qual, ep: ep, evd: evd}
	r.kind = TypeRSP
	id, ok := spIDs.add(&spRef{rsp: r})
	if !ok {
		evd.use(-1)
		return nil, E(KindInsufficientResources, SubResourceMemory)
	}
	r.id = id
	lis, err := ia.dev.dev.Listen(ia.cm, qual, false, evd.backlog(), uint64(id))
	if err != nil {
		spIDs.remove(id)
		evd.use(-1)
		return nil, mapTransportError(err)
	}
	r.lis = lis
	if err := bindLocked(ia, ia.rsps, r); err != nil {
		lis.Close()
		spIDs.remove(id)
		evd.use(-1)
		return nil, err
	}
	ep.mu.Lock()
	ep.setStateLocked(EPReserved)
	ep.rsp = r
	ep.mu.Unlock()
	return r, nil
}

// RSPParams is what dat_rsp_query reports.
type RSPParams struct {
	Qual uint64
	EVD  *EVD
	EP   *EP
}

// IA is the RSP's interface adapter.
func (r *RSP) IA() *IA { return r.ia }

// Query reports the RSP's parameters.
func (r *RSP) Query() (RSPParams, error) {
	r.ia.mu.Lock()
	defer r.ia.mu.Unlock()
	if r.dead {
		return RSPParams{}, ErrHandle(SubHandleRSP)
	}
	return RSPParams{Qual: r.qual, EVD: r.evd, EP: r.ep}, nil
}

// connRequest delivers an arriving request (from the CM goroutine): the
// reserved EP becomes passive-pending and the RSP stops listening.
func (r *RSP) connRequest(req rdma.ConnRequest) {
	r.ia.mu.Lock()
	if r.dead {
		r.ia.mu.Unlock()
		req.Reject(rdma.RejectRefused, nil)
		return
	}
	ep := r.ep
	ep.mu.Lock()
	ok := !ep.dead && ep.state == EPReserved
	if ok {
		ep.setStateLocked(EPPassiveConnectionPending)
	}
	ep.mu.Unlock()
	r.ia.mu.Unlock()
	if !ok {
		req.Reject(rdma.RejectRefused, nil)
		return
	}
	if !r.ia.newCR(r, r.evd, ep, req) {
		// Not delivered (backlog full, IA closing, RSP freed meanwhile): the
		// EP is reserved again, or unconnected if dat_rsp_free ran while the
		// request was on its way (free only unreserves a reserved EP).
		ep.mu.Lock()
		if ep.state == EPPassiveConnectionPending {
			if ep.rsp == r {
				ep.setStateLocked(EPReserved)
			} else {
				ep.setStateLocked(EPUnconnected)
			}
		}
		ep.mu.Unlock()
	}
}

// Free releases the qualifier (dat_rsp_free); a reserved EP returns to the
// unconnected state.
func (r *RSP) Free() error {
	r.ia.mu.Lock()
	defer r.ia.mu.Unlock()
	if r.dead {
		return ErrHandle(SubHandleRSP)
	}
	r.destroyLocked()
	return nil
}

func (r *RSP) destroyLocked() {
	r.dead = true
	r.lis.Close()
	spIDs.remove(r.id)
	r.ep.mu.Lock()
	if r.ep.state == EPReserved {
		r.ep.setStateLocked(EPUnconnected)
	}
	r.ep.rsp = nil
	r.ep.mu.Unlock()
	r.evd.use(-1)
	delete(r.ia.rsps, r)
	r.ia.handles.Release(r)
}
