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

// PutRSPParam writes the DAT_RSP_PARAM of r at out.
func PutRSPParam(out unsafe.Pointer, r *core.RSP, q core.RSPParams) {
	var v C.DAT_RSP_PARAM
	v.ia_handle = handle(r.IA())
	v.conn_qual = C.DAT_CONN_QUAL(q.Qual)
	v.evd_handle = handle(q.EVD)
	v.ep_handle = handle(q.EP)
	cabi.PutStruct(out, &v)
}
