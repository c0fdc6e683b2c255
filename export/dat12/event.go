package dat12

/*
#include <dat/udat.h>
*/
import "C"

import (
	"time"
	"unsafe"

	"godat/core"
	"godat/export/cabi"
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

// dtoStatuses maps core completion statuses to DAT_DTO_COMPLETION_STATUS
// (an RMR bind's status is one of them too).
var dtoStatuses = [...]C.DAT_DTO_COMPLETION_STATUS{
	core.DTOSuccess:            C.DAT_DTO_SUCCESS,
	core.DTOFlushed:            C.DAT_DTO_ERR_FLUSHED,
	core.DTOLocalLength:        C.DAT_DTO_ERR_LOCAL_LENGTH,
	core.DTOLocalEP:            C.DAT_DTO_ERR_LOCAL_EP,
	core.DTOLocalProtection:    C.DAT_DTO_ERR_LOCAL_PROTECTION,
	core.DTOBadResponse:        C.DAT_DTO_ERR_BAD_RESPONSE,
	core.DTORemoteAccess:       C.DAT_DTO_ERR_REMOTE_ACCESS,
	core.DTORemoteResponder:    C.DAT_DTO_ERR_REMOTE_RESPONDER,
	core.DTOTransport:          C.DAT_DTO_ERR_TRANSPORT,
	core.DTOReceiverNotReady:   C.DAT_DTO_ERR_RECEIVER_NOT_READY,
	core.DTOPartialPacket:      C.DAT_DTO_ERR_PARTIAL_PACKET,
	core.DTORMROperationFailed: C.DAT_RMR_OPERATION_FAILED,
}

// asyncReasons maps core's async error reasons to the DAT 1.2 reason of
// the object family each concerns.
var asyncReasons = [core.AsyncReasonCount]C.DAT_COUNT{
	core.ReasonEPTransferToError:       C.DAT_EP_TRANSFER_TO_ERROR,
	core.ReasonEPOtherError:            C.DAT_EP_OTHER_ERROR,
	core.ReasonSRQSoftHighWatermark:    C.DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT,
	core.ReasonEVDOverflow:             C.DAT_EVD_OVERFLOW_ERROR,
	core.ReasonSRQLowWatermark:         C.DAT_SRQ_LOW_WATERMARK_EVENT,
	core.ReasonIACatastrophic:          C.DAT_IA_CATASTROPHIC_ERROR,
	core.ReasonProviderInternalFailure: C.DAT_IA_OTHER_ERROR,
}

// FillEvent writes ev into the consumer's DAT_EVENT at p, which the call
// has probed (cabi.ProbeBytes) before taking the event. The event is built
// in Go memory and copied whole (cabi.PutProbed): the consumer's structure
// may hold anything before the call.
func FillEvent(p unsafe.Pointer, ev *core.Event) {
	var e C.DAT_EVENT
	out := &e
	out.event_number = eventNumbers[ev.Number]
	out.evd_handle = handle(ev.EVD)
	data := unsafe.Pointer(&out.event_data)
	switch ev.Number {
	case core.EventDTOCompletion:
		d := (*C.DAT_DTO_COMPLETION_EVENT_DATA)(data)
		d.ep_handle = handle(ev.EP)
		*(*uint64)(unsafe.Pointer(&d.user_cookie)) = ev.Cookie
		d.status = dtoStatuses[ev.Status]
		d.transfered_length = C.DAT_VLEN(ev.Length)
	case core.EventRMRBindCompletion:
		d := (*C.DAT_RMR_BIND_COMPLETION_EVENT_DATA)(data)
		d.rmr_handle = handle(ev.RMR)
		*(*uint64)(unsafe.Pointer(&d.user_cookie)) = ev.Cookie
		d.status = dtoStatuses[ev.Status]
	case core.EventConnectionRequest:
		d := (*C.DAT_CR_ARRIVAL_EVENT_DATA)(data)
		*(*C.DAT_HANDLE)(unsafe.Pointer(&d.sp_handle)) = handleObj(ev.SP)
		d.local_ia_address_ptr = nil
		if ia := ev.EVD.IA(); ia != nil {
			if m, ok := cabi.HoldCMem(ia); ok {
				d.local_ia_address_ptr = (*C.DAT_SOCK_ADDR)(PutIAAddress(m, ia))
				m.Drop()
			}
		}
		d.conn_qual = C.DAT_CONN_QUAL(ev.ConnQual)
		d.cr_handle = handle(ev.CR)
	case core.EventAsyncEVDOverflow, core.EventAsyncIACatastrophic, core.EventAsyncEPBroken,
		core.EventAsyncTimedOut, core.EventAsyncProviderInternalError:
		d := (*C.DAT_ASYNCH_ERROR_EVENT_DATA)(data)
		d.dat_handle = handleObj(ev.Target)
		d.reason = asyncReasons[ev.Reason]
	case core.EventSoftware:
		d := (*C.DAT_SOFTWARE_EVENT_DATA)(data)
		*(*uint64)(unsafe.Pointer(&d.pointer)) = ev.Pointer
	default: // connection events
		d := (*C.DAT_CONNECTION_EVENT_DATA)(data)
		d.ep_handle = handle(ev.EP)
		d.private_data_size = 0
		d.private_data = nil
		// The private data is kept in the EP's C memory, held while it is
		// written; an EP freed since the event was made gets none (its
		// block is gone, and so is the EP the event names).
		if len(ev.PrivateData) > 0 && ev.EP != nil {
			if m, ok := cabi.HoldCMem(ev.EP); ok {
				at, n := cabi.PutPrivate(m.Ptr(), ev.PrivateData)
				d.private_data_size = C.DAT_COUNT(n)
				d.private_data = C.DAT_PVOID(at)
				m.Drop()
			}
		}
	}
	cabi.PutProbed(p, &e)
}

// SoftwareEvent reads the pointer of the software event at p (a
// DAT_EVENT); ok is false when it is not a software event.
func SoftwareEvent(p unsafe.Pointer) (pointer uint64, ok bool) {
	ev := (*C.DAT_EVENT)(p)
	if ev == nil || ev.event_number != C.DAT_SOFTWARE_EVENT {
		return 0, false
	}
	return *(*uint64)(unsafe.Pointer(&ev.event_data)), true
}

// Timeout converts a DAT timeout in microseconds; DAT_TIMEOUT_INFINITE
// means no bound (-1).
func Timeout(t uint32) time.Duration {
	if t == C.DAT_TIMEOUT_INFINITE {
		return -1
	}
	return time.Duration(t) * time.Microsecond
}
