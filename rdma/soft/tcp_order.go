package soft

// Arrival order across TCP connections. Receives of several connections
// that complete on one CQ must complete in the order their messages
// arrived. The receive loop serves connections one frame per turn in the
// order the kernel reported them readable, but that order is lost when a
// read takes several frames of one connection at once: a later frame of
// connection A, read with A's earlier one, would go before the earlier
// frame of connection B whose edge the loop has not collected yet.
//
// So SENDs between two devices carry a stamp: each device draws a random
// token, the handshake exchanges them (REQ and ACC carry the sender's in
// their ack field), and a device numbers the SENDs it writes to each peer
// device (by peer address and token) with one 16-bit counter shared by
// all its connections to that device. The receiver expects the peer's
// stamps in sequence: a SEND whose stamp is the next one, or an earlier
// one, goes at once; one that skips ahead makes the loop look for the
// missing ones first (tcpLoop.earliest: collect new edges, read the heads
// of the queued connections from that device, handling the frames that
// stand before a connection's next SEND, and serve the earliest). What
// is not found is not waited for (it is still in flight, on a parked
// connection, or lost with a connection): the stamps only order what has
// arrived, they never hold a message back. Stamps compare within 2^15
// (serial arithmetic); a peer that lies about them can only reorder its
// own messages. Messages of different peer devices keep the loop's
// readable order.

import (
	"net/netip"
	"sync/atomic"
)

// orderKey names a peer device: its address and its token.
type orderKey struct {
	ip    netip.Addr
	token uint32
}

// tcpOrder is the stamp state between this device and one peer device,
// shared by every connection between them.
type tcpOrder struct {
	key  orderKey
	refs int           // connections using it (tcpDev.mu)
	out  atomic.Uint32 // the last stamp we gave a SEND to that device
	next atomic.Uint32 // the stamp of the next SEND we expect from it
}

// orderFor returns the order shared with peer device (ip, token), taking
// a reference; nil for a peer without a token.
func (t *tcpDev) orderFor(ip netip.Addr, token uint32) *tcpOrder {
	if token == 0 {
		return nil
	}
	k := orderKey{ip.Unmap(), token}
	t.mu.Lock()
	defer t.mu.Unlock()
	o := t.orders[k]
	if o == nil {
		o = &tcpOrder{key: k}
		o.next.Store(1)
		t.orders[k] = o
	}
	o.refs++
	return o
}

// releaseOrder drops a connection's reference.
func (t *tcpDev) releaseOrder(o *tcpOrder) {
	if o == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if o.refs--; o.refs == 0 {
		delete(t.orders, o.key)
	}
}

// stamp numbers a SEND going to the peer device.
func (o *tcpOrder) stamp() uint16 { return uint16(o.out.Add(1)) }

// due reports whether a SEND stamped s may complete now: it is the next
// one expected from the peer device, or an earlier one (late).
func (o *tcpOrder) due(s uint16) bool { return int16(s-uint16(o.next.Load())) <= 0 }

// took records that the SEND stamped s completes now; any goroutine.
func (o *tcpOrder) took(s uint16) {
	for {
		n := o.next.Load()
		if int16(s+1-uint16(n)) <= 0 {
			return
		}
		if o.next.CompareAndSwap(n, uint32(s+1)) {
			return
		}
	}
}

// skipTo gives up waiting for the stamps before s.
func (o *tcpOrder) skipTo(s uint16) {
	for {
		n := o.next.Load()
		if int16(s-uint16(n)) <= 0 || o.next.CompareAndSwap(n, uint32(s)) {
			return
		}
	}
}

// headStamp reads the stamp of the SEND at the head of w's stream without
// consuming it, reading the socket once if the header is not buffered;
// ok false when the head is not a whole SEND header. other is true when
// the head is a whole header of another frame (an acknowledgement, a
// request for a grant, RDMA traffic), which the caller may handle first to
// see the SEND behind it.
func (w *tcpWire) headStamp() (s uint16, ok, other bool) {
	b := &w.rd
	if b.hdrOK {
		return b.cur.stamp, b.cur.typ == msgSend, b.cur.typ != msgSend
	}
	if b.wp-b.rp < frameHdr {
		if got, _ := b.fillNB(true); !got || b.wp-b.rp < frameHdr {
			return 0, false, false
		}
	}
	var f frame
	f.get(b.buf[b.rp:])
	if !checkFrame(&f) {
		return 0, false, false // the turn that reads it breaks the connection
	}
	return f.stamp, f.typ == msgSend, f.typ != msgSend
}
