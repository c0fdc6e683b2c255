package dat12

/*
#include <dat/udat.h>
*/
import "C"

import (
	"unsafe"

	"godat/core"
	"godat/export/cabi"
)

// evdFlagBits pairs the DAT 1.2 EVD flag bits with core's.
var evdFlagBits = [...]struct {
	c C.DAT_EVD_FLAGS
	g core.EVDFlags
}{
	{C.DAT_EVD_SOFTWARE_FLAG, core.EVDSoftware}, {C.DAT_EVD_CR_FLAG, core.EVDCR}, {C.DAT_EVD_DTO_FLAG, core.EVDDTO},
	{C.DAT_EVD_CONNECTION_FLAG, core.EVDConnection}, {C.DAT_EVD_RMR_BIND_FLAG, core.EVDRMRBind},
	{C.DAT_EVD_ASYNC_FLAG, core.EVDAsync},
}

// EVDFlags converts DAT EVD flags; ok is false for a bit DAT 1.2 does not
// define.
func EVDFlags(f uint32) (core.EVDFlags, bool) {
	var g core.EVDFlags
	for _, b := range evdFlagBits {
		if f&uint32(b.c) != 0 {
			g |= b.g
			f &^= uint32(b.c)
		}
	}
	return g, f == 0
}

// evdFlagsToC is the inverse of EVDFlags.
func evdFlagsToC(g core.EVDFlags) C.DAT_EVD_FLAGS {
	var f C.DAT_EVD_FLAGS
	for _, b := range evdFlagBits {
		if g&b.g != 0 {
			f |= b.c
		}
	}
	return f
}

// PutEVDParam writes the DAT_EVD_PARAM of evd at out.
func PutEVDParam(out unsafe.Pointer, evd *core.EVD, p core.EVDParams) {
	var v C.DAT_EVD_PARAM
	v.ia_handle = handle(evd.IA())
	v.evd_qlen = C.DAT_COUNT(p.QLen)
	v.evd_state = C.DAT_EVD_STATE_DISABLED
	if p.Enabled {
		v.evd_state = C.DAT_EVD_STATE_ENABLED
	}
	if p.Waitable {
		v.evd_state |= C.DAT_EVD_STATE_WAITABLE
	} else {
		v.evd_state |= C.DAT_EVD_STATE_UNWAITABLE
	}
	v.cno_handle = handle(p.CNO)
	v.evd_flags = evdFlagsToC(p.Flags)
	cabi.PutStruct(out, &v)
}
