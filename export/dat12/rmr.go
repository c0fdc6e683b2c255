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

// PutRMRParam writes the DAT_RMR_PARAM of r at out.
func PutRMRParam(out unsafe.Pointer, r *core.RMR, i core.RMRInfo) {
	var v C.DAT_RMR_PARAM
	v.ia_handle = handle(r.IA())
	v.pz_handle = handle(i.PZ)
	v.lmr_triplet.lmr_context = C.DAT_LMR_CONTEXT(i.Segment.LMRContext)
	v.lmr_triplet.virtual_address = C.DAT_VADDR(i.Segment.Addr)
	v.lmr_triplet.segment_length = C.DAT_VLEN(i.Segment.Length)
	v.mem_priv = memPrivToC(i.Priv)
	v.rmr_context = C.DAT_RMR_CONTEXT(i.RMRContext)
	cabi.PutStruct(out, &v)
}
