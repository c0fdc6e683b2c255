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

// Sub qualifies a Kind: which resource ran out, which handle family or
// state was wrong, which access was refused. The names follow the DAT
// minor codes; the numbering is core's own (an export layer maps each Sub
// to its ABI's code with a table, and nothing depends on the order here).
// An invalid argument is not a Sub: it names the argument's role (Arg).
type Sub uint8

// The minor codes.
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

// Arg is the role of an argument a call refuses (DAT_INVALID_PARAMETER):
// what the argument is, not where it stands in some ABI's prototype. Each
// export wrapper maps the roles its core calls can refuse to the argument
// positions of its ABI.
type Arg uint8

// The argument roles core refuses. ArgNone is an invalid parameter that
// names no argument.
const (
	ArgNone            Arg = iota
	ArgQLen                // a queue length: an EVD's, the async EVD's, an SRQ's size
	ArgEVDFlags            // the event streams of a new EVD
	ArgThreshold           // the event count a wait waits for
	ArgEvent               // the event of dat_evd_post_se
	ArgPrivateData         // connection private data (its size)
	ArgConnQual            // a connection qualifier
	ArgEPAttr              // endpoint attributes
	ArgPZ                  // a PZ given in an EP's parameters
	ArgEVD                 // an EVD given in an EP's parameters
	ArgSegmentCount        // the number of segments of a local IOV
	ArgLocalIOV            // local segments: a post's IOV, the segments of a sync, an RMR bind's LMR segment
	ArgCompletionFlags     // a request's completion flags
	ArgMemPriv             // memory privileges
	ArgRegion              // the memory an LMR registers
	ArgLength              // the length of an LMR's region
	ArgPSPFlags            // who creates the EP for a PSP's requests
	ArgSoftWatermark       // an EP's soft high watermark
	ArgHardWatermark       // an EP's hard high watermark
	ArgSRQAttr             // SRQ attributes
	ArgLowWatermark        // an SRQ's low watermark
	argCount
)

// ArgCount is the number of argument roles, for tables indexed by Arg.
const ArgCount = int(argCount)

var argNames = [ArgCount]string{
	ArgNone: "", ArgQLen: "queue length", ArgEVDFlags: "EVD flags", ArgThreshold: "threshold", ArgEvent: "event",
	ArgPrivateData: "private data", ArgConnQual: "connection qualifier", ArgEPAttr: "EP attributes", ArgPZ: "PZ",
	ArgEVD: "EVD", ArgSegmentCount: "segment count", ArgLocalIOV: "local IOV", ArgCompletionFlags: "completion flags",
	ArgMemPriv: "memory privileges", ArgRegion: "region", ArgLength: "length", ArgPSPFlags: "PSP flags",
	ArgSoftWatermark: "soft high watermark", ArgHardWatermark: "hard high watermark", ArgSRQAttr: "SRQ attributes",
	ArgLowWatermark: "low watermark",
}

// String names the role for messages.
func (a Arg) String() string {
	if int(a) < len(argNames) {
		return argNames[a]
	}
	return "argument " + itoa(int(a))
}

// Error is a DAT failure: a class, its minor code and, for an invalid
// parameter, the role of the argument at fault. It is a small value so that
// the sentinels below cost nothing to return on hot paths.
type Error struct {
	Kind Kind
	Sub  Sub
	Arg  Arg
}

func (e Error) Error() string {
	s := kindNames[e.Kind] + subSuffix(e.Sub)
	if e.Arg != ArgNone {
		s += ": " + e.Arg.String()
	}
	return s
}

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
func E(k Kind, s Sub) error { return Error{Kind: k, Sub: s} }

// ErrArg is DAT_INVALID_PARAMETER naming the argument by its role.
func ErrArg(a Arg) error { return Error{Kind: KindInvalidParameter, Arg: a} }

// ErrHandle is DAT_INVALID_HANDLE with the minor code of the object family.
func ErrHandle(s Sub) error { return Error{Kind: KindInvalidHandle, Sub: s} }

// ErrState is DAT_INVALID_STATE with the given minor code.
func ErrState(s Sub) error { return Error{Kind: KindInvalidState, Sub: s} }

// Sentinels for the errors returned on hot paths or shared by many calls.
var (
	ErrQueueEmpty         error = Error{Kind: KindQueueEmpty, Sub: SubNone}
	ErrQueueFull          error = Error{Kind: KindQueueFull, Sub: SubNone}
	ErrTimeout            error = Error{Kind: KindTimeoutExpired, Sub: SubNone}
	ErrInterrupted        error = Error{Kind: KindInterruptedCall, Sub: SubInterrupted}
	ErrNoMemory           error = Error{Kind: KindInsufficientResources, Sub: SubResourceMemory}
	ErrInternal           error = Error{Kind: KindInternalError, Sub: SubNone}
	ErrNotImplemented     error = Error{Kind: KindNotImplemented, Sub: SubNone}
	ErrNameNotRegistered  error = Error{Kind: KindProviderNotFound, Sub: SubNameNotRegistered}
	ErrMajorNotFound      error = Error{Kind: KindProviderNotFound, Sub: SubMajorNotFound}
	ErrMinorNotFound      error = Error{Kind: KindProviderNotFound, Sub: SubMinorNotFound}
	ErrLength             error = Error{Kind: KindLengthError, Sub: SubNone}
	ErrConnQualInUse      error = Error{Kind: KindConnQualInUse, Sub: SubNone}
	ErrModelNotSupported  error = Error{Kind: KindModelNotSupported, Sub: SubNone}
	ErrAddressUnreachable error = Error{Kind: KindInvalidAddress, Sub: SubAddressUnreachable}
	ErrAddressMalformed   error = Error{Kind: KindInvalidAddress, Sub: SubAddressMalformed}
	ErrAddressUnsupported error = Error{Kind: KindInvalidAddress, Sub: SubAddressUnsupported}
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
	return Error{Kind: KindInternalError, Sub: SubNone}
}
