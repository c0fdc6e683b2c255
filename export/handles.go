package main

/*
#include "godat.h"
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
	handleSlots  = 1 << 18
	handleViews  = 64
	stubSize     = C.sizeof_godat_stub
	viewBytes    = handleSlots * stubSize
	reuseHoldoff = 4096 // free slots kept back before reuse, to space generations
)

type handleEntry struct {
	obj  core.Obj
	typ  core.HandleType
	gen  uint32
	cmem unsafe.Pointer // C memory owned by the object (addresses, private data)
}

type handleTable struct {
	base  uintptr
	slots [handleSlots]atomic.Pointer[handleEntry]
	gens  [handleSlots]uint32

	mu   sync.Mutex
	free []uint32 // FIFO of released slots
	next uint32   // first never-used slot
}

var handles = newHandleTable()

func newHandleTable() *handleTable {
	base := C.godat_handle_region(C.size_t(viewBytes), C.uint(handleViews))
	return &handleTable{base: uintptr(base)}
}

// Bind implements core.Handles.
func (t *handleTable) Bind(o core.Obj) error {
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
	stub := (*C.godat_stub)(cptr(addr))
	stub.provider = &C.godat_provider
	stub.slot = C.uint32_t(slot)
	stub.gen = C.uint32_t(gen)
	e := &handleEntry{obj: o, typ: b.Type(), gen: gen}
	switch b.Type() {
	case core.TypeIA, core.TypeEP, core.TypeCR:
		e.cmem = C.calloc(1, C.size_t(objMemSize))
	}
	b.SetHandle(addr)
	t.slots[slot].Store(e)
	return nil
}

// Release implements core.Handles.
func (t *handleTable) Release(o core.Obj) {
	slot, ok := t.decode(core.Base(o).Handle())
	if !ok {
		return
	}
	e := t.slots[slot].Swap(nil)
	if e == nil {
		return
	}
	if e.cmem != nil {
		// The consumer may still hold pointers into cmem (event private
		// data) until it stops using the object, so it is freed only when
		// the object dies, never earlier.
		C.free(e.cmem)
	}
	t.mu.Lock()
	t.free = append(t.free, slot)
	t.mu.Unlock()
}

// decode finds the slot of a handle value, checking range and alignment.
func (t *handleTable) decode(h uintptr) (uint32, bool) {
	off := h - t.base
	if h < t.base || off >= viewBytes*handleViews || off%stubSize != 0 {
		return 0, false
	}
	return uint32(off % viewBytes / stubSize), true
}

// entry returns the live entry for h, whatever its type.
func (t *handleTable) entry(h uintptr) *handleEntry {
	slot, ok := t.decode(h)
	if !ok {
		return nil
	}
	e := t.slots[slot].Load()
	if e == nil || uintptr(e.gen%handleViews) != (h-t.base)/viewBytes {
		return nil
	}
	return e
}

// lookup resolves a handle of family want to its object, or fails with
// DAT_INVALID_HANDLE and sub.
func lookup[T core.Obj](h C.godat_handle, want core.HandleType, sub core.Sub) (T, error) {
	var zero T
	e := handles.entry(uintptr(h))
	if e == nil || e.typ != want {
		return zero, core.ErrHandle(sub)
	}
	o, ok := e.obj.(T)
	if !ok {
		return zero, core.ErrHandle(sub)
	}
	return o, nil
}

// lookupOptional is lookup where DAT_HANDLE_NULL means "none".
func lookupOptional[T core.Obj](h C.godat_handle, want core.HandleType, sub core.Sub) (T, error) {
	var zero T
	if h == 0 {
		return zero, nil
	}
	return lookup[T](h, want, sub)
}

// cmemOf is the C memory block of an IA, EP or CR.
func cmemOf(o core.Obj) unsafe.Pointer {
	e := handles.entry(core.Base(o).Handle())
	if e == nil {
		return nil
	}
	return e.cmem
}

// handleOf is the C handle of an object (NULL for nil).
func handleOf[T interface {
	comparable
	core.Obj
}](o T) C.DAT_HANDLE {
	var zero T
	if o == zero {
		return nil
	}
	return C.DAT_HANDLE(cptr(core.Base(o).Handle()))
}

// handleOfObj is the C handle of any object, NULL for nil.
func handleOfObj(o core.Obj) C.DAT_HANDLE {
	if o == nil {
		return nil
	}
	return C.DAT_HANDLE(cptr(core.Base(o).Handle()))
}
