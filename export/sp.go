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
	defer c.Done((*uint32)(&ret), uintptr(h))
	if out == nil {
		if _, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA); err != nil {
			return datReturn(c, err)
		}
		return datReturn(c, dat12.ArgAt(5))
	}
	p, _, err := createPSP(h, uint64(qual), false, evdh, flags)
	if err != nil {
		return datReturn(c, err)
	}
	*out = handleOf(p)
	return C.DAT_SUCCESS
}

var callPSPCreateAny = dat12.NewCall("dat_psp_create_any", dat12.Args{core.ArgPSPFlags: 4})

//export go_dat_psp_create_any
func go_dat_psp_create_any(h C.godat_handle, qual *C.DAT_CONN_QUAL, evdh C.godat_handle, flags C.DAT_PSP_FLAGS, out *C.DAT_PSP_HANDLE) (ret C.DAT_RETURN) {
	c := callPSPCreateAny
	defer c.Done((*uint32)(&ret), uintptr(h))
	if _, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA); err != nil {
		return datReturn(c, err)
	}
	if qual == nil {
		return datReturn(c, dat12.ArgAt(2))
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(5))
	}
	p, q, err := createPSP(h, 0, true, evdh, flags)
	if err != nil {
		return datReturn(c, err)
	}
	*qual = C.DAT_CONN_QUAL(q)
	*out = handleOf(p)
	return C.DAT_SUCCESS
}

var callPSPQuery = dat12.NewCall("dat_psp_query", dat12.Args{})

//export go_dat_psp_query
func go_dat_psp_query(h C.godat_handle, mask C.DAT_PSP_PARAM_MASK, out *C.DAT_PSP_PARAM) (ret C.DAT_RETURN) {
	c := callPSPQuery
	defer c.Done((*uint32)(&ret), uintptr(h))
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
	defer c.Done((*uint32)(&ret), uintptr(h))
	p, err := lookup[*core.PSP](h, core.TypePSP, core.SubHandlePSP)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, p.Free())
}

var callRSPCreate = dat12.NewCall("dat_rsp_create", dat12.Args{})

//export go_dat_rsp_create
func go_dat_rsp_create(h C.godat_handle, qual C.DAT_CONN_QUAL, eph C.godat_handle, evdh C.godat_handle, out *C.DAT_RSP_HANDLE) (ret C.DAT_RETURN) {
	c := callRSPCreate
	defer c.Done((*uint32)(&ret), uintptr(h))
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(c, err)
	}
	ep, err := epOf(eph)
	if err != nil {
		return datReturn(c, err)
	}
	evd, err := lookup[*core.EVD](evdh, core.TypeEVD, core.SubHandleEVDCR)
	if err != nil {
		return datReturn(c, err)
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(5))
	}
	r, err := ia.CreateRSP(uint64(qual), ep, evd)
	if err != nil {
		return datReturn(c, err)
	}
	*out = handleOf(r)
	return C.DAT_SUCCESS
}

var callRSPQuery = dat12.NewCall("dat_rsp_query", dat12.Args{})

//export go_dat_rsp_query
func go_dat_rsp_query(h C.godat_handle, mask C.DAT_RSP_PARAM_MASK, out *C.DAT_RSP_PARAM) (ret C.DAT_RETURN) {
	c := callRSPQuery
	defer c.Done((*uint32)(&ret), uintptr(h))
	r, err := lookup[*core.RSP](h, core.TypeRSP, core.SubHandleRSP)
	if err != nil {
		return datReturn(c, err)
	}
	if mask&^C.DAT_RSP_FIELD_ALL != 0 {
		return datReturn(c, dat12.ArgAt(2))
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(3))
	}
	q, err := r.Query()
	if err != nil {
		return datReturn(c, err)
	}
	dat12.PutRSPParam(unsafe.Pointer(out), r, q)
	return C.DAT_SUCCESS
}

var callRSPFree = dat12.NewCall("dat_rsp_free", dat12.Args{})

//export go_dat_rsp_free
func go_dat_rsp_free(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callRSPFree
	defer c.Done((*uint32)(&ret), uintptr(h))
	r, err := lookup[*core.RSP](h, core.TypeRSP, core.SubHandleRSP)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, r.Free())
}

func crOf(h C.godat_handle) (*core.CR, error) {
	return lookup[*core.CR](h, core.TypeCR, core.SubHandleCR)
}

var callCRQuery = dat12.NewCall("dat_cr_query", dat12.Args{})

//export go_dat_cr_query
func go_dat_cr_query(h C.godat_handle, mask C.DAT_CR_PARAM_MASK, out *C.DAT_CR_PARAM) (ret C.DAT_RETURN) {
	c := callCRQuery
	defer c.Done((*uint32)(&ret), uintptr(h))
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
	dat12.PutCRParam(unsafe.Pointer(out), cr, q)
	return C.DAT_SUCCESS
}

var callCRAccept = dat12.NewCall("dat_cr_accept", dat12.Args{core.ArgPrivateData: 3})

//export go_dat_cr_accept
func go_dat_cr_accept(h C.godat_handle, eph C.godat_handle, psize C.DAT_COUNT, pdata C.DAT_PVOID) (ret C.DAT_RETURN) {
	c := callCRAccept
	defer c.Done((*uint32)(&ret), uintptr(h))
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
	return datReturn(c, cr.Accept(ep, cabi.GoBytes(unsafe.Pointer(pdata), int(psize))))
}

var callCRReject = dat12.NewCall("dat_cr_reject", dat12.Args{})

//export go_dat_cr_reject
func go_dat_cr_reject(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callCRReject
	defer c.Done((*uint32)(&ret), uintptr(h))
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
	defer c.Done((*uint32)(&ret), uintptr(h))
	cr, err := crOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, cr.Handoff(uint64(qual)))
}
