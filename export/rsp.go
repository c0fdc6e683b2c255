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

// Reserved service points: dat_rsp_*.

var callRSPCreate = dat12.NewCall("dat_rsp_create", dat12.Args{})

//export go_dat_rsp_create
func go_dat_rsp_create(h C.godat_handle, qual C.DAT_CONN_QUAL, eph C.godat_handle, evdh C.godat_handle, out *C.DAT_RSP_HANDLE) (ret C.DAT_RETURN) {
	c := callRSPCreate
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(c, err)
	}
	ep, err := epOf(eph)
	if err != nil {
		return datReturn(c, err)
	}
	evd, err := lookup[*core.EVD](evdh, core.TypeEVD, core.SubHandleEVDCR)
	if err != nil {
		return datReturn(c, err)
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(5))
	}
	cabi.ProbeOut(out)
	r, err := ia.CreateRSP(uint64(qual), ep, evd)
	if err != nil {
		return datReturn(c, err)
	}
	putHandle(out, r)
	return C.DAT_SUCCESS
}

var callRSPQuery = dat12.NewCall("dat_rsp_query", dat12.Args{})

//export go_dat_rsp_query
func go_dat_rsp_query(h C.godat_handle, mask C.DAT_RSP_PARAM_MASK, out *C.DAT_RSP_PARAM) (ret C.DAT_RETURN) {
	c := callRSPQuery
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	r, err := lookup[*core.RSP](h, core.TypeRSP, core.SubHandleRSP)
	if err != nil {
		return datReturn(c, err)
	}
	if mask&^C.DAT_RSP_FIELD_ALL != 0 {
		return datReturn(c, dat12.ArgAt(2))
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(3))
	}
	q, err := r.Query()
	if err != nil {
		return datReturn(c, err)
	}
	dat12.PutRSPParam(unsafe.Pointer(out), r, q)
	return C.DAT_SUCCESS
}

var callRSPFree = dat12.NewCall("dat_rsp_free", dat12.Args{})

//export go_dat_rsp_free
func go_dat_rsp_free(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callRSPFree
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	r, err := lookup[*core.RSP](h, core.TypeRSP, core.SubHandleRSP)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, r.Free())
}
