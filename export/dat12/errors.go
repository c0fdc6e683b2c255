package dat12

/*
#include <dat/udat.h>
*/
import "C"

import (
	"fmt"
	"strconv"

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
	args Args
}

// Args gives the 1-based position in a call's DAT 1.2 prototype of each
// argument role (core.Arg) that the core methods the call makes can refuse;
// 0 for the roles it cannot.
type Args [core.ArgCount]uint8

// calls are every Call made, for the tests.
var calls []*Call

// NewCall describes the entry point name and where its arguments stand.
// Each wrapper has one, made once at package initialisation, so mapping a
// role costs nothing until a call fails.
func NewCall(name string, args Args) *Call {
	c := &Call{Call: cabi.Call{Name: name, ABI: &abi}, args: args}
	calls = append(calls, c)
	return c
}

// Calls are every Call made so far: after initialisation, one per entry
// point of the library (for its tests).
func Calls() []*Call { return calls }

// Position is where argument role a stands in the call's prototype (1
// based), 0 when the call's table has no place for it.
func (c *Call) Position(a core.Arg) int {
	if int(a) >= len(c.args) {
		return 0
	}
	return int(c.args[a])
}

// ArgAt is DAT_INVALID_PARAMETER naming argument position n (1 to 10) of
// the call: for the wrappers' own checks (NULL out-pointers, masks), which
// are per ABI by nature.
type ArgAt int

func (a ArgAt) Error() string { return "invalid parameter: argument " + strconv.Itoa(int(a)) }

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

// subCodes maps core minor codes to DAT 1.2 subtypes (checked against the
// ABI facts by TestSubtypeTable).
var subCodes = [core.SubCount]uint32{
	core.SubNone:                     C.DAT_NO_SUBTYPE,
	core.SubInterrupted:              C.DAT_SUB_INTERRUPTED,
	core.SubResourceMemory:           C.DAT_RESOURCE_MEMORY,
	core.SubResourceDevice:           C.DAT_RESOURCE_DEVICE,
	core.SubResourceTEP:              C.DAT_RESOURCE_TEP,
	core.SubResourceTEVD:             C.DAT_RESOURCE_TEVD,
	core.SubResourceProtectionDomain: C.DAT_RESOURCE_PROTECTION_DOMAIN,
	core.SubResourceMemoryRegion:     C.DAT_RESOURCE_MEMORY_REGION,
	core.SubResourceErrorHandler:     C.DAT_RESOURCE_ERROR_HANDLER,
	core.SubResourceCredits:          C.DAT_RESOURCE_CREDITS,
	core.SubResourceSRQ:              C.DAT_RESOURCE_SRQ,
	core.SubHandleIA:                 C.DAT_INVALID_HANDLE_IA,
	core.SubHandleEP:                 C.DAT_INVALID_HANDLE_EP,
	core.SubHandleLMR:                C.DAT_INVALID_HANDLE_LMR,
	core.SubHandleRMR:                C.DAT_INVALID_HANDLE_RMR,
	core.SubHandlePZ:                 C.DAT_INVALID_HANDLE_PZ,
	core.SubHandlePSP:                C.DAT_INVALID_HANDLE_PSP,
	core.SubHandleRSP:                C.DAT_INVALID_HANDLE_RSP,
	core.SubHandleCR:                 C.DAT_INVALID_HANDLE_CR,
	core.SubHandleCNO:                C.DAT_INVALID_HANDLE_CNO,
	core.SubHandleEVDCR:              C.DAT_INVALID_HANDLE_EVD_CR,
	core.SubHandleEVDRequest:         C.DAT_INVALID_HANDLE_EVD_REQUEST,
	core.SubHandleEVDRecv:            C.DAT_INVALID_HANDLE_EVD_RECV,
	core.SubHandleEVDConn:            C.DAT_INVALID_HANDLE_EVD_CONN,
	core.SubHandleEVDAsync:           C.DAT_INVALID_HANDLE_EVD_ASYNC,
	core.SubHandleSRQ:                C.DAT_INVALID_HANDLE_SRQ,
	core.SubStateEPUnconnected:       C.DAT_INVALID_STATE_EP_UNCONNECTED,
	core.SubStateEPActConnPending:    C.DAT_INVALID_STATE_EP_ACTCONNPENDING,
	core.SubStateEPPassConnPending:   C.DAT_INVALID_STATE_EP_PASSCONNPENDING,
	core.SubStateEPTentConnPending:   C.DAT_INVALID_STATE_EP_TENTCONNPENDING,
	core.SubStateEPConnected:         C.DAT_INVALID_STATE_EP_CONNECTED,
	core.SubStateEPDisconnected:      C.DAT_INVALID_STATE_EP_DISCONNECTED,
	core.SubStateEPReserved:          C.DAT_INVALID_STATE_EP_RESERVED,
	core.SubStateEPComplPending:      C.DAT_INVALID_STATE_EP_COMPLPENDING,
	core.SubStateEPDiscPending:       C.DAT_INVALID_STATE_EP_DISCPENDING,
	core.SubStateEPProviderControl:   C.DAT_INVALID_STATE_EP_PROVIDERCONTROL,
	core.SubStateEPNotReady:          C.DAT_INVALID_STATE_EP_NOTREADY,
	core.SubStateEPRecvWatermark:     C.DAT_INVALID_STATE_EP_RECV_WATERMARK,
	core.SubStateEPPZ:                C.DAT_INVALID_STATE_EP_PZ,
	core.SubStateEPEVDRequest:        C.DAT_INVALID_STATE_EP_EVD_REQUEST,
	core.SubStateEPEVDRecv:           C.DAT_INVALID_STATE_EP_EVD_RECV,
	core.SubStateEPEVDConnect:        C.DAT_INVALID_STATE_EP_EVD_CONNECT,
	core.SubStateEPUnconfigured:      C.DAT_INVALID_STATE_EP_UNCONFIGURED,
	core.SubStateEPUnconfReserved:    C.DAT_INVALID_STATE_EP_UNCONFRESERVED,
	core.SubStateEPUnconfPassive:     C.DAT_INVALID_STATE_EP_UNCONFPASSIVE,
	core.SubStateEPUnconfTentative:   C.DAT_INVALID_STATE_EP_UNCONFTENTATIVE,
	core.SubStateCNOInUse:            C.DAT_INVALID_STATE_CNO_IN_USE,
	core.SubStateCNODead:             C.DAT_INVALID_STATE_CNO_DEAD,
	core.SubStateEVDOpen:             C.DAT_INVALID_STATE_EVD_OPEN,
	core.SubStateEVDEnabled:          C.DAT_INVALID_STATE_EVD_ENABLED,
	core.SubStateEVDDisabled:         C.DAT_INVALID_STATE_EVD_DISABLED,
	core.SubStateEVDWaitable:         C.DAT_INVALID_STATE_EVD_WAITABLE,
	core.SubStateEVDUnwaitable:       C.DAT_INVALID_STATE_EVD_UNWAITABLE,
	core.SubStateEVDInUse:            C.DAT_INVALID_STATE_EVD_IN_USE,
	core.SubStateEVDConfigNotify:     C.DAT_INVALID_STATE_EVD_CONFIG_NOTIFY,
	core.SubStateEVDConfigSolicited:  C.DAT_INVALID_STATE_EVD_CONFIG_SOLICITED,
	core.SubStateEVDConfigThreshold:  C.DAT_INVALID_STATE_EVD_CONFIG_THRESHOLD,
	core.SubStateEVDWaiter:           C.DAT_INVALID_STATE_EVD_WAITER,
	core.SubStateEVDAsync:            C.DAT_INVALID_STATE_EVD_ASYNC,
	core.SubStateIAInUse:             C.DAT_INVALID_STATE_IA_IN_USE,
	core.SubStateLMRInUse:            C.DAT_INVALID_STATE_LMR_IN_USE,
	core.SubStateLMRFree:             C.DAT_INVALID_STATE_LMR_FREE,
	core.SubStatePZInUse:             C.DAT_INVALID_STATE_PZ_IN_USE,
	core.SubStatePZFree:              C.DAT_INVALID_STATE_PZ_FREE,
	core.SubStateSRQOperational:      C.DAT_INVALID_STATE_SRQ_OPERATIONAL,
	core.SubStateSRQError:            C.DAT_INVALID_STATE_SRQ_ERROR,
	core.SubStateSRQInUse:            C.DAT_INVALID_STATE_SRQ_IN_USE,
	core.SubPrivilegesRead:           C.DAT_PRIVILEGES_READ,
	core.SubPrivilegesWrite:          C.DAT_PRIVILEGES_WRITE,
	core.SubPrivilegesRDMARead:       C.DAT_PRIVILEGES_RDMA_READ,
	core.SubPrivilegesRDMAWrite:      C.DAT_PRIVILEGES_RDMA_WRITE,
	core.SubProtectionRead:           C.DAT_PROTECTION_READ,
	core.SubProtectionWrite:          C.DAT_PROTECTION_WRITE,
	core.SubProtectionRDMARead:       C.DAT_PROTECTION_RDMA_READ,
	core.SubProtectionRDMAWrite:      C.DAT_PROTECTION_RDMA_WRITE,
	core.SubAddressUnsupported:       C.DAT_INVALID_ADDRESS_UNSUPPORTED,
	core.SubAddressUnreachable:       C.DAT_INVALID_ADDRESS_UNREACHABLE,
	core.SubAddressMalformed:         C.DAT_INVALID_ADDRESS_MALFORMED,
	core.SubNameNotRegistered:        C.DAT_NAME_NOT_REGISTERED,
	core.SubMajorNotFound:            C.DAT_MAJOR_NOT_FOUND,
	core.SubMinorNotFound:            C.DAT_MINOR_NOT_FOUND,
	core.SubThreadSafetyNotFound:     C.DAT_THREAD_SAFETY_NOT_FOUND,
}

// Return is the one place a Go error becomes a DAT_RETURN: the error class
// bit, the major code and the minor code, which for an invalid parameter
// is the argument's position in this call.
func (c *Call) Return(err error) uint32 {
	if err == nil {
		return C.DAT_SUCCESS
	}
	if a, ok := err.(ArgAt); ok {
		return invalidArg(int(a))
	}
	cabi.KeepCause(err)
	e := core.AsError(err)
	switch {
	case int(e.Kind) >= len(kindCodes) || kindCodes[e.Kind] == 0:
		return C.DAT_CLASS_ERROR | C.DAT_INTERNAL_ERROR
	case e.Kind == core.KindNotImplemented:
		return C.DAT_NOT_IMPLEMENTED
	case e.Arg != core.ArgNone:
		n := c.Position(e.Arg)
		if n == 0 {
			// A role this call's table misses: a bug here, not the
			// consumer's; the parameter is still invalid.
			core.Logf(core.LevelWarn, "%s: no position for the invalid argument (%v)", c.Name, e.Arg)
		}
		return invalidArg(n)
	}
	sub := uint32(C.DAT_NO_SUBTYPE)
	if int(e.Sub) < len(subCodes) {
		sub = subCodes[e.Sub]
	}
	return C.DAT_CLASS_ERROR | kindCodes[e.Kind] | sub
}

// invalidArg is DAT_INVALID_PARAMETER naming argument n, or no argument
// for n outside 1 to 10.
func invalidArg(n int) uint32 {
	if n < 1 || n > 10 {
		return C.DAT_CLASS_ERROR | C.DAT_INVALID_PARAMETER | C.DAT_NO_SUBTYPE
	}
	return C.DAT_CLASS_ERROR | C.DAT_INVALID_PARAMETER | (C.DAT_INVALID_ARG1 + uint32(n-1))
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
