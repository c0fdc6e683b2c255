package main

/*
#include <string.h>
#include "godat.h"
*/
import "C"

import (
	"unsafe"

	"godat/core"
)

//export go_dat_lmr_create
func go_dat_lmr_create(h C.godat_handle, memType C.DAT_MEM_TYPE, region *C.DAT_REGION_DESCRIPTION, length C.DAT_VLEN,
	pzh C.godat_handle, priv C.DAT_MEM_PRIV_FLAGS, out *C.DAT_LMR_HANDLE, lctx *C.DAT_LMR_CONTEXT, rctx *C.DAT_RMR_CONTEXT,
	regLen *C.DAT_VLEN, regAddr *C.DAT_VADDR) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_lmr_create", h)
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(err)
	}
	pz, err := lookup[*core.PZ](pzh, core.TypePZ, core.SubHandlePZ)
	if err != nil {
		return datReturn(err)
	}
	if out == nil {
		return datReturn(core.ErrArg(7))
	}
	var r core.LMRRegion
	words := (*[2]uint64)(unsafe.Pointer(region))
	switch memType {
	case C.DAT_MEM_TYPE_VIRTUAL:
		r = core.LMRRegion{Type: core.MemVirtual, Addr: words[0]}
	case C.DAT_MEM_TYPE_SHARED_VIRTUAL:
		// DAT_SHARED_MEMORY: the address, then a pointer to the 40-byte id.
		r = core.LMRRegion{Type: core.MemSharedVirtual, Addr: words[0]}
		if words[1] == 0 {
			return datReturn(core.ErrArg(3))
		}
		r.Cookie = cookieAt(uintptr(words[1]))
	case C.DAT_MEM_TYPE_LMR:
		parent, err := lookup[*core.LMR](C.godat_handle(words[0]), core.TypeLMR, core.SubHandleLMR)
		if err != nil {
			return datReturn(err)
		}
		r = core.LMRRegion{Type: core.MemLMR, LMR: parent}
	default:
		return datReturn(core.ErrModelNotSupported)
	}
	lmr, info, err := ia.CreateLMR(r, uint64(length), pz, core.MemPriv(priv))
	if err != nil {
		return datReturn(err)
	}
	*out = handleOf(lmr)
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

//export go_dat_lmr_query
func go_dat_lmr_query(h C.godat_handle, mask C.DAT_LMR_PARAM_MASK, out *C.DAT_LMR_PARAM) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_lmr_query", h)
	l, err := lookup[*core.LMR](h, core.TypeLMR, core.SubHandleLMR)
	if err != nil {
		return datReturn(err)
	}
	if mask&^C.DAT_LMR_FIELD_ALL != 0 {
		return datReturn(core.ErrArg(2))
	}
	if out == nil {
		return datReturn(core.ErrArg(3))
	}
	i, err := l.Query()
	if err != nil {
		return datReturn(err)
	}
	var v C.DAT_LMR_PARAM
	v.ia_handle = handleOf(l.IA())
	words := (*[2]uint64)(unsafe.Pointer(&v.region_desc))
	switch i.Region.Type {
	case core.MemVirtual:
		v.mem_type = C.DAT_MEM_TYPE_VIRTUAL
		words[0] = i.Region.Addr
	case core.MemSharedVirtual:
		v.mem_type = C.DAT_MEM_TYPE_SHARED_VIRTUAL
		words[0] = i.Region.Addr
	case core.MemLMR:
		v.mem_type = C.DAT_MEM_TYPE_LMR
		words[0] = uint64(core.Base(i.Region.LMR).Handle())
	}
	v.length = C.DAT_VLEN(i.Length)
	v.pz_handle = handleOf(i.PZ)
	v.mem_priv = C.DAT_MEM_PRIV_FLAGS(i.Priv)
	v.lmr_context = C.DAT_LMR_CONTEXT(i.LMRContext)
	v.rmr_context = C.DAT_RMR_CONTEXT(i.RMRContext)
	v.registered_size = C.DAT_VLEN(i.RegisteredSize)
	v.registered_address = C.DAT_VADDR(i.RegisteredAddr)
	*out = v
	return C.DAT_SUCCESS
}

//export go_dat_lmr_free
func go_dat_lmr_free(h C.godat_handle) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_lmr_free", h)
	l, err := lookup[*core.LMR](h, core.TypeLMR, core.SubHandleLMR)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(l.Free())
}

// segmentsOf views a C DAT_LMR_TRIPLET array as core segments without a
// copy; core.Segment has the triplet's layout (checked by
// TestSegmentLayout).
func segmentsOf(iov *C.DAT_LMR_TRIPLET, n C.DAT_COUNT) []core.Segment {
	if n <= 0 || iov == nil {
		return nil
	}
	return unsafe.Slice((*core.Segment)(unsafe.Pointer(iov)), int(n))
}

// iovOf checks a DTO's local IOV (count and pointer, argument 2) and views
// it as segments.
func iovOf(iov *C.DAT_LMR_TRIPLET, n C.DAT_COUNT) ([]core.Segment, error) {
	if n < 0 || n > 0 && iov == nil {
		return nil, core.ErrArg(2)
	}
	return segmentsOf(iov, n), nil
}

func syncRDMA(h C.godat_handle, iov *C.DAT_LMR_TRIPLET, n C.DAT_VLEN) C.DAT_RETURN {
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(err)
	}
	if iov == nil || n == 0 || n > 1<<20 {
		return datReturn(core.ErrArg(2))
	}
	return datReturn(ia.SyncRDMA(segmentsOf(iov, C.DAT_COUNT(n))))
}

//export go_dat_lmr_sync_rdma_read
func go_dat_lmr_sync_rdma_read(h C.godat_handle, iov *C.DAT_LMR_TRIPLET, n C.DAT_VLEN) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_lmr_sync_rdma_read", h)
	return syncRDMA(h, iov, n)
}

//export go_dat_lmr_sync_rdma_write
func go_dat_lmr_sync_rdma_write(h C.godat_handle, iov *C.DAT_LMR_TRIPLET, n C.DAT_VLEN) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_lmr_sync_rdma_write", h)
	return syncRDMA(h, iov, n)
}

// cookieAt reads the 40-byte shared memory id the consumer points at.
func cookieAt(p uintptr) (c [C.DAT_LMR_COOKIE_SIZE]byte) {
	C.memcpy(unsafe.Pointer(&c[0]), cptr(p), C.DAT_LMR_COOKIE_SIZE)
	return c
}
