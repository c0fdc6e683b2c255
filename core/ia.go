package core

import (
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
}

// IAConfig is what OpenIA needs.
type IAConfig struct {
	Name      string
	Device    rdma.Device
	AsyncQLen int  // queue length of the async EVD created when AsyncEVD is nil
	AsyncEVD  *EVD // consumer-supplied async EVD, or nil
	// NoAsync is DAT_EVD_ASYNC_EXISTS: the consumer's async EVD lives
	// outside this process, so the IA creates none and has none in scope.
	NoAsync bool
	Handles Handles
	// Agent invokes CNOs' OS wait proxy agents; nil keeps agents for
	// dat_cno_query but never calls them.
	Agent AgentFunc
}

// IA is an open interface adapter: the root of every other DAT object.
type IA struct {
	Object
	name     string
	dev      rdma.Device
	doorbell rdma.Doorbell
	attr     IAAttr
	handles  Handles
	agent    AgentFunc
	// agentsDue are proxy agent calls owed by objects destroyed under
	// ia.mu (see CNO.agentDueLocked); guarded by ia.mu.
	agentsDue [][2]uint64

	mu       sync.Mutex
	closed   atomic.Bool
	closing  bool
	asyncEVD *EVD
	ownAsync bool
	nextPD   uint32

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

// OpenIA opens an IA over an opened transport device.
func OpenIA(cfg IAConfig) (*IA, error) {
	if cfg.AsyncEVD == nil && !cfg.NoAsync && cfg.AsyncQLen <= 0 {
		return nil, ErrArg(2)
	}
	if e := cfg.AsyncEVD; e != nil && !e.usableAsAsync() {
		return nil, ErrHandle(SubHandleEVDAsync)
	}
	ia := &IA{
		name: cfg.Name, dev: cfg.Device, doorbell: cfg.Device.Doorbell(), handles: cfg.Handles, agent: cfg.Agent,
		pzs: map[*PZ]struct{}{}, evds: map[*EVD]struct{}{}, cnos: map[*CNO]struct{}{},
		eps: map[*EP]struct{}{}, lmrs: map[*LMR]struct{}{}, rmrs: map[*RMR]struct{}{},
		psps: map[*PSP]struct{}{}, rsps: map[*RSP]struct{}{}, srqs: map[*SRQ]struct{}{},
		crs: map[*CR]struct{}{},
	}
	ia.kind = TypeIA
	ia.attr = attrFromDevice(cfg.Device)
	// dat_ia_query(3DAT): the adapter name is "the same as ia_name_ptr".
	ia.attr.AdapterName = cfg.Name
	if err := ia.handles.Bind(ia); err != nil {
		return nil, err
	}
	switch {
	case cfg.AsyncEVD != nil:
		ia.asyncEVD = cfg.AsyncEVD
	case cfg.NoAsync:
	default:
		evd, err := ia.CreateEVD(cfg.AsyncQLen, EVDAsync, nil)
		if err != nil {
			ia.handles.Release(ia)
			return nil, err
		}
		ia.asyncEVD, ia.ownAsync = evd, true
	}
	return ia, nil
}

func attrFromDevice(d rdma.Device) IAAttr {
	a := d.Attr()
	return IAAttr{
		AdapterName: a.Name, VendorName: a.Vendor, Address: d.Addr(),
		MaxEPs: a.MaxQP, MaxDTOPerEP: a.MaxQPWR,
		MaxRDMAReadPerEPIn: a.MaxReadsPerQP, MaxRDMAReadPerEPOut: a.MaxReadsPerQP,
		MaxEVDs: a.MaxCQE, MaxEVDQLen: a.MaxCQE, MaxIOVSegments: a.MaxSGE,
		MaxLMRs: a.MaxMR, MaxLMRBlockSize: a.MaxMRSize, MaxLMRVirtualAddress: 1<<47 - 1,
		MaxPZs: a.MaxPD, MaxMessageSize: a.MaxMsgSize, MaxRDMASize: a.MaxRDMASize,
		MaxRMRs: a.MaxMR, MaxRMRTargetAddress: 1<<47 - 1,
		MaxSRQs: a.MaxSRQ, MaxEPPerSRQ: a.MaxQP, MaxRecvPerSRQ: a.MaxSRQWR,
		MaxPrivateData: a.MaxPrivateData,
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
func (ia *IA) Device() rdma.Device { return ia.dev }

// sleep waits on the doorbell (see rdma.Doorbell.Wait) and reports whether
// a signal interrupted it, when the transport can tell.
func (ia *IA) sleep(seq uint32, d time.Duration) (interrupted bool) {
	if ib, ok := ia.doorbell.(rdma.InterruptibleDoorbell); ok {
		return ib.WaitIntr(seq, d)
	}
	ia.doorbell.Wait(seq, d)
	return false
}

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
func (ia *IA) asyncError(num EventNumber, target Obj, reason uint32) {
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
	ia.doorbell.Ring()
	pending := ia.destroyAll()
	// Requests nobody answered are refused, so that their active sides
	// learn it now rather than when their connect times out.
	for _, req := range pending {
		req.Reject()
	}
	ia.runDueAgents()
	ia.handles.Release(ia)
	// No relay may sleep on or ring this device's doorbell once it is gone.
	stopRelays(ia)
	return ia.dev.Close()
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
	return pending
}

// CreateEVD creates an event dispatcher (dat_evd_create).
func (ia *IA) CreateEVD(qlen int, flags EVDFlags, cno *CNO) (*EVD, error) {
	if qlen <= 0 || qlen > ia.attr.MaxEVDQLen {
		return nil, ErrArg(2)
	}
	if flags == 0 || flags&^evdAllFlags != 0 {
		return nil, ErrArg(4)
	}
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if err := ia.liveLocked(); err != nil {
		return nil, err
	}
	if flags&EVDAsync != 0 && ia.asyncEVD != nil && !ia.asyncEVD.dead {
		return nil, ErrArg(4)
	}
	if cno != nil && (cno.ia != ia || cno.dead) {
		return nil, ErrHandle(SubHandleCNO)
	}
	evd := newEVD(ia, qlen, flags, cno)
	if err := bindLocked(ia, ia.evds, evd); err != nil {
		return nil, err
	}
	if cno != nil {
		cno.attach(evd)
	}
	return evd, nil
}
