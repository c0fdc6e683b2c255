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

// SRQAttrFromC reads the DAT_SRQ_ATTR at p.
func SRQAttrFromC(p unsafe.Pointer) core.SRQAttr {
	a := (*C.DAT_SRQ_ATTR)(p)
	return core.SRQAttr{MaxRecvDTOs: int(a.max_recv_dtos), MaxRecvIOV: int(a.max_recv_iov), LowWatermark: int(a.low_watermark)}
}

// PutSRQParam writes the DAT_SRQ_PARAM of s at out. Every field is filled
// whatever the mask: the page lets the provider return more than was asked,
// and all of them are cheap and exact.
func PutSRQParam(out unsafe.Pointer, s *core.SRQ, p core.SRQParams) {
	var v C.DAT_SRQ_PARAM
	v.ia_handle = handle(s.IA())
	v.srq_state = C.DAT_SRQ_STATE_OPERATIONAL
	v.pz_handle = handle(p.PZ)
	v.max_recv_dtos = C.DAT_COUNT(p.MaxRecvDTOs)
	v.max_recv_iov = C.DAT_COUNT(p.MaxRecvIOV)
	v.low_watermark = C.DAT_COUNT(p.LowWatermark)
	v.available_dto_count = C.DAT_COUNT(p.Available)
	v.outstanding_dto_count = C.DAT_COUNT(p.Outstanding)
	cabi.PutStruct(out, &v)
}
