package dat12

/*
#include <dat/udat.h>
*/
import "C"

import (
	"godat/core"
	"godat/export/cabi"
)

// handle is the C handle of an object (NULL for nil).
func handle[T interface {
	comparable
	core.Obj
}](o T) C.DAT_HANDLE {
	return C.DAT_HANDLE(cabi.CPtr(cabi.HandleOf(o)))
}

// handleObj is the C handle of any object, NULL for nil.
func handleObj(o core.Obj) C.DAT_HANDLE { return C.DAT_HANDLE(cabi.CPtr(cabi.HandleOfObj(o))) }

// handleTypes maps core families to DAT_HANDLE_TYPE values.
var handleTypes = [core.TypeCount]uint32{
	core.TypeCR: C.DAT_HANDLE_TYPE_CR, core.TypeEP: C.DAT_HANDLE_TYPE_EP, core.TypeEVD: C.DAT_HANDLE_TYPE_EVD,
	core.TypeIA: C.DAT_HANDLE_TYPE_IA, core.TypeLMR: C.DAT_HANDLE_TYPE_LMR, core.TypePSP: C.DAT_HANDLE_TYPE_PSP,
	core.TypePZ: C.DAT_HANDLE_TYPE_PZ, core.TypeRMR: C.DAT_HANDLE_TYPE_RMR, core.TypeRSP: C.DAT_HANDLE_TYPE_RSP,
	core.TypeCNO: C.DAT_HANDLE_TYPE_CNO, core.TypeSRQ: C.DAT_HANDLE_TYPE_SRQ,
}

// HandleType is the DAT_HANDLE_TYPE of a core family.
func HandleType(t core.HandleType) uint32 { return handleTypes[t] }

// datBool is b as a DAT_BOOLEAN.
func datBool(b bool) C.DAT_BOOLEAN {
	if b {
		return C.DAT_TRUE
	}
	return C.DAT_FALSE
}

// Bool is b as a DAT_BOOLEAN.
func Bool(b bool) uint32 { return uint32(datBool(b)) }
