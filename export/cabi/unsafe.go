package cabi

import "unsafe"

// Memory the consumer hands us to fill (a handle variable, a DAT_EVENT, a
// parameter structure) holds whatever it held before: an uninitialized
// local, words the Go runtime left on the thread's stack while it ran a
// callback from C there. A pointer-typed Go store into it runs the
// garbage collector's write barrier, which while a collection marks takes
// the slot's old word for a pointer to shade; an old word that falls in the
// Go heap (or is the runtime's 0xdeaddead poison) aborts the process with
// "found bad pointer in Go heap". So every pointer-sized value we write into
// C memory (handles, addresses of C memory, NULL) is written as an
// integer (HandleOut), and structures are copied byte for byte
// (PutStruct). ctest/test_stale_outputs.c
// fills every output with such a word before the call, with the collector
// kept running.

// HandleIn reads a handle out of C memory (a struct field, an in/out
// parameter) as an integer, without ever holding it in a pointer-typed Go
// variable (see godat_handle in cabi.h).
func HandleIn[T any](p *T) uintptr { return *(*uintptr)(unsafe.Pointer(p)) }

// HandleOut writes a handle value (which may not be a real address: the
// EVD sentinels), or another pointer-sized C value (the address of C
// memory, NULL), into C memory as an integer.
func HandleOut[T any](p *T, h uintptr) { *(*uintptr)(unsafe.Pointer(p)) = h }

// PutStruct copies *v, a C structure built in Go memory, into C memory at
// p byte for byte: a typed copy of a small structure is compiled into
// field stores, each pointer field's with the write barrier (a large one
// goes through typedmemmove, which skips memory outside Go's). It probes
// both ends first (ProbeBytes; T is smaller than a page), so that an output
// straddling a usable page and an unusable one faults before any of it is
// written.
func PutStruct[T any](p unsafe.Pointer, v *T) {
	n := unsafe.Sizeof(*v)
	if n > smallestPage {
		panic("cabi.PutStruct: a structure larger than a page")
	}
	ProbeBytes(p, n)
	PutProbed(p, v)
}

// PutProbed is PutStruct for an output the call has probed already (it
// probes before it takes what it writes there: dat_evd_dequeue's event).
func PutProbed[T any](p unsafe.Pointer, v *T) {
	n := unsafe.Sizeof(*v)
	copy(unsafe.Slice((*byte)(p), n), unsafe.Slice((*byte)(unsafe.Pointer(v)), n))
}

// CPtr turns the address of C memory (a handle stub, a consumer buffer)
// back into a pointer. Such memory is never moved or collected by Go, so the
// uintptr round trip is safe; the indirection keeps vet's check for Go
// pointers quiet.
func CPtr(u uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&u)) }

// ProbeOut rewrites the first and the last byte of the consumer's output
// at p with what they hold, so that an output the call cannot write faults
// (Call.Enter) before the call creates an object or takes an event it could
// then not hand over. What the output held is left as it was: a call that
// fails leaves its outputs alone.
func ProbeOut[T any](p *T) { ProbeBytes(unsafe.Pointer(p), unsafe.Sizeof(*p)) }

// smallestPage is the smallest page size of the platforms we build for.
const smallestPage = 4096

// ProbeBytes is ProbeOut for the n bytes at p (n at most smallestPage: the
// two pages they may span).
func ProbeBytes(p unsafe.Pointer, n uintptr) {
	rewrite(p, p)
	q := unsafe.Add(p, n-1)
	rewrite(q, q)
}

// rewrite stores the byte at src into dst. Not inlined: the compiler would
// drop a store of a byte just loaded from the same address, and with it the
// probe.
//
//go:noinline
func rewrite(dst, src unsafe.Pointer) { *(*byte)(dst) = *(*byte)(src) }
