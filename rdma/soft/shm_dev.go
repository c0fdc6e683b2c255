package soft

// The device's side of the shared-memory wire: the drain of the inbound
// queue (bell.go), which dispatches hints to connections, and the rescan
// that recovers from lost or forged hints.

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// drainBudget bounds the hints one Poll takes.
const drainBudget = 256

// Devices of this process. A shared-memory message between two devices of
// one process is placed when the receiving device is polled; a program
// that waits on the sending device's channel for the send's completion
// would wait for ever, since nothing polls the other. So a waiter drains
// every device of the process before it sleeps, and a hint to a device of
// our own process rings every device's bell (not only the receiver's).
var local struct {
	mu   sync.Mutex
	devs []*device
}

func registerLocal(d *device) {
	local.mu.Lock()
	local.devs = append(local.devs, d)
	local.mu.Unlock()
}

func unregisterLocal(d *device) {
	local.mu.Lock()
	defer local.mu.Unlock()
	for i, x := range local.devs {
		if x == d {
			local.devs = append(local.devs[:i], local.devs[i+1:]...)
			return
		}
	}
}

// eachLocal calls f for every open device of the process, inside its bell
// mapping.
func eachLocal(f func(*device)) {
	local.mu.Lock()
	devs := append([]*device(nil), local.devs...)
	local.mu.Unlock()
	for _, d := range devs {
		if d.bellEnter() {
			f(d)
			d.bellLeave()
		}
	}
}

// drainLocal takes the hints waiting at every device of the process.
func drainLocal() {
	eachLocal(func(d *device) {
		if d.in.ready(d.bell) {
			d.drainInbound()
		}
	})
}

// ringLocal wakes the sleepers of every device of the process.
func ringLocal() { eachLocal(func(d *device) { d.ringSelf() }) }

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
func (d *device) drainInbound() {
	in := &d.in
	if !in.mu.TryLock() {
		return
	}
	defer in.mu.Unlock()
	m := d.bell
	bad := false
	took := false
	in.pulled = false
	// A Poll stops after one rendezvous placement (a copy whose cost grows
	// with the message): its caller gets its completion and can post the
	// receive that keeps the sender going, rather than wait for every
	// large message queued behind it.
	for i := 0; i < drainBudget && !in.pulled; i++ {
		pos := in.head.Load()
		off := inSlotOff(pos)
		e := m.ld64(off)
		if !isHint(e) {
			break
		}
		m.st64(off, freeMark(pos+inSlots))
		in.head.Store(pos + 1)
		took = true
		idx, gen, seq, kick, ok := decodeHint(e, pos)
		if !ok {
			bad = true // garbage: some hint may be lost
			continue
		}
		q := d.qps[idx].Load()
		if q == nil {
			continue // stale: the QP is gone
		}
		if w := q.shmw.Load(); w != nil && w.gen == gen {
			w.onHint(seq, kick)
		}
	}
	if took && m.ld32(bellOffOverflow) != 0 {
		m.st32(bellOffOverflow, 0)
		bad = true
	}
	if bad || in.rescan.Load() {
		in.rescan.Store(false)
		d.rescanLocked()
	}
}

// rescanLocked looks at every shared-memory connection's rings, as if each
// had a kick; in.mu is held. It also repairs a tail a peer moved away: with
// no hint at our head, the next hint belongs there (producers never
// advance the tail past a position whose slot they did not fill).
func (d *device) rescanLocked() {
	if h := d.in.head.Load(); !isHint(d.bell.ld64(inSlotOff(h))) && d.bell.ld64(bellOffTail)-h > inSlots {
		d.bell.st64(bellOffTail, h)
	}
	for i := range d.qps {
		if q := d.qps[i].Load(); q != nil {
			if w := q.shmw.Load(); w != nil {
				w.onHint(0, true)
			}
		}
	}
}

// rescanNow runs a rescan from a waiter (see rescanDue).
func (d *device) rescanNow() {
	d.in.rescan.Store(true)
	d.in.mu.Lock()
	defer d.in.mu.Unlock()
	if d.in.rescan.Swap(false) {
		d.rescanLocked()
	}
}
