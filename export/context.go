package main

/*
#include "godat.h"
*/
import "C"

import "godat/core"

// anyObject resolves a handle of any family.
func anyObject(h C.godat_handle) (core.Obj, error) {
	e := handles.entry(uintptr(h))
	if e == nil {
		return nil, core.ErrHandle(core.SubNone)
	}
	return e.obj, nil
}

//export go_dat_set_consumer_context
func go_dat_set_consumer_context(h C.godat_handle, ctx C.DAT_UINT64) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_set_consumer_context", h)
	o, err := anyObject(h)
	if err != nil {
		return datReturn(err)
	}
	core.Base(o).SetContext(uint64(ctx))
	return C.DAT_SUCCESS
}

//export go_dat_get_consumer_context
func go_dat_get_consumer_context(h C.godat_handle, out *C.DAT_CONTEXT) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_get_consumer_context", h)
	o, err := anyObject(h)
	if err != nil {
		return datReturn(err)
	}
	if out == nil {
		return datReturn(core.ErrArg(2))
	}
	*(*C.DAT_UINT64)(ptrOf(out)) = C.DAT_UINT64(core.Base(o).Context())
	return C.DAT_SUCCESS
}

// handleTypes maps core families to DAT_HANDLE_TYPE values.
var handleTypes = [core.TypeCount]C.DAT_HANDLE_TYPE{
	core.TypeCR: C.DAT_HANDLE_TYPE_CR, core.TypeEP: C.DAT_HANDLE_TYPE_EP, core.TypeEVD: C.DAT_HANDLE_TYPE_EVD,
	core.TypeIA: C.DAT_HANDLE_TYPE_IA, core.TypeLMR: C.DAT_HANDLE_TYPE_LMR, core.TypePSP: C.DAT_HANDLE_TYPE_PSP,
	core.TypePZ: C.DAT_HANDLE_TYPE_PZ, core.TypeRMR: C.DAT_HANDLE_TYPE_RMR, core.TypeRSP: C.DAT_HANDLE_TYPE_RSP,
	core.TypeCNO: C.DAT_HANDLE_TYPE_CNO, core.TypeSRQ: C.DAT_HANDLE_TYPE_SRQ,
}

//export go_dat_get_handle_type
func go_dat_get_handle_type(h C.godat_handle, out *C.DAT_HANDLE_TYPE) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_get_handle_type", h)
	o, err := anyObject(h)
	if err != nil {
		return datReturn(err)
	}
	if out == nil {
		return datReturn(core.ErrArg(2))
	}
	*out = handleTypes[core.Base(o).Type()]
	return C.DAT_SUCCESS
}
