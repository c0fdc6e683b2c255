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

// Public service points: dat_psp_*.

func createPSP(h C.godat_handle, qual uint64, any bool, evdh C.godat_handle, flags C.DAT_PSP_FLAGS) (*core.PSP, uint64, error) {
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return nil, 0, err
	}
	evd, err := lookup[*core.EVD](evdh, core.TypeEVD, core.SubHandleEVDCR)
	if err != nil {
		return nil, 0, err
	}
	f, ok := dat12.PSPFlags(uint32(flags))
	if !ok {
		return nil, 0, core.ErrArg(core.ArgPSPFlags)
	}
	return ia.CreatePSP(qual, any, evd, f)
}

var callPSPCreate = dat12.NewCall("dat_psp_create", dat12.Args{core.ArgPSPFlags: 4})

//export go_dat_psp_create
func go_dat_psp_create(h C.godat_handle, qual C.DAT_CONN_QUAL, evdh C.godat_handle, flags C.DAT_PSP_FLAGS, out *C.DAT_PSP_HANDLE) (ret C.DAT_RETURN) {
	c := callPSPCreate
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	if out == nil {
		if _, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA); err != nil {
			return datReturn(c, err)
		}
		return datReturn(c, dat12.ArgAt(5))
	}
	cabi.ProbeOut(out)
	p, _, err := createPSP(h, uint64(qual), false, evdh, flags)
	if err != nil {
		return datReturn(c, err)
	}
	putHandle(out, p)
	return C.DAT_SUCCESS
}

var callPSPCreateAny = dat12.NewCall("dat_psp_create_any", dat12.Args{core.ArgPSPFlags: 4})

//export go_dat_psp_create_any
func go_dat_psp_create_any(h C.godat_handle, qual *C.DAT_CONN_QUAL, evdh C.godat_handle, flags C.DAT_PSP_FLAGS, out *C.DAT_PSP_HANDLE) (ret C.DAT_RETURN) {
	c := callPSPCreateAny
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	if _, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA); err != nil {
		return datReturn(c, err)
	}
	if qual == nil {
		return datReturn(c, dat12.ArgAt(2))
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(5))
	}
	cabi.ProbeOut(qual)
	cabi.ProbeOut(out)
	p, q, err := createPSP(h, 0, true, evdh, flags)
	if err != nil {
		return datReturn(c, err)
	}
	*qual = C.DAT_CONN_QUAL(q)
	putHandle(out, p)
	return C.DAT_SUCCESS
}

var callPSPQuery = dat12.NewCall("dat_psp_query", dat12.Args{})

//export go_dat_psp_query
func go_dat_psp_query(h C.godat_handle, mask C.DAT_PSP_PARAM_MASK, out *C.DAT_PSP_PARAM) (ret C.DAT_RETURN) {
	c := callPSPQuery
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	p, err := lookup[*core.PSP](h, core.TypePSP, core.SubHandlePSP)
	if err != nil {
		return datReturn(c, err)
	}
	if mask&^C.DAT_PSP_FIELD_ALL != 0 {
		return datReturn(c, dat12.ArgAt(2))
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(3))
	}
	q, err := p.Query()
	if err != nil {
		return datReturn(c, err)
	}
	dat12.PutPSPParam(unsafe.Pointer(out), p, q)
	return C.DAT_SUCCESS
}

var callPSPFree = dat12.NewCall("dat_psp_free", dat12.Args{})

//export go_dat_psp_free
func go_dat_psp_free(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callPSPFree
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	p, err := lookup[*core.PSP](h, core.TypePSP, core.SubHandlePSP)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, p.Free())
}
