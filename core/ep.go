package core

import (
	"errors"
	"math"
	"net/netip"
	"sync"
	"sync/atomic"

	"godat/rdma"
)

// EP is an endpoint: a reliable connection and its work queues.
type EP struct {
	Object
	ia   *IA
	pz   *PZ
	srq  *SRQ
	qp   rdma.QP
	attr EPAttr

	recvEVD, reqEVD, connEVD *EVD
	recvSink, reqSink        epSink

	mu       sync.Mutex
	state    EPState
	remote   netip.AddrPort
	connQual uint64 // remote qualifier: the one dialled, or the active peer's port
	passive  bool   // the connection was accepted on this EP
	lisQual  uint64 // the qualifier a passive EP's request came in on
	private  []byte // the peer's private data, valid while connected
	cr       *CR    // the pending request this EP is accepting
	rsp      *RSP   // the reserved service point holding this EP
	sge      [32]rdma.SGE
	wr       rdma.SendWR
	rwr      rdma.RecvWR
	dead     bool
	hwBroken bool // the coming disconnect is the hard watermark's: report BROKEN
	// byProvider: created for a request of a DAT_PSP_PROVIDER_FLAG PSP, and
	// the provider's until accepted (dat_cr_reject frees it).
	byProvider bool

	// Receive accounting, updated by the sinks under the QP's lock, hence
	// atomics (the sinks must not take ep.mu). held is the watermarks'
	// "buffers at the EP" (see SRQ); rqPosted counts receives posted to the
	// EP's own queue and not completed (dat_ep_recv_query).
	held     atomic.Int32
	rqPosted atomic.Int32
	softArm  atomic.Int32 // armed soft high watermark; wmOff once fired or infinite
	hardWM   atomic.Int32 // hard high watermark; wmOff when infinite
	breaking atomic.Bool  // a hard-watermark disconnect is under way
}

// WatermarkInfinite is DAT_WATERMARK_INFINITE: no high watermark.
const WatermarkInfinite = -1

// wmOff is a threshold no count exceeds.
const wmOff = math.MaxInt32

func wmThreshold(v int) int32 {
	if v < 0 || v >= wmOff {
		return wmOff
	}
	return int32(v)
}

// epSink turns the transport's completions of one work queue (receives, or
// requests) into DTO events on the EP's EVD. The transport is asked for a
// completion of every request and pushes them in post order; the sink
// matches each to the flags it was posted with, so suppression and per-post
// notification control are decided here, the same way for every backend.
type epSink struct {
	ep            *EP
	evd           *EVD
	recv          bool
	solicitedOnly atomic.Bool // receive stream in solicited wait mode
	posted        wrQueue     // the queue's requests (not an SRQ's receives)
}

func (s *epSink) PushCompletion(c *rdma.Completion) {
	var flags CompletionFlags
	if !s.recv || s.ep.srq == nil {
		var ok bool
		if flags, ok = s.posted.pop(c.Cookie); !ok {
			Logf(LevelWarn, "EP %#x: completion of cookie %#x out of post order", s.ep.Handle(), c.Cookie)
			flags = 0
		}
	}
	s.complete(c.Cookie, DTOStatus(c.Status), c.Length, c.Solicited, flags)
}

// complete turns one completion into an event unless its success was
// suppressed, and keeps the receive accounting.
func (s *epSink) complete(cookie uint64, status DTOStatus, length uint64, solicited bool, flags CompletionFlags) {
	ep := s.ep
	var srq *SRQ
	held := false
	if s.recv {
		srq = ep.srq
		if srq == nil {
			ep.rqPosted.Add(-1)
		}
		if s.evd == nil {
			// Nobody will reap this completion: the buffer is back now.
			if srq != nil {
				srq.outstanding.Add(-1)
			}
			return
		}
		if status != DTOFlushed {
			// A message consumed this buffer: it is at the EP until the
			// consumer dequeues the completion.
			held = true
			ep.tookBuffer(ep.held.Add(1))
		}
	} else if s.evd == nil || status == DTOSuccess && flags&CompletionSuppress != 0 {
		return
	}
	ev := Event{Number: EventDTOCompletion, EP: ep, Cookie: cookie, Length: length,
		Status: status, notify: true, srq: srq, held: held}
	switch {
	case flags&CompletionUnsignalled != 0:
		ev.notify = false
	case s.recv && s.solicitedOnly.Load() && !solicited && status == DTOSuccess:
		ev.notify = false
	}
	s.evd.push(&ev)
}

// EPConfig is what dat_ep_create and dat_ep_create_with_srq take.
type EPConfig struct {
	PZ                       *PZ
	RecvEVD, ReqEVD, ConnEVD *EVD
	SRQ                      *SRQ
	Attr                     *EPAttr // nil: defaults
}

// CreateEP creates an endpoint (dat_ep_create, dat_ep_create_with_srq).
func (ia *IA) CreateEP(cfg EPConfig) (*EP, error) {
	attr := ia.DefaultEPAttr()
	if cfg.Attr != nil {
		attr = *cfg.Attr
		arg := 6
		if cfg.SRQ != nil {
			arg = 7
			if attr.SRQSoftHW < WatermarkInfinite {
				return nil, ErrArg(arg)
			}
		}
		if err := ia.checkEPAttr(&attr, arg); err != nil {
			return nil, err
		}
	}
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if err := ia.liveLocked(); err != nil {
		return nil, err
	}
	if err := cfg.PZ.usableLocked(ia); err != nil {
		return nil, err
	}
	if cfg.SRQ != nil {
		if err := cfg.SRQ.usableLocked(ia); err != nil {
			return nil, err
		}
	}
	// Any live EVD of the right kind will do, of this IA or another (see
	// relay.go); each is counted as used as it is checked, and let go
	// again if the EP is not made after all.
	var held []*EVD
	release := func() {
		for _, e := range held {
			e.use(-1)
		}
	}
	for _, c := range []struct {
		evd  *EVD
		flag EVDFlags
		sub  Sub
	}{{cfg.RecvEVD, EVDDTO, SubHandleEVDRecv}, {cfg.ReqEVD, EVDDTO, SubHandleEVDRequest}, {cfg.ConnEVD, EVDConnection, SubHandleEVDConn}} {
		if c.evd == nil {
			continue
		}
		if !c.evd.acquire(c.flag) {
			release()
			return nil, ErrHandle(c.sub)
		}
		held = append(held, c.evd)
	}
	ep, err := ia.newEPLocked(cfg, attr, EPUnconnected)
	if err != nil {
		release()
		return nil, err
	}
	return ep, nil
}

// newEPLocked makes an EP in state with the PZ, EVDs and SRQ of cfg (which
// the caller checked and holds) and attr; ia.mu is held. A nil PZ is a
// provider-created EP's (see PSP.ConnRequest): its queue pair is in
// protection domain 0, which is no PZ's, until dat_ep_modify gives it one.
func (ia *IA) newEPLocked(cfg EPConfig, attr EPAttr, state EPState) (*EP, error) {
	if len(ia.eps) >= ia.attr.MaxEPs {
		return nil, E(KindInsufficientResources, SubResourceTEP)
	}
	ep := &EP{ia: ia, pz: cfg.PZ, srq: cfg.SRQ, attr: attr, state: state,
		recvEVD: cfg.RecvEVD, reqEVD: cfg.ReqEVD, connEVD: cfg.ConnEVD}
	ep.kind = TypeEP
	// srq_soft_hw is the initial soft high watermark of an EP that uses an
	// SRQ; other EPs start unarmed (dat_ep_set_watermark arms any EP).
	ep.softArm.Store(wmOff)
	if cfg.SRQ != nil {
		ep.softArm.Store(wmThreshold(attr.SRQSoftHW))
	}
	ep.hardWM.Store(wmOff)
	ep.recvSink = epSink{ep: ep, evd: cfg.RecvEVD, recv: true, posted: newWRQueue(ia.recvDepth(attr))}
	ep.reqSink = epSink{ep: ep, evd: cfg.ReqEVD, posted: newWRQueue(attr.MaxRequestDTOs)}
	ep.recvSink.solicitedOnly.Store(attr.RecvCompletionFlags&CompletionSolicitedWait != 0)
	qcfg := rdma.QPConfig{
		SendCQ: &ep.reqSink, RecvCQ: &ep.recvSink, Conn: ep,
		MaxSend: attr.MaxRequestDTOs, MaxRecv: ia.recvDepth(attr),
		MaxSendSGE: max(attr.MaxRequestIOV, attr.MaxRDMAReadIOV, attr.MaxRDMAWriteIOV), MaxRecvSGE: attr.MaxRecvIOV,
		MaxReadsOut: attr.MaxRDMAReadOut, MaxReadsIn: attr.MaxRDMAReadIn,
	}
	if cfg.PZ != nil {
		qcfg.PD = cfg.PZ.id
	}
	if cfg.SRQ != nil {
		qcfg.SRQ = cfg.SRQ.backend
	}
	qp, err := ia.dev.CreateQP(qcfg)
	if err != nil {
		return nil, mapTransportError(err)
	}
	ep.qp = qp
	if err := bindLocked(ia, ia.eps, ep); err != nil {
		qp.Destroy()
		return nil, err
	}
	if cfg.PZ != nil {
		cfg.PZ.users++
	}
	if cfg.SRQ != nil {
		cfg.SRQ.attach(ep)
	}
	ep.notifyControl(attr, 1)
	for _, e := range []*EVD{cfg.RecvEVD, cfg.ReqEVD} {
		if e != nil {
			ep.feed(e)
		}
	}
	return ep, nil
}

// recvDepth is the depth of an EP's own receive queue: max_recv_dtos, or
// the default when the attributes leave it 0.
func (ia *IA) recvDepth(attr EPAttr) int {
	if attr.MaxRecvDTOs > 0 {
		return attr.MaxRecvDTOs
	}
	return ia.DefaultEPAttr().MaxRecvDTOs
}

// IA is the EP's interface adapter.
func (ep *EP) IA() *IA { return ep.ia }

// EPParams is what dat_ep_query reports.
type EPParams struct {
	State                    EPState
	LocalAddr, RemoteAddr    netip.AddrPort
	LocalQual, RemoteQual    uint64
	PZ                       *PZ
	RecvEVD, ReqEVD, ConnEVD *EVD
	SRQ                      *SRQ
	Attr                     EPAttr
}

// Query reports the EP's parameters (dat_ep_query).
func (ep *EP) Query() (EPParams, error) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.dead {
		return EPParams{}, ErrHandle(SubHandleEP)
	}
	p := EPParams{State: ep.state, PZ: ep.pz, RecvEVD: ep.recvEVD, ReqEVD: ep.reqEVD, ConnEVD: ep.connEVD,
		SRQ: ep.srq, Attr: ep.ia.effective(ep.attr, ep.srq != nil), RemoteAddr: ep.remote, RemoteQual: ep.connQual}
	p.LocalAddr = netip.AddrPortFrom(ep.ia.attr.Address, 0)
	switch ep.state {
	case EPConnected, EPDisconnectPending, EPActiveConnectionPending, EPCompletionPending:
		if l := ep.qp.LocalAddr(); l.IsValid() {
			p.LocalAddr = l
		}
	}
	p.LocalQual = uint64(p.LocalAddr.Port())
	if ep.passive {
		// The address's port is 16 bits; the qualifier is 64.
		p.LocalQual = ep.lisQual
	}
	return p, nil
}

// EPStatus is what dat_ep_get_status reports: the state and whether no
// receive (RecvIdle) and no request (ReqIdle) is outstanding.
type EPStatus struct {
	State             EPState
	RecvIdle, ReqIdle bool
}

// Status reports the state and whether DTOs are in flight (dat_ep_get_status).
func (ep *EP) Status() (EPStatus, error) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.dead {
		return EPStatus{}, ErrHandle(SubHandleEP)
	}
	st := EPStatus{State: ep.state}
	if r, ok := ep.qp.(rdma.IdleReporter); ok {
		st.RecvIdle, st.ReqIdle = r.Idle()
	} else {
		// Every request and own receive is outstanding from its post
		// until the transport hands over its completion.
		st.RecvIdle = ep.srq != nil || ep.recvSink.posted.idle()
		st.ReqIdle = ep.reqSink.posted.idle()
	}
	return st, nil
}

// EPHandles are the handles dat_ep_modify may change; only those whose Set
// flag is true are changed (nil EVDs mean "no events").
type EPHandles struct {
	SetPZ, SetRecvEVD, SetReqEVD, SetConnEVD bool
	PZ                                       *PZ
	RecvEVD, ReqEVD, ConnEVD                 *EVD
}

// Modify replaces the attributes, and the PZ and EVDs that h selects, of an
// EP that is not connected (dat_ep_modify); the export layer merges the
// fields the mask selects into the current attributes first. Nothing
// changes when an error is returned.
func (ep *EP) Modify(attr EPAttr, h EPHandles) error {
	// dat_ep_modify has no DAT_MODEL_NOT_SUPPORTED: an unsupported value
	// is an invalid parameter there.
	if err := ep.ia.checkEPAttr(&attr, 3); err != nil {
		if err == ErrModelNotSupported {
			return ErrArg(3)
		}
		return err
	}
	ia := ep.ia
	ia.mu.Lock()
	defer ia.mu.Unlock()
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.dead {
		return ErrHandle(SubHandleEP)
	}
	switch ep.state {
	case EPUnconnected, EPReserved, EPPassiveConnectionPending, EPTentativeConnectionPending:
	default:
		return ErrState(epStateSub(ep.state))
	}
	if ep.srq != nil && attr.SRQSoftHW < WatermarkInfinite {
		return ErrArg(3)
	}
	pz := ep.pz
	if h.SetPZ {
		if h.PZ.usableLocked(ia) != nil {
			return ErrArg(3)
		}
		// "Protection Zone can be changed only when the Endpoint is in
		// quiescent state": unconnected or tentative pending.
		if h.PZ != pz && ep.state != EPUnconnected && ep.state != EPTentativeConnectionPending {
			return ErrState(epStateSub(ep.state))
		}
		pz = h.PZ
	}
	// A new EVD may be of another IA, as at dat_ep_create; each is counted
	// as used as it is checked (swapEVDsLocked keeps that count).
	var held []*EVD
	release := func() {
		for _, e := range held {
			e.use(-1)
		}
	}
	for _, c := range []struct {
		set  bool
		evd  *EVD
		cur  *EVD
		flag EVDFlags
	}{{h.SetRecvEVD, h.RecvEVD, ep.recvEVD, EVDDTO}, {h.SetReqEVD, h.ReqEVD, ep.reqEVD, EVDDTO},
		{h.SetConnEVD, h.ConnEVD, ep.connEVD, EVDConnection}} {
		if !c.set || c.evd == nil || c.evd == c.cur {
			continue
		}
		if !c.evd.acquire(c.flag) {
			release()
			return ErrArg(3)
		}
		held = append(held, c.evd)
	}
	// Recv completion flags change only "before posting of any Recvs".
	if attr.RecvCompletionFlags != ep.attr.RecvCompletionFlags {
		if r, ok := ep.qp.(rdma.IdleReporter); ok {
			if idle, _ := r.Idle(); !idle {
				release()
				return ErrState(SubNone)
			}
		}
	}
	if err := ep.reconfigureLocked(attr, pz); err != nil {
		release()
		return err
	}
	rearm := ep.srq != nil && attr.SRQSoftHW != ep.attr.SRQSoftHW
	ep.notifyControl(ep.attr, -1) // on the old EVDs, before the swap below
	ep.attr = attr
	ep.recvSink.solicitedOnly.Store(attr.RecvCompletionFlags&CompletionSolicitedWait != 0)
	if rearm {
		// A new srq_soft_hw is a new setting of the soft watermark.
		ep.softArm.Store(wmThreshold(attr.SRQSoftHW))
		ep.checkSoft(ep.held.Load())
	}
	if pz != ep.pz {
		if ep.pz != nil {
			ep.pz.users--
		}
		pz.users++
		ep.pz = pz
	}
	ep.swapEVDsLocked(h)
	ep.notifyControl(attr, 1)
	return nil
}

// reconfigureLocked resizes the queue pair and moves it to pz when they
// change; a transport that cannot only keeps shrinking limits.
func (ep *EP) reconfigureLocked(attr EPAttr, pz *PZ) error {
	old := ep.attr
	sendSGE := max(attr.MaxRequestIOV, attr.MaxRDMAReadIOV, attr.MaxRDMAWriteIOV)
	if pz == ep.pz && attr.MaxRequestDTOs == old.MaxRequestDTOs && attr.MaxRecvDTOs == old.MaxRecvDTOs &&
		sendSGE == max(old.MaxRequestIOV, old.MaxRDMAReadIOV, old.MaxRDMAWriteIOV) && attr.MaxRecvIOV == old.MaxRecvIOV {
		return nil
	}
	r, ok := ep.qp.(rdma.Reconfigurer)
	if !ok {
		if pz != ep.pz || attr.MaxRecvDTOs > old.MaxRecvDTOs || attr.MaxRequestDTOs > old.MaxRequestDTOs ||
			attr.MaxRecvIOV > old.MaxRecvIOV || attr.MaxRequestIOV > old.MaxRequestIOV {
			return ErrArg(3)
		}
		return nil
	}
	var pd uint32 // a provider-created EP has no PZ until it is given one
	if pz != nil {
		pd = pz.id
	}
	err := r.Reconfigure(pd, attr.MaxRequestDTOs, ep.ia.recvDepth(attr), sendSGE, attr.MaxRecvIOV)
	switch {
	case err == nil:
		// No completion is pushed in the states dat_ep_modify allows, so
		// the queues of outstanding requests can be resized in place.
		ep.reqSink.posted.resize(attr.MaxRequestDTOs)
		ep.recvSink.posted.resize(ep.ia.recvDepth(attr))
		return nil
	case errors.Is(err, rdma.ErrInvalid):
		return ErrArg(3) // e.g. fewer receives allowed than are posted
	}
	return mapTransportError(err)
}

// swapEVDsLocked installs the EVDs h selects, moving use counts (a new EVD
// was counted when Modify checked it) and the queue pair's progress
// registration; ia.mu and ep.mu held. No completion is pushed in the states
// dat_ep_modify allows, so the sinks can change.
func (ep *EP) swapEVDsLocked(h EPHandles) {
	before := []*EVD{ep.recvEVD, ep.reqEVD}
	set := func(on bool, cur **EVD, nu *EVD) {
		if !on || *cur == nu {
			return
		}
		if *cur != nil {
			(*cur).use(-1)
		}
		*cur = nu
	}
	set(h.SetRecvEVD, &ep.recvEVD, h.RecvEVD)
	set(h.SetReqEVD, &ep.reqEVD, h.ReqEVD)
	set(h.SetConnEVD, &ep.connEVD, h.ConnEVD)
	ep.recvSink.evd, ep.reqSink.evd = ep.recvEVD, ep.reqEVD
	after := []*EVD{ep.recvEVD, ep.reqEVD}
	// Relays to the new EVDs' IAs first, so one both keep is not stopped
	// and started again.
	for _, e := range after {
		if e != nil {
			linkDoorbells(ep.ia, e.ia)
		}
	}
	for _, e := range before {
		if e != nil {
			ep.unfeed(e)
		}
	}
	for _, e := range after {
		if e != nil {
			e.addSource(ep.qp)
		}
	}
}

// notifyControl counts the EP, with completion flags from attr, on the EVDs
// whose notifications those flags put under consumer control (unsignalled
// requests; unsignalled or solicited-wait receives): dat_evd_wait(3DAT)
// requires a threshold of 1 on them.
func (ep *EP) notifyControl(attr EPAttr, delta int) {
	if ep.recvEVD != nil && attr.RecvCompletionFlags&(CompletionUnsignalled|CompletionSolicitedWait) != 0 {
		ep.recvEVD.addNotifyControl(delta)
	}
	if ep.reqEVD != nil && attr.RequestCompletionFlags&CompletionUnsignalled != 0 {
		ep.reqEVD.addNotifyControl(delta)
	}
}

// Attr is the EP's current attributes as set (zeros included), which
// dat_ep_modify merges its changes into.
func (ep *EP) Attr() EPAttr {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.attr
}

func epStateSub(s EPState) Sub {
	switch s {
	case EPUnconnected:
		return SubStateEPUnconnected
	case EPActiveConnectionPending:
		return SubStateEPActConnPending
	case EPPassiveConnectionPending:
		return SubStateEPPassConnPending
	case EPTentativeConnectionPending:
		return SubStateEPTentConnPending
	case EPConnected:
		return SubStateEPConnected
	case EPDisconnected:
		return SubStateEPDisconnected
	case EPReserved:
		return SubStateEPReserved
	case EPCompletionPending:
		return SubStateEPComplPending
	case EPDisconnectPending:
		return SubStateEPDiscPending
	}
	return SubStateEPNotReady
}

// Free destroys the EP (dat_ep_free). A connected EP is disconnected
// abruptly first; posted work is flushed.
func (ep *EP) Free() error {
	ia := ep.ia
	ia.mu.Lock()
	defer ia.mu.Unlock()
	ep.mu.Lock()
	if ep.dead {
		ep.mu.Unlock()
		return ErrHandle(SubHandleEP)
	}
	switch ep.state {
	case EPReserved, EPPassiveConnectionPending, EPTentativeConnectionPending:
		s := ep.state
		ep.mu.Unlock()
		return ErrState(epStateSub(s))
	}
	ep.mu.Unlock()
	ep.destroyLocked()
	return nil
}

func (ep *EP) destroyLocked() {
	ep.mu.Lock()
	if ep.dead {
		ep.mu.Unlock()
		return
	}
	ep.dead = true
	ep.state = EPDisconnected
	ep.private = nil
	ep.notifyControl(ep.attr, -1)
	ep.mu.Unlock()
	for _, e := range []*EVD{ep.recvEVD, ep.reqEVD} {
		if e != nil {
			ep.unfeed(e)
		}
	}
	ep.qp.Destroy()
	for _, e := range []*EVD{ep.recvEVD, ep.reqEVD, ep.connEVD} {
		if e != nil {
			e.use(-1)
		}
	}
	if ep.pz != nil {
		ep.pz.users--
	}
	if ep.srq != nil {
		ep.srq.detach(ep)
	}
	delete(ep.ia.eps, ep)
	ep.ia.handles.Release(ep)
}
