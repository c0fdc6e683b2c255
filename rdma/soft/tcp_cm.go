package soft

// Connection management over TCP. The active side connects to the port of
// the service id (tcpPortOf) and sends REQ (magic, version, the 64-bit
// service id, its grant, private data). The passive side answers REJ
// (consumer reject with private data, nobody listening on that id or no
// room in the backlog, version mismatch) or ACC (its grant, private data);
// the active side confirms with RTU and both are connected. Data frames
// follow on the same connection; DISC ends it in order, anything else that
// ends the socket is a broken connection.
//
// Every step of the passive handshake is bounded by cmTimeout: the REQ
// after the TCP connection, the RTU after our ACC. A half-open handshake
// is closed and forgotten after that; the time the consumer takes to
// answer is bounded by the active side's own connect timeout (its end
// closes the socket, and the request is gone).

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"godat/rdma"
)

// ---- active side ----

// bound is what the dialing goroutine tells Connect once its socket has a
// local port, or why it has none.
type bound struct {
	port uint16
	err  error
}

// connectTCPLocked starts an active TCP connection; q.mu is held. The
// local port is bound before it returns, so that LocalAddr is valid at
// once and a lack of descriptors is an error of the call, not an event.
func (q *qp) connectTCPLocked(a netip.Addr, svc uint64, priv []byte, timeout time.Duration) error {
	d := q.dev
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	c := q.newConn(nil)
	c.cancel = cancel
	q.bindLocked(c, true)
	to := netip.AddrPortFrom(a, tcpPortOf(svc))
	q.remote = to
	bch := make(chan bound, 1)
	go q.dialTCP(ctx, c, to, svc, priv, bch)
	var b bound
	select {
	case b = <-bch:
	case <-time.After(cmTimeout):
		b.err = context.DeadlineExceeded
	}
	if b.err != nil {
		if errors.Is(b.err, syscall.EMFILE) || errors.Is(b.err, syscall.ENFILE) || errors.Is(b.err, syscall.ENOBUFS) {
			q.teardownLocked(endAbort)
			q.state, q.remote = rdma.QPSInit, netip.AddrPort{}
			return fmt.Errorf("soft: connect: %v: %w", b.err, rdma.ErrNoResources)
		}
		q.endLocked(endAbort, rdma.CMUnreachable)
		return nil
	}
	src := d.sourceFor(a)
	if !src.IsValid() {
		src = d.localFor(a) // until the connection says (confirm)
	}
	q.local = netip.AddrPortFrom(src, b.port)
	return nil
}

// sourceFor is the local address to bind when connecting to a: the IA
// address when it can reach a, else none (the kernel picks). A wild device
// binds none: the kernel picks the source that routes to a (its reported
// address need not be the one on the way to a), and the connection's local
// address is the socket's.
func (d *device) sourceFor(a netip.Addr) netip.Addr {
	ia := d.addr
	if d.wild || ia.Is4() != a.Is4() || ia.IsLoopback() != a.IsLoopback() || ia.IsUnspecified() {
		return netip.Addr{}
	}
	return ia
}

// dialFailure maps a failed dial to the event it means.
func dialFailure(ctx context.Context, err error) rdma.CMEventType {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return rdma.CMTimedOut
	case errors.As(err, &ne) && ne.Timeout():
		return rdma.CMTimedOut
	case errors.Is(err, syscall.ECONNREFUSED):
		return rdma.CMRefused
	}
	return rdma.CMUnreachable
}

// dialTCP connects, runs the active handshake, then reads the connection
// for its life.
func (q *qp) dialTCP(ctx context.Context, c *conn, to netip.AddrPort, svc uint64, priv []byte, bch chan<- bound) {
	d := q.dev
	src := d.sourceFor(to.Addr())
	if !src.IsValid() {
		src = netip.IPv4Unspecified()
		if to.Addr().Is6() {
			src = netip.IPv6Unspecified()
		}
	}
	told := false
	dl := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		// Runs after socket() and before connect(): bind here and tell
		// Connect the port.
		var b bound
		err := rc.Control(func(fd uintptr) {
			// SO_REUSEADDR before the bind: the port, once in TIME_WAIT
			// after the connection, must not keep a listener (whose
			// service id maps to it) from binding it.
			_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
			b.err = bindAny(int(fd), src)
			if b.err == nil {
				b.port, b.err = localPort(int(fd))
			}
		})
		if b.err == nil {
			b.err = err
		}
		bch <- b
		told = true
		return b.err
	}}
	s, err := dl.DialContext(ctx, "tcp", to.String())
	if !told {
		bch <- bound{err: err} // no socket at all (descriptors, cancel)
		return
	}
	if err != nil {
		q.attemptFailed(c, dialFailure(ctx, err), nil)
		return
	}
	w, err := newTCPWire(d, s.(*net.TCPConn))
	if err != nil {
		q.attemptFailed(c, rdma.CMUnreachable, nil)
		return
	}
	if !q.sendRequest(c, w, svc, priv) {
		w.abort()
		return
	}
	w.flush()
	// The handshake read wakes at the connect deadline, or at once when
	// the attempt is torn down (the socket closes).
	if dd, ok := ctx.Deadline(); ok {
		_ = w.sock.SetReadDeadline(dd)
	}
	ev, accPriv := w.awaitAnswer(ctx)
	if ev != 0 {
		q.attemptFailed(c, ev, accPriv)
		w.abort()
		return
	}
	if !q.confirm(c, w, accPriv) {
		w.abort()
		return
	}
	w.flush()
	if !w.establish() {
		q.peerEnded(c, false)
		w.abort()
	}
}

// sendRequest attaches the dialed wire to attempt c and queues REQ; false
// when the attempt was torn down meanwhile.
func (q *qp) sendRequest(c *conn, w *tcpWire, svc uint64, priv []byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.c != c {
		return false
	}
	c.w = w
	w.bind(q, c)
	w.wmu.Lock()
	w.queueLocked(frame{typ: frReq, flags: tcpVersion, ack: q.dev.tcp.token, aux: tcpMagic, addr: svc}, priv).fixedAck = true
	w.wmu.Unlock()
	w.grant.Store(c.grantLocked())
	return true
}

// confirm queues RTU and makes the QP RTS after the peer's ACC; false when
// the attempt was torn down meanwhile.
func (q *qp) confirm(c *conn, w *tcpWire, accPriv []byte) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.c != c {
		return false
	}
	_ = w.sock.SetReadDeadline(time.Time{})
	c.cancel() // the attempt is over: a teardown closes the socket from now on
	c.cancel = nil
	w.wmu.Lock()
	w.queueLocked(frame{typ: frRtu}, nil).fixedAck = true
	w.wmu.Unlock()
	q.local = w.sock.local
	q.remote = w.sock.remote
	q.establishLocked(c, accPriv)
	return true
}

// awaitAnswer reads the passive side's answer: 0 and its private data
// for an ACC, else the failure event (and the reject's private data).
func (w *tcpWire) awaitAnswer(ctx context.Context) (rdma.CMEventType, []byte) {
	var f frame
	err := w.rd.header(&f)
	var priv []byte
	if err == nil && !checkHandshake(&f) {
		err = errProto
	}
	if err == nil && (f.typ == frAcc || f.typ == frRej) {
		priv, err = w.rd.bytes(int(f.len))
	}
	switch {
	case err != nil:
		if errors.Is(err, syscall.ETIMEDOUT) || ctx.Err() != nil || isTimeout(err) {
			return rdma.CMTimedOut, nil
		}
		return rdma.CMRefused, nil
	case f.typ == frRej && f.aux == rejConsumer:
		return rdma.CMRejected, priv
	case f.typ != frAcc:
		return rdma.CMRefused, nil
	}
	w.peerG.Store(f.grant)
	w.setOrder(f.ack)
	return 0, priv
}

// bindAny binds socket fd to src, port 0 (the kernel picks the port).
func bindAny(fd int, src netip.Addr) error {
	if src.Is4() {
		return unix.Bind(fd, &unix.SockaddrInet4{Addr: src.As4()})
	}
	sa := &unix.SockaddrInet6{Addr: src.As16()}
	if z := src.Zone(); z != "" {
		if ifc, err := net.InterfaceByName(z); err == nil {
			sa.ZoneId = uint32(ifc.Index)
		}
	}
	return unix.Bind(fd, sa)
}

// localPort is the port socket fd is bound to.
func localPort(fd int) (uint16, error) {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return 0, err
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return uint16(a.Port), nil
	case *unix.SockaddrInet6:
		return uint16(a.Port), nil
	}
	return 0, syscall.EAFNOSUPPORT
}

// ---- passive side ----

// incomingTCP runs the passive side of one accepted TCP connection: the
// request, the wait for the consumer and the active side's RTU, then the
// data reader for the connection's whole life.
func (d *device) incomingTCP(p *tcpPort, s *net.TCPConn) {
	w, err := newTCPWire(d, s)
	if err != nil {
		return
	}
	if !d.tcp.track(w, true) {
		w.abort()
		return
	}
	_ = w.sock.SetReadDeadline(time.Now().Add(cmTimeout))
	var f frame
	err = w.rd.header(&f)
	if err != nil || f.typ != frReq || !checkHandshake(&f) {
		d.tcp.track(w, false)
		w.abort()
		return
	}
	priv, err := w.rd.bytes(int(f.len))
	if err != nil {
		d.tcp.track(w, false)
		w.abort()
		return
	}
	var l *listener
	reason := uint32(rejVersion)
	if f.flags == tcpVersion {
		reason = rejNoListener
		if l = d.tcp.lookupSvc(p, f.addr); l != nil && !l.admit() {
			l = nil // backlog full: refused as if nobody listened
		}
	}
	if l == nil {
		d.tcp.track(w, false)
		w.reject(reason, nil)
		w.drain()
		return
	}
	_ = w.sock.SetReadDeadline(time.Time{})
	w.peerG.Store(f.grant)
	w.setOrder(f.ack)
	tp := &tcpPending{w: w}
	r := &connReq{l: l, remote: w.sock.remote, priv: priv, p: tp}
	l.deliver(r)

	// The next frame is the RTU that follows our ACC, or nothing: the
	// active side gave up, or the consumer rejected.
	err = w.rd.header(&f)
	accepted := r.settle()
	q, c := tp.q, tp.c
	d.tcp.track(w, false)
	switch {
	case !accepted:
		if w.dead.Load() {
			w.drain() // rejected: let the REJ reach the peer
			return
		}
	case err == nil && f.typ == frRtu && checkHandshake(&f):
		w.heardGrant(&f)
		_ = w.sock.SetReadDeadline(time.Time{})
		if q.established(c, nil) {
			if !w.establish() {
				q.peerEnded(c, false)
				w.abort()
			}
			return
		}
	default:
		q.peerEnded(c, false)
	}
	w.abort()
}

// reject queues a REJ and shuts the write side after it; the caller (or
// the incoming goroutine) drains until the active side closes, bounded by
// the linger time.
func (w *tcpWire) reject(reason uint32, priv []byte) {
	w.lingerUntil.Store(time.Now().Add(lingerTime).UnixNano())
	_ = w.sock.SetReadDeadline(time.Now().Add(lingerTime))
	w.wmu.Lock()
	it := w.queueLocked(frame{typ: frRej, aux: reason}, priv)
	it.fixedAck, it.fin = true, true
	w.wmu.Unlock()
	w.dead.Store(true)
	w.flush()
}

// tcpPending is a TCP request waiting for its answer.
type tcpPending struct {
	w *tcpWire
	q *qp // set by accept (under connReq.mu)
	c *conn
}

// accept connects the request to q and queues ACC; the RTU must come
// within cmTimeout.
func (tp *tcpPending) accept(q *qp, priv []byte, gone bool) {
	w := tp.w
	c := q.newConn(w)
	q.bindLocked(c, false)
	q.local = w.sock.local
	q.remote = w.sock.remote
	if gone {
		q.endLocked(endAbort, rdma.CMAcceptError)
		return
	}
	w.bind(q, c)
	tp.q, tp.c = q, c
	w.grant.Store(c.grantLocked())
	_ = w.sock.SetReadDeadline(time.Now().Add(cmTimeout))
	w.wmu.Lock()
	w.queueLocked(frame{typ: frAcc, ack: q.dev.tcp.token, aux: tcpMagic}, priv).fixedAck = true
	w.wmu.Unlock()
	w.kickWriter()
}

// reject answers no: REJ with the consumer's reason and private data, or
// the no-listener reason for a refusal.
func (tp *tcpPending) reject(reason rdma.RejectReason, priv []byte) {
	why := uint32(rejNoListener)
	if reason == rdma.RejectConsumer {
		why = rejConsumer
	} else {
		priv = nil
	}
	tp.w.reject(why, priv)
}
