package core

import (
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"godat/rdma"
)

// IAAttr are the limits an IA reports (dat_ia_query), derived from the
// transport device so that every value is one the IA actually honours.
type IAAttr struct {
	AdapterName, VendorName string
	Address                 netip.Addr
	MaxEPs                  int
	MaxDTOPerEP             int
	MaxRDMAReadPerEPIn      int
	MaxRDMAReadPerEPOut     int
	MaxEVDs                 int
	MaxEVDQLen              int
	MaxIOVSegments          int
	MaxLMRs                 int
	MaxLMRBlockSize         uint64
	MaxLMRVirtualAddress    uint64
	MaxPZs                  int
	MaxMessageSize          uint64
	MaxRDMASize             uint64
	MaxRMRs                 int
	MaxRMRTargetAddress     uint64
	MaxSRQs                 int
	MaxEPPerSRQ             int
	MaxRecvPerSRQ           int
	MaxPrivateData          int
	// SRQPDDifference: an EP may use an SRQ of another PZ
	// (srq_ep_pz_difference_supported).
	SRQPDDifference bool
	// maxReadIOV is the local segments an RDMA read may scatter into (the
	// device's max_sge_rd), which no DAT IA attribute reports: an EP's
	// max_rdma_read_iov defaults to at most it, and a read beyond it fails
	// at the post (as a verbs post would; OFED dapl leaves it to verbs).
	maxReadIOV int
}

// IAConfig is what OpenIA needs.
type IAConfig struct {
	Name string
	// Backend and Params name the transport device (rdma.Open); IAs with
	// the same backend and parameters share one device.
	Backend string
	Params  rdma.Params
	// Fallback and FallbackParams, when Fallback is set, are opened
	// instead when Backend has no device on this host (rdma.ErrNoBackend,
	// rdma.ErrNoDevice: the verbs libraries or an RDMA device missing), as
	// a dat.conf alias with transport=verbs-or-auto asks. The reason is
	// logged at info level, which datinfo shows.
	Fallback       string
	FallbackParams rdma.Params
	Origin         string // where the entry came from (file:line), for log lines
	AsyncQLen      int    // queue length of the async EVD created when AsyncEVD is nil
	AsyncEVD       *EVD   // consumer-supplied async EVD, or nil
	// NoAsync is DAT_EVD_ASYNC_EXISTS: the consumer's async EVD lives
	// outside this process, so the IA creates none and has none in scope.
	NoAsync bool
	Handles Handles
	// Agent invokes CNOs' OS wait proxy agents; nil keeps agents for
	// dat_cno_query but never calls them.
	Agent AgentFunc
}

// IA is an open interface adapter: the root of every other DAT object.
//
// Lock order (the one order of the whole core; DESIGN.md repeats it):
// IA.mu, then EP.mu or EVD.mu or CNO.mu or SRQ.mu (never two of these at
// once, except EP.mu then SRQ.mu in SRQ attach/detach), then EP.sendMu,
// EP.recvMu, EVD.pollMu (which takes EVD.mu to insert), SRQ.slotMu or
// IA.noCQMu, then the transport's own locks. No core lock is held across a
// blocking wait, and none across a transport call that moves data except
// EP.sendMu/EP.recvMu (which only posters of that EP take) and EVD.pollMu
// (only pollers of that EVD).
type IA struct {
	Object
	name    string
	dev     *device
	comp    rdma.CompChannel // every EVD and CNO wait of the IA sleeps on it
	cm      rdma.CMChannel   // connection events of the IA's QPs and listeners
	cmDone  chan struct{}    // closed when the CM goroutine has ended
	attr    IAAttr
	handles Handles
	agent   AgentFunc
	// agentsDue are proxy agent calls owed by objects destroyed under
	// ia.mu (see CNO.agentDueLocked); guarded by ia.mu.
	agentsDue [][2]uint64

	mu       sync.Mutex
	closed   atomic.Bool
	closing  bool
	asyncEVD *EVD
	ownAsync bool
	noCQ     rdma.CQ // the CQ of QPs whose EP has no request or receive EVD
	ownPD    rdma.PD // the PD of provider-created EPs without a PZ yet

	// noCQMu guards the poll of noCQ and its buffers.
	noCQMu  sync.Mutex
	noCQWCs [evdPollBatch]rdma.WC

	spinBudget atomic.Int64 // the IA's wait spin budget, ns (see spin.go)

	pzs  map[*PZ]struct{}
	evds map[*EVD]struct{}
	cnos map[*CNO]struct{}
	eps  map[*EP]struct{}
	lmrs map[*LMR]struct{}
	rmrs map[*RMR]struct{}
	psps map[*PSP]struct{}
	rsps map[*RSP]struct{}
	srqs map[*SRQ]struct{}
	crs  map[*CR]struct{}
}

// OpenIA opens an IA on the device cfg names.
func OpenIA(cfg IAConfig) (*IA, error) {
	if cfg.AsyncEVD == nil && !cfg.NoAsync && cfg.AsyncQLen <= 0 {
		return nil, ErrArg(ArgQLen)
	}
	if e := cfg.AsyncEVD; e != nil && !e.usableAsAsync() {
		return nil, ErrHandle(SubHandleEVDAsync)
	}
	d, err := acquireDevice(cfg.Backend, cfg.Params)
	if err != nil && cfg.Fallback != "" && (errors.Is(err, rdma.ErrNoBackend) || errors.Is(err, rdma.ErrNoDevice)) {
		Logf(LevelInfo, "dat_ia_openv: %s (%s): %v; using the %s backend (transport=%s) instead",
			cfg.Name, cfg.Origin, err, cfg.Fallback, cfg.FallbackParams["transport"])
		d, err = acquireDevice(cfg.Fallback, cfg.FallbackParams)
	}
	if err != nil {
		return nil, openError(cfg, err)
	}
	ia := &IA{
		name: cfg.Name, dev: d, handles: cfg.Handles, agent: cfg.Agent, cmDone: make(chan struct{}),
		pzs: map[*PZ]struct{}{}, evds: map[*EVD]struct{}{}, cnos: map[*CNO]struct{}{},
		eps: map[*EP]struct{}{}, lmrs: map[*LMR]struct{}{}, rmrs: map[*RMR]struct{}{},
		psps: map[*PSP]struct{}{}, rsps: map[*RSP]struct{}{}, srqs: map[*SRQ]struct{}{},
		crs: map[*CR]struct{}{},
	}
	ia.kind = TypeIA
	ia.attr = attrFromDevice(d)
	// dat_ia_query(3DAT): the adapter name is "the same as ia_name_ptr".
	ia.attr.AdapterName = cfg.Name
	fail := func(err error) (*IA, error) {
		if ia.cm != nil {
			ia.cm.Destroy()
		}
		if ia.comp != nil {
			ia.comp.Destroy()
		}
		d.release()
		return nil, err
	}
	if ia.comp, err = d.dev.CreateCompChannel(); err != nil {
		return fail(mapTransportError(err))
	}
	if ia.cm, err = d.dev.CreateCMChannel(); err != nil {
		return fail(mapTransportError(err))
	}
	if err := ia.handles.Bind(ia); err != nil {
		return fail(err)
	}
	switch {
	case cfg.AsyncEVD != nil:
		ia.asyncEVD = cfg.AsyncEVD
	case cfg.NoAsync:
	default:
		evd, err := ia.CreateEVD(cfg.AsyncQLen, EVDAsync, nil)
		if err != nil {
			ia.handles.Release(ia)
			return fail(err)
		}
		ia.asyncEVD, ia.ownAsync = evd, true
	}
	d.addIA(ia, true)
	go ia.runCM()
	return ia, nil
}

// openError says why a device did not open: a backend or device this host
// lacks means the entry names no IA that can be opened here.
func openError(cfg IAConfig, err error) error {
	Logf(LevelWarn, "dat_ia_openv: %s (%s): %v", cfg.Name, cfg.Origin, err)
	switch {
	case errors.Is(err, rdma.ErrNoBackend), errors.Is(err, rdma.ErrNoDevice), errors.Is(err, rdma.ErrInvalid):
		return ErrNameNotRegistered
	}
	return mapTransportError(err)
}

// userSpan is the size of a process's virtual address range (x86-64 with
// four-level page tables, and the largest the DAT attributes report): no
// registered region can be larger, and none ends past it.
const userSpan = 1 << 47

func attrFromDevice(d *device) IAAttr {
	a := d.attr
	return IAAttr{
		AdapterName: a.Name, VendorName: a.Vendor, Address: d.dev.Addr(),
		MaxEPs: a.MaxQP, MaxDTOPerEP: a.MaxQPWR,
		MaxRDMAReadPerEPIn: a.MaxQPRdAtom, MaxRDMAReadPerEPOut: a.MaxQPInitRdAtom,
		MaxEVDs: a.MaxCQ, MaxEVDQLen: a.MaxCQE, MaxIOVSegments: a.MaxSGE,
		// A device may allow any 64-bit length (rxe's max_mr_size is
		// 2^64 - 1), which no region of the process can have.
		MaxLMRs: a.MaxMR, MaxLMRBlockSize: min(a.MaxMRSize, userSpan), MaxLMRVirtualAddress: userSpan - 1,
		MaxPZs: a.MaxPD, MaxMessageSize: a.MaxMsgSize, MaxRDMASize: a.MaxMsgSize,
		MaxRMRs: a.MaxMR, MaxRMRTargetAddress: userSpan - 1,
		MaxSRQs: a.MaxSRQ, MaxEPPerSRQ: a.MaxQP, MaxRecvPerSRQ: a.MaxSRQWR,
		MaxPrivateData: a.MaxPrivateData, SRQPDDifference: a.Caps&rdma.CapSRQPDDifference != 0,
		maxReadIOV: a.ReadSGE(),
	}
}

// Name is the IA name the consumer opened.
func (ia *IA) Name() string { return ia.name }

// Attr reports the IA's limits.
func (ia *IA) Attr() IAAttr { return ia.attr }

// AsyncEVD is the IA's asynchronous event dispatcher.
func (ia *IA) AsyncEVD() *EVD {
	ia.mu.Lock()
	defer ia.mu.Unlock()
	return ia.asyncEVD
}

// Device is the transport device under the IA.
func (ia *IA) Device() rdma.Device { return ia.dev.dev }

// Backend is the name of the backend the IA's device was opened with
// ("soft", "verbs"): with a fallback, the one that opened.
func (ia *IA) Backend() string { return ia.dev.backend }

// sleep waits on the IA's completion channel (rdma.CompChannel.Wait) and
// reports whether a signal interrupted it.
func (ia *IA) sleep(seq uint32, d time.Duration) (interrupted bool) {
	return ia.comp.Wait(seq, d)
}

// wake wakes every thread sleeping on the IA's channel.
func (ia *IA) wake() { ia.comp.Wake() }

// live fails once the IA is closed; callers hold ia.mu.
func (ia *IA) liveLocked() error {
	if ia.closed.Load() {
		return ErrHandle(SubHandleIA)
	}
	return nil
}

// asyncError posts an asynchronous error event about target. It runs in
// sinks under a QP's lock, so it must not take ia.mu (ia.mu is held around
// QP destruction); asyncEVD is set once in OpenIA and never changes.
func (ia *IA) asyncError(num EventNumber, target Obj, reason AsyncReason) {
	evd := ia.asyncEVD
	if evd != nil {
		evd.push(&Event{Number: num, Target: target, Reason: reason, notify: true})
	}
}

// bindLocked gives a new object its handle and records it in set.
func bindLocked[T interface {
	comparable
	Obj
}](ia *IA, set map[T]struct{}, o T) error {
	if err := ia.handles.Bind(o); err != nil {
		return err
	}
	set[o] = struct{}{}
	return nil
}

// userObjectsLocked counts objects the consumer created (not the async EVD
// the IA created itself).
func (ia *IA) userObjectsLocked() int {
	n := len(ia.pzs) + len(ia.cnos) + len(ia.eps) + len(ia.lmrs) + len(ia.rmrs) +
		len(ia.psps) + len(ia.rsps) + len(ia.srqs) + len(ia.evds)
	if ia.ownAsync {
		n--
	}
	return n
}

// Close closes the IA (dat_ia_close). A graceful close refuses while the
// consumer still has objects; an abrupt close destroys everything.
func (ia *IA) Close(graceful bool) error {
	ia.mu.Lock()
	if err := ia.liveLocked(); err != nil {
		ia.mu.Unlock()
		return err
	}
	if graceful && ia.userObjectsLocked() > 0 {
		ia.mu.Unlock()
		return ErrState(SubStateIAInUse)
	}
	ia.closing = true
	ia.closed.Store(true)
	ia.mu.Unlock()

	// Waiters return DAT_ABORT or a null EVD once they see closed.
	ia.wake()
	pending := ia.destroyAll()
	// Requests nobody answered are refused, so that their active sides
	// learn it now rather than when their connect times out.
	for _, req := range pending {
		req.Reject(rdma.RejectConsumer, nil)
	}
	ia.runDueAgents()
	ia.handles.Release(ia)
	ia.dev.addIA(ia, false)
	// The CM goroutine ends when its channel is destroyed; wait for it so
	// that no event of this IA is delivered after dat_ia_close returns.
	ia.cm.Destroy()
	<-ia.cmDone
	ia.wake()
	ia.comp.Destroy()
	return ia.dev.release()
}

// runDueAgents makes the proxy agent calls that destroying objects owed,
// synchronously and with no lock held (an agent may call the library).
func (ia *IA) runDueAgents() {
	ia.mu.Lock()
	due := ia.agentsDue
	ia.agentsDue = nil
	ia.mu.Unlock()
	for _, a := range due {
		ia.agent(a, nil)
	}
}

// destroyAll frees every object, children before parents, and returns the
// connection requests that were still pending.
func (ia *IA) destroyAll() []rdma.ConnRequest {
	ia.mu.Lock()
	defer ia.mu.Unlock()
	pending := make([]rdma.ConnRequest, 0, len(ia.crs))
	for cr := range ia.crs {
		pending = append(pending, cr.req)
		cr.destroyLocked()
	}
	for rsp := range ia.rsps {
		rsp.destroyLocked()
	}
	for psp := range ia.psps {
		psp.destroyLocked()
	}
	for ep := range ia.eps {
		ep.destroyLocked()
	}
	for srq := range ia.srqs {
		srq.destroyLocked()
	}
	for rmr := range ia.rmrs {
		rmr.destroyLocked()
	}
	for lmr := range ia.lmrs {
		lmr.destroyLocked()
	}
	for pz := range ia.pzs {
		pz.destroyLocked()
	}
	for evd := range ia.evds {
		if evd != ia.asyncEVD || ia.ownAsync {
			evd.destroyLocked()
		}
	}
	for cno := range ia.cnos {
		cno.destroyLocked()
	}
	if ia.noCQ != nil {
		ia.noCQ.Destroy()
		ia.noCQ = nil
	}
	if ia.ownPD != nil {
		ia.ownPD.Dealloc()
		ia.ownPD = nil
	}
	return pending
}

// CreateEVD creates an event dispatcher (dat_evd_create).
func (ia *IA) CreateEVD(qlen int, flags EVDFlags, cno *CNO) (*EVD, error) {
	if qlen <= 0 || qlen > ia.attr.MaxEVDQLen {
		return nil, ErrArg(ArgQLen)
	}
	if flags == 0 || flags&^evdAllFlags != 0 {
		return nil, ErrArg(ArgEVDFlags)
	}
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if err := ia.liveLocked(); err != nil {
		return nil, err
	}
	if flags&EVDAsync != 0 && ia.asyncEVD != nil && !ia.asyncEVD.dead {
		return nil, ErrArg(ArgEVDFlags)
	}
	if cno != nil && (cno.ia != ia || cno.dead) {
		return nil, ErrHandle(SubHandleCNO)
	}
	evd, err := newEVD(ia, qlen, flags, cno)
	if err != nil {
		return nil, err
	}
	if err := bindLocked(ia, ia.evds, evd); err != nil {
		if evd.cq != nil {
			evd.cq.Destroy()
		}
		evdIDs.remove(evd.id)
		return nil, err
	}
	evd.setQuiet(ia.handles)
	if cno != nil {
		cno.attach(evd)
	}
	return evd, nil
}
