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
	for i := 0; i < drainBudget; i++ {
		pos := in.head.Load()
		off := inSlotOff(pos)
		e := m.ld64(off)
		if e == 0 {
			break
		}
		m.st64(off, 0)
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
// had a kick; in.mu is held.
func (d *device) rescanLocked() {
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
