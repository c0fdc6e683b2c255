package soft

// The watch of an empty CQ (rdma.QuietCQ): what lets the export layer
// answer a polling consumer's empty dequeue in C, without a call into Go
// (DESIGN.md section 9). A Poll of an shm-only CQ that finds nothing looks
// at two words that any change it would see moves first: the device's
// epoch, which the device bumps on every completion pushed to any of its
// CQs, every step of the inbound queue's head, every deferral and every
// change of the connections a Poll looks at; and the inbound queue's head
// slot, where a peer's next hint lands.

import (
	"godat/rdma"
)

// quietBudget bounds the answers of one watch when nothing else does, so
// that a Poll still runs now and then (a hint a peer erased is then found
// as it was before the watch: only by a rescan, DESIGN.md section 7).
const quietBudget = 1024

// bump says that something a Poll of the device's CQs would see changed.
// It comes after the change is visible to Quiet's checks (a count, a
// pointer, the head), so that a Poll whose epoch sample sees the bump sees
// the change, and one whose sample does not publishes an epoch already old.
func (d *device) bump() {
	if e := d.epoch; e != nil {
		e.Add(1)
	}
}

// QuietEpoch implements rdma.QuietCQ: no watch for a hot CQ or a device
// that reads sockets, which a polling consumer's hot path meets on every
// call.
func (q *cq) QuietEpoch() (uint64, bool) {
	e := q.dev.epoch
	if e == nil || q.hot.Load() != nil || q.dev.tcp.live.Load() != nil {
		return 0, false
	}
	return e.Load(), true
}

// Quiet implements rdma.QuietCQ. A CQ with a hot connection has no watch:
// that connection's messages come without hints (shm_watch.go), in a ring
// that is unmapped when the connection goes; and a watch of the ring's
// next slot, tried, slowed the ping-pong it was for (DESIGN.md section 9:
// C reading the slot's line that often takes it from the sender between
// its stores). Nor has a device with TCP connections (a socket is read to
// know) or deferred accesses (a Poll issues them).
func (q *cq) Quiet(epoch uint64) (rdma.QuietWatch, bool) {
	d := q.dev
	e := d.epoch
	if e == nil || e.Load() != epoch || q.dead.Load() || d.closed.Load() || q.n.Load() != 0 ||
		q.hot.Load() != nil || d.tcp.live.Load() != nil || d.ndeferred.Load() != 0 {
		return rdma.QuietWatch{}, false
	}
	h := d.in.head.Load()
	v := d.bell.ld64(inSlotOff(h))
	if hintAt(v, h) {
		return rdma.QuietWatch{}, false
	}
	budget := uint32(quietBudget)
	if d.in.nwatch.Load() != 0 {
		// Rings without hints are watched: the Poll after the watch runs
		// out drains them, as every watchEvery-th Poll does (cq.poll).
		budget = watchEvery - 1
		q.idle.Store(q.idle.Load() | (watchEvery - 1))
	}
	return rdma.QuietWatch{Epoch: wordAddr(e), EpochVal: epoch, Slot: uint64(d.bell.addr(inSlotOff(h))), SlotVal: v, Budget: budget}, true
}
