package cabi

/*
#include <stdlib.h>
#include "cabi.h"
*/
import "C"

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"godat/core"
)

// The handle table. A handle is the address of a 16-byte stub (provider
// pointer, slot, generation). The stub array is mapped handleViews times in
// a row; a handle lies in the view numbered by its generation, so a stale
// handle (same slot, older generation) is a different address and fails the
// check even after the slot is reused. Validation never dereferences the
// consumer's value: it is range-checked and decoded arithmetically.
const (
	handleSlots  = C.GODAT_HANDLE_SLOTS // as C decodes them too (godat_quiet_empty)
	handleViews  = C.GODAT_HANDLE_VIEWS
	stubSize     = C.sizeof_godat_stub
	viewBytes    = handleSlots * stubSize
	reuseHoldoff = 4096 // free slots kept back before reuse, to space generations
)

type entry struct {
	obj  core.Obj
	typ  core.HandleType
	gen  uint32
	cmem unsafe.Pointer // C memory owned by the object (addresses, private data)
	// refs counts the holders of cmem: one for the handle while it lives,
	// one per HoldCMem not yet dropped. The last to let go frees it, so a
	// query that fills cmem while another thread frees the object writes
	// into live memory, never into a block malloc has taken back.
	refs atomic.Int32
}

// Table maps handles to core objects; it implements core.Handles.
type Table struct {
	base     uintptr
	provider unsafe.Pointer // the ABI's provider table, the stubs' first word
	slots    [handleSlots]atomic.Pointer[entry]
	gens     [handleSlots]uint32

	mu   sync.Mutex
	free []uint32 // FIFO of released slots
	next uint32   // first never-used slot
}

// Handles is the library's one handle table: handles are addresses in one
// mapped region, and every object of the process is in it.
var Handles = newTable()

func newTable() *Table {
	base := C.godat_handle_region(C.size_t(viewBytes), C.uint(handleViews))
	if base != nil {
		C.godat_quiet_table = C.godat_quiet_region()
		C.godat_handle_base = C.uintptr_t(uintptr(base))
	}
	return &Table{base: uintptr(base)}
}

// SetProvider gives the address every new stub starts with: the ABI's
// provider table (DAT_PROVIDER). The ABI package sets it in its init,
// before any object exists.
func (t *Table) SetProvider(p unsafe.Pointer) { t.provider = p }

// Bind implements core.Handles.
func (t *Table) Bind(o core.Obj) error {
	if t.base == 0 {
		return core.ErrNoMemory
	}
	b := core.Base(o)
	t.mu.Lock()
	var slot uint32
	switch {
	case len(t.free) > reuseHoldoff || t.next == handleSlots && len(t.free) > 0:
		slot = t.free[0]
		t.free = t.free[1:]
	case t.next < handleSlots:
		slot = t.next
		t.next++
	default:
		t.mu.Unlock()
		return core.E(core.KindInsufficientResources, core.SubResourceMemory)
	}
	t.gens[slot]++
	gen := t.gens[slot]
	t.mu.Unlock()

	addr := t.base + uintptr(gen%handleViews)*viewBytes + uintptr(slot)*stubSize
	stub := (*C.godat_stub)(CPtr(addr))
	HandleOut(&stub.provider, uintptr(t.provider))
	stub.slot = C.uint32_t(slot)
	stub.gen = C.uint32_t(gen)
	e := &entry{obj: o, typ: b.Type(), gen: gen}
	switch b.Type() {
	case core.TypeIA, core.TypeEP, core.TypeCR:
		e.cmem = C.calloc(1, C.size_t(CMemSize))
		e.refs.Store(1)
	}
	b.SetHandle(addr)
	t.slots[slot].Store(e)
	return nil
}

// Release implements core.Handles.
func (t *Table) Release(o core.Obj) {
	slot, ok := t.decode(core.Base(o).Handle())
	if !ok {
		return
	}
	e := t.slots[slot].Swap(nil)
	if e == nil {
		return
	}
	if q := quietAt(slot); q != nil {
		atomic.AddUint64(u64(&q.gen), 1) // its publication no longer holds
	}
	if e.cmem != nil {
		// The consumer may still hold pointers into cmem (event private
		// data) until it stops using the object, so it is freed only when
		// the object dies, never earlier; and not before a call filling it
		// (HoldCMem) has finished.
		e.unref()
	}
	t.mu.Lock()
	t.free = append(t.free, slot)
	t.mu.Unlock()
}

// decode finds the slot of a handle value, checking range and alignment
// (a value below the base wraps to an offset past the range).
func (t *Table) decode(h uintptr) (uint32, bool) {
	off := h - t.base
	if off >= viewBytes*handleViews || off%stubSize != 0 {
		return 0, false
	}
	return uint32(off % viewBytes / stubSize), true
}

// entry returns the live entry for h, whatever its type. Every DAT call
// makes one lookup, so the offset is decoded once here.
func (t *Table) entry(h uintptr) *entry {
	off := h - t.base
	if off >= viewBytes*handleViews || off%stubSize != 0 {
		return nil
	}
	e := t.slots[off%viewBytes/stubSize].Load()
	if e == nil || uintptr(e.gen%handleViews) != off/viewBytes {
		return nil
	}
	return e
}

// Object resolves a handle of any family; ok is false when h names no
// live object.
func Object(h uintptr) (o core.Obj, ok bool) {
	e := Handles.entry(h)
	if e == nil {
		return nil, false
	}
	return e.obj, true
}

// Lookup resolves a handle of family want to its object, or fails with
// DAT_INVALID_HANDLE and sub.
func Lookup[T core.Obj](h uintptr, want core.HandleType, sub core.Sub) (T, error) {
	var zero T
	e := Handles.entry(h)
	if e == nil || e.typ != want {
		return zero, core.ErrHandle(sub)
	}
	o, ok := e.obj.(T)
	if !ok {
		return zero, core.ErrHandle(sub)
	}
	return o, nil
}

// LookupObj resolves a handle of family want to its object; ok is false
// when h names no live object of that family. The data-path wrappers use
// it with their own type assertion, one compare, where Lookup's generic
// one reads its type from a dictionary.
func LookupObj(h uintptr, want core.HandleType) (o core.Obj, ok bool) {
	e := Handles.entry(h)
	if e == nil || e.typ != want {
		return nil, false
	}
	return e.obj, true
}

// LookupOptional is Lookup where 0 (DAT_HANDLE_NULL) means "none".
func LookupOptional[T core.Obj](h uintptr, want core.HandleType, sub core.Sub) (T, error) {
	var zero T
	if h == 0 {
		return zero, nil
	}
	return Lookup[T](h, want, sub)
}

// unref drops one hold of e.cmem, freeing it with the last.
func (e *entry) unref() {
	if e.refs.Add(-1) == 0 {
		C.free(e.cmem)
	}
}

// CMem is a hold on the C memory block of an IA, EP or CR (its layout is
// in cmem.go): while held, the block stays allocated even if the object
// is freed meanwhile. The zero CMem holds nothing.
type CMem struct{ e *entry }

// HoldCMem takes a hold on the C memory block of a live IA, EP or CR; ok
// is false for other objects and for dead ones (the caller then answers
// DAT_INVALID_HANDLE: the object was freed under it). Every hold taken is
// dropped with Drop, at the end of the call that writes into the block.
func HoldCMem(o core.Obj) (m CMem, ok bool) {
	e := Handles.entry(core.Base(o).Handle())
	if e == nil || e.cmem == nil {
		return CMem{}, false
	}
	for {
		r := e.refs.Load()
		if r == 0 { // released and freed after entry() found it
			return CMem{}, false
		}
		if e.refs.CompareAndSwap(r, r+1) {
			break
		}
	}
	// Released between the lookup and the hold: the block is still ours
	// to write, but the object is gone, and the caller says so.
	if Handles.entry(core.Base(o).Handle()) != e {
		e.unref()
		return CMem{}, false
	}
	return CMem{e}, true
}

// Ptr is the start of the held block (nil for the zero CMem).
func (m CMem) Ptr() unsafe.Pointer {
	if m.e == nil {
		return nil
	}
	return m.e.cmem
}

// Drop lets the block go; it is freed here if its object was freed while
// held.
func (m CMem) Drop() {
	if m.e != nil {
		m.e.unref()
	}
}

// HandleOf is the handle of an object, 0 for a nil one.
func HandleOf[T interface {
	comparable
	core.Obj
}](o T) uintptr {
	var zero T
	if o == zero {
		return 0
	}
	return core.Base(o).Handle()
}

// HandleOfObj is the handle of any object, 0 for nil.
func HandleOfObj(o core.Obj) uintptr {
	if o == nil {
		return 0
	}
	return core.Base(o).Handle()
}
