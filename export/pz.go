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

var callPZCreate = dat12.NewCall("dat_pz_create", dat12.Args{})

//export go_dat_pz_create
func go_dat_pz_create(h C.godat_handle, out *C.DAT_PZ_HANDLE) (ret C.DAT_RETURN) {
	c := callPZCreate
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(c, err)
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(2))
	}
	cabi.ProbeOut(out)
	pz, err := ia.CreatePZ()
	if err != nil {
		return datReturn(c, err)
	}
	putHandle(out, pz)
	return C.DAT_SUCCESS
}

var callPZQuery = dat12.NewCall("dat_pz_query", dat12.Args{})

//export go_dat_pz_query
func go_dat_pz_query(h C.godat_handle, mask C.DAT_PZ_PARAM_MASK, out *C.DAT_PZ_PARAM) (ret C.DAT_RETURN) {
	c := callPZQuery
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	pz, err := lookup[*core.PZ](h, core.TypePZ, core.SubHandlePZ)
	if err != nil {
		return datReturn(c, err)
	}
	if mask&^C.DAT_PZ_FIELD_ALL != 0 {
		return datReturn(c, dat12.ArgAt(2))
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(3))
	}
	dat12.PutPZParam(unsafe.Pointer(out), pz)
	return C.DAT_SUCCESS
}

var callPZFree = dat12.NewCall("dat_pz_free", dat12.Args{})

//export go_dat_pz_free
func go_dat_pz_free(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callPZFree
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	pz, err := lookup[*core.PZ](h, core.TypePZ, core.SubHandlePZ)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, pz.Free())
}
