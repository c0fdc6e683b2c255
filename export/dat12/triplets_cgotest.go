//go:build cgotest

package dat12

/*
#include <stdlib.h>
#include <dat/udat.h>
*/
import "C"

import "unsafe"

// Helpers for segments_test.go, which cannot use cgo itself.

// cTriplets allocates n DAT_LMR_TRIPLETs in C memory, triplet i being
// {context 100+i, address 0x1000*(i+1), length 64*(i+1)}; free releases them.
func cTriplets(n int) (p unsafe.Pointer, free func()) {
	p = C.calloc(C.size_t(n), C.sizeof_DAT_LMR_TRIPLET)
	t := unsafe.Slice((*C.DAT_LMR_TRIPLET)(p), n)
	for i := range t {
		t[i].lmr_context = C.DAT_LMR_CONTEXT(100 + i)
		t[i].virtual_address = C.DAT_VADDR(0x1000 * (i + 1))
		t[i].segment_length = C.DAT_VLEN(64 * (i + 1))
	}
	return p, func() { C.free(p) }
}

// cRemote allocates one DAT_RMR_TRIPLET {context, address, length}.
func cRemote(ctx uint32, addr, length uint64) (p unsafe.Pointer, free func()) {
	p = C.calloc(1, C.sizeof_DAT_RMR_TRIPLET)
	t := (*C.DAT_RMR_TRIPLET)(p)
	t.rmr_context = C.DAT_RMR_CONTEXT(ctx)
	t.target_address = C.DAT_VADDR(addr)
	t.segment_length = C.DAT_VLEN(length)
	return p, func() { C.free(p) }
}
