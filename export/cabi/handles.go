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
	handleSlots  = 1 << 18
	handleViews  = 64
	stubSize     = C.sizeof_godat_stub
	viewBytes    = handleSlots * stubSize
	reuseHoldoff = 4096 // free slots kept back before reuse, to space generations
)

type entry struct {
	obj  core.Obj
	typ  core.HandleType
	gen  uint32
	cmem unsafe.Pointer // C memory owned by the object (addresses, private data)
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
	stub.provider = t.provider
	stub.slot = C.uint32_t(slot)
	stub.gen = C.uint32_t(gen)
	e := &entry{obj: o, typ: b.Type(), gen: gen}
	switch b.Type() {
	case core.TypeIA, core.TypeEP, core.TypeCR:
		e.cmem = C.calloc(1, C.size_t(CMemSize))
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
func (t *Table) decode(h uintptr) (uint32, bool) {
	off := h - t.base
	if h < t.base || off >= viewBytes*handleViews || off%stubSize != 0 {
		return 0, false
	}
	return uint32(off % viewBytes / stubSize), true
}

// entry returns the live entry for h, whatever its type.
func (t *Table) entry(h uintptr) *entry {
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

// LookupOptional is Lookup where 0 (DAT_HANDLE_NULL) means "none".
func LookupOptional[T core.Obj](h uintptr, want core.HandleType, sub core.Sub) (T, error) {
	var zero T
	if h == 0 {
		return zero, nil
	}
	return Lookup[T](h, want, sub)
}

// CMemOf is the C memory block of an IA, EP or CR (nil for other objects
// and dead ones); its layout is in cmem.go.
func CMemOf(o core.Obj) unsafe.Pointer {
	e := Handles.entry(core.Base(o).Handle())
	if e == nil {
		return nil
	}
	return e.cmem
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
