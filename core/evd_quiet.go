package core

import "godat/rdma"

// The quiet EVD: an EVD whose dequeue found nothing says so to the export
// layer, with its CQ's watch (rdma.QuietCQ), so that the consumer's next
// empty dequeues are answered in C without entering Go (DESIGN.md section
// 9). What the watch cannot see is the EVD's own state: every change of it
// that a dequeue would notice (an event in the ring, a waiter, the end of
// the EVD, a CQ on another device) bumps the sink's count, and a
// publication holds only while the count is the one sampled before the
// dequeue looked. The bump comes after the change is visible (queued,
// blocked, more): a dequeue whose sample sees the bump then sees the
// change, and one whose sample does not publishes a count already old.

// QuietSink is where an EVD publishes that it is empty. The export layer
// implements it, in memory its C entry points read.
type QuietSink interface {
	// Gen is the EVD's change count.
	Gen() uint64
	// Bump counts a change of the EVD's own state.
	Bump()
	// Publish records that a dequeue that began when the count was gen
	// found the EVD empty, and how to watch its CQ.
	Publish(gen uint64, w rdma.QuietWatch)
}

// QuietHandles is the optional interface of a Handles whose EVDs can be
// answered so: it gives each EVD its sink when the EVD is bound.
type QuietHandles interface {
	QuietSink(o Obj) QuietSink
}

// quietRingBudget is the budget of an EVD without a CQ, which has nothing
// to watch but its change count: as large as the sink takes.
const quietRingBudget = 1<<32 - 1

// setQuiet gives a new EVD its sink, when the handle table can do it and
// the EVD has no CQ or a CQ with a watch (a CQ without is polled in Go
// every time).
func (e *EVD) setQuiet(h Handles) {
	qh, ok := h.(QuietHandles)
	if !ok {
		return
	}
	var qc rdma.QuietCQ
	if e.cq != nil {
		if qc, ok = e.cq.(rdma.QuietCQ); !ok {
			return
		}
	}
	if s := qh.QuietSink(e); s != nil {
		e.qcq, e.quiet = qc, s
	}
}

// bumpQuiet counts a change of the EVD's own state.
func (e *EVD) bumpQuiet() {
	if e.quiet != nil {
		e.quiet.Bump()
	}
}

// quietStart samples the counts a publication at the end of this dequeue
// must still match; ok is false when there will be none.
func (e *EVD) quietStart() (gen, epoch uint64, ok bool) {
	if e.quiet == nil {
		return 0, 0, false
	}
	if e.qcq != nil {
		// The CQ first: a CQ that will have no watch (a hot one, on
		// every dequeue of a polled receive EVD) spares the count's load.
		// Both samples only need to come before the look.
		if epoch, ok = e.qcq.QuietEpoch(); !ok {
			return 0, 0, false
		}
	}
	return e.quiet.Gen(), epoch, true
}

// publishQuiet publishes that the dequeue that began at gen and epoch
// found the EVD empty, if its CQ has a watch.
func (e *EVD) publishQuiet(gen, epoch uint64) {
	if e.qcq == nil {
		e.quiet.Publish(gen, rdma.QuietWatch{Budget: quietRingBudget}) // no words: the ring alone
		return
	}
	if e.more.Load() != nil {
		return
	}
	if w, ok := e.qcq.Quiet(epoch); ok {
		e.quiet.Publish(gen, w)
	}
}
