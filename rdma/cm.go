package rdma

import (
	"net/netip"
	"time"
)

// CMEventType is the kind of a connection-manager event (enum
// rdma_cm_event_type, with the distinctions DAT makes).
type CMEventType uint8

// Connection-manager events.
const (
	// CMConnectRequest: a peer asks to connect to a listener
	// (RDMA_CM_EVENT_CONNECT_REQUEST). Context is the listener's; Request
	// is the request, to be accepted or rejected.
	CMConnectRequest CMEventType = iota + 1
	// CMEstablished: the QP is connected and RTS (RDMA_CM_EVENT_ESTABLISHED).
	// On the active side PrivateData is the peer's accept private data.
	CMEstablished
	// CMRejected: the peer's consumer rejected the connect
	// (RDMA_CM_EVENT_REJECTED with a consumer reason); PrivateData is the
	// reject's. The QP is Error.
	CMRejected
	// CMRefused: nobody listens on the service id, the listener's backlog
	// was full, or the peer's transport refused the request
	// (RDMA_CM_EVENT_REJECTED with a transport reason). The QP is Error.
	CMRefused
	// CMUnreachable: the address cannot be reached
	// (RDMA_CM_EVENT_ADDR_ERROR, ROUTE_ERROR, UNREACHABLE). The QP is Error.
	CMUnreachable
	// CMTimedOut: no answer within the connect timeout
	// (RDMA_CM_EVENT_UNREACHABLE with ETIMEDOUT). The QP is Error.
	CMTimedOut
	// CMAcceptError: an accepted connection failed before it was
	// established, e.g. the active side went away
	// (RDMA_CM_EVENT_CONNECT_ERROR on the passive side). The QP is Error.
	CMAcceptError
	// CMDisconnected: the connection ended in order, by either side
	// (RDMA_CM_EVENT_DISCONNECTED). The QP is Error.
	CMDisconnected
	// CMBroken: the connection failed: the peer died or stopped answering
	// (a verbs backend may see a dead peer's kernel close the connection
	// and report CMDisconnected instead: it cannot tell),
	// the link failed, or a fatal error (a remote access with a bad key,
	// a protocol violation) ended it; verbs reports it as
	// IBV_EVENT_QP_FATAL / QP_ACCESS_ERR followed by DISCONNECTED. The QP is
	// Error.
	CMBroken
)

var cmEventNames = [...]string{"", "connect request", "established", "rejected", "refused", "unreachable",
	"timed out", "accept error", "disconnected", "broken"}

func (t CMEventType) String() string {
	if int(t) < len(cmEventNames) && t != 0 {
		return cmEventNames[t]
	}
	return "unknown CM event"
}

// CMEvent is one connection-manager event (struct rdma_cm_event).
type CMEvent struct {
	Type        CMEventType
	Context     uint64      // the QP's context, or the listener's for CMConnectRequest
	Request     ConnRequest // CMConnectRequest only
	PrivateData []byte      // the peer's private data, exactly as long as sent (empty included)
}

// CMChannel is a connection-manager event channel
// (rdma_event_channel): events of the QPs and listeners created with it
// queue here in the order they happened.
type CMChannel interface {
	// Fd polls readable while events are queued.
	Fd() int
	// Get takes the oldest event into ev, waiting up to d for one (d < 0:
	// no bound) (rdma_get_cm_event + rdma_ack_cm_event). Errors:
	// ErrTimeout, ErrClosed (the channel was destroyed: no more events).
	Get(ev *CMEvent, d time.Duration) error
	// Destroy frees the channel; a Get in progress returns ErrClosed
	// (rdma_destroy_event_channel). Errors: ErrClosed.
	Destroy() error
}

// Listener is a bound, listening service id (an rdma_cm_id in listen).
type Listener interface {
	// ServiceID is the id bound: the one asked for, or the one picked.
	ServiceID() uint64
	// Close stops listening; requests not yet accepted stay valid
	// (rdma_destroy_id of the listening id). Errors: ErrClosed.
	Close() error
}

// RejectReason says how a connection request is turned down.
type RejectReason uint8

// Reject reasons.
const (
	// RejectConsumer: the consumer rejected it; the active side gets
	// CMRejected with the private data given.
	RejectConsumer RejectReason = iota + 1
	// RejectRefused: turned away as if nobody listened (backlog full,
	// service point gone); the active side gets CMRefused.
	RejectRefused
)

// ConnRequest is a pending connection request (the rdma_cm_id of a
// CMConnectRequest event).
type ConnRequest interface {
	// RemoteAddr is the requester's address and port.
	RemoteAddr() netip.AddrPort
	// ServiceID is the service id the request was made to.
	ServiceID() uint64
	// PrivateData is the requester's private data.
	PrivateData() []byte
	// Accept connects the request to qp, which must be in Init, sending
	// priv (rdma_accept). The outcome arrives on qp's CM channel:
	// CMEstablished, or CMAcceptError. Errors: ErrState (qp not in Init,
	// the request already answered), ErrInvalid (priv too long, qp of
	// another device), ErrClosed. A request whose requester already gave
	// up is accepted and then fails with CMAcceptError.
	Accept(qp QP, priv []byte) error
	// Reject turns the request down (rdma_reject). Errors: ErrState (the
	// request already answered), ErrInvalid (priv too long).
	Reject(reason RejectReason, priv []byte) error
}
