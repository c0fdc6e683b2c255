package main

/*
#include "godat.h"
*/
import "C"

import (
	"sync"

	"godat/core"
)

// C copies of the names, made once and never freed, so the pointers
// dat_strerror returns stay valid for the life of the process.
var (
	cNamesOnce sync.Once
	cMajor     map[uint32]*C.char
	cMinor     []*C.char
	cUnknown   *C.char
)

func initCNames() {
	cMajor = make(map[uint32]*C.char, len(majorNames))
	for k, v := range majorNames {
		cMajor[k] = C.CString(v)
	}
	cMinor = make([]*C.char, len(minorNames))
	for i, v := range minorNames {
		cMinor[i] = C.CString(v)
	}
	cUnknown = C.CString("unknown error")
}

//export go_dat_strerror
func go_dat_strerror(value C.DAT_RETURN, major, minor **C.char) (ret C.DAT_RETURN) {
	defer recoverTo(&ret, "dat_strerror")
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
