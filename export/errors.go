package main

/*
#include "godat.h"
*/
import "C"

import (
	"fmt"
	"runtime/debug"

	"godat/core"
)

// kindCodes maps core classes to DAT 1.2 major codes.
var kindCodes = [...]C.DAT_RETURN{
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

// datReturn is the one place a Go error becomes a DAT_RETURN: the error
// class bit, the major code and the minor code. core.Sub is numbered as the
// DAT 1.2 subtypes are (checked by TestSubtypeNumbering).
func datReturn(err error) C.DAT_RETURN {
	if err == nil {
		return C.DAT_SUCCESS
	}
	e := core.AsError(err)
	if int(e.Kind) >= len(kindCodes) || kindCodes[e.Kind] == 0 {
		return C.DAT_CLASS_ERROR | C.DAT_INTERNAL_ERROR
	}
	if e.Kind == core.KindNotImplemented {
		return C.DAT_NOT_IMPLEMENTED
	}
	return C.DAT_CLASS_ERROR | kindCodes[e.Kind] | C.DAT_RETURN(e.Sub)
}

// forcePanic is set by the test hook GODAT_TEST_PANIC so a C test can check
// that a panic becomes DAT_INTERNAL_ERROR instead of killing the program.
var forcePanic = core.Getenv("GODAT_TEST_PANIC") == "1"

// recoverTo turns a panic in an export into DAT_INTERNAL_ERROR; every export
// defers it so no Go panic crosses into C.
func recoverTo(ret *C.DAT_RETURN, call string) {
	if r := recover(); r != nil {
		core.Logf(core.LevelError, "%s: internal error: %v\n%s", call, r, debug.Stack())
		*ret = C.DAT_CLASS_ERROR | C.DAT_INTERNAL_ERROR
	}
}

// testPanic panics when the test hook asks for it.
func testPanic(call string) {
	if forcePanic {
		panic(fmt.Sprintf("forced panic in %s", call))
	}
}
