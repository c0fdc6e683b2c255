package dat12

/*
#include <dat/udat.h>
*/
import "C"

import (
	"fmt"

	"godat/core"
	"godat/export/cabi"
)

// abi is DAT 1.2 as the shared guard sees it.
var abi = cabi.ABI{
	Internal: C.DAT_CLASS_ERROR | C.DAT_INTERNAL_ERROR,
	Names:    returnNames,
	NameMax:  C.DAT_NAME_MAX_LENGTH,
}

// Call is one DAT 1.2 entry point: its name and what it needs to report a
// failure.
type Call struct {
	cabi.Call
}

// calls are every Call made, for the tests.
var calls []*Call

// NewCall describes the entry point name. Each wrapper has one, made once
// at package initialisation.
func NewCall(name string) *Call {
	c := &Call{Call: cabi.Call{Name: name, ABI: &abi}}
	calls = append(calls, c)
	return c
}

// kindCodes maps core classes to DAT 1.2 major codes.
var kindCodes = [...]uint32{
	core.KindAbort:                     C.DAT_ABORT,
	core.KindConnQualInUse:             C.DAT_CONN_QUAL_IN_USE,
	core.KindInsufficientResources:     C.DAT_INSUFFICIENT_RESOURCES,
	core.KindInternalError:             C.DAT_INTERNAL_ERROR,
	core.KindInvalidHandle:             C.DAT_INVALID_HANDLE,
	core.KindInvalidParameter:          C.DAT_INVALID_PARAMETER,
	core.KindInvalidState:              C.DAT_INVALID_STATE,
	core.KindLengthError:               C.DAT_LENGTH_ERROR,
	core.KindModelNotSupported:         C.DAT_MODEL_NOT_SUPPORTED,
	core.KindProviderNotFound:          C.DAT_PROVIDER_NOT_FOUND,
	core.KindPrivilegesViolation:       C.DAT_PRIVILEGES_VIOLATION,
	core.KindProtectionViolation:       C.DAT_PROTECTION_VIOLATION,
	core.KindQueueEmpty:                C.DAT_QUEUE_EMPTY,
	core.KindQueueFull:                 C.DAT_QUEUE_FULL,
	core.KindTimeoutExpired:            C.DAT_TIMEOUT_EXPIRED,
	core.KindProviderAlreadyRegistered: C.DAT_PROVIDER_ALREADY_REGISTERED,
	core.KindProviderInUse:             C.DAT_PROVIDER_IN_USE,
	core.KindInvalidAddress:            C.DAT_INVALID_ADDRESS,
	core.KindInterruptedCall:           C.DAT_INTERRUPTED_CALL,
	core.KindConnQualUnavailable:       C.DAT_CONN_QUAL_UNAVAILABLE,
	core.KindNotImplemented:            C.DAT_NOT_IMPLEMENTED,
}

// Return is the one place a Go error becomes a DAT_RETURN: the error class
// bit, the major code and the minor code. core.Sub is numbered as the
// DAT 1.2 subtypes are (checked by TestSubtypeNumbering).
func (c *Call) Return(err error) uint32 {
	if err == nil {
		return C.DAT_SUCCESS
	}
	cabi.KeepCause(err)
	e := core.AsError(err)
	if int(e.Kind) >= len(kindCodes) || kindCodes[e.Kind] == 0 {
		return C.DAT_CLASS_ERROR | C.DAT_INTERNAL_ERROR
	}
	if e.Kind == core.KindNotImplemented {
		return C.DAT_NOT_IMPLEMENTED
	}
	return C.DAT_CLASS_ERROR | kindCodes[e.Kind] | uint32(e.Sub)
}

// returnNames names the major and minor codes of a DAT_RETURN as
// dat_strerror does.
func returnNames(v uint32) (major, minor string) {
	typ := v & C.DAT_TYPE_MASK
	if v&^C.DAT_CLASS_ERROR == C.DAT_NOT_IMPLEMENTED&^C.DAT_CLASS_ERROR {
		typ = C.DAT_NOT_IMPLEMENTED
	}
	major, ok := majorNames[typ]
	if !ok {
		major = fmt.Sprintf("0x%08x", v)
	}
	if sub := int(v & C.DAT_SUBTYPE_MASK); sub < len(minorNames) {
		minor = minorNames[sub]
	}
	return major, minor
}
