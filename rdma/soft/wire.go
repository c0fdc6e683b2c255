package soft

// The engine's protocol and the interface of a wire.
//
// The engine (qp*.go) owns every protocol choice, once:
//   - Completion on placement (verbs RC): every send asks for the
//     receiver's verdict (flAckReq) and completes when the message is
//     placed in the receive: success, WCRemInvReqErr when the receive was
//     too small, WCRemOpErr when it could not be written. So a send's
//     completion means the message arrived, and a message sent after
//     another's completion, on any connection, arrives after it. Whether
//     the sender hears of a success at once (flNotify: a signalled send)
//     or when it next looks is the wire's cost to keep low: shared memory
//     publishes a word the sender reads, TCP piggybacks headers.
//   - Eager or rendezvous: a payload of up to eagerMax bytes travels with
//     its message; a larger one as a descriptor the receiver reads from
//     (shared memory) or streamed after its header (TCP).
//   - Credits: a SEND leaves only against a grant: the receiver's count of
//     receives posted on the connection (or, on an SRQ, srqWindow messages
//     beyond those it completed). A sender without a grant keeps the send
//     queued and asks once; so a message always lands in a posted receive
//     and nothing is buffered at the receiver but the wire's own window.
//   - Acknowledgements: requests that need one (rendezvous sends, RDMA
//     writes on a two-sided wire) are numbered per connection; the
//     responder acknowledges cumulatively and NAKs a failure by number
//     before any acknowledgement that covers it.
//   - RDMA: a one-sided wire does reads and writes at issue after checking
//     the target's key one-sidedly; otherwise the responder (qp_resp.go)
//     checks and executes them. Reads outstanding are bounded by the
//     initiator depth; a fenced request waits for every earlier read.
//   - Access violations break the connection (verbs semantics).
//
// A wire (shm_*.go, tcp_*.go) only moves messages: it issues them (copies
// a payload into a ring slot, queues frames on a socket, or performs a
// one-sided access), delivers inbound messages to the engine with their
// payload, carries the credit and acknowledgement counters, and tears the
// connection down.

import (
	"errors"

	"godat/rdma"
)

// Protocol messages.
const (
	msgSend     = 1 // payload: the message
	msgWrite    = 2 // payload: the data; aux rkey, addr target (two-sided wires)
	msgReadReq  = 3 // aux rkey, addr source, len bytes
	msgReadResp = 4 // payload: the data read; followed by msgReadDone
	msgReadDone = 5 // aux status
	msgAck      = 6 // num: acknowledged requests (cumulative)
	msgNak      = 7 // num: the failed request; aux its status
	msgNeed     = 8 // out of grants; num: the grant the asker has seen
	msgDisc     = 9 // orderly end
)

// Message flags.
const (
	flSolicited = 1
	flAckReq    = 2 // complete the send on the receiver's verdict
	flNotify    = 4 // tell the sender of the verdict at once (a signalled send)
)

// eagerMax is the largest eager send (and the inline payload of a shared
// memory ring slot).
const eagerMax = 8192

// srqWindow is how many messages a QP on an SRQ lets its peer send beyond
// those it has completed.
const srqWindow = 64

// hdr is a protocol message header.
type hdr struct {
	typ   uint8
	flags uint8
	num   uint32 // msgAck, msgNak, msgNeed
	aux   uint32 // rkey, or a status
	len   uint64
	addr  uint64
}

// issued is what a wire did with a request.
type issued uint8

const (
	issuedSent  issued = iota // queued (a read request: the response completes it)
	issuedAcked               // queued: completes on the peer's verdict
	issuedFull                // no room: the wire calls the engine back (kick)
	issuedFault               // our memory faulted while the wire copied it
)

// wire is one connection's transport. The engine calls every method but
// flush and shutdown with its QP lock held: they must not block, nor make a
// system call whose cost grows with the transfer (a wire queues that work
// for flush, which the engine calls without locks, or for its goroutines).
type wire interface {
	// oneSided reports whether RDMA reads and writes execute at issue
	// through access, rather than as messages to the peer's responder.
	oneSided() bool
	// ackedNow is the peer's verdicts as the wire knows them now without
	// waiting (cumulative); ok is false when it cannot tell more than it
	// has reported. watchAcks asks to be called back (kick) when verdicts
	// beyond seen come.
	ackedNow() (n uint32, ok bool)
	watchAcks(seen uint32)
	// send issues a SEND (payload sgl, h.len bytes) or an RDMA write or
	// read request message.
	send(h *hdr, sgl []rdma.SGE) issued
	// access performs a one-sided RDMA read or write of L bytes between
	// sgl and the peer's [raddr, raddr+L) named by rkey. It is called
	// without the QP lock, by one thread of the QP at a time, under the
	// teardown barrier.
	access(op rdma.WROpcode, sgl []rdma.SGE, L, raddr uint64, rkey uint32) rdma.WCStatus
	// readResp answers a read request with L bytes at addr (or none, with
	// the failing status).
	readResp(addr, L uint64, status rdma.WCStatus)
	// peerGrant is the peer's grant as last heard (refreshed when it does
	// not exceed sent, the SENDs issued); setGrant publishes ours;
	// askGrant tells the peer we wait for more than seen.
	peerGrant(sent uint32) uint32
	setGrant(g uint32)
	askGrant(seen uint32)
	// ack reports that the peer's requests up to n were executed; nak that
	// request k failed with st (k also counts as executed).
	ack(n uint32)
	nak(k uint32, st rdma.WCStatus)
	// resume retries the inbound message that waited for an SRQ receive.
	resume()
	// flush performs queued I/O; called without locks.
	flush()
	// flushGrant is flush after the consumer posted a receive: a peer that
	// waits for the grant hears of it now; otherwise the grant, and any
	// verdict a consumer's Poll deferred, ride on the next frame.
	flushGrant()
	// flushPosted is flush on the consumer's thread after a post: what
	// the post queued is on the wire when it returns, unless the wire is
	// full (so a program that posts on several connections puts its
	// messages on the wire in the order it posted them).
	flushPosted()
	// shutdown ends the connection: how says whether the peer hears an
	// orderly disconnect, an access violation, or nothing but the loss.
	shutdown(how endHow)
}

// endHow is how a connection ends.
type endHow uint8

const (
	endAbort  endHow = iota // close now; the peer sees a broken connection
	endFlush                // what is queued goes out first (a NAK), then as endAbort
	endDisc                 // orderly: the peer gets CMDisconnected
	endAccess               // we violated the peer's access rights: it raises AsyncQPAccessErr
)

// payload is an inbound message's data, as its wire holds it.
type payload interface {
	// inMemory reports whether placing the payload is a copy from memory
	// (no system call), cheap enough to do under the QP lock.
	inMemory() bool
	// place moves n bytes into dst, which holds at least n. local reports
	// that our memory faulted (the rest is consumed anyway), src that the
	// source did; err that the connection failed.
	place(dst []rdma.SGE, n uint64) (local, src bool, err error)
	// discard consumes n bytes without placing them.
	discard(n uint64) error
}

var (
	errGone  = errors.New("soft: connection torn down")
	errProto = errors.New("soft: protocol violation")
	errWait  = errors.New("soft: waiting for a receive")
	errDisc  = errors.New("soft: peer disconnected")
)

// after reports whether counter a is past b (wrapping arithmetic).
func after(a, b uint32) bool { return int32(a-b) > 0 }
