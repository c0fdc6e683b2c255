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
//
// For each queue (a QP's send queue, its own receive queue) the backend
// pushes completions one at a time and in post order: exactly one for every
// request posted with SendSignaled or that fails, and one for every receive.
// Core relies on this to match a completion to the request it belongs to.
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

// Refuser is implemented by connection requests that can be turned away
// without a verdict of the peer, as when no one listens: the active side
// sees ConnNonPeerRejected instead of ConnRejected.
type Refuser interface {
	Refuse() error
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

// SRQConfig describes a shared receive queue.
type SRQConfig struct {
	PD     uint32 // receive buffers must be registered in this protection domain
	MaxWR  int    // receives the SRQ holds at most (posted and not yet taken)
	MaxSGE int    // scatter entries per receive
	// Limit receives the low-watermark notification armed by ArmLimit.
	Limit LimitHandler
}

// LimitHandler receives an SRQ's low-watermark notification; core implements
// it. It is called from ArmLimit, or from inside a QP's progress when that QP
// takes a receive (the QP's lock may be held): it must not block or call back
// into the QP.
type LimitHandler interface {
	SRQLimit(s SRQ)
}

// SRQ is a shared receive queue. The SRQ owns the ring of posted receives;
// QPs created with QPConfig.SRQ have no receive queue of their own and pull
// from it. The contract between an SRQ and any QP implementation using it:
//
//   - A QP calls Take when a message has arrived and it is ready to place
//     it (never ahead of need): the receive leaves the SRQ at that moment,
//     and the QP then owes exactly one receive completion for it, pushed to
//     its RecvCQ in the connection's message order, whatever the outcome
//     (success, length or protection error, flush).
//   - A QP checks the receive's scatter list against the SRQ's PD, not its
//     own: the SRQ and its QPs may be in different protection domains.
//   - When Take finds the SRQ empty the QP leaves the message where it is and
//     behaves exactly as with an empty receive queue of its own; the SRQ
//     remembers that a QP starved and its next PostRecv rings the device
//     doorbell, so a sleeping waiter progresses that QP again.
//   - Take is safe from any goroutine and may be called with the QP's lock
//     held; it may call the LimitHandler before it returns.
type SRQ interface {
	// PostRecv appends a receive after checking its scatter list against
	// the registration table: ErrInvalid for a segment outside its region,
	// ErrProtection for a region of another PD, ErrPrivileges for an unknown
	// key or a region without local write access, ErrQueueFull when MaxWR
	// receives are posted.
	PostRecv(wr *RecvWR) error
	// Take removes the oldest posted receive: its scatter list is copied
	// into sgl (which has room for MaxSGE entries) and its cookie and entry
	// count are returned; ok is false when the SRQ is empty or destroyed.
	Take(sgl []SGE) (cookie uint64, n int, ok bool)
	// PD is the protection domain receive buffers are checked against.
	PD() uint32
	// Available is the number of receives posted and not yet taken.
	Available() int
	// Resize changes MaxWR; it never drops a posted receive: ErrState when
	// more than maxWR receives are posted.
	Resize(maxWR int) error
	// ArmLimit arms a one-shot low-watermark notification: the SRQ calls
	// its LimitHandler once, the first time fewer than limit receives are
	// posted, at once from inside ArmLimit when that is already so. Each
	// call replaces the previous arming; limit <= 0 disarms.
	ArmLimit(limit int)
	// Destroy releases the SRQ; posted receives are dropped.
	Destroy() error
}

// QPConfig describes a reliable connected queue pair.
type QPConfig struct {
	PD          uint32
	SendCQ      CompletionSink
	RecvCQ      CompletionSink
	Conn        ConnHandler
	SRQ         SRQ // nil: the QP has its own receive queue; else MaxRecv and MaxRecvSGE are unused
	MaxSend     int
	MaxRecv     int
	MaxSendSGE  int
	MaxRecvSGE  int
	MaxReadsOut int
	MaxReadsIn  int
}

// QP is a reliable connected queue pair.
//
// PostSend and PostRecv may check the local segments when the request is
// posted and fail with ErrPrivileges, ErrProtection or ErrInvalid (a segment
// outside its region); a backend that cannot check at post time reports the
// same faults as StatusLocalProtection completions.
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

// IdleReporter is implemented by queue pairs that can tell whether posted
// receives and send requests are outstanding (dat_ep_get_status).
type IdleReporter interface {
	Idle() (recv, send bool)
}

// Reconfigurer is implemented by queue pairs that can change protection
// domain and queue limits while unconnected (dat_ep_modify). Posted
// receives are kept; more of them than maxRecv is ErrInvalid.
type Reconfigurer interface {
	Reconfigure(pd uint32, maxSend, maxRecv, maxSendSGE, maxRecvSGE int) error
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

// InterruptibleDoorbell is a Doorbell whose sleep can tell that a signal
// handler ran on the sleeping thread, so that blocking DAT waits can return
// DAT_INTERRUPTED_CALL as the man pages promise.
type InterruptibleDoorbell interface {
	Doorbell
	// WaitIntr is Wait, reporting whether a signal interrupted the sleep.
	WaitIntr(seq uint32, d time.Duration) (interrupted bool)
}

// Device is an opened transport instance (one per IA).
type Device interface {
	Attr() DeviceAttr
	Addr() netip.Addr
	Doorbell() Doorbell
	RegisterMR(pd uint32, addr uint64, length uint64, access Access) (MR, error)
	CreateQP(cfg QPConfig) (QP, error)
	CreateSRQ(cfg SRQConfig) (SRQ, error)
	// Listen binds qual (or any free qualifier when any is true).
	Listen(qual uint64, any bool, h ListenHandler) (Listener, error)
	Close() error
}
