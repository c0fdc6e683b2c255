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
	id   uint32 // names the EP to the transport (QP context, work-request ids)
	pz   *PZ
	srq  *SRQ
	qp   rdma.QP
	qpn  uint32
	attr EPAttr

	recvEVD, reqEVD, connEVD *EVD

	mu       sync.Mutex
	state    EPState
	remote   netip.AddrPort
	connQual uint64 // remote qualifier: the one dialled, or the active peer's port
	passive  bool   // the connection was accepted on this EP
	lisQual  uint64 // the qualifier a passive EP's request came in on
	private  []byte // the peer's private data, valid while connected
	cr       *CR    // the pending request this EP is accepting
	rsp      *RSP   // the reserved service point holding this EP
	dead     bool
	hwBroken bool // the coming disconnect is the hard watermark's: report BROKEN
	// byProvider: created for a request of a DAT_PSP_PROVIDER_FLAG PSP, and
	// the provider's until accepted (dat_cr_reject frees it).
	byProvider bool

	// live mirrors state for the post paths, which take no ep.mu: a post
	// needs only "connected or disconnected"; the transport flushes what
	// a dying connection cannot carry.
	live atomic.Uint32

	// sendMu serialises send-queue posts, so that the order of sq is the
	// order of the QP's send queue; recvMu does the same for receives.
	sendMu sync.Mutex
	sq     reqQueue
	sge    [maxIOV]rdma.SGE
	wr     rdma.SendWR
	unsig  int // requests posted unsignalled since the last signalled one
	recvMu sync.Mutex
	rq     reqQueue
	rsge   [maxIOV]rdma.SGE
	rwr    rdma.RecvWR

	solicitedOnly atomic.Bool // receive stream in solicited wait mode

	// Receive accounting, updated when completions are converted (under
	// the receive EVD's pollMu) and reaped, hence atomics. held is the
	// watermarks' "buffers at the EP" (see SRQ).
	held     atomic.Int32
	softArm  atomic.Int32 // armed soft high watermark; wmOff once fired or infinite
	hardWM   atomic.Int32 // hard high watermark; wmOff when infinite
	breaking atomic.Bool  // a hard-watermark disconnect is under way
}

// MaxSegments bounds the segments of one post (the EP's and SRQ's IOV
// limits are checked first; no transport allows more). A longer list is
// refused as an invalid segment count; an export layer converting its
// ABI's segments needs room for at most MaxSegments+1 of them to let core
// refuse it.
const MaxSegments = 32

const maxIOV = MaxSegments

// live states of EP.live.
const (
	liveNo   = 0 // not connected: posts are refused with the state's code
	liveConn = 1 // connected or disconnected: posts go to the transport
)

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

// setStateLocked changes the state; ep.mu is held.
func (ep *EP) setStateLocked(s EPState) {
	ep.state = s
	// dat_ep_disconnect(3DAT): "No new Send, RDMA Read, and RDMA Write DTOs
	// ... can be posted to the Endpoint when the local Endpoint is in the
	// DAT_EP_DISCONNECT_PENDING state": that state is not live.
	if !ep.dead && (s == EPConnected || s == EPDisconnected) {
		ep.live.Store(liveConn)
	} else {
		ep.live.Store(liveNo)
	}
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
		if cfg.SRQ != nil && attr.SRQSoftHW < WatermarkInfinite {
			return nil, ErrArg(ArgEPAttr)
		}
		if err := ia.checkEPAttr(&attr); err != nil {
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
		// dat_ep_create_with_srq(3DAT): DAT_INVALID_PARAMETER when
		// "pz_handle specified does not match the one for SRQ", on a
		// provider without srq_ep_pz_difference_supported.
		if !ia.attr.SRQPDDifference && cfg.PZ != cfg.SRQ.pz {
			return nil, ErrArg(ArgPZ)
		}
	}
	// Any live EVD of the right kind will do, of this IA or another IA of
	// the process (reference providers check the handle and the EVD's
	// flags, never its IA, and programs that open several IAs rely on it);
	// each is counted as used as it is checked, and let go again if the EP
	// is not made after all.
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
// provider-created EP's (see PSP.connRequest): its queue pair is in the
// IA's own protection domain, which no PZ shares, until dat_ep_modify gives
// it one.
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
	ep.solicitedOnly.Store(attr.RecvCompletionFlags&CompletionSolicitedWait != 0)
	id, ok := epIDs.add(ep)
	if !ok {
		return nil, E(KindInsufficientResources, SubResourceTEP)
	}
	ep.id = id
	qattr, err := ep.qpAttrLocked(attr, cfg.PZ, cfg.ReqEVD, cfg.RecvEVD)
	if err != nil {
		epIDs.remove(id)
		return nil, err
	}
	qp, err := ia.dev.dev.CreateQP(qattr)
	if err != nil {
		epIDs.remove(id)
		return nil, mapTransportError(err)
	}
	ep.qp, ep.qpn = qp, qp.Num()
	ep.sq.init(qp.Cap().MaxSendWR)
	ep.rq.init(max(qp.Cap().MaxRecvWR, 1))
	if err := bindLocked(ia, ia.eps, ep); err != nil {
		qp.Destroy()
		epIDs.remove(id)
		return nil, err
	}
	ia.dev.setQP(ep.qpn, ep)
	if cfg.PZ != nil {
		cfg.PZ.users++
	}
	if cfg.SRQ != nil {
		cfg.SRQ.attach(ep)
	}
	ep.notifyControl(attr, 1)
	return ep, nil
}

// qpAttrLocked is the transport's description of the EP's queue pair for
// attr, pz and the request and receive EVDs.
func (ep *EP) qpAttrLocked(attr EPAttr, pz *PZ, req, recv *EVD) (rdma.QPInitAttr, error) {
	ia := ep.ia
	q := rdma.QPInitAttr{
		CM: ia.cm, Context: uint64(ep.id),
		Cap: rdma.QPCap{
			MaxSendWR: attr.MaxRequestDTOs, MaxRecvWR: ia.recvDepth(attr),
			MaxSendSGE: max(attr.MaxRequestIOV, attr.MaxRDMAReadIOV, attr.MaxRDMAWriteIOV),
			MaxRecvSGE: attr.MaxRecvIOV,
		},
		MaxRdAtomic: attr.MaxRDMAReadIn, MaxInitRdAtomic: attr.MaxRDMAReadOut,
	}
	if pz != nil {
		q.PD = pz.pd
	} else {
		pd, err := ia.ownPDLocked()
		if err != nil {
			return q, err
		}
		q.PD = pd
	}
	if ep.srq != nil {
		q.SRQ = ep.srq.backend
	}
	var err error
	if q.SendCQ, err = ia.cqOf(req); err != nil {
		return q, err
	}
	q.RecvCQ, err = ia.cqOf(recv)
	return q, err
}

// cqOf is the CQ a QP of ia completes into for evd: the EVD's CQ on ia's
// device, or for a stream without an EVD the IA's CQ that no one polls (no
// post is allowed there). ia.mu is held.
func (ia *IA) cqOf(evd *EVD) (rdma.CQ, error) {
	if evd != nil {
		return evd.cqFor(ia.dev)
	}
	if ia.noCQ == nil {
		cq, err := ia.dev.dev.CreateCQ(1, nil, 0)
		if err != nil {
			return nil, mapTransportError(err)
		}
		ia.noCQ = cq
	}
	return ia.noCQ, nil
}

// ownPDLocked is the protection domain of the IA's provider-created EPs
// before they get a PZ: no LMR is registered in it, so nothing posted there
// can reach memory. ia.mu is held.
func (ia *IA) ownPDLocked() (rdma.PD, error) {
	if ia.ownPD == nil {
		pd, err := ia.dev.dev.AllocPD()
		if err != nil {
			return nil, mapTransportError(err)
		}
		ia.ownPD = pd
	}
	return ia.ownPD, nil
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
	if ep.ia.dev.attr.Caps&rdma.CapQPOutstanding != 0 {
		send, recv, err := ep.qp.Outstanding()
		if err == nil {
			st.RecvIdle, st.ReqIdle = ep.srq != nil || recv == 0, send == 0
			return st, nil
		}
	}
	// A request is outstanding from its post until core has seen its
	// completion, or a later one's (unsignalled requests).
	st.RecvIdle = ep.srq != nil || ep.rq.idle()
	st.ReqIdle = ep.sq.idle()
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
	if err := ep.ia.checkEPAttr(&attr); err != nil {
		if err == ErrModelNotSupported {
			return ErrArg(ArgEPAttr)
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
		return ErrArg(ArgEPAttr)
	}
	pz := ep.pz
	if h.SetPZ {
		if h.PZ.usableLocked(ia) != nil {
			return ErrArg(ArgPZ)
		}
		// "Protection Zone can be changed only when the Endpoint is in
		// quiescent state": unconnected or tentative pending.
		if h.PZ != pz && ep.state != EPUnconnected && ep.state != EPTentativeConnectionPending {
			return ErrState(epStateSub(ep.state))
		}
		pz = h.PZ
	}
	// A new EVD may be of another IA, as at dat_ep_create; each is counted
	// as used as it is checked, and let go again on failure.
	recv, req, conn := ep.recvEVD, ep.reqEVD, ep.connEVD
	var held []*EVD
	release := func() {
		for _, e := range held {
			e.use(-1)
		}
	}
	for _, c := range []struct {
		set  bool
		evd  *EVD
		cur  **EVD
		flag EVDFlags
	}{{h.SetRecvEVD, h.RecvEVD, &recv, EVDDTO}, {h.SetReqEVD, h.ReqEVD, &req, EVDDTO}, {h.SetConnEVD, h.ConnEVD, &conn, EVDConnection}} {
		if !c.set {
			continue
		}
		if c.evd != nil && c.evd != *c.cur {
			if !c.evd.acquire(c.flag) {
				release()
				return ErrArg(ArgEVD)
			}
			held = append(held, c.evd)
		}
		*c.cur = c.evd
	}
	// Recv completion flags change only "before posting of any Recvs".
	if attr.RecvCompletionFlags != ep.attr.RecvCompletionFlags && !ep.rq.idle() {
		release()
		return ErrState(SubNone)
	}
	if err := ep.reconfigureLocked(attr, pz, req, recv); err != nil {
		release()
		return err
	}
	rearm := ep.srq != nil && attr.SRQSoftHW != ep.attr.SRQSoftHW
	ep.notifyControl(ep.attr, -1) // on the old EVDs, before the swap below
	oldRecv := ep.recvEVD
	ep.recvMu.Lock() // PostRecv reads both under recvMu alone
	ep.attr = attr
	ep.recvEVD = recv
	ep.recvMu.Unlock()
	if oldRecv != recv && oldRecv != nil {
		oldRecv.use(-1) // recv was counted when it was acquired above
	}
	ep.solicitedOnly.Store(attr.RecvCompletionFlags&CompletionSolicitedWait != 0)
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
	swap := func(cur **EVD, nu *EVD) {
		if *cur == nu {
			return
		}
		if *cur != nil {
			(*cur).use(-1)
		}
		*cur = nu // counted when it was acquired above
	}
	swap(&ep.reqEVD, req)
	swap(&ep.connEVD, conn)
	if ep.srq != nil {
		ep.srq.mu.Lock()
		ep.srq.recvsLocked()
		ep.srq.mu.Unlock()
	}
	ep.notifyControl(attr, 1)
	return nil
}

// reconfigureLocked gives the queue pair the PZ, CQs and queue sizes of the
// new settings when they change; a transport that cannot reconfigure only
// keeps settings that shrink nothing the QP has.
func (ep *EP) reconfigureLocked(attr EPAttr, pz *PZ, req, recv *EVD) error {
	old := ep.attr
	sendSGE := max(attr.MaxRequestIOV, attr.MaxRDMAReadIOV, attr.MaxRDMAWriteIOV)
	if pz == ep.pz && req == ep.reqEVD && recv == ep.recvEVD &&
		attr.MaxRequestDTOs == old.MaxRequestDTOs && attr.MaxRecvDTOs == old.MaxRecvDTOs &&
		sendSGE == max(old.MaxRequestIOV, old.MaxRDMAReadIOV, old.MaxRDMAWriteIOV) && attr.MaxRecvIOV == old.MaxRecvIOV {
		return nil
	}
	if ep.ia.dev.attr.Caps&rdma.CapQPReconfigure == 0 {
		if pz != ep.pz || req != ep.reqEVD || recv != ep.recvEVD ||
			attr.MaxRecvDTOs > old.MaxRecvDTOs || attr.MaxRequestDTOs > old.MaxRequestDTOs ||
			attr.MaxRecvIOV > old.MaxRecvIOV || attr.MaxRequestIOV > old.MaxRequestIOV {
			return ErrArg(ArgEPAttr)
		}
		return nil
	}
	qattr, err := ep.qpAttrLocked(attr, pz, req, recv)
	if err != nil {
		return err
	}
	ep.sendMu.Lock()
	defer ep.sendMu.Unlock()
	ep.recvMu.Lock()
	defer ep.recvMu.Unlock()
	switch err := ep.qp.Reconfigure(qattr); {
	case err == nil:
		ep.rekeyQP()
		// No completion comes in the states dat_ep_modify allows, so the
		// queues of outstanding requests can be resized in place.
		c := ep.qp.Cap()
		ep.sq.resize(c.MaxSendWR)
		ep.rq.resize(max(c.MaxRecvWR, 1))
		return nil
	case errors.Is(err, rdma.ErrInvalid):
		return ErrArg(ArgEPAttr) // e.g. fewer receives allowed than are posted
	default:
		return mapTransportError(err)
	}
}

// rekeyQP follows a QP number that changed: a backend may make a new QP
// to reconfigure or reset one (verbs), and completions of an SRQ's
// receives name the EP by its QP's number.
func (ep *EP) rekeyQP() {
	if n := ep.qp.Num(); n != ep.qpn {
		ep.ia.dev.setQP(ep.qpn, nil)
		ep.qpn = n
		ep.ia.dev.setQP(n, ep)
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
	ep.recvMu.Lock() // PostRecv reads dead under recvMu alone
	ep.dead = true
	ep.recvMu.Unlock()
	ep.setStateLocked(EPDisconnected)
	ep.private = nil
	ep.notifyControl(ep.attr, -1)
	ep.mu.Unlock()
	// From here no completion of the EP is converted into an event: the
	// ones still in CQs decode to nothing (epIDs), except SRQ receives,
	// whose buffers the SRQ accounts for itself.
	epIDs.remove(ep.id)
	ep.ia.dev.setQP(ep.qpn, nil)
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
