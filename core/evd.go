package core

import (
	"sync"
	"sync/atomic"

	"godat/rdma"
)

// EVDFlags select the event streams an EVD accepts.
type EVDFlags uint32

// EVD stream flags (core's own bits; the export layer converts).
const (
	EVDSoftware EVDFlags = 1 << iota
	EVDCR
	EVDDTO
	EVDConnection
	EVDRMRBind
	EVDAsync
	EVDDefault  = EVDCR | EVDDTO | EVDConnection | EVDRMRBind | EVDAsync
	evdAllFlags = EVDSoftware | EVDDefault
)

// EVD is an event dispatcher: a queue of events with waiters.
//
// Events come two ways. Connection, request-arrival, asynchronous, software
// and bind events are pushed into the EVD's ring. DTO completions stay in
// the EVD's CQ, which every EP feeding the EVD completes into, until a
// dequeue or a wait polls them (pump): then they become events, in the
// CQ's order. So an empty dequeue costs the same whatever the number of EPs
// on the EVD.
type EVD struct {
	Object
	ia    *IA
	flags EVDFlags
	id    uint32  // names the EVD to the transport (its CQ's context)
	cq    rdma.CQ // DTO EVDs: the CQ their EPs' QPs complete into
	// more are the EVD's CQs on other devices, for EPs of IAs on another
	// device (cqFor); copied on write, polled after cq. Rarely any.
	more atomic.Pointer[[]foreignCQ]

	mu       sync.Mutex
	ring     []Event // circular; grows past qlen rather than drop an event
	head     int
	count    int
	notifies int // queued events with notify set
	qlen     int
	enabled  bool
	waitable bool
	waiting  bool // a thread is in Wait (exclusive ownership)
	overflow bool // an overflow was reported and the queue is still over qlen
	cno      *CNO
	users    int // EPs, PSPs, RSPs, RMR binds referring to the EVD
	// notifyCtl counts EPs whose completion flags control notification
	// on this EVD; waits on it need a threshold of 1.
	notifyCtl int
	dead      bool

	// Read without e.mu on the dequeue fast path: queued is set when count
	// becomes 1 and cleared by a dequeue that finds count 0; blocked is
	// dead || waiting. Both are stored under e.mu.
	queued  atomic.Int32 // 0: empty; 1: maybe not (see popLocked)
	blocked atomic.Bool
	// hasCNO is cno != nil, for the dequeue fast path: an EVD feeding a CNO
	// sends every completion through the ring, where the CNO's agent is
	// triggered. Stored under e.mu.
	hasCNO atomic.Bool

	// pollMu serialises polls of the CQ, so that completions enter the
	// ring in the CQ's order; it guards wcs, the poll buffer, and evs.
	pollMu sync.Mutex
	wcs    [evdPollBatch]rdma.WC
	evs    [evdPollBatch]Event

	// quiet is where an empty dequeue says so, for the export layer's C
	// fast path, and qcq the CQ's watch (evd_quiet.go); both nil when
	// either side cannot. Set before the EVD is used.
	quiet QuietSink
	qcq   rdma.QuietCQ

	// deferred holds events pushed while another thread held pollMu (under
	// e.mu; ndeferred is its length, read without it): that thread may
	// hold completions that came before them, so they enter the ring
	// behind those, when pollMu is let go (pollUnlock, settle).
	deferred  []Event
	ndeferred atomic.Int32
}

// evdPollBatch is how many completions one poll takes from the CQ.
const evdPollBatch = 16

// The ring starts at most this big and doubles when a push finds it full,
// so that an EVD of the largest queue length costs memory only when used.
const (
	evdMinRing  = 16
	evdInitRing = 1024
)

// foreignCQ is an EVD's CQ on a device other than its IA's.
type foreignCQ struct {
	dev *device
	cq  rdma.CQ
}

// acquire counts one more user of e if it is alive and accepts flag; it
// fails when e is freed (or its IA closing) or of the wrong kind. Checking
// and counting in one step under e.mu keeps the EVD alive for its new user
// without its IA's lock.
func (e *EVD) acquire(flag EVDFlags) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead || e.ia.closed.Load() || e.flags&flag == 0 {
		return false
	}
	e.users++
	return true
}

// cqFor is the EVD's CQ for QPs of device d: its own when d is its IA's
// device (IAs of one dat.conf entry share it), else one made on d whose
// notifications go to the EVD's own IA's channel, where its waiters sleep.
// A backend that cannot notify another device's channel refuses: then an
// EP of that device cannot use the EVD.
func (e *EVD) cqFor(d *device) (rdma.CQ, error) {
	if d == e.ia.dev {
		return e.cq, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var cur []foreignCQ
	if p := e.more.Load(); p != nil {
		cur = *p
	}
	for _, f := range cur {
		if f.dev == d {
			return f.cq, nil
		}
	}
	cq, err := d.dev.CreateCQ(e.qlen, e.ia.comp, uint64(e.id))
	if err != nil {
		return nil, ErrHandle(SubNone)
	}
	nu := append(cur[:len(cur):len(cur)], foreignCQ{dev: d, cq: cq})
	e.more.Store(&nu)
	e.bumpQuiet()
	return cq, nil
}

// backlog is the backlog of a service point that delivers its requests to
// the EVD: its queue length (dat_psp_create(3DAT)).
func (e *EVD) backlog() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.qlen
}

// IA is the interface adapter the EVD belongs to.
func (e *EVD) IA() *IA { return e.ia }

// Flags are the streams the EVD was created for.
func (e *EVD) Flags() EVDFlags { return e.flags }

// EVDParams is what dat_evd_query reports.
type EVDParams struct {
	QLen     int
	Enabled  bool
	Waitable bool
	CNO      *CNO
	Flags    EVDFlags
}

// Query reports the EVD's parameters.
func (e *EVD) Query() (EVDParams, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead {
		return EVDParams{}, ErrHandle(SubNone)
	}
	return EVDParams{QLen: e.qlen, Enabled: e.enabled, Waitable: e.waitable, CNO: e.cno, Flags: e.flags}, nil
}

// usableAsAsync tells whether a consumer may pass the EVD to dat_ia_open as
// the async EVD of another IA: it must be a live asynchronous EVD.
func (e *EVD) usableAsAsync() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return !e.dead && e.flags&EVDAsync != 0
}

// push queues a pushed (non-DTO) event and wakes waiters. Such events are
// never dropped: the ring grows past qlen and the first excursion over qlen
// is reported as an overflow on the async EVD. Completions already in the
// EVD's CQ go first, so an event comes after the completions that preceded
// it (dat_ep_disconnect(3DAT): "all successful Completion events of
// in-progress DTOs precede the Disconnect Completion event" on one EVD).
// Caller must not hold e.mu. When another thread is polling the CQ (or the
// caller is, converting a completion into this push), that thread may hold
// such completions, polled but not in the ring yet: the event waits in
// e.deferred and enters behind them when pollMu is let go.
func (e *EVD) push(ev *Event) {
	if e.cq == nil {
		e.add(ev)
		return
	}
	if !e.pollMu.TryLock() {
		e.mu.Lock()
		if !e.dead {
			e.deferred = append(e.deferred, *ev)
			e.ndeferred.Add(1)
			e.bumpQuiet()
		}
		e.mu.Unlock()
		e.settle()
		return
	}
	e.settleLocked()
	e.add(ev)
	e.pollUnlock()
}

// pollUnlock lets pollMu go, first moving in the events pushed meanwhile
// (settleLocked); an event deferred after that look is moved by whoever
// takes pollMu next, its pusher included (settle).
func (e *EVD) pollUnlock() {
	if e.ndeferred.Load() != 0 {
		e.settleLocked()
	}
	e.pollMu.Unlock()
	if e.ndeferred.Load() != 0 {
		e.settle()
	}
}

// settle moves the deferred events into the ring unless another thread
// polls the CQ (its pollUnlock will).
func (e *EVD) settle() {
	for e.ndeferred.Load() != 0 && e.pollMu.TryLock() {
		e.settleLocked()
		e.pollMu.Unlock()
	}
}

// settleLocked pumps the CQ into the ring, then moves the deferred events
// in behind what it held; pollMu is held. The events are taken before the
// pump: a completion that came before an event's push is in the CQ by
// then, and enters first.
func (e *EVD) settleLocked() {
	for {
		e.mu.Lock()
		evs := e.deferred
		e.deferred = nil
		e.ndeferred.Store(0)
		e.mu.Unlock()
		e.pumpLocked(-1)
		for i := range evs {
			e.add(&evs[i])
		}
		if e.ndeferred.Load() == 0 {
			return
		}
	}
}

// add inserts a pushed event into the ring and notifies the CNO, the IA's
// waiters and, for a first excursion over qlen, the async EVD. Caller must
// not hold e.mu.
func (e *EVD) add(ev *Event) {
	e.mu.Lock()
	if e.dead {
		e.mu.Unlock()
		return
	}
	trigger := e.insertLocked(ev)
	overflowed := false
	if e.count > e.qlen && !e.overflow && e.flags&EVDAsync == 0 {
		e.overflow = true
		overflowed = true
	}
	cno := e.cno
	e.mu.Unlock()

	if trigger {
		cno.trigger(e, 1)
	}
	e.ia.wake()
	if overflowed {
		e.ia.asyncError(EventAsyncEVDOverflow, e, ReasonEVDOverflow)
	}
}

// insertLocked appends ev to the ring; it reports whether the event
// triggers the EVD's CNO (a notification on an enabled EVD nobody waits on
// directly: dat_evd_wait(3DAT) preempts the CNO).
func (e *EVD) insertLocked(ev *Event) (trigger bool) {
	if e.count == len(e.ring) {
		e.grow(2 * len(e.ring))
	}
	ev.EVD = e
	i := e.head + e.count // no division on the hot path
	if i >= len(e.ring) {
		i -= len(e.ring)
	}
	e.ring[i] = *ev
	e.count++
	if e.count == 1 && e.queued.Load() == 0 {
		e.queued.Store(1) // only the empty/non-empty edge is published
	}
	// After queued: a dequeue whose count sample sees this bump sees
	// queued too, and publishes nothing (evd_quiet.go).
	e.bumpQuiet()
	if ev.notify {
		e.notifies++
	}
	return e.cno != nil && ev.notify && e.enabled && !e.waiting
}

func (e *EVD) grow(n int) {
	r := make([]Event, n)
	for i := 0; i < e.count; i++ {
		r[i] = e.ring[(e.head+i)%len(e.ring)]
	}
	e.ring, e.head = r, 0
}

// popLocked removes the first event into out.
func (e *EVD) popLocked(out *Event) {
	slot := &e.ring[e.head]
	*out = *slot
	*slot = Event{}
	if e.head++; e.head == len(e.ring) {
		e.head = 0
	}
	e.count--
	// queued stays set: the next dequeue that finds the EVD empty clears
	// it (tryDequeue), off the path of the event just delivered.
	if out.notify {
		e.notifies--
	}
	out.reaped()
	if e.count <= e.qlen {
		e.overflow = false
	}
}

// Dequeue removes the first event (dat_evd_dequeue). A consumer polling an
// empty EVD takes no lock of the EVD's queue: one poll of the CQ.
func (e *EVD) Dequeue(out *Event) error {
	gen, epoch, quiet := e.quietStart()
	if e.queued.Load() != 0 || e.blocked.Load() {
		if err := e.tryDequeue(out); err != ErrQueueEmpty {
			return err
		}
	}
	if e.cq != nil && e.pumpDequeue(out) {
		return nil
	}
	// The ring holds events only if the pump put some there or another
	// thread pushed one meanwhile (queued); blocked covers a waiter or a
	// destroyed EVD. Otherwise the EVD is empty without a look under e.mu.
	if e.queued.Load() != 0 || e.blocked.Load() {
		return e.tryDequeue(out)
	}
	if quiet {
		e.publishQuiet(gen, epoch)
	}
	return ErrQueueEmpty
}

func (e *EVD) tryDequeue(out *Event) error {
	e.mu.Lock()
	var err error
	switch {
	case e.dead:
		err = ErrHandle(SubNone)
	case e.waiting:
		err = ErrState(SubStateEVDWaiter)
	case e.count == 0:
		e.queued.Store(0)
		err = ErrQueueEmpty
	default:
		e.popLocked(out)
	}
	e.mu.Unlock()
	return err
}

// PostSE posts a software event (dat_evd_post_se).
func (e *EVD) PostSE(pointer uint64) error {
	e.mu.Lock()
	switch {
	case e.dead:
		e.mu.Unlock()
		return ErrHandle(SubNone)
	case e.flags&EVDSoftware == 0:
		e.mu.Unlock()
		return ErrArg(ArgEvent)
	case e.count >= e.qlen:
		e.mu.Unlock()
		return ErrQueueFull
	}
	e.mu.Unlock()
	e.push(&Event{Number: EventSoftware, Pointer: pointer, notify: true})
	return nil
}

// Resize changes the queue length (dat_evd_resize).
func (e *EVD) Resize(qlen int) error {
	if qlen <= 0 || qlen > e.ia.attr.MaxEVDQLen {
		return ErrArg(ArgQLen)
	}
	e.pump(-1) // completions waiting in the CQ count as queued
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead {
		return ErrHandle(SubNone)
	}
	if e.count > qlen {
		return ErrState(SubNone)
	}
	if e.cq != nil {
		// A CQ that cannot resize (verbs without ibv_resize_cq) keeps
		// its depth; the EVD's queue length is the consumer's bound.
		_ = e.cq.Resize(qlen)
	}
	if qlen > len(e.ring) && qlen <= evdInitRing {
		e.grow(qlen)
	}
	e.qlen = qlen
	return nil
}

// Enable and Disable control whether arrivals notify the CNO and waiters.
func (e *EVD) Enable() error { return e.setEnabled(true) }

// Disable stops arrivals from triggering the CNO (dat_evd_disable).
func (e *EVD) Disable() error { return e.setEnabled(false) }

func (e *EVD) setEnabled(on bool) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead {
		return ErrHandle(SubNone)
	}
	e.enabled = on
	return nil
}

// SetWaitable toggles the waitable state; making an EVD unwaitable wakes and
// fails its waiter with DAT_INVALID_STATE.
func (e *EVD) SetWaitable(on bool) error {
	e.mu.Lock()
	if e.dead {
		e.mu.Unlock()
		return ErrHandle(SubNone)
	}
	e.waitable = on
	wake := !on && e.waiting
	e.mu.Unlock()
	if wake {
		e.ia.wake()
	}
	return nil
}

// ModifyCNO attaches the EVD to cno (nil detaches).
func (e *EVD) ModifyCNO(cno *CNO) error {
	e.mu.Lock()
	if e.dead {
		e.mu.Unlock()
		return ErrHandle(SubNone)
	}
	old := e.cno
	e.cno = cno
	e.hasCNO.Store(cno != nil)
	e.mu.Unlock()
	if old != nil {
		old.detach(e, false)
	}
	if cno != nil {
		cno.attach(e)
	}
	return nil
}

func (e *EVD) addNotifyControl(delta int) {
	e.mu.Lock()
	e.notifyCtl += delta
	e.mu.Unlock()
}

func (e *EVD) use(delta int) {
	e.mu.Lock()
	e.users += delta
	e.mu.Unlock()
}

// Free destroys the EVD (dat_evd_free); it refuses while objects use it.
func (e *EVD) Free() error {
	ia := e.ia
	ia.mu.Lock()
	e.mu.Lock()
	if e.dead {
		e.mu.Unlock()
		ia.mu.Unlock()
		return ErrHandle(SubNone)
	}
	if e.users > 0 || e == ia.asyncEVD && !ia.closing {
		e.mu.Unlock()
		ia.mu.Unlock()
		return ErrState(SubStateEVDInUse)
	}
	e.mu.Unlock()
	e.destroyLocked()
	ia.mu.Unlock()
	ia.runDueAgents() // the last EVD of a CNO unblocks its agent
	return nil
}

// destroyLocked tears the EVD down; ia.mu is held.
func (e *EVD) destroyLocked() {
	e.mu.Lock()
	e.dead = true
	e.blocked.Store(true)
	e.bumpQuiet()
	cno := e.cno
	e.cno = nil
	e.hasCNO.Store(false)
	for i := 0; i < e.count; i++ {
		// Completions nobody will reap give their buffers back.
		e.ring[(e.head+i)%len(e.ring)].reaped()
	}
	for i := range e.deferred {
		e.deferred[i].reaped()
	}
	e.deferred = nil
	e.ndeferred.Store(0)
	e.ring = nil
	e.count, e.notifies = 0, 0
	e.queued.Store(0)
	e.mu.Unlock()
	if cno != nil {
		cno.detach(e, true)
	}
	if e.cq != nil {
		// Completions still in the CQs give their buffers back too.
		e.pollMu.Lock()
		e.drainDeadLocked()
		e.pollMu.Unlock()
		e.cq.Destroy()
		if p := e.more.Load(); p != nil {
			for _, f := range *p {
				f.cq.Destroy()
			}
		}
	}
	evdIDs.remove(e.id)
	e.ia.wake()
	delete(e.ia.evds, e)
	e.ia.handles.Release(e)
}
