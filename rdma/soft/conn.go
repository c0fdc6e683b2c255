package soft

// conn is the engine's state of one connection (or connection attempt) of
// a queue pair: the protocol counters, and the wire that carries it. A new
// conn per connection means callbacks of a torn-down one are told apart by
// pointer (q.c != c).

import (
	"sync"
	"sync/atomic"

	"godat/rdma"
)

type conn struct {
	q      *qp
	w      wire        // nil while a TCP attempt dials
	cancel func()      // ends the dial of a TCP attempt
	dead   atomic.Bool // torn down: placements in progress stop

	// placeMu is read-held while a payload is placed into (or a one-sided
	// access reads) our memory without qp.mu; a teardown write-locks it
	// (under qp.mu) as a barrier, so that no buffer it flushes is still in
	// use.
	placeMu sync.RWMutex

	// Send side, under qp.mu.
	sends     uint32 // SEND messages issued (grant accounting)
	acked     uint32 // requests numbered for the peer's acknowledgement
	peerAcked uint32 // acknowledged by the peer
	asked     bool   // we asked for a grant beyond askedAt
	askedAt   uint32
	reads     [maxRdAtom]uint64 // send-queue positions of outstanding reads
	rdHead    uint32
	rdTail    uint32

	// Receive side, under qp.mu.
	recvBase  uint64 // QP: q.rqHead when the connection began (grant origin)
	srqDone   uint64 // SRQ: messages completed on this connection
	executed  uint32 // the peer's acknowledged requests we executed
	respFault bool   // a read response of ours faulted: reported (responderFault)
	placedIn  *cq    // the CQ the last receive placed completed into
	readsIn   int    // the peer's reads we are answering (two-sided wires)

	// The read response being placed (two-sided wires; reader only).
	inRead    bool
	readFault bool
	readLen   uint64

	// writeSeg is the target range of the peer's RDMA write being placed
	// (two-sided wires; reader only): a local one, handed to the payload's
	// interface, would be allocated per write.
	writeSeg [1]rdma.SGE
}

// newConn starts a connection of q on wire w; q.mu is held.
func (q *qp) newConn(w wire) *conn {
	c := &conn{q: q, w: w, recvBase: q.rqHead}
	q.gen++
	return c
}

// readsOut is the number of reads issued and not answered.
func (c *conn) readsOut() int { return int(c.rdTail - c.rdHead) }

// grantLocked is our grant: the receives posted on this connection, or on
// an SRQ, srqWindow messages beyond those completed; q.mu is held.
func (c *conn) grantLocked() uint32 {
	q := c.q
	if q.srq != nil {
		return uint32(srqWindow + c.srqDone)
	}
	return uint32(q.rqTail - c.recvBase)
}
