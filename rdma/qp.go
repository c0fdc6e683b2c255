package rdma

import (
	"net/netip"
	"time"
)

// SGE is one scatter/gather element in the caller's address space
// (struct ibv_sge).
type SGE struct {
	Addr   uint64
	Length uint32
	LKey   uint32
}

// WROpcode is the kind of a send-queue work request (enum ibv_wr_opcode).
type WROpcode uint8

// Send-queue opcodes.
const (
	WRRDMAWrite        WROpcode = iota // IBV_WR_RDMA_WRITE
	WRRDMAWriteWithImm                 // IBV_WR_RDMA_WRITE_WITH_IMM (not yet in any backend)
	WRSend                             // IBV_WR_SEND
	WRSendWithImm                      // IBV_WR_SEND_WITH_IMM (not yet in any backend)
	WRRDMARead                         // IBV_WR_RDMA_READ
)

// SendFlags modify a send-queue work request (enum ibv_send_flags).
type SendFlags uint8

// Send flags.
const (
	// SendFence: the request waits until every earlier RDMA read of the QP
	// has completed (IBV_SEND_FENCE).
	SendFence SendFlags = 1 << iota
	// SendSignaled: a successful request produces a completion
	// (IBV_SEND_SIGNALED). Errors and flushes always do. A QP with
	// QPInitAttr.SigAll signals every request.
	SendSignaled
	// SendSolicited: the receive completion of this send is solicited
	// (IBV_SEND_SOLICITED).
	SendSolicited
	// SendInline: the payload is copied at post time, so the buffers need
	// no registration and are reusable at return (IBV_SEND_INLINE), up to
	// DeviceAttr.MaxInline bytes.
	SendInline
)

// SendWR is a send-queue work request (struct ibv_send_wr). The backend
// copies what it keeps: SGL is not retained after PostSend returns.
type SendWR struct {
	WRID       uint64
	SGL        []SGE
	RemoteAddr uint64 // RDMA: the peer's address
	RKey       uint32 // RDMA: the peer's key for RemoteAddr
	Imm        uint32 // with the *WithImm opcodes
	Opcode     WROpcode
	Flags      SendFlags
}

// RecvWR is a receive work request (struct ibv_recv_wr); SGL is not retained.
type RecvWR struct {
	WRID uint64
	SGL  []SGE
}

// QPState is a queue pair state (enum ibv_qp_state).
type QPState uint8

// Queue pair states. A QP is created in Init; the connection manager moves
// it through RTR to RTS on connect or accept, and to Error on disconnect,
// on a fatal error, or when the connection breaks; Reset returns it to Init.
const (
	QPSReset QPState = iota // IBV_QPS_RESET
	QPSInit                 // IBV_QPS_INIT: receives may be posted
	QPSRTR                  // IBV_QPS_RTR: ready to receive, while connecting
	QPSRTS                  // IBV_QPS_RTS: connected
	QPSSQD                  // IBV_QPS_SQD: send queue draining (graceful disconnect)
	QPSSQE                  // IBV_QPS_SQE (unused by RC)
	QPSErr                  // IBV_QPS_ERR: everything posted is flushed
)

// QPCap are a queue pair's capacities (struct ibv_qp_cap). Zero values take
// the backend's defaults; CreateQP reports the capacities granted through
// QP.Cap.
type QPCap struct {
	MaxSendWR     int
	MaxRecvWR     int // unused with an SRQ
	MaxSendSGE    int
	MaxRecvSGE    int // unused with an SRQ
	MaxInlineData int
}

// QPInitAttr describes a reliable-connected queue pair to create (struct
// ibv_qp_init_attr, plus what rdma_cm needs).
type QPInitAttr struct {
	PD     PD
	SendCQ CQ
	RecvCQ CQ
	SRQ    SRQ // nil: the QP has its own receive queue
	Cap    QPCap
	// MaxRdAtomic is the responder resources: RDMA reads of the peer this
	// QP answers at once (max_rd_atomic; 0: the device maximum).
	MaxRdAtomic int
	// MaxInitRdAtomic is the initiator depth: this QP's RDMA reads
	// outstanding at once (max_dest_rd_atomic; 0: the device maximum).
	MaxInitRdAtomic int
	// SigAll signals every send-queue request (sq_sig_all).
	SigAll bool
	// CM receives the QP's connection events, tagged with Context.
	CM CMChannel
	// Context names the QP in its connection and asynchronous events.
	Context uint64
}

// QP is a reliable-connected queue pair (ibv_qp on an rdma_cm_id).
type QP interface {
	// Num is the queue pair number, unique on the device (qp_num); it is
	// what WC.QPNum carries.
	Num() uint32
	// State is the current state (ibv_query_qp).
	State() QPState
	// Cap is the capacities granted.
	Cap() QPCap
	// PostSend appends a send-queue request (ibv_post_send). In Error the
	// request is accepted and completes as WCWRFlushErr. As on a verbs RC
	// QP, a send completes successfully once the message is placed in the
	// peer's receive (an RDMA write once its data is in place, a read once
	// the data read is); a send to a peer without a posted receive waits
	// for one without limit (RNR retry 7), and the receiver's verdict on a
	// receive too small or unusable comes back as the send's status.
	// Errors: ErrState (not RTS, SQD or Error), ErrInvalid (too many SGEs:
	// above MaxSendSGE, or for an RDMA read above DeviceAttr.MaxSGERd; an
	// unknown opcode; inline data above MaxInlineData), ErrQueueFull
	// (MaxSendWR requests outstanding), ErrClosed. With CapPostCheck the
	// local segments are checked now: ErrPrivileges (an unknown key, or a
	// region without the local write an RDMA read target needs),
	// ErrProtection (a region of another PD), ErrInvalid (a segment
	// outside its region); without it those faults are WCLocProtErr
	// completions.
	PostSend(wr *SendWR) error
	// PostRecv appends a receive (ibv_post_recv); any state but Reset. In
	// Error it completes as WCWRFlushErr. Errors: ErrState (the QP uses an
	// SRQ), ErrInvalid, ErrQueueFull, ErrClosed, and with CapPostCheck
	// ErrPrivileges, ErrProtection, ErrInvalid as for PostSend (receive
	// buffers need AccessLocalWrite).
	PostRecv(wr *RecvWR) error
	// Connect starts an active connection from Init to the peer listening
	// on serviceID at addr (rdma_resolve_addr, rdma_resolve_route,
	// rdma_connect; addr's port is ignored), sending priv. The outcome
	// arrives on the QP's CM channel: CMEstablished (the QP is then RTS),
	// or CMRejected, CMUnreachable, CMTimedOut (the QP is then Error).
	// timeout bounds the whole attempt (<= 0: the backend's default).
	// Errors: ErrState (not Init), ErrInvalid (priv too long), ErrClosed.
	Connect(addr netip.AddrPort, serviceID uint64, priv []byte, timeout time.Duration) error
	// Disconnect ends the connection or the connection attempt
	// (rdma_disconnect): the QP goes to Error and flushes everything
	// outstanding; the peer gets CMDisconnected. With graceful the send
	// queue first drains (SQD), for a bounded time, before the QP goes to
	// Error. CMDisconnected follows on this QP's channel too.
	// Errors: ErrState (Init: nothing to disconnect), ErrClosed. Error is
	// not an error: there is nothing left to do.
	Disconnect(graceful bool) error
	// Reset returns a QP in Error, whose work has all been flushed, to
	// Init, unconnected and empty, for another connection (ibv_modify_qp to
	// RESET, then INIT). Init is not an error. A backend may put the QP on
	// a new device QP for it (verbs on iWARP): Num may change. Errors:
	// ErrState, ErrClosed.
	Reset() error
	// LocalAddr and RemoteAddr are the connection's addresses (the remote
	// one also while connecting); invalid when there is none.
	LocalAddr() netip.AddrPort
	RemoteAddr() netip.AddrPort
	// Outstanding reports the send and receive requests posted and not yet
	// completed, signalled or not; only with CapQPOutstanding.
	Outstanding() (send, recv int, err error)
	// Reconfigure changes the PD, the CQs and the capacities of a QP in
	// Init or Error, keeping its posted receives; only with
	// CapQPReconfigure. A backend may make a new QP for it (verbs, which
	// accepts Init only): Num may change. Errors: ErrState, ErrInvalid
	// (fewer receives allowed than are posted, a capacity above the
	// device's).
	Reconfigure(attr QPInitAttr) error
	// Destroy frees the QP (ibv_destroy_qp); a connection is ended
	// abruptly and nothing more is completed for the QP. Errors: ErrClosed.
	Destroy() error
}
