// Package rdma is the transport contract the DAT core is written against: a
// verbs-style device with protection domains, memory regions, queue pairs,
// completion sinks and connection management. Backends (rdma/soft, and
// rdma/ibverbs for hardware) implement it; they never import core.
//
// Completion delivery is push-based: core hands each queue pair a
// CompletionSink, and the backend pushes completions into it from inside
// Progress (or Post, for operations that complete at once). Nothing here
// runs a busy thread: core drives progress from the consumer's calls.
package rdma

import (
	"net/netip"
	"time"
)

// Access is a set of memory access rights.
type Access uint32

// Memory access rights, as in verbs.
const (
	AccessLocalRead Access = 1 << iota
	AccessLocalWrite
	AccessRemoteRead
	AccessRemoteWrite
)

// Op is the kind of a work request or completion.
type Op uint8

// Work request kinds.
const (
	OpSend Op = iota + 1
	OpRecv
	OpWrite
	OpRead
)

// Status is the outcome of a work request.
type Status uint8

// Completion statuses; they mirror the DAT DTO completion statuses.
const (
	StatusSuccess Status = iota
	StatusFlushed
	StatusLocalLength
	StatusLocalEP
	StatusLocalProtection
	StatusBadResponse
	StatusRemoteAccess
	StatusRemoteResponder
	StatusTransport
	StatusReceiverNotReady
	StatusPartialPacket
)

// SGE is one scatter/gather element in the caller's address space.
type SGE struct {
	Addr   uint64
	Length uint64
	LKey   uint32
}

// SendFlags modify a send-side work request.
type SendFlags uint8

// Send-side flags.
const (
	// SendSignaled asks for a completion on success (errors always complete).
	SendSignaled SendFlags = 1 << iota
	// SendSolicited marks a send whose receive completion wakes solicited waiters.
	SendSolicited
	// SendFence delays the request until prior RDMA reads have completed.
	SendFence
)

// SendWR is a send, RDMA write or RDMA read request. SGL must not be retained
// by the backend after PostSend returns unless it copies it.
type SendWR struct {
	Op         Op
	Cookie     uint64
	SGL        []SGE
	RemoteAddr uint64
	RKey       uint32
	Flags      SendFlags
}

// RecvWR is a receive request.
type RecvWR struct {
	Cookie uint64
	SGL    []SGE
}

// Completion is one finished work request.
type Completion struct {
	Op        Op
	Status    Status
	Cookie    uint64
	Length    uint64 // bytes transferred (receives: bytes placed)
	Solicited bool   // receive of a solicited send
	QP        QP     // the queue pair it belongs to
}

// CompletionSink receives completions; core implements it (an EVD).
type CompletionSink interface {
	PushCompletion(c *Completion)
}

// ConnEventKind is a connection-management event on a queue pair.
type ConnEventKind uint8

// Connection events delivered to a QP's ConnHandler.
const (
	ConnEstablished     ConnEventKind = iota + 1
	ConnRejected                      // the peer rejected the request
	ConnNonPeerRejected               // refused by the transport (no listener)
	ConnUnreachable                   // the address could not be reached
	ConnTimedOut                      // no answer within the connect timeout
	ConnDisconnected                  // orderly disconnect (either side)
	ConnBroken                        // the peer died or the link failed
	ConnAcceptError                   // accept could not complete
)

// ConnEvent is delivered to the ConnHandler of a QP.
type ConnEvent struct {
	Kind        ConnEventKind
	PrivateData []byte
}

// ConnHandler receives a QP's connection events; core implements it.
// Handlers may be called from backend goroutines and must not block.
type ConnHandler interface {
	ConnEvent(qp QP, ev ConnEvent)
}

// ConnRequest is an incoming connection request on a listener.
type ConnRequest interface {
	RemoteAddr() netip.AddrPort
	Qual() uint64
	PrivateData() []byte
	// Accept completes the connection on qp, which must be unconnected.
	Accept(qp QP, privateData []byte) error
	// Reject refuses the request; the active side sees ConnRejected.
	Reject() error
}

// ListenHandler receives connection requests; core implements it.
type ListenHandler interface {
	ConnRequest(req ConnRequest)
}

// Listener is a bound connection qualifier.
type Listener interface {
	Qual() uint64
	Close() error
}

// MR is a registered memory region.
type MR interface {
	LKey() uint32
	RKey() uint32
	Deregister() error
}

// SRQ is a shared receive queue owned by the backend.
type SRQ interface {
	PostRecv(wr *RecvWR) error
	// Counts reports receives posted and not yet consumed by an arrival.
	Posted() int
	Destroy() error
}

// QPConfig describes a reliable connected queue pair.
type QPConfig struct {
	PD          uint32
	SendCQ      CompletionSink
	RecvCQ      CompletionSink
	Conn        ConnHandler
	SRQ         SRQ // nil: the QP has its own receive queue
	MaxSend     int
	MaxRecv     int
	MaxSendSGE  int
	MaxRecvSGE  int
	MaxReadsOut int
	MaxReadsIn  int
}

// QP is a reliable connected queue pair.
type QP interface {
	PostSend(wr *SendWR) error
	PostRecv(wr *RecvWR) error
	// Progress processes arrivals and pushes the resulting completions; it
	// returns the number of completions pushed. Cheap when idle.
	Progress() int
	Connect(addr netip.AddrPort, qual uint64, privateData []byte, timeout time.Duration) error
	Disconnect(graceful bool) error
	// Reset returns a disconnected QP to the unconnected state, flushing
	// posted receives.
	Reset() error
	LocalAddr() netip.AddrPort
	RemoteAddr() netip.AddrPort
	Destroy() error
}

// DeviceAttr are the honest limits of a device.
type DeviceAttr struct {
	Name           string
	Vendor         string
	MaxQP          int
	MaxQPWR        int
	MaxSGE         int
	MaxCQE         int
	MaxMR          int
	MaxMRSize      uint64
	MaxPD          int
	MaxMsgSize     uint64
	MaxRDMASize    uint64
	MaxReadsPerQP  int
	MaxSRQ         int
	MaxSRQWR       int
	MaxPrivateData int
	MaxQualAny     uint64
}

// Doorbell is the device's wake-up word: peers and local producers ring it
// when they make work available, and blocking waits sleep on it.
type Doorbell interface {
	// Seq is the current ring count; a wait passes the value it last saw.
	Seq() uint32
	// Wait sleeps until the count differs from seq or d elapses (d < 0: no
	// bound). It may return early; callers re-check their condition.
	Wait(seq uint32, d time.Duration)
	// Ring wakes every waiter.
	Ring()
}

// Device is an opened transport instance (one per IA).
type Device interface {
	Attr() DeviceAttr
	Addr() netip.Addr
	Doorbell() Doorbell
	RegisterMR(pd uint32, addr uint64, length uint64, access Access) (MR, error)
	CreateQP(cfg QPConfig) (QP, error)
	CreateSRQ(pd uint32, maxWR, maxSGE int, sink CompletionSink) (SRQ, error)
	// Listen binds qual (or any free qualifier when any is true).
	Listen(qual uint64, any bool, h ListenHandler) (Listener, error)
	Close() error
}
