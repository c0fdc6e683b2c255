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

// anyObject resolves a handle of any family.
func anyObject(h C.godat_handle) (core.Obj, error) {
	o, ok := cabi.Object(uintptr(h))
	if !ok {
		return nil, core.ErrHandle(core.SubNone)
	}
	return o, nil
}

var callSetConsumerContext = dat12.NewCall("dat_set_consumer_context", dat12.Args{})

//export go_dat_set_consumer_context
func go_dat_set_consumer_context(h C.godat_handle, ctx C.DAT_UINT64) (ret C.DAT_RETURN) {
	c := callSetConsumerContext
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	o, err := anyObject(h)
	if err != nil {
		return datReturn(c, err)
	}
	core.Base(o).SetContext(uint64(ctx))
	return C.DAT_SUCCESS
}

var callGetConsumerContext = dat12.NewCall("dat_get_consumer_context", dat12.Args{})

//export go_dat_get_consumer_context
func go_dat_get_consumer_context(h C.godat_handle, out *C.DAT_CONTEXT) (ret C.DAT_RETURN) {
	c := callGetConsumerContext
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	o, err := anyObject(h)
	if err != nil {
		return datReturn(c, err)
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(2))
	}
	*(*C.DAT_UINT64)(unsafe.Pointer(out)) = C.DAT_UINT64(core.Base(o).Context())
	return C.DAT_SUCCESS
}

var callGetHandleType = dat12.NewCall("dat_get_handle_type", dat12.Args{})

//export go_dat_get_handle_type
func go_dat_get_handle_type(h C.godat_handle, out *C.DAT_HANDLE_TYPE) (ret C.DAT_RETURN) {
	c := callGetHandleType
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	o, err := anyObject(h)
	if err != nil {
		return datReturn(c, err)
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(2))
	}
	*out = C.DAT_HANDLE_TYPE(dat12.HandleType(core.Base(o).Type()))
	return C.DAT_SUCCESS
}
