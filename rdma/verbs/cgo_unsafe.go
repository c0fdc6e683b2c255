package verbs

/*
#include "shim.h"
*/
import "C"

import (
	"unsafe"

	"godat/rdma"
)

// The layouts shared with C (shim.h struct gd_wc is rdma.WC, with its flag
// bits; struct ibv_sge is rdma.SGE): Poll writes the consumer's slice
// directly and the posts read the consumer's scatter/gather lists. These
// fail to compile if the layouts differ.
var (
	_ [unsafe.Sizeof(rdma.WC{}) - C.sizeof_struct_gd_wc]struct{}
	_ [C.sizeof_struct_gd_wc - unsafe.Sizeof(rdma.WC{})]struct{}
	_ [unsafe.Offsetof(rdma.WC{}.Status) - C.offsetof_gd_wc_status]struct{}
	_ [C.offsetof_gd_wc_status - unsafe.Offsetof(rdma.WC{}.Status)]struct{}
	_ [rdma.WCWithImm - C.GD_WCF_WITH_IMM]struct{}
	_ [C.GD_WCF_WITH_IMM - rdma.WCWithImm]struct{}
	_ [rdma.WCSolicited - C.GD_WCF_SOLICITED]struct{}
	_ [C.GD_WCF_SOLICITED - rdma.WCSolicited]struct{}
	_ [unsafe.Sizeof(rdma.SGE{}) - C.sizeof_struct_ibv_sge]struct{}
	_ [C.sizeof_struct_ibv_sge - unsafe.Sizeof(rdma.SGE{})]struct{}
)

// wcPtr is the consumer's completion slice as C sees it, for one call.
func wcPtr(wc []rdma.WC) *C.struct_gd_wc { return (*C.struct_gd_wc)(unsafe.Pointer(&wc[0])) }

// qpAddr and cqAddr are the addresses of C objects as the hot calls take
// them (shim.h, gd_post_send_go): integers, which cgo does not check.
func qpAddr(q *C.struct_gd_qp) C.uintptr_t { return C.uintptr_t(uintptr(unsafe.Pointer(q))) }

func cqAddr(c *C.struct_gd_cq) C.uintptr_t { return C.uintptr_t(uintptr(unsafe.Pointer(c))) }

// sgePtr is a scatter/gather list as C sees it, for one call (nil when
// empty).
func sgePtr(sgl []rdma.SGE) *C.struct_ibv_sge {
	if len(sgl) == 0 {
		return nil
	}
	return (*C.struct_ibv_sge)(unsafe.Pointer(&sgl[0]))
}

// bytesPtr is b's data for one C call (nil when empty).
func bytesPtr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(&b[0])
}

// pdata copies a CM event's private data.
func pdata(ev *C.struct_gd_cmev) []byte {
	return C.GoBytes(unsafe.Pointer(&ev.pdata[0]), ev.plen)
}
