package cabi

/*
#include "cabi.h"
*/
import "C"

import (
	"sync/atomic"
	"unsafe"

	"godat/core"
	"godat/rdma"
)

// The Go side of the quiet table (cabi.h): the sinks core's DTO EVDs
// publish their emptiness to, which an ABI's C entry point for the dequeue
// reads (godat_quiet_empty).

// quietAt is slot's entry, nil without a table.
func quietAt(slot uint32) *C.godat_quiet {
	if C.godat_quiet_table == nil || slot >= handleSlots {
		return nil
	}
	return (*C.godat_quiet)(unsafe.Add(unsafe.Pointer(C.godat_quiet_table), uintptr(slot)*C.sizeof_godat_quiet))
}

func u64(p *C.uint64_t) *uint64 { return (*uint64)(unsafe.Pointer(p)) }

// quietSink is an EVD's entry; it implements core.QuietSink.
type quietSink struct {
	q *C.godat_quiet
	h uint64
}

// QuietSink implements core.QuietHandles: o's entry, for an object bound
// to a handle.
func (t *Table) QuietSink(o core.Obj) core.QuietSink {
	h := core.Base(o).Handle()
	slot, ok := t.decode(h)
	if !ok {
		return nil
	}
	q := quietAt(slot)
	if q == nil {
		return nil
	}
	return &quietSink{q: q, h: uint64(h)}
}

// Gen implements core.QuietSink.
func (s *quietSink) Gen() uint64 { return atomic.LoadUint64(u64(&s.q.gen)) }

// Bump implements core.QuietSink.
func (s *quietSink) Bump() { atomic.AddUint64(u64(&s.q.gen), 1) }

// Publish implements core.QuietSink. A writer that finds another writing
// gives up: the other's publication is as good. Nothing is published
// while the debug log is on, which logs every empty dequeue (Call.Done).
func (s *quietSink) Publish(gen uint64, w rdma.QuietWatch) {
	if core.LogEnabled(core.LevelDebug) {
		return
	}
	q := s.q
	seq := atomic.LoadUint64(u64(&q.seq))
	if seq&1 != 0 || !atomic.CompareAndSwapUint64(u64(&q.seq), seq, seq+1) {
		return
	}
	atomic.StoreUint64(u64(&q.handle), s.h)
	// A word not watched is one that never moves.
	nothing := uint64(uintptr(unsafe.Pointer(&C.godat_quiet_nothing)))
	if w.Epoch == 0 {
		w.Epoch, w.EpochVal = nothing, 0
	}
	if w.Slot == 0 {
		w.Slot, w.SlotVal = nothing, 0
	}
	atomic.StoreUint64(u64(&q.snap), gen)
	atomic.StoreUint64(u64(&q.epoch), w.Epoch)
	atomic.StoreUint64(u64(&q.epoch_val), w.EpochVal)
	atomic.StoreUint64(u64(&q.slot), w.Slot)
	atomic.StoreUint64(u64(&q.slot_val), w.SlotVal)
	atomic.StoreUint64(u64(&q.probe), w.Probe)
	atomic.StoreUint64(u64(&q.probe_arg), w.ProbeArg)
	atomic.StoreUint64(u64(&q.probe_val), w.ProbeVal)
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&q.used)), 0)
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&q.budget)), w.Budget)
	atomic.StoreUint64(u64(&q.seq), seq+2)
}

// QuietOut records the event pointer of a dequeue of h that found nothing:
// the C entry point answers only dequeues with the pointer of the last
// one, which the Go wrapper checked (a publication is for whichever such
// pointer is there when C looks: each was checked).
func QuietOut(h uintptr, out unsafe.Pointer) {
	slot, ok := Handles.decode(h)
	if !ok {
		return
	}
	if q := quietAt(slot); q != nil && atomic.LoadUint64(u64(&q.out)) != uint64(uintptr(out)) {
		atomic.StoreUint64(u64(&q.out), uint64(uintptr(out)))
	}
}
