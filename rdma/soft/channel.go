package soft

// Completion channels. Every channel of a device sleeps on the device's
// bell word (bell.go): peers on this host bump it when they append a hint,
// and an armed CQ or Wake bumps it for local notifications, so one futex
// covers both. A device's channels share that word; a notification for one
// wakes the sleepers of all (they re-check; the contract allows early
// returns).
//
// Wait does not spin (the caller owns the spin policy) and loses no
// notification: a sleeper announces itself in the sleepers count before it
// checks the word and the inbound queue one last time, and a notifier
// changes the word or the queue before it reads the count (see
// bellRef.ring), so either the sleeper sees the change or the notifier sees
// the sleeper; FUTEX_WAIT then compares the word atomically.
//
// Fd is an eventfd created on first use. While it exists, notifications
// also write it, and the device's bridge (bridge.go), asleep on the futex,
// turns peers' hints into progress (so a consumer that only polls the fd is
// woken for arrivals); until then the hot path pays one atomic load for
// it. It is readable after a notification, until the next Seq (the caller
// then polls its CQs, arms them, polls again and polls the fd).

import (
	"sync"
	"sync/atomic"
	"time"

	"godat/rdma"
)

type compChannel struct {
	dev  *device
	refs atomic.Int32 // CQs that notify it
	dead atomic.Bool
	fdOn atomic.Bool // the eventfd exists: notifications write it
	born uint32      // the bell word when the channel was created

	fdMu sync.Mutex // leaf: creating and closing the eventfd
	efd  eventfd
}

// CreateCompChannel creates a completion channel (ibv_create_comp_channel).
func (d *device) CreateCompChannel() (rdma.CompChannel, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		return nil, rdma.ErrClosed
	}
	c := &compChannel{dev: d, efd: -1, born: d.bell.ld32(bellOffSeq)}
	d.chans[c] = struct{}{}
	return c, nil
}

// Fd is a descriptor that polls readable after a notification.
func (c *compChannel) Fd() int {
	c.fdMu.Lock()
	defer c.fdMu.Unlock()
	if c.efd >= 0 || c.dead.Load() {
		return int(c.efd)
	}
	e, err := newEventfd()
	if err != nil {
		return -1
	}
	c.efd = e
	if c.dev.bellEnter() {
		// A channel that was ever notified gets a readable fd (a
		// notification before the fd existed must not be lost; an early
		// wake-up is allowed).
		if c.dev.bell.ld32(bellOffSeq) != c.born {
			e.signal()
		}
		c.dev.bellLeave()
	}
	c.fdOn.Store(true)
	c.dev.startBridge()
	return int(e)
}

// Seq is the channel's generation count. It also resets the eventfd: a
// notification after this call makes it readable again.
func (c *compChannel) Seq() uint32 {
	d := c.dev
	if !d.bellEnter() {
		return 0
	}
	defer d.bellLeave()
	if c.fdOn.Load() {
		c.efd.clear()
	}
	return d.bell.ld32(bellOffSeq)
}

// Wait sleeps until Seq differs from seq or d passes (d < 0: no bound);
// it returns early when the inbound queue holds a hint (the caller's next
// Poll turns it into completions). It reports a signal handler's EINTR.
// While the device has shared-memory connections a sleep lasts at most
// rescanEvery at a time, and the rescan that recovers erased hints runs
// between sleeps (bell.go); while it has none, the sleep is on its TCP
// connections, which the waiter serves itself (tcp_wait.go).
func (c *compChannel) Wait(seq uint32, d time.Duration) bool {
	dev := c.dev
	if d == 0 || c.dead.Load() || !dev.bellEnter() {
		return false
	}
	defer dev.bellLeave()
	var deadline time.Time
	if d > 0 {
		deadline = time.Now().Add(d)
	}
	var served *tcpLoop // the device's TCP loop, which this Wait serves (tcp_wait.go)
	defer func() {
		if served != nil {
			served.releaseSleeper(dev.bell.ld32(bellOffSleepers) != 0)
		}
	}()
	for {
		if dev.rescanDue() {
			dev.rescanNow()
		}
		drainLocal() // messages between devices of this process (shm_dev.go)
		if dev.bell.ld32(bellOffSeq) != seq || dev.in.ready(dev.bell) {
			return false
		}
		if served == nil {
			served = dev.tcpServed()
		} else if dev.shm.conns.Load() > 0 || served.isStopped() {
			// A peer on this host rings the futex; a loop that stops
			// waits for its sleeper to leave.
			served.releaseSleeper(true)
			served = nil
		}
		tcpIdle() // the other TCP loops serve while we sleep (tcp_loop.go)
		slice := d
		if !deadline.IsZero() {
			if slice = time.Until(deadline); slice <= 0 {
				return false
			}
		}
		if dev.shm.conns.Load() > 0 && (slice < 0 || slice > rescanEvery) {
			slice = rescanEvery
		}
		if served != nil {
			if served.sleepServing(dev, seq, slice) {
				return true
			}
		} else if dev.sleepOnBell(seq, slice) {
			return true
		}
		if c.dead.Load() || dev.bell.ld32(bellOffSeq) != seq || dev.in.ready(dev.bell) {
			return false
		}
	}
}

// notify is an armed CQ's notification (the CQ may be of another device:
// this one may be closing).
func (c *compChannel) notify() {
	if !c.dev.bellEnter() {
		return
	}
	defer c.dev.bellLeave()
	c.dev.ringSelf()
	if c.fdOn.Load() {
		c.fdMu.Lock()
		if c.efd >= 0 {
			c.efd.signal()
		}
		c.fdMu.Unlock()
	}
}

// Wake bumps the count and wakes every sleeper.
func (c *compChannel) Wake() { c.notify() }

// Destroy frees the channel (ibv_destroy_comp_channel).
func (c *compChannel) Destroy() error {
	d := c.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	if c.dead.Load() {
		return rdma.ErrClosed
	}
	if c.refs.Load() > 0 {
		return rdma.ErrBusy
	}
	c.kill()
	delete(d.chans, c)
	return nil
}

// kill marks the channel destroyed, wakes its sleepers and closes its
// eventfd; d.mu is held.
func (c *compChannel) kill() {
	c.dead.Store(true)
	c.dev.ringSelf()
	c.fdMu.Lock()
	c.fdOn.Store(false)
	if c.efd >= 0 {
		c.efd.close()
		c.efd = -1
	}
	c.fdMu.Unlock()
}
