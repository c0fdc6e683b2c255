package main

/*
#include "godat.h"
*/
import "C"

import (
	"time"
	"unsafe"

	"godat/core"
)

var eventNumbers = [...]C.DAT_EVENT_NUMBER{
	core.EventDTOCompletion:              C.DAT_DTO_COMPLETION_EVENT,
	core.EventRMRBindCompletion:          C.DAT_RMR_BIND_COMPLETION_EVENT,
	core.EventConnectionRequest:          C.DAT_CONNECTION_REQUEST_EVENT,
	core.EventConnEstablished:            C.DAT_CONNECTION_EVENT_ESTABLISHED,
	core.EventConnPeerRejected:           C.DAT_CONNECTION_EVENT_PEER_REJECTED,
	core.EventConnNonPeerRejected:        C.DAT_CONNECTION_EVENT_NON_PEER_REJECTED,
	core.EventConnAcceptCompletionError:  C.DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR,
	core.EventConnDisconnected:           C.DAT_CONNECTION_EVENT_DISCONNECTED,
	core.EventConnBroken:                 C.DAT_CONNECTION_EVENT_BROKEN,
	core.EventConnTimedOut:               C.DAT_CONNECTION_EVENT_TIMED_OUT,
	core.EventConnUnreachable:            C.DAT_CONNECTION_EVENT_UNREACHABLE,
	core.EventAsyncEVDOverflow:           C.DAT_ASYNC_ERROR_EVD_OVERFLOW,
	core.EventAsyncIACatastrophic:        C.DAT_ASYNC_ERROR_IA_CATASTROPHIC,
	core.EventAsyncEPBroken:              C.DAT_ASYNC_ERROR_EP_BROKEN,
	core.EventAsyncTimedOut:              C.DAT_ASYNC_ERROR_TIMED_OUT,
	core.EventAsyncProviderInternalError: C.DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR,
	core.EventSoftware:                   C.DAT_SOFTWARE_EVENT,
}

// fillEvent writes ev into the consumer's DAT_EVENT.
func fillEvent(out *C.DAT_EVENT, ev *core.Event) {
	out.event_number = eventNumbers[ev.Number]
	out.evd_handle = handleOf(ev.EVD)
	data := unsafe.Pointer(&out.event_data)
	switch ev.Number {
	case core.EventDTOCompletion:
		d := (*C.DAT_DTO_COMPLETION_EVENT_DATA)(data)
		d.ep_handle = handleOf(ev.EP)
		*(*uint64)(unsafe.Pointer(&d.user_cookie)) = ev.Cookie
		d.status = C.DAT_DTO_COMPLETION_STATUS(ev.Status)
		d.transfered_length = C.DAT_VLEN(ev.Length)
	case core.EventRMRBindCompletion:
		d := (*C.DAT_RMR_BIND_COMPLETION_EVENT_DATA)(data)
		d.rmr_handle = handleOf(ev.RMR)
		*(*uint64)(unsafe.Pointer(&d.user_cookie)) = ev.Cookie
		d.status = C.DAT_RMR_BIND_COMPLETION_STATUS(ev.Status)
	case core.EventConnectionRequest:
		d := (*C.DAT_CR_ARRIVAL_EVENT_DATA)(data)
		*(*C.DAT_HANDLE)(unsafe.Pointer(&d.sp_handle)) = handleOfObj(ev.SP)
		d.local_ia_address_ptr = nil
		if ia := ev.EVD.IA(); ia != nil {
			if m := cmemOf(ia); m != nil {
				d.local_ia_address_ptr = (*C.DAT_SOCK_ADDR)(unsafe.Add(m, cmemLocalAddr))
			}
		}
		d.conn_qual = C.DAT_CONN_QUAL(ev.ConnQual)
		d.cr_handle = handleOf(ev.CR)
	case core.EventAsyncEVDOverflow, core.EventAsyncIACatastrophic, core.EventAsyncEPBroken,
		core.EventAsyncTimedOut, core.EventAsyncProviderInternalError:
		d := (*C.DAT_ASYNCH_ERROR_EVENT_DATA)(data)
		d.dat_handle = handleOfObj(ev.Target)
		d.reason = C.DAT_COUNT(ev.Reason)
	case core.EventSoftware:
		d := (*C.DAT_SOFTWARE_EVENT_DATA)(data)
		*(*uint64)(unsafe.Pointer(&d.pointer)) = ev.Pointer
	default: // connection events
		d := (*C.DAT_CONNECTION_EVENT_DATA)(data)
		d.ep_handle = handleOf(ev.EP)
		d.private_data_size = 0
		d.private_data = nil
		if n := len(ev.PrivateData); n > 0 && ev.EP != nil {
			if m := cmemOf(ev.EP); m != nil {
				n = min(n, cmemPrivateMax)
				copy(unsafe.Slice((*byte)(unsafe.Add(m, cmemPrivate)), n), ev.PrivateData)
				d.private_data_size = C.DAT_COUNT(n)
				d.private_data = C.DAT_PVOID(unsafe.Add(m, cmemPrivate))
			}
		}
	}
}

func evdOf(h C.godat_handle) (*core.EVD, error) {
	return lookup[*core.EVD](h, core.TypeEVD, core.SubNone)
}

// timeoutOf converts a DAT timeout in microseconds; -1 means no bound.
func timeoutOf(t C.DAT_TIMEOUT) time.Duration {
	if t == C.DAT_TIMEOUT_INFINITE {
		return -1
	}
	return time.Duration(t) * time.Microsecond
}

//export go_dat_evd_create
func go_dat_evd_create(h C.godat_handle, qlen C.DAT_COUNT, cnoh C.godat_handle, flags C.DAT_EVD_FLAGS, out *C.DAT_EVD_HANDLE) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_evd_create", h)
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(err)
	}
	cno, err := lookupOptional[*core.CNO](cnoh, core.TypeCNO, core.SubHandleCNO)
	if err != nil {
		return datReturn(err)
	}
	if out == nil {
		return datReturn(core.ErrArg(5))
	}
	cf, ok := evdFlagsFromC(flags)
	if !ok {
		return datReturn(core.ErrArg(4))
	}
	evd, err := ia.CreateEVD(int(qlen), cf, cno)
	if err != nil {
		return datReturn(err)
	}
	*out = handleOf(evd)
	return C.DAT_SUCCESS
}

//export go_dat_evd_query
func go_dat_evd_query(h C.godat_handle, mask C.DAT_EVD_PARAM_MASK, out *C.DAT_EVD_PARAM) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_evd_query", h)
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(err)
	}
	if mask&^C.DAT_EVD_FIELD_ALL != 0 {
		return datReturn(core.ErrArg(2))
	}
	if out == nil {
		return datReturn(core.ErrArg(3))
	}
	p, err := evd.Query()
	if err != nil {
		return datReturn(err)
	}
	var v C.DAT_EVD_PARAM
	v.ia_handle = handleOf(evd.IA())
	v.evd_qlen = C.DAT_COUNT(p.QLen)
	v.evd_state = C.DAT_EVD_STATE_DISABLED
	if p.Enabled {
		v.evd_state = C.DAT_EVD_STATE_ENABLED
	}
	if p.Waitable {
		v.evd_state |= C.DAT_EVD_STATE_WAITABLE
	} else {
		v.evd_state |= C.DAT_EVD_STATE_UNWAITABLE
	}
	v.cno_handle = handleOf(p.CNO)
	v.evd_flags = evdFlagsToC(p.Flags)
	*out = v
	return C.DAT_SUCCESS
}

//export go_dat_evd_resize
func go_dat_evd_resize(h C.godat_handle, qlen C.DAT_COUNT) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_evd_resize", h)
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(evd.Resize(int(qlen)))
}

//export go_dat_evd_post_se
func go_dat_evd_post_se(h C.godat_handle, ev *C.DAT_EVENT) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_evd_post_se", h)
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(err)
	}
	if ev == nil || ev.event_number != C.DAT_SOFTWARE_EVENT {
		return datReturn(core.ErrArg(2))
	}
	p := *(*uint64)(unsafe.Pointer(&ev.event_data))
	return datReturn(evd.PostSE(p))
}

//export go_dat_evd_dequeue
func go_dat_evd_dequeue(h C.godat_handle, out *C.DAT_EVENT) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_evd_dequeue", h)
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(err)
	}
	if out == nil {
		return datReturn(core.ErrArg(2))
	}
	var ev core.Event
	if err := evd.Dequeue(&ev); err != nil {
		return datReturn(err)
	}
	fillEvent(out, &ev)
	return C.DAT_SUCCESS
}

//export go_dat_evd_wait
func go_dat_evd_wait(h C.godat_handle, timeout C.DAT_TIMEOUT, threshold C.DAT_COUNT, out *C.DAT_EVENT, nmore *C.DAT_COUNT) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_evd_wait", h)
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(err)
	}
	if out == nil {
		return datReturn(core.ErrArg(4))
	}
	if nmore == nil {
		return datReturn(core.ErrArg(5))
	}
	var ev core.Event
	n, err := evd.Wait(timeoutOf(timeout), int(threshold), &ev)
	if err == nil {
		fillEvent(out, &ev)
	}
	if k := core.AsError(err).Kind; err == nil || k == core.KindTimeoutExpired || k == core.KindInterruptedCall {
		*nmore = C.DAT_COUNT(n)
	}
	return datReturn(err)
}

//export go_dat_evd_free
func go_dat_evd_free(h C.godat_handle) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_evd_free", h)
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(evd.Free())
}

//export go_dat_evd_enable
func go_dat_evd_enable(h C.godat_handle) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_evd_enable", h)
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(evd.Enable())
}

//export go_dat_evd_disable
func go_dat_evd_disable(h C.godat_handle) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_evd_disable", h)
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(evd.Disable())
}

//export go_dat_evd_set_unwaitable
func go_dat_evd_set_unwaitable(h C.godat_handle) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_evd_set_unwaitable", h)
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(evd.SetWaitable(false))
}

//export go_dat_evd_clear_unwaitable
func go_dat_evd_clear_unwaitable(h C.godat_handle) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_evd_clear_unwaitable", h)
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(evd.SetWaitable(true))
}

//export go_dat_evd_modify_cno
func go_dat_evd_modify_cno(h C.godat_handle, cnoh C.godat_handle) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_evd_modify_cno", h)
	evd, err := evdOf(h)
	if err != nil {
		return datReturn(err)
	}
	cno, err := lookupOptional[*core.CNO](cnoh, core.TypeCNO, core.SubHandleCNO)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(evd.ModifyCNO(cno))
}
