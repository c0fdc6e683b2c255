package main

/*
#include "godat.h"
*/
import "C"

import "godat/core"

//export go_dat_rmr_create
func go_dat_rmr_create(pzh C.godat_handle, out *C.DAT_RMR_HANDLE) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_rmr_create", pzh)
	pz, err := lookup[*core.PZ](pzh, core.TypePZ, core.SubHandlePZ)
	if err != nil {
		return datReturn(err)
	}
	if out == nil {
		return datReturn(core.ErrArg(2))
	}
	r, err := pz.CreateRMR()
	if err != nil {
		return datReturn(err)
	}
	*out = handleOf(r)
	return C.DAT_SUCCESS
}

//export go_dat_rmr_query
func go_dat_rmr_query(h C.godat_handle, mask C.DAT_RMR_PARAM_MASK, out *C.DAT_RMR_PARAM) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_rmr_query", h)
	r, err := lookup[*core.RMR](h, core.TypeRMR, core.SubHandleRMR)
	if err != nil {
		return datReturn(err)
	}
	if mask&^C.DAT_RMR_FIELD_ALL != 0 {
		return datReturn(core.ErrArg(2))
	}
	if out == nil {
		return datReturn(core.ErrArg(3))
	}
	i, err := r.Query()
	if err != nil {
		return datReturn(err)
	}
	var v C.DAT_RMR_PARAM
	v.ia_handle = handleOf(r.IA())
	v.pz_handle = handleOf(i.PZ)
	v.lmr_triplet.lmr_context = C.DAT_LMR_CONTEXT(i.Segment.LMRContext)
	v.lmr_triplet.virtual_address = C.DAT_VADDR(i.Segment.Addr)
	v.lmr_triplet.segment_length = C.DAT_VLEN(i.Segment.Length)
	v.mem_priv = C.DAT_MEM_PRIV_FLAGS(i.Priv)
	v.rmr_context = C.DAT_RMR_CONTEXT(i.RMRContext)
	*out = v
	return C.DAT_SUCCESS
}

//export go_dat_rmr_bind
func go_dat_rmr_bind(h C.godat_handle, triplet *C.DAT_LMR_TRIPLET, priv C.DAT_MEM_PRIV_FLAGS, eph C.godat_handle,
	cookie C.DAT_UINT64, flags C.DAT_COMPLETION_FLAGS, out *C.DAT_RMR_CONTEXT) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_rmr_bind", h)
	r, err := lookup[*core.RMR](h, core.TypeRMR, core.SubHandleRMR)
	if err != nil {
		return datReturn(err)
	}
	ep, err := lookup[*core.EP](eph, core.TypeEP, core.SubHandleEP)
	if err != nil {
		return datReturn(err)
	}
	if triplet == nil {
		return datReturn(core.ErrArg(2))
	}
	if out == nil {
		return datReturn(core.ErrArg(7))
	}
	seg := segmentsOf(triplet, 1)[0]
	ctx, err := r.Bind(seg, core.MemPriv(priv), ep, uint64(cookie), core.CompletionFlags(flags))
	if err != nil {
		return datReturn(err)
	}
	*out = C.DAT_RMR_CONTEXT(ctx)
	return C.DAT_SUCCESS
}

//export go_dat_rmr_free
func go_dat_rmr_free(h C.godat_handle) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_rmr_free", h)
	r, err := lookup[*core.RMR](h, core.TypeRMR, core.SubHandleRMR)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(r.Free())
}
