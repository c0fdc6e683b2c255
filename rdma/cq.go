package rdma

import "time"

// WCStatus is the outcome of a work request (enum ibv_wc_status).
type WCStatus uint8

// Completion statuses, named and ordered as in verbs.
const (
	WCSuccess        WCStatus = iota // IBV_WC_SUCCESS
	WCLocLenErr                      // IBV_WC_LOC_LEN_ERR: a receive too small for the message, or a request longer than allowed
	WCLocQPOpErr                     // IBV_WC_LOC_QP_OP_ERR: the request is inconsistent with the QP
	WCLocEECOpErr                    // IBV_WC_LOC_EEC_OP_ERR (unused by RC)
	WCLocProtErr                     // IBV_WC_LOC_PROT_ERR: a local key or range fault
	WCWRFlushErr                     // IBV_WC_WR_FLUSH_ERR: the QP left RTS before the request completed
	WCMWBindErr                      // IBV_WC_MW_BIND_ERR
	WCBadRespErr                     // IBV_WC_BAD_RESP_ERR: the responder answered out of protocol
	WCLocAccessErr                   // IBV_WC_LOC_ACCESS_ERR: local memory could not be read or written
	WCRemInvReqErr                   // IBV_WC_REM_INV_REQ_ERR: the responder's receive was too small or the request malformed
	WCRemAccessErr                   // IBV_WC_REM_ACCESS_ERR: the remote key, range or rights do not allow the access
	WCRemOpErr                       // IBV_WC_REM_OP_ERR: the responder failed to place the data
	WCRetryExcErr                    // IBV_WC_RETRY_EXC_ERR: the peer stopped answering
	WCRNRRetryExcErr                 // IBV_WC_RNR_RETRY_EXC_ERR: the receiver had no receive posted, beyond the retry limit
	WCLocRDDViolErr                  // IBV_WC_LOC_RDD_VIOL_ERR (unused)
	WCRemInvRDReqErr                 // IBV_WC_REM_INV_RD_REQ_ERR (unused)
	WCRemAbortErr                    // IBV_WC_REM_ABORT_ERR
	WCInvEECNErr                     // IBV_WC_INV_EECN_ERR (unused)
	WCInvEECStateErr                 // IBV_WC_INV_EEC_STATE_ERR (unused)
	WCFatalErr                       // IBV_WC_FATAL_ERR
	WCRespTimeoutErr                 // IBV_WC_RESP_TIMEOUT_ERR
	WCGeneralErr                     // IBV_WC_GENERAL_ERR
)

var wcStatusNames = [...]string{
	"success", "local length error", "local QP operation error", "local EEC operation error",
	"local protection error", "flushed", "memory window bind error", "bad response",
	"local access error", "remote invalid request", "remote access error", "remote operation error",
	"retry count exceeded", "RNR retry count exceeded", "local RDD violation", "remote invalid RD request",
	"remote aborted", "invalid EE context number", "invalid EE context state", "fatal error",
	"response timeout", "general error",
}

func (s WCStatus) String() string {
	if int(s) < len(wcStatusNames) {
		return wcStatusNames[s]
	}
	return "unknown status"
}

// WCOpcode is the kind of work a completion reports (enum ibv_wc_opcode).
type WCOpcode uint8

// Completion opcodes.
const (
	WCSend            WCOpcode = iota // IBV_WC_SEND
	WCRDMAWrite                       // IBV_WC_RDMA_WRITE
	WCRDMARead                        // IBV_WC_RDMA_READ
	WCCompSwap                        // IBV_WC_COMP_SWAP (with atomics, later)
	WCFetchAdd                        // IBV_WC_FETCH_ADD (with atomics, later)
	WCBindMW                          // IBV_WC_BIND_MW
	WCRecv                            // IBV_WC_RECV
	WCRecvRDMAWithImm                 // IBV_WC_RECV_RDMA_WITH_IMM
)

// WCFlags qualify a completion (enum ibv_wc_flags, plus WCSolicited).
type WCFlags uint8

// Completion flags.
const (
	// WCWithImm: Imm carries the sender's immediate data (IBV_WC_WITH_IMM).
	WCWithImm WCFlags = 1 << iota
	// WCSolicited: the received message was sent with SendSolicited. Only
	// backends with CapSolicitedFlag set it (verbs has no such flag: the
	// verbs backend sets it from its own mark, rdma/verbs/qp.go).
	WCSolicited
)

// WC is one work completion (struct ibv_wc). Only WRID, Status and QPNum
// are defined for an error completion: ByteLen is 0, and Opcode is what the
// backend knows (the software provider sets it; verbs leaves it undefined,
// so core never relies on it: the work-request id says which queue).
type WC struct {
	WRID    uint64   // the work request's id
	ByteLen uint32   // bytes transferred: the message length for a receive
	QPNum   uint32   // the queue pair the request was posted to
	Imm     uint32   // immediate data, with WCWithImm
	Status  WCStatus // outcome
	Opcode  WCOpcode // undefined for error completions in verbs
	Flags   WCFlags
}

// CQ is a completion queue (ibv_cq). Poll is called by one thread at a
// time per CQ in practice but must be safe from several.
type CQ interface {
	// Poll moves up to len(wc) completions into wc, oldest first, and
	// returns how many (ibv_poll_cq). It never allocates and never blocks;
	// it costs O(1) when the CQ is empty, whatever the number of queue
	// pairs that complete into it. A backend that progresses in software
	// does that progress here (bounded).
	Poll(wc []WC) int
	// Arm requests one notification on the CQ's completion channel for the
	// next completion added to the CQ, or with solicitedOnly for the next
	// solicited receive or error completion (ibv_req_notify_cq). A
	// completion already in the CQ does not notify: arm, then poll once
	// more, then sleep. Errors: ErrClosed.
	Arm(solicitedOnly bool) error
	// Resize changes the CQ's depth, keeping its completions
	// (ibv_resize_cq). Errors: ErrInvalid (below the completions held),
	// ErrNotSupported, ErrClosed.
	Resize(depth int) error
	// Destroy frees the CQ (ibv_destroy_cq). Errors: ErrBusy while a QP
	// uses it; ErrClosed.
	Destroy() error
}

// CompChannel is a completion channel that many CQs share
// (ibv_comp_channel): the thing blocking waits sleep on.
//
// Waking is by generation count rather than by handing out events, so any
// number of threads may wait on one channel for different CQs without a
// dispatcher: a waiter reads Seq, polls its CQs, arms them, polls once
// more, then Waits on the Seq it read. Every armed notification and every
// Wake bumps the count and wakes every sleeper; a sleeper re-checks its own
// condition. No notification is lost between Seq and Wait.
type CompChannel interface {
	// Fd is a file descriptor that polls readable after a notification, for
	// consumers that integrate the channel with poll(2) (the channel's fd);
	// reading it is the backend's business, so callers only poll it.
	Fd() int
	// Seq is the channel's generation count.
	Seq() uint32
	// Wait sleeps until Seq differs from seq or d passes (d < 0: no bound).
	// It may return early. It reports whether a signal handler ran on the
	// sleeping thread (EINTR), so that DAT waits can return
	// DAT_INTERRUPTED_CALL; the Go runtime's own signals never count.
	// A backend that completes in software may wake sleepers for arrivals
	// that are not completions yet: the waiter's next Poll makes them so.
	Wait(seq uint32, d time.Duration) (interrupted bool)
	// Wake bumps the count and wakes every sleeper (core uses it when an
	// EVD is freed, made unwaitable, or its IA closes).
	Wake()
	// Destroy frees the channel (ibv_destroy_comp_channel). Errors: ErrBusy
	// while a CQ uses it; ErrClosed.
	Destroy() error
}

// QuietWatch tells a caller outside Go how to know, without calling Poll,
// that a CQ is still as empty as a Poll just found it: as long as the two
// watched 64-bit words hold the values given, a Poll would find nothing
// and would do no progress that matters (the export layer's fast empty
// dequeue, DESIGN.md section 9). Both addresses stay mapped for the
// process's life whatever is closed meanwhile, so a stale watch reads
// harmless memory. Budget bounds how many answers the watch may give
// before the caller polls again (progress a Poll does now and then, such
// as the look at rings that carry no hint). A watch with no addresses
// (zero) watches nothing: an EVD without a CQ publishes one.
//
// A backend whose CQ has no such word (the device writes the CQ, as on
// verbs) gives a probe instead: the address of a C function
// int probe(uint64_t arg, uint64_t val), which returns 1 only when the CQ
// is still empty, and otherwise 0 having lost nothing (what it polled, the
// next Poll returns first). It must never block, and must answer 0 for an
// arg whose CQ is gone or no longer val's: a stale watch may call it after
// the CQ is destroyed, so arg stays valid memory for the process's life.
type QuietWatch struct {
	Epoch, EpochVal uint64 // address and value of a word the backend bumps on any change a Poll would see
	Slot, SlotVal   uint64 // address and value of the word a peer writes when it adds work
	Probe           uint64 // 0, or the address of the probe: asked after the words
	ProbeArg        uint64 // the probe's arguments
	ProbeVal        uint64
	Budget          uint32
}

// QuietCQ is the optional interface of a CQ that can be watched that way.
// It has no verbs counterpart: rdma-core's ibv_poll_cq is already inline
// C, where the question does not arise; the verbs backend's watch is a
// probe that polls its CQ from C.
type QuietCQ interface {
	CQ
	// QuietEpoch samples the epoch; the caller takes it before the Poll
	// whose emptiness it wants to keep watching. False when the CQ could
	// not have a watch after that Poll anyway (a cheap early no).
	QuietEpoch() (uint64, bool)
	// Quiet returns the watch of a CQ a Poll just found empty, when the
	// epoch is still epoch (nothing changed since before that Poll) and
	// nothing the watch cannot see is pending; else false.
	Quiet(epoch uint64) (QuietWatch, bool)
}
