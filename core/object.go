package core

import "sync/atomic"

// HandleType is the family of a DAT object.
type HandleType uint8

// The DAT object families, in specification order.
const (
	TypeCR HandleType = iota
	TypeEP
	TypeEVD
	TypeIA
	TypeLMR
	TypePSP
	TypePZ
	TypeRMR
	TypeRSP
	TypeCNO
	TypeSRQ
	typeCount
)

// TypeCount is the number of object families.
const TypeCount = int(typeCount)

var handleSubs = [typeCount]Sub{
	TypeCR: SubHandleCR, TypeEP: SubHandleEP, TypeEVD: SubNone, TypeIA: SubHandleIA,
	TypeLMR: SubHandleLMR, TypePSP: SubHandlePSP, TypePZ: SubHandlePZ, TypeRMR: SubHandleRMR,
	TypeRSP: SubHandleRSP, TypeCNO: SubHandleCNO, TypeSRQ: SubHandleSRQ,
}

// HandleSub is the DAT_INVALID_HANDLE minor code naming family t.
func (t HandleType) HandleSub() Sub { return handleSubs[t] }

// Object is embedded in every DAT object: its family, the handle the export
// layer gave it, and the consumer context.
type Object struct {
	kind    HandleType
	handle  atomic.Uintptr
	context atomic.Uint64
}

// Obj is any DAT object.
type Obj interface {
	base() *Object
}

func (o *Object) base() *Object { return o }

// Type is the object's family.
func (o *Object) Type() HandleType { return o.kind }

// Handle is the opaque value the export layer bound to the object (0 before).
func (o *Object) Handle() uintptr { return o.handle.Load() }

// SetHandle records the handle the export layer bound to the object.
func (o *Object) SetHandle(h uintptr) { o.handle.Store(h) }

// Context is the consumer context (dat_get_consumer_context).
func (o *Object) Context() uint64 { return o.context.Load() }

// SetContext sets the consumer context (dat_set_consumer_context).
func (o *Object) SetContext(c uint64) { o.context.Store(c) }

// Base returns the Object embedded in any DAT object.
func Base(o Obj) *Object { return o.base() }

// Handles binds DAT objects to handles. The export layer implements it; core
// calls Bind when an object comes to life and Release when it is destroyed,
// including objects core creates on its own (async EVD, CR) and everything an
// abrupt IA close frees, so a freed object's handle is never valid again.
type Handles interface {
	Bind(o Obj) error
	Release(o Obj)
}
