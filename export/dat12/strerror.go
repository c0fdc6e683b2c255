package dat12

/*
#include <stdlib.h>
#include <dat/udat.h>
*/
import "C"

import (
	"sync"
	"unsafe"
)

// C copies of the names, made once and never freed, so the pointers
// dat_strerror returns stay valid for the life of the process. They live in
// one C block held by a global, so leak checkers scanning the library's
// data see them as reachable (the map and slice are in Go's heap, which
// they do not scan).
var (
	cNamesOnce sync.Once
	cNames     unsafe.Pointer
	cMajor     map[uint32]unsafe.Pointer
	cMinor     []unsafe.Pointer
	cUnknown   unsafe.Pointer
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
	put := func(v string) unsafe.Pointer {
		p := unsafe.Pointer(&block[off])
		off += copy(block[off:], v)
		block[off] = 0
		off++
		return p
	}
	cMajor = make(map[uint32]unsafe.Pointer, len(majorNames))
	for k, v := range majorNames {
		cMajor[k] = put(v)
	}
	cMinor = make([]unsafe.Pointer, len(minorNames))
	for i, v := range minorNames {
		cMinor[i] = put(v)
	}
	cUnknown = put(unknown)
}

// Strerror gives the C strings naming the major and minor codes of a
// DAT_RETURN (dat_strerror); for a value it does not know, ok is false and
// both are "unknown error" (the page leaves them undefined; the reference
// names them so, which is more useful).
func Strerror(value uint32) (major, minor unsafe.Pointer, ok bool) {
	cNamesOnce.Do(initCNames)
	typ := value & C.DAT_TYPE_MASK
	if value == C.DAT_NOT_IMPLEMENTED || value&^C.DAT_CLASS_ERROR == C.DAT_NOT_IMPLEMENTED&^C.DAT_CLASS_ERROR {
		typ = C.DAT_NOT_IMPLEMENTED
	}
	sub := value & C.DAT_SUBTYPE_MASK
	mj, okMajor := cMajor[typ]
	if !okMajor || int(sub) >= len(cMinor) {
		return cUnknown, cUnknown, false
	}
	return mj, cMinor[sub], true
}
