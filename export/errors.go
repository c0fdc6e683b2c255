package main

/*
#include <string.h>
#include "godat.h"
*/
import "C"

import (
	"fmt"
	"runtime/debug"
	"sync"

	"golang.org/x/sys/unix"

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
//
// An error that carries more than its DAT code (a cause core attached, or a
// Go error that is no DAT error at all) is kept, while logging is on, for
// the line done writes when the call returns: datReturn does not know the
// call, done does not see the error. A plain core.Error, such as the
// DAT_QUEUE_EMPTY of a polling dat_evd_dequeue, costs nothing more.
func datReturn(err error) C.DAT_RETURN {
	if err == nil {
		return C.DAT_SUCCESS
	}
	if _, plain := err.(core.Error); !plain && core.LogEnabled(core.LevelDebug) {
		causes.Store(unix.Gettid(), err)
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

// causes holds, per OS thread, the error of the failing call that thread
// is in (see datReturn); only while logging is on. A call from C into Go
// stays on its thread from entry to return (cgo locks it there), so the
// thread names the call.
var causes sync.Map // tid (int) -> error

// forcePanic is set by the test hook GODAT_TEST_PANIC so a C test can check
// that a panic becomes DAT_INTERNAL_ERROR instead of killing the program.
var forcePanic = core.Getenv("GODAT_TEST_PANIC") == "1"

// done is deferred by every export whose object is a handle (obj; for
// dat_ia_open, the registry calls and dat_strerror see doneName). It turns
// a panic into DAT_INTERNAL_ERROR, so no Go panic crosses into C, and with
// logging on (GODAT_LOG=debug, or a non-zero DAT_DBG_TYPE / DAPL_DBG_TYPE)
// it writes exactly one line for a call that does not succeed: the call,
// its object (handle value and type) and the reason (the DAT code names,
// then the underlying cause if there is one). A successful call pays one
// comparison, a failing one with logging off one atomic load.
func done(ret *C.DAT_RETURN, call string, obj C.godat_handle) {
	if r := recover(); r != nil {
		panicked(ret, call, describeHandle(uintptr(obj)), r)
		return
	}
	if *ret != C.DAT_SUCCESS && core.LogEnabled(core.LevelDebug) {
		logFailure(*ret, call, describeHandle(uintptr(obj)))
	}
}

// doneName is done for the calls whose object is a name (the IA name of
// dat_ia_open, a provider's), or nothing (name nil).
func doneName(ret *C.DAT_RETURN, call string, name *C.char) {
	if r := recover(); r != nil {
		panicked(ret, call, describeName(name), r)
		return
	}
	if *ret != C.DAT_SUCCESS && core.LogEnabled(core.LevelDebug) {
		logFailure(*ret, call, describeName(name))
	}
}

// panicked makes a recovered panic the call's DAT_INTERNAL_ERROR, logged
// with the stack (always: it is a bug).
func panicked(ret *C.DAT_RETURN, call, obj string, r any) {
	causes.Delete(unix.Gettid())
	core.Logf(core.LevelError, "%s(%s): DAT_INTERNAL_ERROR: internal error: %v\n%s", call, obj, r, debug.Stack())
	*ret = C.DAT_CLASS_ERROR | C.DAT_INTERNAL_ERROR
}

// logFailure writes the line of a failed call.
func logFailure(ret C.DAT_RETURN, call, obj string) {
	major, minor := returnNames(uint32(ret))
	var cause error
	if err, ok := causes.LoadAndDelete(unix.Gettid()); ok {
		cause = core.Cause(err.(error))
	}
	if cause != nil {
		core.Logf(core.LevelDebug, "%s(%s): %s %s: %v", call, obj, major, minor, cause)
		return
	}
	core.Logf(core.LevelDebug, "%s(%s): %s %s", call, obj, major, minor)
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

// handleTypeNames name the object families in log lines.
var handleTypeNames = [core.TypeCount]string{
	core.TypeCR: "CR", core.TypeEP: "EP", core.TypeEVD: "EVD", core.TypeIA: "IA", core.TypeLMR: "LMR",
	core.TypePSP: "PSP", core.TypePZ: "PZ", core.TypeRMR: "RMR", core.TypeRSP: "RSP", core.TypeCNO: "CNO",
	core.TypeSRQ: "SRQ",
}

// describeHandle names a handle for a log line: its type and value, or why
// it names no object.
func describeHandle(h uintptr) string {
	if h == 0 {
		return "DAT_HANDLE_NULL"
	}
	if e := handles.entry(h); e != nil {
		return fmt.Sprintf("%s %#x", handleTypeNames[e.typ], h)
	}
	return fmt.Sprintf("%#x, not a live handle", h)
}

// describeName quotes a C name for a log line, reading at most
// DAT_NAME_MAX_LENGTH bytes.
func describeName(name *C.char) string {
	if name == nil {
		return ""
	}
	return fmt.Sprintf("%q", C.GoStringN(name, C.int(C.strnlen(name, C.DAT_NAME_MAX_LENGTH))))
}

// testPanic panics when the test hook asks for it.
func testPanic(call string) {
	if forcePanic {
		panic(fmt.Sprintf("forced panic in %s", call))
	}
}
