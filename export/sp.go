package main

/*
#include "godat.h"
*/
import "C"

import (
	"unsafe"

	"godat/core"
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
	return ia.CreatePSP(qual, any, evd, core.PSPFlags(flags))
}

//export go_dat_psp_create
func go_dat_psp_create(h C.godat_handle, qual C.DAT_CONN_QUAL, evdh C.godat_handle, flags C.DAT_PSP_FLAGS, out *C.DAT_PSP_HANDLE) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_psp_create", h)
	if out == nil {
		if _, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA); err != nil {
			return datReturn(err)
		}
		return datReturn(core.ErrArg(5))
	}
	p, _, err := createPSP(h, uint64(qual), false, evdh, flags)
	if err != nil {
		return datReturn(err)
	}
	*out = handleOf(p)
	return C.DAT_SUCCESS
}

//export go_dat_psp_create_any
func go_dat_psp_create_any(h C.godat_handle, qual *C.DAT_CONN_QUAL, evdh C.godat_handle, flags C.DAT_PSP_FLAGS, out *C.DAT_PSP_HANDLE) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_psp_create_any", h)
	if _, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA); err != nil {
		return datReturn(err)
	}
	if qual == nil {
		return datReturn(core.ErrArg(2))
	}
	if out == nil {
		return datReturn(core.ErrArg(5))
	}
	p, q, err := createPSP(h, 0, true, evdh, flags)
	if err != nil {
		return datReturn(err)
	}
	*qual = C.DAT_CONN_QUAL(q)
	*out = handleOf(p)
	return C.DAT_SUCCESS
}

//export go_dat_psp_query
func go_dat_psp_query(h C.godat_handle, mask C.DAT_PSP_PARAM_MASK, out *C.DAT_PSP_PARAM) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_psp_query", h)
	p, err := lookup[*core.PSP](h, core.TypePSP, core.SubHandlePSP)
	if err != nil {
		return datReturn(err)
	}
	if mask&^C.DAT_PSP_FIELD_ALL != 0 {
		return datReturn(core.ErrArg(2))
	}
	if out == nil {
		return datReturn(core.ErrArg(3))
	}
	q, err := p.Query()
	if err != nil {
		return datReturn(err)
	}
	var v C.DAT_PSP_PARAM
	v.ia_handle = handleOf(p.IA())
	v.conn_qual = C.DAT_CONN_QUAL(q.Qual)
	v.evd_handle = handleOf(q.EVD)
	v.psp_flags = C.DAT_PSP_FLAGS(q.Flags)
	*out = v
	return C.DAT_SUCCESS
}

//export go_dat_psp_free
func go_dat_psp_free(h C.godat_handle) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_psp_free", h)
	p, err := lookup[*core.PSP](h, core.TypePSP, core.SubHandlePSP)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(p.Free())
}

//export go_dat_rsp_create
func go_dat_rsp_create(h C.godat_handle, qual C.DAT_CONN_QUAL, eph C.godat_handle, evdh C.godat_handle, out *C.DAT_RSP_HANDLE) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_rsp_create", h)
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(err)
	}
	ep, err := epOf(eph)
	if err != nil {
		return datReturn(err)
	}
	evd, err := lookup[*core.EVD](evdh, core.TypeEVD, core.SubHandleEVDCR)
	if err != nil {
		return datReturn(err)
	}
	if out == nil {
		return datReturn(core.ErrArg(5))
	}
	r, err := ia.CreateRSP(uint64(qual), ep, evd)
	if err != nil {
		return datReturn(err)
	}
	*out = handleOf(r)
	return C.DAT_SUCCESS
}

//export go_dat_rsp_query
func go_dat_rsp_query(h C.godat_handle, mask C.DAT_RSP_PARAM_MASK, out *C.DAT_RSP_PARAM) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_rsp_query", h)
	r, err := lookup[*core.RSP](h, core.TypeRSP, core.SubHandleRSP)
	if err != nil {
		return datReturn(err)
	}
	if mask&^C.DAT_RSP_FIELD_ALL != 0 {
		return datReturn(core.ErrArg(2))
	}
	if out == nil {
		return datReturn(core.ErrArg(3))
	}
	q, err := r.Query()
	if err != nil {
		return datReturn(err)
	}
	var v C.DAT_RSP_PARAM
	v.ia_handle = handleOf(r.IA())
	v.conn_qual = C.DAT_CONN_QUAL(q.Qual)
	v.evd_handle = handleOf(q.EVD)
	v.ep_handle = handleOf(q.EP)
	*out = v
	return C.DAT_SUCCESS
}

//export go_dat_rsp_free
func go_dat_rsp_free(h C.godat_handle) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_rsp_free", h)
	r, err := lookup[*core.RSP](h, core.TypeRSP, core.SubHandleRSP)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(r.Free())
}

func crOf(h C.godat_handle) (*core.CR, error) {
	return lookup[*core.CR](h, core.TypeCR, core.SubHandleCR)
}

//export go_dat_cr_query
func go_dat_cr_query(h C.godat_handle, mask C.DAT_CR_PARAM_MASK, out *C.DAT_CR_PARAM) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_cr_query", h)
	cr, err := crOf(h)
	if err != nil {
		return datReturn(err)
	}
	if mask&^C.DAT_CR_FIELD_ALL != 0 {
		return datReturn(core.ErrArg(2))
	}
	if out == nil {
		return datReturn(core.ErrArg(3))
	}
	q, err := cr.Query()
	if err != nil {
		return datReturn(err)
	}
	var v C.DAT_CR_PARAM
	if m := cmemOf(cr); m != nil {
		v.remote_ia_address_ptr = putSockaddr(unsafe.Add(m, cmemRemoteAddr), q.RemoteAddr)
		n := min(len(q.PrivateData), cmemPrivateMax)
		copy(unsafe.Slice((*byte)(unsafe.Add(m, cmemPrivate)), n), q.PrivateData)
		v.private_data_size = C.DAT_COUNT(n)
		v.private_data = C.DAT_PVOID(unsafe.Add(m, cmemPrivate))
	}
	v.remote_port_qual = C.DAT_PORT_QUAL(q.RemoteQual)
	v.local_ep_handle = handleOf(q.EP)
	*out = v
	return C.DAT_SUCCESS
}

//export go_dat_cr_accept
func go_dat_cr_accept(h C.godat_handle, eph C.godat_handle, psize C.DAT_COUNT, pdata C.DAT_PVOID) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_cr_accept", h)
	cr, err := crOf(h)
	if err != nil {
		return datReturn(err)
	}
	ep, err := lookupOptional[*core.EP](eph, core.TypeEP, core.SubHandleEP)
	if err != nil {
		return datReturn(err)
	}
	if psize < 0 || psize > 0 && pdata == nil {
		return datReturn(core.ErrArg(3))
	}
	return datReturn(cr.Accept(ep, goBytes(unsafe.Pointer(pdata), psize)))
}

//export go_dat_cr_reject
func go_dat_cr_reject(h C.godat_handle) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_cr_reject", h)
	cr, err := crOf(h)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(cr.Reject())
}

//export go_dat_cr_handoff
func go_dat_cr_handoff(h C.godat_handle, qual C.DAT_CONN_QUAL) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_cr_handoff", h)
	cr, err := crOf(h)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(cr.Handoff(uint64(qual)))
}
