package main

/*
#include "godat.h"
*/
import "C"

import "godat/core"

// Shared receive queues: handles are validated; the SRQ semantics are the
// subject of their own issue and report DAT_NOT_IMPLEMENTED until then.

//export go_dat_srq_create
func go_dat_srq_create(h C.DAT_IA_HANDLE, pzh C.DAT_PZ_HANDLE, attr *C.DAT_SRQ_ATTR, out *C.DAT_SRQ_HANDLE) (ret C.DAT_RETURN) {
	defer recoverTo(&ret, "dat_srq_create")
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(err)
	}
	pz, err := lookup[*core.PZ](pzh, core.TypePZ, core.SubHandlePZ)
	if err != nil {
		return datReturn(err)
	}
	if attr == nil {
		return datReturn(core.ErrArg(3))
	}
	if out == nil {
		return datReturn(core.ErrArg(4))
	}
	s, err := ia.CreateSRQ(pz, core.SRQAttr{MaxRecvDTOs: int(attr.max_recv_dtos), MaxRecvIOV: int(attr.max_recv_iov), LowWatermark: int(attr.low_watermark)})
	if err != nil {
		return datReturn(err)
	}
	*out = handleOf(s)
	return C.DAT_SUCCESS
}

func srqOf(h C.DAT_SRQ_HANDLE) (*core.SRQ, error) {
	return lookup[*core.SRQ](h, core.TypeSRQ, core.SubHandleSRQ)
}

//export go_dat_srq_free
func go_dat_srq_free(h C.DAT_SRQ_HANDLE) (ret C.DAT_RETURN) {
	defer recoverTo(&ret, "dat_srq_free")
	if _, err := srqOf(h); err != nil {
		return datReturn(err)
	}
	return datReturn(core.ErrNotImplemented)
}

//export go_dat_srq_post_recv
func go_dat_srq_post_recv(h C.DAT_SRQ_HANDLE, n C.DAT_COUNT, iov *C.DAT_LMR_TRIPLET, cookie C.DAT_UINT64) (ret C.DAT_RETURN) {
	defer recoverTo(&ret, "dat_srq_post_recv")
	if _, err := srqOf(h); err != nil {
		return datReturn(err)
	}
	return datReturn(core.ErrNotImplemented)
}

//export go_dat_srq_query
func go_dat_srq_query(h C.DAT_SRQ_HANDLE, mask C.DAT_SRQ_PARAM_MASK, out *C.DAT_SRQ_PARAM) (ret C.DAT_RETURN) {
	defer recoverTo(&ret, "dat_srq_query")
	if _, err := srqOf(h); err != nil {
		return datReturn(err)
	}
	return datReturn(core.ErrNotImplemented)
}

//export go_dat_srq_resize
func go_dat_srq_resize(h C.DAT_SRQ_HANDLE, n C.DAT_COUNT) (ret C.DAT_RETURN) {
	defer recoverTo(&ret, "dat_srq_resize")
	if _, err := srqOf(h); err != nil {
		return datReturn(err)
	}
	return datReturn(core.ErrNotImplemented)
}

//export go_dat_srq_set_lw
func go_dat_srq_set_lw(h C.DAT_SRQ_HANDLE, n C.DAT_COUNT) (ret C.DAT_RETURN) {
	defer recoverTo(&ret, "dat_srq_set_lw")
	if _, err := srqOf(h); err != nil {
		return datReturn(err)
	}
	return datReturn(core.ErrNotImplemented)
}
