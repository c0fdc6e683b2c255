package main

/*
#include "godat.h"
*/
import "C"

import (
	"unsafe"

	"godat/core"
	"godat/export/cabi"
	"godat/export/dat12"
)

// Shared receive queues: dat_srq_* and the SRQ parameters of DAT 1.2.

var callSRQCreate = dat12.NewCall("dat_srq_create", dat12.Args{core.ArgSRQAttr: 3})

//export go_dat_srq_create
func go_dat_srq_create(h C.godat_handle, pzh C.godat_handle, attr *C.DAT_SRQ_ATTR, out *C.DAT_SRQ_HANDLE) (ret C.DAT_RETURN) {
	c := callSRQCreate
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(c, err)
	}
	pz, err := lookup[*core.PZ](pzh, core.TypePZ, core.SubHandlePZ)
	if err != nil {
		return datReturn(c, err)
	}
	if attr == nil {
		return datReturn(c, dat12.ArgAt(3))
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(4))
	}
	cabi.ProbeOut(out)
	s, err := ia.CreateSRQ(pz, dat12.SRQAttrFromC(unsafe.Pointer(attr)))
	if err != nil {
		return datReturn(c, err)
	}
	putHandle(out, s)
	return C.DAT_SUCCESS
}

func srqOf(h C.godat_handle) (*core.SRQ, error) {
	return lookup[*core.SRQ](h, core.TypeSRQ, core.SubHandleSRQ)
}

var callSRQFree = dat12.NewCall("dat_srq_free", dat12.Args{})

//export go_dat_srq_free
func go_dat_srq_free(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callSRQFree
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	s, err := srqOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, s.Free())
}

var callSRQPostRecv = dat12.NewCall("dat_srq_post_recv", dat12.Args{core.ArgSegmentCount: 2, core.ArgLocalIOV: 3})

//export go_dat_srq_post_recv
func go_dat_srq_post_recv(h C.godat_handle, n C.DAT_COUNT, iov *C.DAT_LMR_TRIPLET, cookie C.DAT_UINT64) (ret C.DAT_RETURN) {
	c := callSRQPostRecv
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	s, err := srqOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	p := unsafe.Pointer(iov)
	if err := dat12.CheckIOV(p, int32(n)); err != nil {
		return datReturn(c, err)
	}
	// As for the EP posts (ep.go): the IOV on this stack, a small buffer
	// for the common short list.
	if n <= dat12.SmallIOV {
		var b dat12.SmallSegmentBuf
		return datReturn(c, s.PostRecv(b.Fill(p, int(n)), uint64(cookie)))
	}
	var b dat12.SegmentBuf
	return datReturn(c, s.PostRecv(b.Fill(p, int(n)), uint64(cookie)))
}

var callSRQQuery = dat12.NewCall("dat_srq_query", dat12.Args{})

//export go_dat_srq_query
func go_dat_srq_query(h C.godat_handle, mask C.DAT_SRQ_PARAM_MASK, out *C.DAT_SRQ_PARAM) (ret C.DAT_RETURN) {
	c := callSRQQuery
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	s, err := srqOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	if mask&^C.DAT_SRQ_FIELD_ALL != 0 {
		return datReturn(c, dat12.ArgAt(2))
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(3))
	}
	p, err := s.Query()
	if err != nil {
		return datReturn(c, err)
	}
	dat12.PutSRQParam(unsafe.Pointer(out), s, p)
	return C.DAT_SUCCESS
}

var callSRQResize = dat12.NewCall("dat_srq_resize", dat12.Args{core.ArgQLen: 2})

//export go_dat_srq_resize
func go_dat_srq_resize(h C.godat_handle, n C.DAT_COUNT) (ret C.DAT_RETURN) {
	c := callSRQResize
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	s, err := srqOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, s.Resize(int(n)))
}

var callSRQSetLW = dat12.NewCall("dat_srq_set_lw", dat12.Args{core.ArgLowWatermark: 2})

//export go_dat_srq_set_lw
func go_dat_srq_set_lw(h C.godat_handle, n C.DAT_COUNT) (ret C.DAT_RETURN) {
	c := callSRQSetLW
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	s, err := srqOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, s.SetLowWatermark(int(n)))
}
