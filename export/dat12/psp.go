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

// PutPSPParam writes the DAT_PSP_PARAM of p at out.
func PutPSPParam(out unsafe.Pointer, p *core.PSP, q core.PSPParams) {
	var v C.DAT_PSP_PARAM
	v.ia_handle = handle(p.IA())
	v.conn_qual = C.DAT_CONN_QUAL(q.Qual)
	v.evd_handle = handle(q.EVD)
	v.psp_flags = pspFlagsToC(q.Flags)
	cabi.PutStruct(out, &v)
}
