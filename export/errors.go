package main

/*
#include "godat.h"
*/
import "C"

import (
	"unsafe"

	"godat/core"
	"godat/export/cabi"
	"godat/export/dat12"
)

// The wrappers' common steps, in this package's C types. Each wrapper has a
// *dat12.Call made once (its name, and how its failures are reported),
// defers the call's Done (or DoneName) to guard against panics and log
// failures, and returns datReturn of its outcome.

func init() { cabi.Handles.SetProvider(unsafe.Pointer(&C.godat_provider)) }

// datReturn is the DAT_RETURN of err in call c; success, every data-path
// call's outcome, without a call.
func datReturn(c *dat12.Call, err error) C.DAT_RETURN {
	if err == nil {
		return C.DAT_SUCCESS
	}
	return C.DAT_RETURN(c.Return(err))
}

// lookup resolves a handle of family want to its object, or fails with
// DAT_INVALID_HANDLE and sub.
func lookup[T core.Obj](h C.godat_handle, want core.HandleType, sub core.Sub) (T, error) {
	return cabi.Lookup[T](uintptr(h), want, sub)
}

// lookupOptional is lookup where DAT_HANDLE_NULL means "none".
func lookupOptional[T core.Obj](h C.godat_handle, want core.HandleType, sub core.Sub) (T, error) {
	return cabi.LookupOptional[T](uintptr(h), want, sub)
}

// handleOf is the C handle of an object (NULL for nil).
func handleOf[T interface {
	comparable
	core.Obj
}](o T) C.DAT_HANDLE {
	return C.DAT_HANDLE(cabi.CPtr(cabi.HandleOf(o)))
}

// handleIn reads a handle out of C memory as an integer (cabi.HandleIn).
func handleIn[T any](p *T) C.godat_handle { return C.godat_handle(cabi.HandleIn(p)) }

// handleOut writes a handle value into C memory (cabi.HandleOut).
func handleOut[T any](p *T, h C.godat_handle) { cabi.HandleOut(p, uintptr(h)) }

// putHandle writes the handle of o (NULL for nil) into the consumer's
// output p, as an integer (cabi.HandleOut).
func putHandle[P any, T interface {
	comparable
	core.Obj
}](p *P, o T) {
	cabi.HandleOut(p, cabi.HandleOf(o))
}

// privateData copies the consumer's connection private data (size n at
// p, both checked by the caller for sign and NULL) once its size is within
// the IA's max_private_data_size: a larger size is refused before a byte
// is read, as the buffer behind it may be far smaller (a size of INT_MAX
// over a few bytes would read past them). core refuses the same sizes
// with the same error, so the bound is not a second rule.
func privateData(ia *core.IA, p C.DAT_PVOID, n C.DAT_COUNT) ([]byte, error) {
	if int(n) > ia.Attr().MaxPrivateData {
		return nil, core.ErrArg(core.ArgPrivateData)
	}
	return cabi.GoBytes(unsafe.Pointer(p), int(n)), nil
}
