package core

import (
	"sync"
	"sync/atomic"
	"time"
)

// EVDFlags select the event streams an EVD accepts. The values are the DAT
// flag bits, which both DAT ABIs share.
type EVDFlags uint32

// EVD stream flags.
const (
	EVDSoftware   EVDFlags = 0x01
	EVDCR         EVDFlags = 0x10
	EVDDTO        EVDFlags = 0x20
	EVDConnection EVDFlags = 0x40
	EVDRMRBind    EVDFlags = 0x80
	EVDAsync      EVDFlags = 0x100
	EVDDefault    EVDFlags = 0x1f0
	evdAllFlags            = EVDSoftware | EVDDefault
)

// progressor is a transport object whose arrivals turn into events on an EVD
// when core calls Progress (a queue pair).
type progressor interface{ Progress() int }

// EVD is an event dispatcher: a queue of events with waiters.
type EVD struct {
	Object
	ia    *IA
	flags EVDFlags

	mu       sync.Mutex
	ring     []Event // circular; grows past qlen for completions
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

	// Read without e.mu on the dequeue fast path: sources is replaced
	// (copy on write) under e.mu; queued is set when count becomes 1 and
	// cleared by a dequeue that finds count 0; blocked is dead || waiting.
	// queued and blocked are stored under e.mu.
	sources  atomic.Pointer[[]progressor]
	queued   atomic.Int32 // 0: empty; 1: maybe not (see popLocked)
	blocked  atomic.Bool
	sleepers atomic.Int32
}

// The ring starts at most this big and doubles when a push finds it full,
// so that an EVD of the largest queue length costs memory only when used.
const (
	evdMinRing  = 16
	evdInitRing = 1024
)

func newEVD(ia *IA, qlen int, flags EVDFlags, cno *CNO) *EVD {
	n := min(max(qlen, evdMinRing), evdInitRing)
	e := &EVD{ia: ia, flags: flags, ring: make([]Event, n), qlen: qlen, enabled: true, waitable: true, cno: cno}
	e.kind = TypeEVD
	return e
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

// push queues ev. Completions are never dropped: the ring grows past qlen
// and the first excursion over qlen is reported as an overflow on the async
// EVD. Caller must not hold e.mu.
func (e *EVD) push(ev *Event) {
	e.mu.Lock()
	if e.dead {
		e.mu.Unlock()
		return
	}
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
	if ev.notify {
		e.notifies++
	}
	overflowed := false
	if e.count > e.qlen && !e.overflow && e.flags&EVDAsync == 0 {
		e.overflow = true
		overflowed = true
	}
	cno := e.cno
	trigger := cno != nil && ev.notify && e.enabled && !e.waiting
	e.mu.Unlock()

	if trigger {
		cno.trigger(e)
	}
	if e.sleepers.Load() > 0 {
		e.ia.doorbell.Ring()
	}
	if overflowed {
		e.ia.asyncError(EventAsyncEVDOverflow, e, ReasonEVDOverflow)
	}
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
	if out.srq != nil || out.held {
		out.reaped()
	}
	if e.count <= e.qlen {
		e.overflow = false
	}
}

// progress lets every transport object feeding this EVD turn arrivals into
// events. It runs without e.mu held because backends push into the EVD.
func (e *EVD) progress() int {
	src := e.sources.Load()
	if src == nil {
		return 0
	}
	n := 0
	for _, s := range *src {
		n += s.Progress()
	}
	return n
}

func (e *EVD) addSource(p progressor) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var old []progressor
	if p := e.sources.Load(); p != nil {
		old = *p
	}
	for _, s := range old {
		if s == p {
			return
		}
	}
	// Copy on write: progress iterates a snapshot without the lock.
	src := make([]progressor, len(old), len(old)+1)
	copy(src, old)
	src = append(src, p)
	e.sources.Store(&src)
}

func (e *EVD) removeSource(p progressor) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var old []progressor
	if p := e.sources.Load(); p != nil {
		old = *p
	}
	src := make([]progressor, 0, len(old))
	for _, s := range old {
		if s != p {
			src = append(src, s)
		}
	}
	e.sources.Store(&src)
}

// Dequeue removes the first event (dat_evd_dequeue). A consumer polling an
// empty EVD takes no lock of the EVD: only the transport's progress runs.
func (e *EVD) Dequeue(out *Event) error {
	if e.queued.Load() != 0 || e.blocked.Load() {
		if err := e.tryDequeue(out); err != ErrQueueEmpty {
			return err
		}
	}
	if e.progress() == 0 {
		return ErrQueueEmpty
	}
	return e.tryDequeue(out)
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

// Wait removes the first event once threshold events are queued, or fails
// with DAT_TIMEOUT_EXPIRED after timeout (negative: no bound), or with
// DAT_INTERRUPTED_CALL when a signal handler runs on the sleeping thread.
// It returns the number of events left on the queue in all three cases
// (dat_evd_wait).
func (e *EVD) Wait(timeout time.Duration, threshold int, out *Event) (int, error) {
	e.mu.Lock()
	switch {
	case e.dead:
		e.mu.Unlock()
		return 0, ErrHandle(SubNone)
	case threshold <= 0 || threshold > e.qlen:
		e.mu.Unlock()
		return 0, ErrArg(3)
	case !e.waitable:
		e.mu.Unlock()
		return 0, ErrState(SubStateEVDUnwaitable)
	case e.waiting:
		e.mu.Unlock()
		return 0, ErrState(SubStateEVDWaiter)
	case threshold > 1 && e.notifyCtl > 0:
		e.mu.Unlock()
		return 0, ErrState(SubStateEVDConfigNotify)
	}
	e.waiting = true
	e.blocked.Store(true)
	e.mu.Unlock()

	n, err := e.waitLoop(timeout, threshold, out)

	e.mu.Lock()
	e.waiting = false
	e.blocked.Store(e.dead)
	e.mu.Unlock()
	return n, err
}

func (e *EVD) ready(threshold int) bool {
	if threshold == 1 {
		// Only notification events wake a waiter (solicited wait and
		// unsignalled completions stay queued until one arrives).
		return e.notifies > 0
	}
	return e.count >= threshold
}

func (e *EVD) waitLoop(timeout time.Duration, threshold int, out *Event) (int, error) {
	db := e.ia.doorbell
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	e.sleepers.Add(1)
	defer e.sleepers.Add(-1)
	for {
		seq := db.Seq()
		e.progress()
		e.mu.Lock()
		switch {
		case e.dead:
			e.mu.Unlock()
			return 0, E(KindAbort, SubNone)
		case !e.waitable:
			e.mu.Unlock()
			return 0, ErrState(SubStateEVDUnwaitable)
		case e.ready(threshold):
			e.popLocked(out)
			n := e.count
			e.mu.Unlock()
			return n, nil
		}
		n := e.count
		e.mu.Unlock()
		if e.ia.closed.Load() {
			return n, E(KindAbort, SubNone)
		}
		var left time.Duration = -1
		if timeout == 0 {
			return n, ErrTimeout
		}
		if timeout > 0 {
			left = time.Until(deadline)
			if left <= 0 {
				return n, ErrTimeout
			}
		}
		if e.ia.sleep(seq, left) {
			e.mu.Lock()
			n = e.count
			e.mu.Unlock()
			return n, ErrInterrupted
		}
	}
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
		return ErrArg(2)
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
		return ErrArg(2)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead {
		return ErrHandle(SubNone)
	}
	if e.count > qlen {
		return ErrState(SubNone)
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
		e.ia.doorbell.Ring()
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
	cno := e.cno
	e.cno = nil
	for i := 0; i < e.count; i++ {
		// Completions nobody will reap give their buffers back.
		e.ring[(e.head+i)%len(e.ring)].reaped()
	}
	e.ring = nil
	e.count, e.notifies = 0, 0
	e.queued.Store(0)
	e.mu.Unlock()
	if cno != nil {
		cno.detach(e, true)
	}
	e.ia.doorbell.Ring()
	delete(e.ia.evds, e)
	e.ia.handles.Release(e)
}
