package core

// EventNumber identifies the kind of a DAT event. The numbering is core's;
// an export layer maps it to its ABI's event numbers.
type EventNumber uint8

// The DAT event kinds.
const (
	EventDTOCompletion EventNumber = iota + 1
	EventRMRBindCompletion
	EventConnectionRequest
	EventConnEstablished
	EventConnPeerRejected
	EventConnNonPeerRejected
	EventConnAcceptCompletionError
	EventConnDisconnected
	EventConnBroken
	EventConnTimedOut
	EventConnUnreachable
	EventAsyncEVDOverflow
	EventAsyncIACatastrophic
	EventAsyncEPBroken
	EventAsyncTimedOut
	EventAsyncProviderInternalError
	EventSoftware
)

// DTOStatus is the completion status of a data transfer or bind. The
// numbering is core's; an export layer maps it to its ABI's statuses.
type DTOStatus uint8

// Completion statuses.
const (
	DTOSuccess DTOStatus = iota
	DTOFlushed
	DTOLocalLength
	DTOLocalEP
	DTOLocalProtection
	DTOBadResponse
	DTORemoteAccess
	DTORemoteResponder
	DTOTransport
	DTOReceiverNotReady
	DTOPartialPacket
	DTORMROperationFailed
)

// AsyncReason says why an asynchronous error event was posted. Each reason
// is distinct here, where DAT numbers them per object family; an export
// layer maps them to its ABI's values.
type AsyncReason uint8

// Async error reasons carried by asynchronous events.
const (
	ReasonEPTransferToError AsyncReason = iota + 1
	ReasonEPOtherError
	ReasonSRQSoftHighWatermark
	ReasonEVDOverflow
	ReasonSRQLowWatermark
	ReasonIACatastrophic
	ReasonProviderInternalFailure
	reasonCount
)

// AsyncReasonCount bounds the reasons, for tables indexed by AsyncReason.
const AsyncReasonCount = int(reasonCount)

// Event is one DAT event, ABI-neutral. Which fields are meaningful depends
// on Number, as in the DAT_EVENT union.
type Event struct {
	Number EventNumber
	Status DTOStatus
	EVD    *EVD

	// DTO and RMR bind completions.
	EP     *EP
	RMR    *RMR
	Cookie uint64
	Length uint64

	// Connection request arrival.
	SP       Obj
	CR       *CR
	ConnQual uint64

	// Connection events: the active side's private data from the peer.
	PrivateData []byte

	// Asynchronous errors: the object concerned and the reason.
	Target Obj
	Reason AsyncReason

	// Software events: the consumer's opaque pointer.
	Pointer uint64

	// notify is false for completions that must not wake a waiter
	// (unsignalled, or not solicited on a solicited-wait stream).
	notify bool

	// A receive completion's accounting, released when it is reaped: the
	// SRQ whose buffer it carries, and whether it counts in EP's held.
	srq  *SRQ
	held bool
}
