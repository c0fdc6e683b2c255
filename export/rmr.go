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

var callRMRCreate = dat12.NewCall("dat_rmr_create", dat12.Args{})

//export go_dat_rmr_create
func go_dat_rmr_create(pzh C.godat_handle, out *C.DAT_RMR_HANDLE) (ret C.DAT_RETURN) {
	c := callRMRCreate
	defer c.Enter().Done((*uint32)(&ret), uintptr(pzh))
	pz, err := lookup[*core.PZ](pzh, core.TypePZ, core.SubHandlePZ)
	if err != nil {
		return datReturn(c, err)
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(2))
	}
	cabi.ProbeOut(out)
	r, err := pz.CreateRMR()
	if err != nil {
		return datReturn(c, err)
	}
	putHandle(out, r)
	return C.DAT_SUCCESS
}

var callRMRQuery = dat12.NewCall("dat_rmr_query", dat12.Args{})

//export go_dat_rmr_query
func go_dat_rmr_query(h C.godat_handle, mask C.DAT_RMR_PARAM_MASK, out *C.DAT_RMR_PARAM) (ret C.DAT_RETURN) {
	c := callRMRQuery
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	r, err := lookup[*core.RMR](h, core.TypeRMR, core.SubHandleRMR)
	if err != nil {
		return datReturn(c, err)
	}
	if mask&^C.DAT_RMR_FIELD_ALL != 0 {
		return datReturn(c, dat12.ArgAt(2))
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(3))
	}
	i, err := r.Query()
	if err != nil {
		return datReturn(c, err)
	}
	dat12.PutRMRParam(unsafe.Pointer(out), r, i)
	return C.DAT_SUCCESS
}

var callRMRBind = dat12.NewCall("dat_rmr_bind", dat12.Args{core.ArgLocalIOV: 2, core.ArgMemPriv: 3, core.ArgCompletionFlags: 6})

//export go_dat_rmr_bind
func go_dat_rmr_bind(h C.godat_handle, triplet *C.DAT_LMR_TRIPLET, priv C.DAT_MEM_PRIV_FLAGS, eph C.godat_handle,
	cookie C.DAT_UINT64, flags C.DAT_COMPLETION_FLAGS, out *C.DAT_RMR_CONTEXT) (ret C.DAT_RETURN) {
	c := callRMRBind
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	r, err := lookup[*core.RMR](h, core.TypeRMR, core.SubHandleRMR)
	if err != nil {
		return datReturn(c, err)
	}
	ep, err := lookup[*core.EP](eph, core.TypeEP, core.SubHandleEP)
	if err != nil {
		return datReturn(c, err)
	}
	if triplet == nil {
		return datReturn(c, dat12.ArgAt(2))
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(7))
	}
	// core checks the privileges first, then the flags.
	p, ok := dat12.MemPriv(uint32(priv))
	if !ok {
		return datReturn(c, core.ErrArg(core.ArgMemPriv))
	}
	f, ok := dat12.CompletionFlags(uint32(flags))
	if !ok {
		return datReturn(c, core.ErrArg(core.ArgCompletionFlags))
	}
	seg := dat12.Segment(unsafe.Pointer(triplet))
	cabi.ProbeOut(out)
	ctx, err := r.Bind(seg, p, ep, uint64(cookie), f)
	if err != nil {
		return datReturn(c, err)
	}
	*out = C.DAT_RMR_CONTEXT(ctx)
	return C.DAT_SUCCESS
}

var callRMRFree = dat12.NewCall("dat_rmr_free", dat12.Args{})

//export go_dat_rmr_free
func go_dat_rmr_free(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callRMRFree
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	r, err := lookup[*core.RMR](h, core.TypeRMR, core.SubHandleRMR)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, r.Free())
}
