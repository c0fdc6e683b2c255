package core

import "godat/rdma"

// PSPFlags select who creates the EP for an arriving request.
type PSPFlags uint8

// PSP flags: the consumer creates the EP (the default), or the provider
// does and hands it over with the request.
const (
	PSPConsumer PSPFlags = iota
	PSPProvider
)

// PSP is a public service point: a listening connection qualifier.
type PSP struct {
	Object
	ia    *IA
	qual  uint64
	evd   *EVD
	flags PSPFlags
	lis   rdma.Listener
	id    uint32 // names the PSP to the transport (the listener's context)
	dead  bool
}

// CreatePSP listens on qual (dat_psp_create), or on any free qualifier when
// any is true (dat_psp_create_any); the chosen qualifier is returned.
func (ia *IA) CreatePSP(qual uint64, any bool, evd *EVD, flags PSPFlags) (*PSP, uint64, error) {
	if flags != PSPConsumer && flags != PSPProvider {
		return nil, 0, ErrArg(ArgPSPFlags)
	}
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if err := ia.liveLocked(); err != nil {
		return nil, 0, err
	}
	// Any live request EVD will do, of this IA or another (see CreateEP).
	if evd == nil || !evd.acquire(EVDCR) {
		return nil, 0, ErrHandle(SubHandleEVDCR)
	}
	p := &PSP{ia: ia, evd: evd, flags: flags}
	p.kind = TypePSP
	id, ok := spIDs.add(&spRef{psp: p})
	if !ok {
		evd.use(-1)
		return nil, 0, E(KindInsufficientResources, SubResourceMemory)
	}
	p.id = id
	lis, err := ia.dev.dev.Listen(ia.cm, qual, any, evd.backlog(), uint64(id))
	if err != nil {
		spIDs.remove(id)
		evd.use(-1)
		return nil, 0, mapTransportError(err)
	}
	p.lis, p.qual = lis, lis.ServiceID()
	if err := bindLocked(ia, ia.psps, p); err != nil {
		lis.Close()
		spIDs.remove(id)
		evd.use(-1)
		return nil, 0, err
	}
	return p, p.qual, nil
}

// PSPParams is what dat_psp_query reports.
type PSPParams struct {
	Qual  uint64
	EVD   *EVD
	Flags PSPFlags
}

// IA is the PSP's interface adapter.
func (p *PSP) IA() *IA { return p.ia }

// Query reports the PSP's parameters.
func (p *PSP) Query() (PSPParams, error) {
	p.ia.mu.Lock()
	defer p.ia.mu.Unlock()
	if p.dead {
		return PSPParams{}, ErrHandle(SubHandlePSP)
	}
	return PSPParams{Qual: p.qual, EVD: p.evd, Flags: p.flags}, nil
}

// connRequest delivers an arriving request (from the CM goroutine). A PSP
// made with DAT_PSP_PROVIDER_FLAG first creates the request's EP.
func (p *PSP) connRequest(req rdma.ConnRequest) {
	if p.flags != PSPProvider {
		p.ia.newCR(p, p.evd, nil, req)
		return
	}
	ep, err := p.ia.providerEP()
	if err != nil {
		// No EP, no request: as in the references, whose provider
		// rejects a request it cannot create an EP for.
		Logf(LevelWarn, "PSP %#x: no endpoint for a request (%v); rejected", p.Handle(), err)
		req.Reject(rdma.RejectRefused, nil)
		return
	}
	if !p.ia.newCR(p, p.evd, ep, req) {
		p.ia.mu.Lock()
		ep.destroyLocked()
		p.ia.mu.Unlock()
	}
}

// providerEP creates the EP a DAT_PSP_PROVIDER_FLAG PSP gives each request.
// dat_psp_create(3DAT): "All Endpoints created by the Provider have
// DAT_HANDLE_NULL for the Protection Zone and all Event Dispatchers", and
// the consumer sets them with dat_ep_modify before it accepts. The
// attributes are the IA's defaults, as the references give them (OFED dapl
// and illumos udapl allocate the EP with default attributes; no transport
// carries the active side's). Its state is
// DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING, as in the references.
func (ia *IA) providerEP() (*EP, error) {
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if err := ia.liveLocked(); err != nil {
		return nil, err
	}
	ep, err := ia.newEPLocked(EPConfig{}, ia.DefaultEPAttr(), EPTentativeConnectionPending)
	if err != nil {
		return nil, err
	}
	ep.byProvider = true
	return ep, nil
}

// Free stops listening (dat_psp_free). Pending requests stay valid.
func (p *PSP) Free() error {
	p.ia.mu.Lock()
	defer p.ia.mu.Unlock()
	if p.dead {
		return ErrHandle(SubHandlePSP)
	}
	p.destroyLocked()
	return nil
}

func (p *PSP) destroyLocked() {
	p.dead = true
	p.lis.Close()
	spIDs.remove(p.id)
	p.evd.use(-1)
	delete(p.ia.psps, p)
	p.ia.handles.Release(p)
}
