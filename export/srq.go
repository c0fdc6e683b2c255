package main

/*
#include "godat.h"
*/
import "C"

import "godat/core"

// Shared receive queues: dat_srq_* and the SRQ parameters of DAT 1.2.

//export go_dat_srq_create
func go_dat_srq_create(h C.godat_handle, pzh C.godat_handle, attr *C.DAT_SRQ_ATTR, out *C.DAT_SRQ_HANDLE) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_srq_create", h)
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

func srqOf(h C.godat_handle) (*core.SRQ, error) {
	return lookup[*core.SRQ](h, core.TypeSRQ, core.SubHandleSRQ)
}

//export go_dat_srq_free
func go_dat_srq_free(h C.godat_handle) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_srq_free", h)
	s, err := srqOf(h)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(s.Free())
}

//export go_dat_srq_post_recv
func go_dat_srq_post_recv(h C.godat_handle, n C.DAT_COUNT, iov *C.DAT_LMR_TRIPLET, cookie C.DAT_UINT64) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_srq_post_recv", h)
	s, err := srqOf(h)
	if err != nil {
		return datReturn(err)
	}
	segs, err := iovOf(iov, n)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(s.PostRecv(segs, uint64(cookie)))
}

//export go_dat_srq_query
func go_dat_srq_query(h C.godat_handle, mask C.DAT_SRQ_PARAM_MASK, out *C.DAT_SRQ_PARAM) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_srq_query", h)
	s, err := srqOf(h)
	if err != nil {
		return datReturn(err)
	}
	if mask&^C.DAT_SRQ_FIELD_ALL != 0 {
		return datReturn(core.ErrArg(2))
	}
	if out == nil {
		return datReturn(core.ErrArg(3))
	}
	p, err := s.Query()
	if err != nil {
		return datReturn(err)
	}
	// Every field is filled whatever the mask: the page lets the provider
	// return more than was asked, and all of them are cheap and exact.
	var v C.DAT_SRQ_PARAM
	v.ia_handle = handleOf(s.IA())
	v.srq_state = C.DAT_SRQ_STATE_OPERATIONAL
	v.pz_handle = handleOf(p.PZ)
	v.max_recv_dtos = C.DAT_COUNT(p.MaxRecvDTOs)
	v.max_recv_iov = C.DAT_COUNT(p.MaxRecvIOV)
	v.low_watermark = C.DAT_COUNT(p.LowWatermark)
	v.available_dto_count = C.DAT_COUNT(p.Available)
	v.outstanding_dto_count = C.DAT_COUNT(p.Outstanding)
	*out = v
	return C.DAT_SUCCESS
}

//export go_dat_srq_resize
func go_dat_srq_resize(h C.godat_handle, n C.DAT_COUNT) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_srq_resize", h)
	s, err := srqOf(h)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(s.Resize(int(n)))
}

//export go_dat_srq_set_lw
func go_dat_srq_set_lw(h C.godat_handle, n C.DAT_COUNT) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_srq_set_lw", h)
	s, err := srqOf(h)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(s.SetLowWatermark(int(n)))
}
