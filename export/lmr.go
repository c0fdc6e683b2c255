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

var callLMRCreate = dat12.NewCall("dat_lmr_create", dat12.Args{core.ArgRegion: 3, core.ArgLength: 4, core.ArgMemPriv: 6})

//export go_dat_lmr_create
func go_dat_lmr_create(h C.godat_handle, memType C.DAT_MEM_TYPE, region *C.DAT_REGION_DESCRIPTION, length C.DAT_VLEN,
	pzh C.godat_handle, priv C.DAT_MEM_PRIV_FLAGS, out *C.DAT_LMR_HANDLE, lctx *C.DAT_LMR_CONTEXT, rctx *C.DAT_RMR_CONTEXT,
	regLen *C.DAT_VLEN, regAddr *C.DAT_VADDR) (ret C.DAT_RETURN) {
	c := callLMRCreate
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(c, err)
	}
	pz, err := lookup[*core.PZ](pzh, core.TypePZ, core.SubHandlePZ)
	if err != nil {
		return datReturn(c, err)
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(7))
	}
	cabi.ProbeOut(out)
	if lctx != nil {
		cabi.ProbeOut(lctx)
	}
	if rctx != nil {
		cabi.ProbeOut(rctx)
	}
	if regLen != nil {
		cabi.ProbeOut(regLen)
	}
	if regAddr != nil {
		cabi.ProbeOut(regAddr)
	}
	r, err := dat12.LMRRegion(uint32(memType), unsafe.Pointer(region))
	if err != nil {
		return datReturn(c, err)
	}
	p, ok := dat12.MemPriv(uint32(priv))
	if !ok {
		return datReturn(c, core.ErrArg(core.ArgMemPriv))
	}
	lmr, info, err := ia.CreateLMR(r, uint64(length), pz, p)
	if err != nil {
		return datReturn(c, err)
	}
	putHandle(out, lmr)
	if lctx != nil {
		*lctx = C.DAT_LMR_CONTEXT(info.LMRContext)
	}
	if rctx != nil {
		*rctx = C.DAT_RMR_CONTEXT(info.RMRContext)
	}
	if regLen != nil {
		*regLen = C.DAT_VLEN(info.RegisteredSize)
	}
	if regAddr != nil {
		*regAddr = C.DAT_VADDR(info.RegisteredAddr)
	}
	return C.DAT_SUCCESS
}

var callLMRQuery = dat12.NewCall("dat_lmr_query", dat12.Args{})

//export go_dat_lmr_query
func go_dat_lmr_query(h C.godat_handle, mask C.DAT_LMR_PARAM_MASK, out *C.DAT_LMR_PARAM) (ret C.DAT_RETURN) {
	c := callLMRQuery
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	l, err := lookup[*core.LMR](h, core.TypeLMR, core.SubHandleLMR)
	if err != nil {
		return datReturn(c, err)
	}
	if mask&^C.DAT_LMR_FIELD_ALL != 0 {
		return datReturn(c, dat12.ArgAt(2))
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(3))
	}
	i, err := l.Query()
	if err != nil {
		return datReturn(c, err)
	}
	dat12.PutLMRParam(unsafe.Pointer(out), l, i)
	return C.DAT_SUCCESS
}

var callLMRFree = dat12.NewCall("dat_lmr_free", dat12.Args{})

//export go_dat_lmr_free
func go_dat_lmr_free(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callLMRFree
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	l, err := lookup[*core.LMR](h, core.TypeLMR, core.SubHandleLMR)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, l.Free())
}

func syncRDMA(c *dat12.Call, h C.godat_handle, iov *C.DAT_LMR_TRIPLET, n C.DAT_VLEN) C.DAT_RETURN {
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(c, err)
	}
	if iov == nil || n == 0 || n > 1<<20 {
		return datReturn(c, dat12.ArgAt(2))
	}
	return datReturn(c, dat12.EachChunk(unsafe.Pointer(iov), int(n), ia.SyncRDMA))
}

var callLMRSyncRDMARead = dat12.NewCall("dat_lmr_sync_rdma_read", dat12.Args{core.ArgLocalIOV: 2})

//export go_dat_lmr_sync_rdma_read
func go_dat_lmr_sync_rdma_read(h C.godat_handle, iov *C.DAT_LMR_TRIPLET, n C.DAT_VLEN) (ret C.DAT_RETURN) {
	c := callLMRSyncRDMARead
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	return syncRDMA(c, h, iov, n)
}

var callLMRSyncRDMAWrite = dat12.NewCall("dat_lmr_sync_rdma_write", dat12.Args{core.ArgLocalIOV: 2})

//export go_dat_lmr_sync_rdma_write
func go_dat_lmr_sync_rdma_write(h C.godat_handle, iov *C.DAT_LMR_TRIPLET, n C.DAT_VLEN) (ret C.DAT_RETURN) {
	c := callLMRSyncRDMAWrite
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	return syncRDMA(c, h, iov, n)
}
