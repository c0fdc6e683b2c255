package rdma

import "net/netip"

// Caps are the optional features of a device.
type Caps uint64

// Optional features. A backend reports what it has in DeviceAttr.Caps; core
// never calls an optional method of a device that lacks its capability.
const (
	// CapSRQ: shared receive queues (ibv_create_srq).
	CapSRQ Caps = 1 << iota
	// CapSRQLimit: an armed SRQ limit raises AsyncSRQLimitReached
	// (IBV_SRQ_LIMIT, IBV_EVENT_SRQ_LIMIT_REACHED).
	CapSRQLimit
	// CapSolicitedFlag: receive completions carry WCSolicited when the
	// message was sent with SendSolicited. Verbs itself cannot tell (the
	// verbs backend marks solicited sends with immediate data where the
	// transport has it); without the flag every receive notifies.
	CapSolicitedFlag
	// CapQPOutstanding: QP.Outstanding reports the work requests not yet
	// completed, signalled or not (verbs has no such query).
	CapQPOutstanding
	// CapQPReconfigure: QP.Reconfigure changes the protection domain, CQs
	// and queue capacities of a QP that is not connected (verbs would
	// destroy and recreate the QP).
	CapQPReconfigure
	// CapCQGrow: a CQ never drops a completion: it grows past its depth and
	// raises AsyncCQOverrun once per excursion (verbs would overrun).
	CapCQGrow
	// CapAnyServiceID: Listen with any picks an unused service id in the
	// whole 64-bit space (rather than a port-sized range).
	CapAnyServiceID
	// CapMemoryWindows: MW binding by work request (type 2 windows).
	CapMemoryWindows
	// CapPostCheck: PostSend, PostRecv and SRQ.PostRecv check the local
	// segments against the registrations when the request is posted and
	// fail synchronously (verbs reports such faults as completions).
	CapPostCheck
	// CapSRQPDDifference: a QP on an SRQ may be of another PD than the
	// SRQ's, its receives into the SRQ's buffers checked against the SRQ's
	// PD. Verbs does not promise it (rdma_rxe checks them against the QP's
	// PD and fails the receive), so core refuses such a QP without it.
	CapSRQPDDifference
)

// DeviceAttr are a device's honest limits (ibv_query_device and
// ibv_query_port, plus what the connection manager allows).
type DeviceAttr struct {
	Name   string // device name (ibv_get_device_name), e.g. "soft-shm", "rxe0"
	Vendor string
	Caps   Caps

	MaxQP      int    // max_qp
	MaxQPWR    int    // max_qp_wr: work requests per send or receive queue
	MaxSGE     int    // max_sge: scatter/gather entries per work request
	MaxSGERd   int    // max_sge_rd: entries an RDMA read may scatter into (siw: 1); 0 means MaxSGE
	MaxCQ      int    // max_cq
	MaxCQE     int    // max_cqe: the deepest CQ
	MaxMR      int    // max_mr
	MaxMRSize  uint64 // max_mr_size
	MaxPD      int    // max_pd
	MaxMsgSize uint64 // the port's max_msg_sz: bytes per send, RDMA write or read
	MaxInline  int    // bytes a send may carry inline (IBV_SEND_INLINE)
	// MaxQPRdAtom is max_qp_rd_atom: RDMA reads a QP answers at once (the
	// responder resources); MaxQPInitRdAtom is max_qp_init_rd_atom: RDMA
	// reads a QP may have outstanding as initiator.
	MaxQPRdAtom     int
	MaxQPInitRdAtom int
	MaxSRQ          int // max_srq
	MaxSRQWR        int // max_srq_wr
	MaxSRQSGE       int // max_srq_sge
	// MaxPrivateData is the connection manager's private data limit for
	// connect, accept and reject, in bytes the consumer may use.
	MaxPrivateData int
}

// ReadSGE is the entries an RDMA read may scatter into: MaxSGERd, or
// MaxSGE where MaxSGERd is 0 (never more than MaxSGE).
func (a DeviceAttr) ReadSGE() int {
	if a.MaxSGERd <= 0 {
		return a.MaxSGE
	}
	return min(a.MaxSGERd, a.MaxSGE)
}

// Device is an opened transport device, one per IA (ibv_context plus the
// rdma_cm device it is reached through).
type Device interface {
	// Query reports the device's limits (ibv_query_device).
	Query() DeviceAttr
	// Addr is the address peers connect to: the IA address.
	Addr() netip.Addr
	// AllocPD allocates a protection domain (ibv_alloc_pd).
	// Errors: ErrNoResources, ErrClosed.
	AllocPD() (PD, error)
	// CreateCompChannel creates a completion channel (ibv_create_comp_channel).
	// Errors: ErrNoResources, ErrClosed.
	CreateCompChannel() (CompChannel, error)
	// CreateCQ creates a completion queue of at least depth entries whose
	// armed notifications go to ch (nil: the CQ is only polled); ctx names
	// the CQ in asynchronous events (ibv_create_cq). ch is normally one of
	// this device's channels; a backend may accept a channel of another of
	// its devices (the software provider does: it lets an EP of one IA
	// complete into an EVD of an IA on another device), else ErrInvalid.
	// Errors: ErrInvalid (depth < 1 or above MaxCQE, a foreign channel),
	// ErrNoResources, ErrClosed.
	CreateCQ(depth int, ch CompChannel, ctx uint64) (CQ, error)
	// CreateSRQ creates a shared receive queue (ibv_create_srq); only with
	// CapSRQ. Errors: ErrInvalid, ErrNoResources, ErrNotSupported, ErrClosed.
	CreateSRQ(attr SRQInitAttr) (SRQ, error)
	// CreateQP creates a reliable-connected queue pair in state Init, ready
	// for receives (ibv_create_qp, then ibv_modify_qp to INIT).
	// Errors: ErrInvalid (a capacity above the device's, a missing CQ or
	// PD, objects of another device), ErrNoResources, ErrClosed.
	CreateQP(attr QPInitAttr) (QP, error)
	// CreateCMChannel creates a connection-manager event channel
	// (rdma_create_event_channel). Errors: ErrNoResources, ErrClosed.
	CreateCMChannel() (CMChannel, error)
	// Listen binds serviceID, or an unused id the backend picks when any is
	// true, at the device's address (rdma_bind_addr + rdma_listen).
	// Connection requests arrive on ch as CMConnectRequest events carrying
	// ctx; backlog bounds the requests not yet accepted or rejected (more
	// are refused as if nobody listened).
	// Errors: ErrServiceInUse, ErrNoResources, ErrClosed.
	Listen(ch CMChannel, serviceID uint64, any bool, backlog int, ctx uint64) (Listener, error)
	// Close destroys every object of the device (ibv_close_device): its
	// queue pairs are torn down as by Destroy, its listeners closed, and
	// waits on its channels return. Errors: ErrClosed.
	Close() error
}
