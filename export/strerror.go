package main

/*
#include "godat.h"
*/
import "C"

import (
	"sync"
	"unsafe"

	"godat/core"
)

// C copies of the names, made once and never freed, so the pointers
// dat_strerror returns stay valid for the life of the process. They live in
// one C block held by a global, so leak checkers scanning the library's
// data see them as reachable (the map and slice are in Go's heap, which
// they do not scan).
var (
	cNamesOnce sync.Once
	cNames     unsafe.Pointer
	cMajor     map[uint32]*C.char
	cMinor     []*C.char
	cUnknown   *C.char
)

func initCNames() {
	const unknown = "unknown error"
	size := len(unknown) + 1
	for _, v := range majorNames {
		size += len(v) + 1
	}
	for _, v := range minorNames {
		size += len(v) + 1
	}
	cNames = C.malloc(C.size_t(size))
	block := unsafe.Slice((*byte)(cNames), size)
	off := 0
	put := func(v string) *C.char {
		p := (*C.char)(unsafe.Pointer(&block[off]))
		off += copy(block[off:], v)
		block[off] = 0
		off++
		return p
	}
	cMajor = make(map[uint32]*C.char, len(majorNames))
	for k, v := range majorNames {
		cMajor[k] = put(v)
	}
	cMinor = make([]*C.char, len(minorNames))
	for i, v := range minorNames {
		cMinor[i] = put(v)
	}
	cUnknown = put(unknown)
}

//export go_dat_strerror
func go_dat_strerror(value C.DAT_RETURN, major, minor **C.char) (ret C.DAT_RETURN) {
	defer doneName(&ret, "dat_strerror", nil)
	cNamesOnce.Do(initCNames)
	v := uint32(value)
	typ := v & C.DAT_TYPE_MASK
	if v == C.DAT_NOT_IMPLEMENTED || v&^C.DAT_CLASS_ERROR == C.DAT_NOT_IMPLEMENTED&^C.DAT_CLASS_ERROR {
		typ = C.DAT_NOT_IMPLEMENTED
	}
	sub := v & C.DAT_SUBTYPE_MASK
	mj, okMajor := cMajor[typ]
	okMinor := int(sub) < len(cMinor)
	if major == nil {
		return datReturn(core.ErrArg(2))
	}
	if !okMajor || !okMinor {
		// The page leaves the messages undefined on failure; the
		// reference names them "unknown error", which is more useful.
		*major = cUnknown
		if minor != nil {
			*minor = cUnknown
		}
		return datReturn(core.ErrArg(1))
	}
	*major = mj
	if minor != nil {
		*minor = cMinor[sub]
	}
	return C.DAT_SUCCESS
}
