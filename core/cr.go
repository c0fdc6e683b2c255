package core

import (
	"net/netip"

	"godat/rdma"
)

// CR is a pending connection request.
type CR struct {
	Object
	ia      *IA
	sp      Obj // the PSP or RSP it arrived on
	req     rdma.ConnRequest
	ep      *EP // the reserved EP (RSP), or nil
	private []byte
	dead    bool
}

// newCR records an arriving request and posts DAT_CONNECTION_REQUEST_EVENT.
// The EVD's queue length is the service point's backlog (dat_psp_create):
// with that many events undequeued, the request is refused as if no one
// listened. It reports whether the request was delivered.
func (ia *IA) newCR(sp Obj, evd *EVD, ep *EP, req rdma.ConnRequest) bool {
	evd.mu.Lock()
	full := evd.count >= evd.qlen
	evd.mu.Unlock()
	if full {
		req.Reject(rdma.RejectRefused, nil)
		return false
	}
	ia.mu.Lock()
	if ia.closed.Load() || !spLiveLocked(sp) {
		// Nobody can answer it (the IA or service point went away while
		// it arrived): refuse it now rather than leave the active side
		// to its connect timeout.
		ia.mu.Unlock()
		req.Reject(rdma.RejectRefused, nil)
		return false
	}
	cr := &CR{ia: ia, sp: sp, req: req, ep: ep, private: append([]byte(nil), req.PrivateData()...)}
	cr.kind = TypeCR
	if err := bindLocked(ia, ia.crs, cr); err != nil {
		ia.mu.Unlock()
		req.Reject(rdma.RejectRefused, nil)
		return false
	}
	ia.mu.Unlock()
	evd.push(&Event{Number: EventConnectionRequest, SP: sp, CR: cr, ConnQual: spQual(sp, req), notify: true})
	return true
}

// spLiveLocked reports whether a service point still takes requests; ia.mu
// is held.
func spLiveLocked(sp Obj) bool {
	switch p := sp.(type) {
	case *PSP:
		return !p.dead
	case *RSP:
		return !p.dead
	}
	return false
}

// spQual is the qualifier of the service point a request is delivered to:
// after dat_cr_handoff that is the target PSP's, not the one dialled.
func spQual(sp Obj, req rdma.ConnRequest) uint64 {
	switch s := sp.(type) {
	case *PSP:
		return s.qual
	case *RSP:
		return s.qual
	}
	return req.ServiceID()
}

// CRParams is what dat_cr_query reports.
type CRParams struct {
	RemoteAddr  netip.AddrPort
	RemoteQual  uint64
	PrivateData []byte
	EP          *EP
}

// IA is the CR's interface adapter.
func (cr *CR) IA() *IA { return cr.ia }

// Query reports the request (dat_cr_query).
func (cr *CR) Query() (CRParams, error) {
	cr.ia.mu.Lock()
	defer cr.ia.mu.Unlock()
	if cr.dead {
		return CRParams{}, ErrHandle(SubHandleCR)
	}
	ra := cr.req.RemoteAddr()
	return CRParams{RemoteAddr: ra, RemoteQual: uint64(ra.Port()), PrivateData: cr.private, EP: cr.ep}, nil
}

// take consumes the CR: accept, reject and handoff each destroy it.
func (cr *CR) take() error {
	cr.ia.mu.Lock()
	defer cr.ia.mu.Unlock()
	if cr.dead {
		return ErrHandle(SubHandleCR)
	}
	cr.destroyLocked()
	return nil
}

// Accept accepts the request on ep (dat_cr_accept); ep may be nil when the
// request came through an RSP and carries its EP.
func (cr *CR) Accept(ep *EP, private []byte) error {
	if len(private) > cr.ia.attr.MaxPrivateData {
		return ErrArg(ArgPrivateData)
	}
	cr.ia.mu.Lock()
	if cr.dead {
		cr.ia.mu.Unlock()
		return ErrHandle(SubHandleCR)
	}
	provided := cr.ep != nil && cr.ep.byProvider
	switch {
	case ep == nil:
		ep = cr.ep
	case provided && ep != cr.ep:
		// The request carries its EP: another one is refused, as in the
		// references (dat_cr_accept(3DAT) names the EP either way).
		cr.ia.mu.Unlock()
		return ErrHandle(SubHandleEP)
	}
	if ep == nil || ep.ia != cr.ia {
		cr.ia.mu.Unlock()
		return ErrHandle(SubHandleEP)
	}
	ep.mu.Lock()
	if ep.dead {
		ep.mu.Unlock()
		cr.ia.mu.Unlock()
		return ErrHandle(SubHandleEP)
	}
	want := EPUnconnected
	switch {
	case provided && ep == cr.ep:
		want = EPTentativeConnectionPending
	case ep == cr.ep:
		want = EPPassiveConnectionPending
	}
	if ep.state != want {
		s := ep.state
		ep.mu.Unlock()
		cr.ia.mu.Unlock()
		return ErrState(epStateSub(s))
	}
	if ep.pz == nil {
		// A provider-created EP not given a PZ yet: the references
		// refuse it as an invalid EP, and the request stays pending.
		ep.mu.Unlock()
		cr.ia.mu.Unlock()
		return ErrHandle(SubHandleEP)
	}
	if ep.connEVD == nil {
		ep.mu.Unlock()
		cr.ia.mu.Unlock()
		return ErrState(SubStateEPEVDConnect)
	}
	ep.setStateLocked(EPCompletionPending)
	ep.byProvider = false // the consumer's from now on
	ep.remote = cr.req.RemoteAddr()
	ep.connQual = uint64(ep.remote.Port()) // the active side's port qualifier
	ep.passive, ep.lisQual = true, spQual(cr.sp, cr.req)
	ep.mu.Unlock()
	cr.destroyLocked()
	cr.ia.mu.Unlock()

	if err := cr.req.Accept(ep.qp, append([]byte(nil), private...)); err != nil {
		// The request could not be answered (the requester gave up, the
		// QP is gone): the accept completes with an error event, as the
		// transport would report a failure after it.
		Logf(LevelInfo, "dat_cr_accept: EP %#x: %v", ep.Handle(), err)
		ep.connEvent(rdma.CMAcceptError, nil)
	}
	return nil
}

// Reject refuses the request (dat_cr_reject); the active side gets
// DAT_CONNECTION_EVENT_PEER_REJECTED. The EP a provider created for the
// request "reverts to Provider Control" (dat_cr_reject(3DAT)) and is freed,
// as the references free it: its handle is invalid afterwards. An RSP's
// EP is the consumer's again, unconnected.
func (cr *CR) Reject() error {
	if err := cr.take(); err != nil {
		return err
	}
	if cr.ep != nil && cr.ep.byProvider {
		cr.ia.mu.Lock()
		cr.ep.destroyLocked()
		cr.ia.mu.Unlock()
	} else if cr.ep != nil {
		cr.ep.mu.Lock()
		if cr.ep.state == EPPassiveConnectionPending {
			cr.ep.setStateLocked(EPUnconnected)
		}
		cr.ep.mu.Unlock()
	}
	cr.req.Reject(rdma.RejectConsumer, nil)
	return nil
}

// Handoff passes the request to the PSP listening on qual of the same IA
// (dat_cr_handoff).
func (cr *CR) Handoff(qual uint64) error {
	ia := cr.ia
	ia.mu.Lock()
	if cr.dead {
		ia.mu.Unlock()
		return ErrHandle(SubHandleCR)
	}
	var target *PSP
	for p := range ia.psps {
		if p.qual == qual && !p.dead {
			target = p
			break
		}
	}
	if target == nil || cr.ep != nil {
		ia.mu.Unlock()
		return ErrArg(ArgConnQual)
	}
	cr.destroyLocked()
	ia.mu.Unlock()
	ia.newCR(target, target.evd, nil, cr.req)
	return nil
}

func (cr *CR) destroyLocked() {
	cr.dead = true
	delete(cr.ia.crs, cr)
	cr.ia.handles.Release(cr)
}
