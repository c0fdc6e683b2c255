package main

/*
#include "godat.h"
*/
import "C"

import "godat/core"

//export go_dat_pz_create
func go_dat_pz_create(h C.godat_handle, out *C.DAT_PZ_HANDLE) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_pz_create", h)
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(err)
	}
	if out == nil {
		return datReturn(core.ErrArg(2))
	}
	pz, err := ia.CreatePZ()
	if err != nil {
		return datReturn(err)
	}
	*out = handleOf(pz)
	return C.DAT_SUCCESS
}

//export go_dat_pz_query
func go_dat_pz_query(h C.godat_handle, mask C.DAT_PZ_PARAM_MASK, out *C.DAT_PZ_PARAM) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_pz_query", h)
	pz, err := lookup[*core.PZ](h, core.TypePZ, core.SubHandlePZ)
	if err != nil {
		return datReturn(err)
	}
	if mask&^C.DAT_PZ_FIELD_ALL != 0 {
		return datReturn(core.ErrArg(2))
	}
	if out == nil {
		return datReturn(core.ErrArg(3))
	}
	out.ia_handle = handleOf(pz.IA())
	return C.DAT_SUCCESS
}

//export go_dat_pz_free
func go_dat_pz_free(h C.godat_handle) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_pz_free", h)
	pz, err := lookup[*core.PZ](h, core.TypePZ, core.SubHandlePZ)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(pz.Free())
}
