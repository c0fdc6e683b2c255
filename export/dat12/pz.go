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

// PutPZParam writes the DAT_PZ_PARAM of pz at out.
func PutPZParam(out unsafe.Pointer, pz *core.PZ) {
	cabi.HandleOut(&(*C.DAT_PZ_PARAM)(out).ia_handle, cabi.HandleOf(pz.IA()))
}
