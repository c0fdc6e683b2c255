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
	private  []byte // the peer's private data, valid while connected
	cr       *CR    // the pending request this EP is accepting
	rsp      *RSP   // the reserved service point holding this EP
	sge      [32]rdma.SGE
	wr       rdma.SendWR
	rwr      rdma.RecvWR
	dead     bool
	hwBroken bool // the coming disconnect is the hard watermark's: report BROKEN

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

// epSink turns transport completions into DTO events on the EP's EVD.
type epSink struct {
	ep   *EP
	evd  *EVD
	recv bool
}

func (s *epSink) PushCompletion(c *rdma.Completion) {
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
		if c.Status != rdma.StatusFlushed {
			// A message consumed this buffer: it is at the EP until the
			// consumer dequeues the completion.
			held = true
			ep.tookBuffer(ep.held.Add(1))
		}
	} else if s.evd == nil {
		return
	}
	ev := Event{Number: EventDTOCompletion, EP: ep, Cookie: c.Cookie, Length: c.Length,
		Status: DTOStatus(c.Status), notify: true, srq: srq, held: held}
	if s.recv && s.ep.attr.RecvCompletionFlags&CompletionSolicitedWait != 0 &&
		!c.Solicited && c.Status == rdma.StatusSuccess {
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
	for _, c := range []struct {
		evd  *EVD
		flag EVDFlags
		sub  Sub
	}{{cfg.RecvEVD, EVDDTO, SubHandleEVDRecv}, {cfg.ReqEVD, EVDDTO, SubHandleEVDRequest}, {cfg.ConnEVD, EVDConnection, SubHandleEVDConn}} {
		if c.evd != nil && (c.evd.ia != ia || c.evd.dead || c.evd.flags&c.flag == 0) {
			return nil, ErrHandle(c.sub)
		}
	}
	if len(ia.eps) >= ia.attr.MaxEPs {
		return nil, E(KindInsufficientResources, SubResourceTEP)
	}
	ep := &EP{ia: ia, pz: cfg.PZ, srq: cfg.SRQ, attr: attr, recvEVD: cfg.RecvEVD, reqEVD: cfg.ReqEVD, connEVD: cfg.ConnEVD}
	ep.kind = TypeEP
	// srq_soft_hw is the initial soft high watermark of an EP that uses an
	// SRQ; other EPs start unarmed (dat_ep_set_watermark arms any EP).
	ep.softArm.Store(wmOff)
	if cfg.SRQ != nil {
		ep.softArm.Store(wmThreshold(attr.SRQSoftHW))
	}
	ep.hardWM.Store(wmOff)
	ep.recvSink = epSink{ep: ep, evd: cfg.RecvEVD, recv: true}
	ep.reqSink = epSink{ep: ep, evd: cfg.ReqEVD}
	qcfg := rdma.QPConfig{
		PD: cfg.PZ.id, SendCQ: &ep.reqSink, RecvCQ: &ep.recvSink, Conn: ep,
		MaxSend: attr.MaxRequestDTOs, MaxRecv: attr.MaxRecvDTOs,
		MaxSendSGE: max(attr.MaxRequestIOV, attr.MaxRDMAReadIOV, attr.MaxRDMAWriteIOV), MaxRecvSGE: attr.MaxRecvIOV,
		MaxReadsOut: attr.MaxRDMAReadOut, MaxReadsIn: attr.MaxRDMAReadIn,
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
	cfg.PZ.users++
	if cfg.SRQ != nil {
		cfg.SRQ.attach(ep)
	}
	for _, e := range []*EVD{cfg.RecvEVD, cfg.ReqEVD, cfg.ConnEVD} {
		if e != nil {
			e.use(1)
		}
	}
	ep.notifyControl(attr, 1)
	for _, e := range []*EVD{cfg.RecvEVD, cfg.ReqEVD} {
		if e != nil {
			e.addSource(qp)
		}
	}
	return ep, nil
}

// IA is the EP's interface adapter.
func (ep *EP) IA() *IA { return ep.ia }

// EPParams is what dat_ep_query reports.
type EPParams struct {
	State                    EPState
	LocalAddr, RemoteAddr    netip.AddrPort
	RemoteQual               uint64
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
		SRQ: ep.srq, Attr: ep.attr, RemoteAddr: ep.remote, RemoteQual: ep.connQual}
	p.LocalAddr = netip.AddrPortFrom(ep.ia.attr.Address, 0)
	switch ep.state {
	case EPConnected, EPDisconnectPending, EPActiveConnectionPending, EPCompletionPending:
		if l := ep.qp.LocalAddr(); l.IsValid() {
			p.LocalAddr = l
		}
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
// A transport that cannot tell reports both queues busy.
func (ep *EP) Status() (EPStatus, error) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.dead {
		return EPStatus{}, ErrHandle(SubHandleEP)
	}
	st := EPStatus{State: ep.state}
	if r, ok := ep.qp.(rdma.IdleReporter); ok {
		st.RecvIdle, st.ReqIdle = r.Idle()
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
	for _, c := range []struct {
		set  bool
		evd  *EVD
		flag EVDFlags
	}{{h.SetRecvEVD, h.RecvEVD, EVDDTO}, {h.SetReqEVD, h.ReqEVD, EVDDTO}, {h.SetConnEVD, h.ConnEVD, EVDConnection}} {
		if c.set && c.evd != nil && (c.evd.ia != ia || c.evd.dead || c.evd.flags&c.flag == 0) {
			return ErrArg(3)
		}
	}
	// Recv completion flags change only "before posting of any Recvs".
	if attr.RecvCompletionFlags != ep.attr.RecvCompletionFlags {
		if r, ok := ep.qp.(rdma.IdleReporter); ok {
			if idle, _ := r.Idle(); !idle {
				return ErrState(SubNone)
			}
		}
	}
	if err := ep.reconfigureLocked(attr, pz); err != nil {
		return err
	}
	rearm := ep.srq != nil && attr.SRQSoftHW != ep.attr.SRQSoftHW
	ep.notifyControl(ep.attr, -1) // on the old EVDs, before the swap below
	ep.attr = attr
	if rearm {
		// A new srq_soft_hw is a new setting of the soft watermark.
		ep.softArm.Store(wmThreshold(attr.SRQSoftHW))
		ep.checkSoft(ep.held.Load())
	}
	if pz != ep.pz {
		ep.pz.users--
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
	err := r.Reconfigure(pz.id, attr.MaxRequestDTOs, attr.MaxRecvDTOs, sendSGE, attr.MaxRecvIOV)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, rdma.ErrInvalid):
		return ErrArg(3) // e.g. fewer receives allowed than are posted
	}
	return mapTransportError(err)
}

// swapEVDsLocked installs the EVDs h selects, moving use counts and the
// queue pair's progress registration; ia.mu and ep.mu held. No completion
// is pushed in the states dat_ep_modify allows, so the sinks can change.
func (ep *EP) swapEVDsLocked(h EPHandles) {
	before := []*EVD{ep.recvEVD, ep.reqEVD}
	set := func(on bool, cur **EVD, nu *EVD) {
		if !on || *cur == nu {
			return
		}
		if *cur != nil {
			(*cur).use(-1)
		}
		if nu != nil {
			nu.use(1)
		}
		*cur = nu
	}
	set(h.SetRecvEVD, &ep.recvEVD, h.RecvEVD)
	set(h.SetReqEVD, &ep.reqEVD, h.ReqEVD)
	set(h.SetConnEVD, &ep.connEVD, h.ConnEVD)
	ep.recvSink.evd, ep.reqSink.evd = ep.recvEVD, ep.reqEVD
	for _, e := range before {
		if e != nil && e != ep.recvEVD && e != ep.reqEVD {
			e.removeSource(ep.qp)
		}
	}
	for _, e := range []*EVD{ep.recvEVD, ep.reqEVD} {
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

// Attr is the EP's current attributes.
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
			e.removeSource(ep.qp)
		}
	}
	ep.qp.Destroy()
	for _, e := range []*EVD{ep.recvEVD, ep.reqEVD, ep.connEVD} {
		if e != nil {
			e.use(-1)
		}
	}
	ep.pz.users--
	if ep.srq != nil {
		ep.srq.detach(ep)
	}
	delete(ep.ia.eps, ep)
	ep.ia.handles.Release(ep)
}
