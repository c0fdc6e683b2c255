package core

import "errors"

// Kind is the class of a DAT failure (the major code), independent of any
// ABI numbering; the export layer maps it to DAT_RETURN.
type Kind uint8

// The DAT return classes. Order follows the DAT specification so the names
// read like the man pages; the numbering is the export layer's business.
const (
	KindAbort Kind = iota + 1
	KindConnQualInUse
	KindInsufficientResources
	KindInternalError
	KindInvalidHandle
	KindInvalidParameter
	KindInvalidState
	KindLengthError
	KindModelNotSupported
	KindProviderNotFound
	KindPrivilegesViolation
	KindProtectionViolation
	KindQueueEmpty
	KindQueueFull
	KindTimeoutExpired
	KindProviderAlreadyRegistered
	KindProviderInUse
	KindInvalidAddress
	KindInterruptedCall
	KindConnQualUnavailable
	KindNotImplemented
)

// Sub is the DAT minor code that qualifies a Kind.
type Sub uint8

// The DAT minor codes, in specification order.
const (
	SubNone Sub = iota
	SubInterrupted
	SubResourceMemory
	SubResourceDevice
	SubResourceTEP
	SubResourceTEVD
	SubResourceProtectionDomain
	SubResourceMemoryRegion
	SubResourceErrorHandler
	SubResourceCredits
	SubResourceSRQ
	SubHandleIA
	SubHandleEP
	SubHandleLMR
	SubHandleRMR
	SubHandlePZ
	SubHandlePSP
	SubHandleRSP
	SubHandleCR
	SubHandleCNO
	SubHandleEVDCR
	SubHandleEVDRequest
	SubHandleEVDRecv
	SubHandleEVDConn
	SubHandleEVDAsync
	SubHandleSRQ
	SubHandle1
	SubHandle2
	SubHandle3
	SubHandle4
	SubHandle5
	SubHandle6
	SubHandle7
	SubHandle8
	SubHandle9
	SubHandle10
	SubArg1
	SubArg2
	SubArg3
	SubArg4
	SubArg5
	SubArg6
	SubArg7
	SubArg8
	SubArg9
	SubArg10
	SubStateEPUnconnected
	SubStateEPActConnPending
	SubStateEPPassConnPending
	SubStateEPTentConnPending
	SubStateEPConnected
	SubStateEPDisconnected
	SubStateEPReserved
	SubStateEPComplPending
	SubStateEPDiscPending
	SubStateEPProviderControl
	SubStateEPNotReady
	SubStateEPRecvWatermark
	SubStateEPPZ
	SubStateEPEVDRequest
	SubStateEPEVDRecv
	SubStateEPEVDConnect
	SubStateEPUnconfigured
	SubStateEPUnconfReserved
	SubStateEPUnconfPassive
	SubStateEPUnconfTentative
	SubStateCNOInUse
	SubStateCNODead
	SubStateEVDOpen
	SubStateEVDEnabled
	SubStateEVDDisabled
	SubStateEVDWaitable
	SubStateEVDUnwaitable
	SubStateEVDInUse
	SubStateEVDConfigNotify
	SubStateEVDConfigSolicited
	SubStateEVDConfigThreshold
	SubStateEVDWaiter
	SubStateEVDAsync
	SubStateIAInUse
	SubStateLMRInUse
	SubStateLMRFree
	SubStatePZInUse
	SubStatePZFree
	SubStateSRQOperational
	SubStateSRQError
	SubStateSRQInUse
	SubPrivilegesRead
	SubPrivilegesWrite
	SubPrivilegesRDMARead
	SubPrivilegesRDMAWrite
	SubProtectionRead
	SubProtectionWrite
	SubProtectionRDMARead
	SubProtectionRDMAWrite
	SubAddressUnsupported
	SubAddressUnreachable
	SubAddressMalformed
	SubNameNotRegistered
	SubMajorNotFound
	SubMinorNotFound
	SubThreadSafetyNotFound
	subCount
)

// SubCount is the number of minor codes, for tables indexed by Sub.
const SubCount = int(subCount)

// Error is a DAT failure: a class and its minor code. It is a small value so
// that the sentinels below cost nothing to return on hot paths.
type Error struct {
	Kind Kind
	Sub  Sub
}

func (e Error) Error() string { return kindNames[e.Kind] + subSuffix(e.Sub) }

func subSuffix(s Sub) string {
	if s == SubNone {
		return ""
	}
	return " (minor " + itoa(int(s)) + ")"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

var kindNames = [...]string{
	0:                             "success",
	KindAbort:                     "abort",
	KindConnQualInUse:             "connection qualifier in use",
	KindInsufficientResources:     "insufficient resources",
	KindInternalError:             "internal error",
	KindInvalidHandle:             "invalid handle",
	KindInvalidParameter:          "invalid parameter",
	KindInvalidState:              "invalid state",
	KindLengthError:               "length error",
	KindModelNotSupported:         "model not supported",
	KindProviderNotFound:          "provider not found",
	KindPrivilegesViolation:       "privileges violation",
	KindProtectionViolation:       "protection violation",
	KindQueueEmpty:                "queue empty",
	KindQueueFull:                 "queue full",
	KindTimeoutExpired:            "timeout expired",
	KindProviderAlreadyRegistered: "provider already registered",
	KindProviderInUse:             "provider in use",
	KindInvalidAddress:            "invalid address",
	KindInterruptedCall:           "interrupted call",
	KindConnQualUnavailable:       "connection qualifier unavailable",
	KindNotImplemented:            "not implemented",
}

// E builds an error of the given class and minor code.
func E(k Kind, s Sub) error { return Error{k, s} }

// ErrArg is DAT_INVALID_PARAMETER naming the 1-based argument position n.
func ErrArg(n int) error {
	if n < 1 || n > 10 {
		return Error{KindInvalidParameter, SubNone}
	}
	return Error{KindInvalidParameter, SubArg1 + Sub(n-1)}
}

// ErrHandle is DAT_INVALID_HANDLE with the minor code of the object family.
func ErrHandle(s Sub) error { return Error{KindInvalidHandle, s} }

// ErrState is DAT_INVALID_STATE with the given minor code.
func ErrState(s Sub) error { return Error{KindInvalidState, s} }

// Sentinels for the errors returned on hot paths or shared by many calls.
var (
	ErrQueueEmpty         error = Error{KindQueueEmpty, SubNone}
	ErrQueueFull          error = Error{KindQueueFull, SubNone}
	ErrTimeout            error = Error{KindTimeoutExpired, SubNone}
	ErrInterrupted        error = Error{KindInterruptedCall, SubInterrupted}
	ErrNoMemory           error = Error{KindInsufficientResources, SubResourceMemory}
	ErrInternal           error = Error{KindInternalError, SubNone}
	ErrNotImplemented     error = Error{KindNotImplemented, SubNone}
	ErrNameNotRegistered  error = Error{KindProviderNotFound, SubNameNotRegistered}
	ErrMajorNotFound      error = Error{KindProviderNotFound, SubMajorNotFound}
	ErrMinorNotFound      error = Error{KindProviderNotFound, SubMinorNotFound}
	ErrLength             error = Error{KindLengthError, SubNone}
	ErrConnQualInUse      error = Error{KindConnQualInUse, SubNone}
	ErrModelNotSupported  error = Error{KindModelNotSupported, SubNone}
	ErrAddressUnreachable error = Error{KindInvalidAddress, SubAddressUnreachable}
	ErrAddressMalformed   error = Error{KindInvalidAddress, SubAddressMalformed}
	ErrAddressUnsupported error = Error{KindInvalidAddress, SubAddressUnsupported}
)

// causedError is a DAT error with the failure underneath it (a transport or
// OS error, a registry miss), kept for the log line that says why a call
// failed.
type causedError struct {
	e     Error
	cause error
}

func (c *causedError) Error() string { return c.e.Error() + ": " + c.cause.Error() }

// Unwrap gives the DAT error, so AsError and errors.As find it.
func (c *causedError) Unwrap() error { return c.e }

// Because attaches cause, the failure underneath, to the DAT error e. While
// logging is off nobody will read the cause, so e is returned as it is and
// nothing is allocated.
func Because(e, cause error) error {
	if cause == nil || !LogEnabled(LevelDebug) {
		return e
	}
	return &causedError{e: AsError(e), cause: cause}
}

// Cause is the failure underneath err: the cause Because attached, or err
// itself when it is not a DAT error at all (it then becomes
// DAT_INTERNAL_ERROR); nil for a plain DAT error.
func Cause(err error) error {
	switch e := err.(type) {
	case nil, Error:
		return nil
	case *causedError:
		return e.cause
	}
	var e Error
	if errors.As(err, &e) {
		return nil
	}
	return err
}

// AsError extracts the DAT class and minor code of err. Errors that are not
// DAT errors (a bug or an unexpected OS failure) become an internal error.
func AsError(err error) Error {
	if err == nil {
		return Error{}
	}
	if e, ok := err.(Error); ok { // every hot-path error: no reflection
		return e
	}
	var e Error
	if errors.As(err, &e) {
		return e
	}
	return Error{KindInternalError, SubNone}
}
