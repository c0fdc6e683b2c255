package cabi

import "unsafe"

// HandleIn reads a handle out of C memory (a struct field, an in/out
// parameter) as an integer, without ever holding it in a pointer-typed Go
// variable (see godat_handle in cabi.h).
func HandleIn[T any](p *T) uintptr { return *(*uintptr)(unsafe.Pointer(p)) }

// HandleOut writes a handle value that may not be a real address (the EVD
// sentinels) into C memory, for the same reason.
func HandleOut[T any](p *T, h uintptr) { *(*uintptr)(unsafe.Pointer(p)) = h }

// CPtr turns the address of C memory (a handle stub, a consumer buffer)
// back into a pointer. Such memory is never moved or collected by Go, so the
// uintptr round trip is safe; the indirection keeps vet's check for Go
// pointers quiet.
func CPtr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }
