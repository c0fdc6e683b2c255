package main

/*
#include "godat.h"
*/
import "C"

import (
	"unsafe"

	"godat/core"
	"godat/export/dat12"
)

// Connection requests: dat_cr_*.

func crOf(h C.godat_handle) (*core.CR, error) {
	return lookup[*core.CR](h, core.TypeCR, core.SubHandleCR)
}

var callCRQuery = dat12.NewCall("dat_cr_query", dat12.Args{})

//export go_dat_cr_query
func go_dat_cr_query(h C.godat_handle, mask C.DAT_CR_PARAM_MASK, out *C.DAT_CR_PARAM) (ret C.DAT_RETURN) {
	c := callCRQuery
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	cr, err := crOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	if mask&^C.DAT_CR_FIELD_ALL != 0 {
		return datReturn(c, dat12.ArgAt(2))
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(3))
	}
	q, err := cr.Query()
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, dat12.PutCRParam(unsafe.Pointer(out), cr, q))
}

var callCRAccept = dat12.NewCall("dat_cr_accept", dat12.Args{core.ArgPrivateData: 3})

//export go_dat_cr_accept
func go_dat_cr_accept(h C.godat_handle, eph C.godat_handle, psize C.DAT_COUNT, pdata C.DAT_PVOID) (ret C.DAT_RETURN) {
	c := callCRAccept
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	cr, err := crOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	ep, err := lookupOptional[*core.EP](eph, core.TypeEP, core.SubHandleEP)
	if err != nil {
		return datReturn(c, err)
	}
	if psize < 0 || psize > 0 && pdata == nil {
		return datReturn(c, dat12.ArgAt(3))
	}
	pd, err := privateData(cr.IA(), pdata, psize)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, cr.Accept(ep, pd))
}

var callCRReject = dat12.NewCall("dat_cr_reject", dat12.Args{})

//export go_dat_cr_reject
func go_dat_cr_reject(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callCRReject
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	cr, err := crOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, cr.Reject())
}

var callCRHandoff = dat12.NewCall("dat_cr_handoff", dat12.Args{core.ArgConnQual: 2})

//export go_dat_cr_handoff
func go_dat_cr_handoff(h C.godat_handle, qual C.DAT_CONN_QUAL) (ret C.DAT_RETURN) {
	c := callCRHandoff
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	cr, err := crOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, cr.Handoff(uint64(qual)))
}
