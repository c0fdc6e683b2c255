package soft

// The device's side of the shared-memory wire: the drain of the inbound
// queue (bell.go), which dispatches hints to connections, and the rescan
// that recovers from lost or forged hints.

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"godat/rdma"
)

// drainBudget bounds the hints one Poll takes.
const drainBudget = 256

// Devices of this process. A shared-memory message between two devices of
// one process is placed when the receiving device is polled; a program
// that waits on the sending device's channel for the send's completion
// would wait for ever, since nothing polls the other. So a waiter drains
// every device of the process before it sleeps and, once announced, does
// not sleep while any of them has a hint; and a hint to a device of our
// own process wakes the sleepers of every device. The list is replaced,
// never changed in place, so that readers load it without a lock.
var local struct {
	mu       sync.Mutex // writers only
	devs     atomic.Pointer[[]*device]
	sleepers atomic.Int32 // threads asleep on any local device's bell
}

func registerLocal(d *device) {
	local.mu.Lock()
	defer local.mu.Unlock()
	var devs []*device
	if p := local.devs.Load(); p != nil {
		devs = append(devs, *p...)
	}
	devs = append(devs, d)
	local.devs.Store(&devs)
}

func unregisterLocal(d *device) {
	local.mu.Lock()
	defer local.mu.Unlock()
	var devs []*device
	if p := local.devs.Load(); p != nil {
		for _, x := range *p {
			if x != d {
				devs = append(devs, x)
			}
		}
	}
	local.devs.Store(&devs)
}

// eachLocal calls f for every open device of the process, inside its bell
// mapping.
func eachLocal(f func(*device)) {
	p := local.devs.Load()
	if p == nil {
		return
	}
	for _, d := range *p {
		if d.bellEnter() {
			f(d)
			d.bellLeave()
		}
	}
}

// drainLocal takes the hints waiting at every device of the process, and
// the messages of its watched rings.
func drainLocal() {
	eachLocal(func(d *device) {
		if d.in.ready(d.bell) || d.in.nwatch.Load() != 0 {
			d.drainInbound()
		}
	})
}

// drainLocalWatched is a sleeper's last look at the watched rings of every
// device of the process, once it counts itself a sleeper (shm_watch.go).
func drainLocalWatched() {
	eachLocal(func(d *device) {
		if d.in.nwatch.Load() != 0 {
			d.drainWatched()
		}
	})
}

// localReady reports whether a device of the process has a hint waiting.
func localReady() (ready bool) {
	eachLocal(func(d *device) { ready = ready || d.in.ready(d.bell) })
	return ready
}

// ringLocal wakes the sleepers of every device of the process; with none
// asleep it costs one load. (A sleeper counts itself before its last look
// at every device's queue, and the hint is queued before this load.)
func ringLocal() {
	if local.sleepers.Load() == 0 {
		return
	}
	eachLocal(func(d *device) {
		if d.bell.ld32(bellOffSleepers) != 0 {
			d.ringSelf()
		}
	})
}

type shmDev struct {
	conns  atomic.Int32 // live shared-memory connections
	mu     sync.Mutex   // leaf: keysRO
	keysRO int          // the read-only descriptor of our table peers get
}

func (s *shmDev) init() { s.keysRO = -1 }

func (s *shmDev) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keysRO >= 0 {
		unix.Close(s.keysRO)
		s.keysRO = -1
	}
}

// drainInbound takes hints from our inbound queue in arrival order and
// lets each named connection process its messages up to the one the hint
// names. One thread drains at a time; another finds the lock taken and
// goes on (the drainer pushes into every CQ).
func (d *device) drainInbound() { d.drainFor(nil, nil) }

// drainFor is drainInbound for a Poll of q, which lends wc[0] to the drain
// (cqHand); it returns the number of completions the drain put in wc.
func (d *device) drainFor(q *cq, wc []rdma.WC) int {
	in := &d.in
	if !in.mu.TryLock() {
		return 0
	}
	if d.closed.Load() { // the bell is not ours to write any more (Close)
		in.mu.Unlock()
		return 0
	}
	in.lend(q, wc)
	d.drainLocked()
	k := in.reclaim()
	in.mu.Unlock()
	return k
}

// lend lends wc[0] to the drain about to run for a Poll of q; in.mu held.
func (in *inbound) lend(q *cq, wc []rdma.WC) {
	if q != nil && len(wc) > 0 {
		in.hand = cqHand{cq: q, wc: &wc[0]}
	}
}

// reclaim ends the loan: the number of completions given (0 or 1).
func (in *inbound) reclaim() int {
	k := 0
	if in.hand.used {
		k = 1
	}
	in.hand = cqHand{}
	return k
}

// peekHot is Poll's look at the connection that last completed a receive
// into q (when no hint waits): its next slot is usually where the next
// message lands, and its hint, which the sender appends after publishing
// it, need not be waited for. The message is taken directly only if no
// hint waits once the slot is seen published, or its stamp says every
// hint appended before its post began is taken: every message that
// arrived before it is then taken already, so arrival order holds (its
// own hint, taken later, names a position already consumed and does
// nothing). One message per look. Like
// drainFor, it returns the number of completions put in wc.
func (d *device) peekHot(q *cq, wc []rdma.WC) int {
	in := &d.in
	if !in.mu.TryLock() {
		return 0
	}
	if d.closed.Load() { // as in drainFor
		in.mu.Unlock()
		return 0
	}
	in.lend(q, wc)
	d.peekHotLocked(q)
	k := in.reclaim()
	in.mu.Unlock()
	return k
}

// peekHotLocked is peekHot's look with in.mu held.
func (d *device) peekHotLocked(q *cq) {
	in := &d.in
	w := q.hot.Load() // under in.mu: its mappings stay (release clears it first)
	if w == nil || w.closed.Load() || w.rxWait || in.cooled != 0 {
		// A ring that was hot may hold unhinted messages that come
		// first: the drain orders them (shm_watch.go). (The other hot
		// rings are other CQs': their order is not ours to keep.)
		if in.ready(d.bell) || len(in.watch) != 0 {
			d.drainLocked()
		}
		return
	}
	if w.rx.ready() {
		if d.hintBefore(w, in.head.Load()) {
			d.drainLocked()
			return
		}
		w.onHint(uint32(w.rx.tail)&hintSeqMask, false)
		return
	}
	if in.ready(d.bell) {
		d.drainLocked()
	}
}

// hintBefore reports whether the hint at queue position pos, if one waits
// there, must be taken before w's next message, whose slot the caller saw
// published (in.mu held). The slot first, so that a hint appended before
// it was published is seen by the look at the queue after it (the other
// way round, test_multi_ep_order failed 4 runs in 20). That look is
// skipped when the message's stamp (our inbound tail as its sender read
// it before publishing) is not past pos: every hint appended before that
// post began is taken, and one appended since came from a post that
// overlapped it, which may go either way. The hint line, which the sender
// writes just after the slot, is then not waited for.
func (d *device) hintBefore(w *shmWire, pos uint64) bool {
	stamp := w.mem.get32(w.rx.slot(w.rx.tail) + dsOffStamp)
	return after(stamp, uint32(pos)) && hintAt(d.bell.ld64(inSlotOff(pos)), pos)
}

// drainLocked is drainInbound with in.mu held.
func (d *device) drainLocked() {
	in := &d.in
	took, more := d.takeHintsLocked(drainBudget)
	m := d.bell
	if took && m.ld32(bellOffOverflow) != 0 {
		m.st32(bellOffOverflow, 0)
		in.rescan.Store(true)
	}
	// Loaded before it is swapped: a swap is a locked instruction on every
	// drain, and the flag is only ever cleared under in.mu.
	if !more && in.rescan.Load() && in.rescan.Swap(false) {
		d.rescanLocked()
	}
}

// takeHintsLocked takes up to budget hints in queue order (in.mu held). A
// drain stops after one rendezvous placement (a copy whose cost grows with
// the message): its caller gets its completion and can post the receive
// that keeps the sender going, rather than wait for every large message
// queued behind it. more: it stopped with hints left.
func (d *device) takeHintsLocked(budget int) (took, more bool) {
	in := &d.in
	m := d.bell
	in.pulled = false
	for i := 0; ; i++ {
		pos := in.head.Load()
		if len(in.watch) != 0 {
			d.serveWatchLocked(pos) // the watched rings' messages before the hint at pos
		}
		e := m.ld64(inSlotOff(pos))
		if !hintAt(e, pos) {
			return took, false
		}
		if i == budget || in.pulled {
			return took, true
		}
		in.head.Store(pos + 1)
		d.bump() // a watch looks at the head's slot
		if (pos+1)%headEvery == 0 {
			m.st64(bellOffHead, pos+1)
		}
		took = true
		idx, gen, seq, kick, _ := decodeHint(e, pos)
		q := d.qps[idx].Load()
		if q == nil {
			continue // stale: the QP is gone
		}
		if w := q.shmw.Load(); w != nil && w.gen == gen && (kick || !w.behind(seq)) {
			w.onHint(seq, kick)
		}
	}
}

// rescanLocked finds messages whose hints were lost (in.mu held). It first
// takes every hint queued, in order, stepping over holes (an erased hint:
// a tail past the head with no hint at the head, since a producer writes
// the slot before it moves the tail), so that the messages with hints are
// taken in arrival order; then it looks at every connection's ring, as if
// each had a kick, for what is left; it also puts back a tail a peer moved
// more than a lap away.
func (d *device) rescanLocked() {
	m := d.bell
	for {
		for _, more := d.takeHintsLocked(drainBudget); more; _, more = d.takeHintsLocked(drainBudget) {
		}
		h := d.in.head.Load()
		if t := m.ld64(bellOffTail); t-h-1 >= inSlots { // no hole: the tail is at the head, or garbage
			if t-h > inSlots {
				m.st64(bellOffTail, h)
			}
			break
		}
		d.in.head.Store(h + 1) // a hole
		d.bump()
	}
	m.st64(bellOffHead, d.in.head.Load())
	if rescanHook != nil {
		rescanHook()
	}
	// The walk goes in slot order, not arrival order: a message published
	// since the hints above were taken, behind a hint now waiting, is left
	// to the drain that takes that hint first (one whose hint was erased
	// has a stamp the head reaches).
	for i := range d.qps {
		if q := d.qps[i].Load(); q != nil {
			if w := q.shmw.Load(); w != nil && !w.closed.Load() {
				d.in.pulled = false // one large placement per connection
				d.serveRingLocked(w, d.in.head.Load(), watchHot)
				w.onHint(0, true) // verdicts, NAKs, ring room, what the send queue waits for
			}
		}
	}
}

// rescanHook, when set (tests only), runs between the rescan's hints and
// its walk of the connections.
var rescanHook func()

// rescanNow runs a rescan from a waiter (see rescanDue).
func (d *device) rescanNow() {
	d.in.rescan.Store(true)
	d.in.mu.Lock()
	defer d.in.mu.Unlock()
	if d.in.rescan.Swap(false) {
		d.rescanLocked()
	}
}
