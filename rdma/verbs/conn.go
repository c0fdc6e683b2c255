package verbs

// Connections. A QP's connection lives on an rdma_cm_id of the device's
// event channel, created when the QP connects (active) or taken from the
// connection request (passive). The QP itself is not the CM's: it was
// created with ibv_create_qp, and the CM only carries its number
// (conn_param.qp_num). The backend moves it through RTR and RTS with the
// attributes rdma_init_qp_attr computes, on CONNECT_RESPONSE (active, then
// rdma_establish) or before rdma_accept (passive).
//
// Why not rdma_create_qp: the contract creates QPs in Init, before any
// connection, lets receives be posted there, and on the passive side
// connects a QP that exists before the request (whose rdma_cm_id is new).
// A QP created on the request's id would be a new QP: a new number (core
// maps numbers to endpoints at creation) and the receives posted in Init
// replayed by hand. A QP the CM does not own keeps its number and its
// receives, and Reset is a plain RESET-INIT of the same QP.
//
// Private data carries a small header (cm_priv.go): the service id on
// connect, the consumer data's length everywhere (InfiniBand's CM delivers
// fixed-size private data fields), the kind of a reject.

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"net"
	"net/netip"
	"syscall"
	"time"

	"godat/rdma"
)

const (
	// defaultConnectTimeout bounds a connect whose caller gave no bound.
	defaultConnectTimeout = 30 * time.Second
	// drainTimeout bounds a graceful disconnect's wait for posted sends.
	drainTimeout = 5 * time.Second
)

// Connection phases.
const (
	phResolving     = iota + 1 // active: address and route resolution
	phConnecting               // active: request sent
	phAccepting                // passive: accept sent
	phEstablished              // RTS
	phDisconnecting            // rdma_disconnect sent; DISCONNECTED to come
	phDone                     // ended; the QP is in Error
)

// conn is a QP's connection or connection attempt; all under d.mu.
type conn struct {
	q        *qp
	id       *C.struct_rdma_cm_id
	h        uint64
	active   bool
	phase    int
	broken   bool // failed (an error, a fatal event), not ended in order
	sid      uint64
	priv     []byte // active: the connect's private data, header included
	deadline time.Time
	local    netip.AddrPort
	remote   netip.AddrPort
	timer    *time.Timer // the connect's bound
	grace    *time.Timer // a graceful disconnect's bound
}

// end releases the connection's id (its events stop: rdma_destroy_id
// tells the peer what it must know) and its timers.
func (c *conn) end() {
	c.phase = phDone
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.grace != nil {
		c.grace.Stop()
	}
	d := c.q.d
	delete(d.draining, c.q)
	if c.id != nil {
		delete(d.objs, c.h)
		C.gd_cm_destroy_id(c.id)
		c.id = nil
	}
}

// msLeft is what is left of the connect's bound, in milliseconds.
func (c *conn) msLeft() C.int {
	ms := time.Until(c.deadline).Milliseconds()
	return C.int(max(ms, 1))
}

// remoteAddr is where a connection to addr goes: a loopback address means
// this host, whose verbs IAs listen on their device's address only (an
// rdma_cm request to 127.0.0.1 matches no listener bound to it), so it goes
// to the device's own address, which the device loops back; any other
// address is itself.
func remoteAddr(addr, own netip.Addr) netip.Addr {
	if addr = addr.Unmap(); addr.IsLoopback() {
		return own
	}
	return addr
}

// routed reports whether this host has a route from src to dst. The
// connection's id is bound to the device's address, so rdma_resolve_addr
// looks the route up through the device's interface, where Linux takes a
// destination without a route as on the link and asks ARP for it until
// the resolution times out: a connect to an unrouted address would time
// out rather than be unreachable. A lookup without the interface (a UDP
// socket's connect, which sends nothing) fails at once, ENETUNREACH, as
// the software transport's TCP connect does.
func routed(src, dst netip.Addr) bool {
	c, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(src, 0)),
		net.UDPAddrFromAddrPort(netip.AddrPortFrom(dst, 9)))
	if err != nil {
		return !errors.Is(err, syscall.ENETUNREACH) && !errors.Is(err, syscall.EHOSTUNREACH)
	}
	c.Close()
	return true
}

// Connect starts an active connection to serviceID at addr.
func (q *qp) Connect(addr netip.AddrPort, serviceID uint64, priv []byte, timeout time.Duration) error {
	d := q.d
	if len(priv) > d.attr.MaxPrivateData {
		return rdma.ErrInvalid
	}
	if timeout <= 0 {
		timeout = defaultConnectTimeout
	}
	dst := remoteAddr(addr.Addr(), d.addr)
	reach := dst == d.addr || routed(d.addr, dst)
	return d.locked(func() error {
		if q.dead {
			return rdma.ErrClosed
		}
		if q.conn != nil || C.gd_qp_state(q.c) != C.GD_QPS_INIT {
			return rdma.ErrState
		}
		c := &conn{q: q, h: newHandle(), active: true, phase: phResolving, sid: serviceID,
			priv: reqHeader(serviceID, priv), deadline: time.Now().Add(timeout),
			local:  netip.AddrPortFrom(d.addr, 0),
			remote: netip.AddrPortFrom(dst, portOf(serviceID))}
		if r := C.gd_cm_create_id(d.ech, C.uint64_t(c.h), &c.id); r != 0 {
			c.id = nil
			return wrap("rdma_create_id", errnoOf(r, nil))
		}
		// Bound here rather than by rdma_resolve_addr, so that the EP
		// has its local port from the call on (dat_ep_connect(3DAT):
		// "the Endpoint is bound to a Port Qualifier of the local IA"):
		// librdmacm learns the port of an id the resolution bound only
		// with the resolution's event, and of one it binds at once.
		la := sockaddr(c.local)
		if r := C.gd_cm_bind(c.id, saPtr(&la)); r != 0 {
			C.gd_cm_destroy_id(c.id)
			return wrap("rdma_bind_addr", errnoOf(r, nil))
		}
		if p := int(C.gd_id_port(c.id)); p > 0 {
			c.local = netip.AddrPortFrom(d.addr, uint16(p))
		}
		q.conn = c
		d.objs[c.h] = c
		q.setState(C.GD_QPS_CONN)
		if !reach {
			d.fail(c, rdma.CMUnreachable, nil)
			return nil
		}
		src, dst := sockaddr(c.local), sockaddr(c.remote)
		if r := C.gd_cm_resolve_addr(c.id, saPtr(&src), saPtr(&dst), c.msLeft()); r != 0 {
			d.fail(c, rdma.CMUnreachable, nil)
			return nil
		}
		c.timer = time.AfterFunc(timeout, func() { d.connectTimeout(c) })
		return nil
	})
}

// connectTimeout ends an attempt that outlived its bound: rdma_destroy_id
// rejects it at the peer (which then fails an accept with CMAcceptError).
func (d *device) connectTimeout(c *conn) {
	d.mu.Lock()
	if c.q.conn == c && (c.phase == phResolving || c.phase == phConnecting) {
		d.fail(c, rdma.CMTimedOut, nil)
	}
	evs := d.takeAsync()
	d.mu.Unlock()
	d.deliver(evs)
}

// fail ends a connection that did not come about, or one that ended before
// it was established: the QP goes to Error (flushing what it holds).
func (d *device) fail(c *conn, t rdma.CMEventType, priv []byte) {
	q := c.q
	c.end()
	q.toError()
	q.cm.push(rdma.CMEvent{Type: t, Context: q.ctx, PrivateData: priv})
}

// established moves the connection to RTS.
func (d *device) established(c *conn, priv []byte) {
	q := c.q
	if c.timer != nil {
		c.timer.Stop()
	}
	c.phase = phEstablished
	var l, p C.struct_sockaddr_storage
	C.gd_id_addrs(c.id, &l, &p)
	if a := addrPort(&l); a.IsValid() {
		c.local = a
	}
	if a := addrPort(&p); a.IsValid() {
		c.remote = a
	}
	q.setState(C.GD_QPS_RTS)
	q.cm.push(rdma.CMEvent{Type: rdma.CMEstablished, Context: q.ctx, PrivateData: priv})
}

// Disconnect ends the connection or the attempt.
func (q *qp) Disconnect(graceful bool) error {
	d := q.d
	return d.locked(func() error {
		if q.dead {
			return rdma.ErrClosed
		}
		c := q.conn
		if c == nil {
			return rdma.ErrState
		}
		switch c.phase {
		case phResolving, phConnecting, phAccepting:
			// Destroying the id rejects the attempt at the peer.
			d.fail(c, rdma.CMDisconnected, nil)
		case phEstablished:
			if graceful && d.startDrain(c) {
				return nil
			}
			d.disconnect(c)
		}
		return nil
	})
}

// disconnect ends an established connection from this side: Error (the
// QP flushes), then a disconnect request to the peer; CMDisconnected (or
// CMBroken) follows when the CM reports the end.
func (d *device) disconnect(c *conn) {
	q := c.q
	q.toError()
	c.phase = phDisconnecting
	if c.grace != nil {
		c.grace.Stop()
	}
	delete(d.draining, q)
	C.gd_qp_drain(q.c, 0)
	if r := C.gd_cm_disconnect(c.id); r != 0 {
		d.finish(c) // nothing left to tell the peer
	}
}

// finish reports the end of a connection this side ended.
func (d *device) finish(c *conn) {
	t := rdma.CMDisconnected
	if c.broken {
		t = rdma.CMBroken
	}
	c.end()
	c.q.cm.push(rdma.CMEvent{Type: t, Context: c.q.ctx})
}

// peerDisconnected reports the end of a connection the peer ended (or the
// CM, for a peer that vanished). The connection broke, rather than ended in
// order, when the device had already put the QP in Error by itself.
func (d *device) peerDisconnected(c *conn) {
	q := c.q
	if !c.broken && C.gd_qp_state(q.c) != C.GD_QPS_ERR && C.gd_query_state(q.ibqp) == C.IBV_QPS_ERR {
		c.broken = true
	}
	q.toError()
	d.finish(c)
}

// startDrain begins a graceful disconnect: the marker request (qp.c)
// completes after every send posted before it, and its completion (read by
// the consumer's Poll or by the event thread's pump, events.go) ends the
// connection; drainTimeout bounds the wait.
func (d *device) startDrain(c *conn) bool {
	q := c.q
	if C.gd_post_mark(q.c) != 0 {
		if C.gd_qp_sq_outstanding(q.c) == 0 {
			return false
		}
		C.gd_qp_drain(q.c, 1)
	}
	d.draining[q] = struct{}{}
	c.grace = time.AfterFunc(drainTimeout, func() {
		d.mu.Lock()
		if q.conn == c && c.phase == phEstablished {
			d.disconnect(c)
		}
		evs := d.takeAsync()
		d.mu.Unlock()
		d.deliver(evs)
	})
	C.gd_dev_kick(d.c)
	return true
}

// onConn handles an rdma_cm event of a connection.
func (d *device) onConn(c *conn, ev *C.struct_gd_cmev) {
	q := c.q
	if q.conn != c || c.phase == phDone {
		return
	}
	status := int(ev.status)
	switch ev.event {
	case C.RDMA_CM_EVENT_ADDR_RESOLVED:
		if r := C.gd_cm_resolve_route(c.id, c.msLeft()); r != 0 {
			d.fail(c, rdma.CMUnreachable, nil)
		}
	case C.RDMA_CM_EVENT_ROUTE_RESOLVED:
		srq := C.int(0)
		if q.srq != nil {
			srq = 1
		}
		r := C.gd_cm_connect(c.id, C.uint32_t(q.num), srq, bytesPtr(c.priv), C.int(len(c.priv)),
			C.int(q.maxRd), C.int(q.maxInit))
		if r != 0 {
			// iWARP connects its TCP stream within the call: nobody
			// listening is a refusal there.
			d.fail(c, connectFailure(int(r)), nil)
			return
		}
		c.phase = phConnecting
	case C.RDMA_CM_EVENT_ADDR_ERROR, C.RDMA_CM_EVENT_ROUTE_ERROR:
		d.fail(c, rdma.CMUnreachable, nil)
	case C.RDMA_CM_EVENT_CONNECT_RESPONSE:
		if c.phase != phConnecting {
			return
		}
		r := C.gd_cm_ready(c.id, q.ibqp, -1, -1, cBool(d.ib))
		if r == 0 {
			r = C.gd_cm_establish(c.id)
		}
		if r != 0 {
			C.gd_cm_reject(c.id, nil, 0)
			d.fail(c, rdma.CMUnreachable, nil)
			return
		}
		d.established(c, parseRep(pdata(ev)))
	case C.RDMA_CM_EVENT_ESTABLISHED:
		// Passive side, and the active side of iWARP (whose CM moves
		// the QP itself).
		if c.phase == phConnecting || c.phase == phAccepting {
			var priv []byte
			if c.active {
				priv = parseRep(pdata(ev))
			}
			d.established(c, priv)
		}
	case C.RDMA_CM_EVENT_REJECTED:
		switch {
		case c.phase == phAccepting:
			d.fail(c, rdma.CMAcceptError, nil)
		case c.active && c.phase == phConnecting:
			kind, priv := parseRej(pdata(ev))
			if kind == rejConsumer {
				d.fail(c, rdma.CMRejected, priv)
			} else {
				d.fail(c, rdma.CMRefused, nil)
			}
		}
	case C.RDMA_CM_EVENT_UNREACHABLE, C.RDMA_CM_EVENT_CONNECT_ERROR:
		switch {
		case c.phase == phAccepting:
			d.fail(c, rdma.CMAcceptError, nil)
		case c.phase == phResolving || c.phase == phConnecting:
			t := rdma.CMUnreachable
			if ev.event == C.RDMA_CM_EVENT_UNREACHABLE || syscall.Errno(max(status, -status)) == syscall.ECONNREFUSED {
				t = connectFailure(status)
			}
			d.fail(c, t, nil)
		default:
			c.broken = true
			d.peerDisconnected(c)
		}
	case C.RDMA_CM_EVENT_DISCONNECTED:
		switch c.phase {
		case phAccepting:
			d.fail(c, rdma.CMAcceptError, nil)
		case phResolving, phConnecting:
			d.fail(c, rdma.CMUnreachable, nil)
		case phEstablished:
			d.peerDisconnected(c)
		case phDisconnecting:
			d.finish(c)
		}
	case C.RDMA_CM_EVENT_DEVICE_REMOVAL:
		c.broken = true
		switch c.phase {
		case phAccepting:
			d.fail(c, rdma.CMAcceptError, nil)
		case phResolving, phConnecting:
			d.fail(c, rdma.CMUnreachable, nil)
		default:
			q.toError()
			d.finish(c)
		}
	}
}

// breakQP ends an established connection that failed (a fatal
// asynchronous event, or a completion in error that Poll saw): both sides
// get CMBroken (the peer finds its QP in Error, or gets the disconnect of
// a connection that broke).
func (d *device) breakQP(q *qp) {
	c := q.conn
	if c == nil || c.phase != phEstablished {
		return
	}
	c.broken = true
	d.disconnect(c)
}

// connectFailure is the CM event of a connect that failed with errno e
// (either sign): a timeout, a refusal (iWARP: nobody listens on the port,
// the TCP connection was reset), else unreachable.
func connectFailure(e int) rdma.CMEventType {
	switch syscall.Errno(max(e, -e)) {
	case syscall.ETIMEDOUT:
		return rdma.CMTimedOut
	case syscall.ECONNREFUSED:
		return rdma.CMRefused
	}
	return rdma.CMUnreachable
}

func cBool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
