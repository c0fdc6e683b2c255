package core

import (
	"sync"
	"sync/atomic"

	"godat/rdma"
)

// EVDs of another IA. dat_ep_create, dat_ep_modify, dat_psp_create and
// dat_rsp_create accept any live EVD of this process of the right kind, as
// the references do (they check the handle and the EVD's flags, never its
// IA) and as programs that open several IAs expect. Two things make that
// work:
//
//   - The EVD is checked and its use counted in one step under its own
//     lock (acquire): its IA's lock, which guards its life, is not held.
//   - DTO completions become events when a waiter progresses the queue
//     pairs feeding its EVD, and a sleeping waiter sleeps on its own IA's
//     doorbell, which the EP's transport does not ring: its IA's device
//     rings its own. While an EP of IA A feeds a DTO EVD of IA B, a relay
//     goroutine sleeps on A's doorbell and rings B's each time A's rings.
//     Connection and request events are pushed straight into their EVD,
//     which rings its own IA's doorbell, and need no relay.

// acquire counts one more user of e if it is alive and accepts flag; it
// fails when e is freed (or its IA closing) or of the wrong kind.
func (e *EVD) acquire(flag EVDFlags) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dead || e.ia.closed.Load() || e.flags&flag == 0 {
		return false
	}
	e.users++
	return true
}

// relay rings one IA's doorbell whenever another's rings.
type relay struct {
	refs int // EP-EVD feeds that need it; guarded by relays.mu
	stop atomic.Bool
	done chan struct{}
}

type relayKey struct{ from, to *IA }

var relays = struct {
	sync.Mutex
	m map[relayKey]*relay
}{m: map[relayKey]*relay{}}

// linkDoorbells records that a queue pair of from feeds an EVD of to, and
// starts the relay between them with the first such feed.
func linkDoorbells(from, to *IA) {
	if from == to {
		return
	}
	relays.Lock()
	defer relays.Unlock()
	// Close marks an IA closed before it stops its relays: none starts
	// after that.
	if from.closed.Load() || to.closed.Load() {
		return
	}
	k := relayKey{from, to}
	r := relays.m[k]
	if r == nil {
		r = &relay{done: make(chan struct{})}
		relays.m[k] = r
		// The count is read here, not in the goroutine, so that a ring
		// after this call is never missed.
		go r.run(from.doorbell, to.doorbell, from.doorbell.Seq())
	}
	r.refs++
}

// unlinkDoorbells undoes one linkDoorbells; the relay stops with its last
// feed.
func unlinkDoorbells(from, to *IA) {
	if from == to {
		return
	}
	relays.Lock()
	defer relays.Unlock()
	k := relayKey{from, to}
	r := relays.m[k]
	if r == nil {
		return // stopped when one of the IAs closed
	}
	if r.refs--; r.refs == 0 {
		delete(relays.m, k)
		r.halt(from.doorbell)
	}
}

// stopRelays stops every relay to or from ia before its device, and with it
// the doorbell a relay sleeps on or rings, goes away.
func stopRelays(ia *IA) {
	relays.Lock()
	defer relays.Unlock()
	for k, r := range relays.m {
		if k.from == ia || k.to == ia {
			delete(relays.m, k)
			r.halt(k.from.doorbell)
		}
	}
}

// halt stops the relay and waits until it has: it wakes the relay by
// ringing the doorbell it sleeps on (a spurious ring, which waiters
// tolerate).
func (r *relay) halt(from rdma.Doorbell) {
	r.stop.Store(true)
	from.Ring()
	<-r.done
}

// run forwards rings, from the count seq on. A ring of from after the count
// was read ends the wait;
// one before it is covered by the ring of to that follows the read, so no
// ring is lost. It sleeps in the doorbell's futex wait, never spins for
// long (the doorbell's own short spin aside).
func (r *relay) run(from, to rdma.Doorbell, seq uint32) {
	defer close(r.done)
	for !r.stop.Load() {
		from.Wait(seq, -1)
		seq = from.Seq()
		if r.stop.Load() {
			return
		}
		to.Ring()
	}
}

// feed makes e progress the EP's queue pair, relaying the EP's IA's
// doorbell to e's IA when they differ.
func (ep *EP) feed(e *EVD) {
	linkDoorbells(ep.ia, e.ia)
	e.addSource(ep.qp)
}

// unfeed undoes feed.
func (ep *EP) unfeed(e *EVD) {
	e.removeSource(ep.qp)
	unlinkDoorbells(ep.ia, e.ia)
}
