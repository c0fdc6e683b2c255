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

func evdOf(h C.godat_handle) (*core.EVD, error) {
	if o, ok := cabi.LookupObj(uintptr(h), core.TypeEVD); ok {
		if e, ok := o.(*core.EVD); ok {
			return e, nil
		}
	}
	return nil, core.ErrHandle(core.SubNone)
}

var callEVDCreate = dat12.NewCall("dat_evd_create", dat12.Args{core.ArgQLen: 2, core.ArgEVDFlags: 4})

//export go_dat_evd_create
func go_dat_evd_create(h C.godat_handle, qlen C.DAT_COUNT, cnoh C.godat_handle, flags C.DAT_EVD_FLAGS, out *C.DAT_EVD_HANDLE) (ret C.DAT_RETURN) {
	c := callEVDCreate
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(c, err)
	}
	cno, err := lookupOptional[*core.CNO](cnoh, core.TypeCNO, core.SubHandleCNO)
	if err != nil {
		return datReturn(c, err)
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(5))
	}
	cabi.ProbeOut(out)
	cf, ok := dat12.EVDFlags(uint32(flags))
	if !ok {
		return datReturn(c, core.ErrArg(core.ArgEVDFlags))
	}
	evd, err := ia.CreateEVD(int(qlen), cf, cno)
	if err != nil {
		return datReturn(c, err)
	}
	putHandle(out, evd)
	return C.DAT_SUCCESS
}

var callEVDQuery = dat12.NewCall("dat_evd_query", dat12.Args{})

//export go_dat_evd_query
func go_dat_evd_query(h C.godat_handle, mask C.DAT_EVD_PARAM_MASK, out *C.DAT_EVD_PARAM) (ret C.DAT_RETURN) {
	c := callEVDQuery
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	if mask&^C.DAT_EVD_FIELD_ALL != 0 {
		return datReturn(c, dat12.ArgAt(2))
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(3))
	}
	p, err := evd.Query()
	if err != nil {
		return datReturn(c, err)
	}
	dat12.PutEVDParam(unsafe.Pointer(out), evd, p)
	return C.DAT_SUCCESS
}

var callEVDResize = dat12.NewCall("dat_evd_resize", dat12.Args{core.ArgQLen: 2})

//export go_dat_evd_resize
func go_dat_evd_resize(h C.godat_handle, qlen C.DAT_COUNT) (ret C.DAT_RETURN) {
	c := callEVDResize
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, evd.Resize(int(qlen)))
}

var callEVDPostSE = dat12.NewCall("dat_evd_post_se", dat12.Args{core.ArgEvent: 2})

//export go_dat_evd_post_se
func go_dat_evd_post_se(h C.godat_handle, ev *C.DAT_EVENT) (ret C.DAT_RETURN) {
	c := callEVDPostSE
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	p, ok := dat12.SoftwareEvent(unsafe.Pointer(ev))
	if !ok {
		return datReturn(c, dat12.ArgAt(2))
	}
	return datReturn(c, evd.PostSE(p))
}

var callEVDDequeue = dat12.NewCall("dat_evd_dequeue", dat12.Args{})

//export go_dat_evd_dequeue
func go_dat_evd_dequeue(h C.godat_handle, out *C.DAT_EVENT) (ret C.DAT_RETURN) {
	c := callEVDDequeue
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(2))
	}
	cabi.ProbeBytes(unsafe.Pointer(out), C.sizeof_DAT_EVENT)
	var ev core.Event
	if err := evd.Dequeue(&ev); err != nil {
		if e, ok := err.(core.Error); ok && e == queueEmpty {
			cabi.QuietOut(uintptr(h), unsafe.Pointer(out)) // the C fast path's pointer
			return dequeueEmpty                            // what datReturn makes of it, known once
		}
		return datReturn(c, err)
	}
	dat12.FillEvent(unsafe.Pointer(out), &ev)
	return C.DAT_SUCCESS
}

// queueEmpty is the error of a polling dequeue that finds nothing, and
// dequeueEmpty its DAT_RETURN: a polling consumer gets it over and over.
var (
	queueEmpty   = core.AsError(core.ErrQueueEmpty)
	dequeueEmpty = datReturn(callEVDDequeue, core.ErrQueueEmpty)
)

var callEVDWait = dat12.NewCall("dat_evd_wait", dat12.Args{core.ArgThreshold: 3})

//export go_dat_evd_wait
func go_dat_evd_wait(h C.godat_handle, timeout C.DAT_TIMEOUT, threshold C.DAT_COUNT, out *C.DAT_EVENT, nmore *C.DAT_COUNT) (ret C.DAT_RETURN) {
	c := callEVDWait
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(4))
	}
	if nmore == nil {
		return datReturn(c, dat12.ArgAt(5))
	}
	cabi.ProbeBytes(unsafe.Pointer(out), C.sizeof_DAT_EVENT)
	cabi.ProbeOut(nmore)
	var ev core.Event
	n, err := evd.Wait(dat12.Timeout(uint32(timeout)), int(threshold), &ev)
	if err == nil {
		dat12.FillEvent(unsafe.Pointer(out), &ev)
	}
	if k := core.AsError(err).Kind; err == nil || k == core.KindTimeoutExpired || k == core.KindInterruptedCall {
		*nmore = C.DAT_COUNT(n)
	}
	return datReturn(c, err)
}

var callEVDFree = dat12.NewCall("dat_evd_free", dat12.Args{})

//export go_dat_evd_free
func go_dat_evd_free(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callEVDFree
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, evd.Free())
}

var callEVDEnable = dat12.NewCall("dat_evd_enable", dat12.Args{})

//export go_dat_evd_enable
func go_dat_evd_enable(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callEVDEnable
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, evd.Enable())
}

var callEVDDisable = dat12.NewCall("dat_evd_disable", dat12.Args{})

//export go_dat_evd_disable
func go_dat_evd_disable(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callEVDDisable
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, evd.Disable())
}

var callEVDSetUnwaitable = dat12.NewCall("dat_evd_set_unwaitable", dat12.Args{})

//export go_dat_evd_set_unwaitable
func go_dat_evd_set_unwaitable(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callEVDSetUnwaitable
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, evd.SetWaitable(false))
}

var callEVDClearUnwaitable = dat12.NewCall("dat_evd_clear_unwaitable", dat12.Args{})

//export go_dat_evd_clear_unwaitable
func go_dat_evd_clear_unwaitable(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callEVDClearUnwaitable
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, evd.SetWaitable(true))
}

var callEVDModifyCNO = dat12.NewCall("dat_evd_modify_cno", dat12.Args{})

//export go_dat_evd_modify_cno
func go_dat_evd_modify_cno(h C.godat_handle, cnoh C.godat_handle) (ret C.DAT_RETURN) {
	c := callEVDModifyCNO
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	cno, err := lookupOptional[*core.CNO](cnoh, core.TypeCNO, core.SubHandleCNO)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, evd.ModifyCNO(cno))
}
