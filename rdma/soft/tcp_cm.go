package soft

// Connection management over TCP. The active side connects to the port of
// the qualifier (tcpPortOf) and sends REQ (magic, version, the 64-bit
// qualifier, its grant, private data). The passive side answers REJ
// (consumer reject, no listener on that qualifier, version mismatch) or ACC
// (its grant, private data); the active side confirms with RTU and both are
// connected. Data frames follow on the same connection; DISC ends it
// orderly, anything else that ends the socket is a broken connection.

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"godat/rdma"
)

// incoming runs the passive side of one accepted TCP connection: the
// request, the wait for the consumer and the active side's RTU, then the
// data reader for the connection's whole life.
func (d *tcpDevice) incoming(p *tcpPort, s *net.TCPConn) {
	c, err := newTconn(d, s)
	if err != nil {
		return
	}
	if !d.track(c, true) {
		c.abort()
		return
	}
	_ = s.SetReadDeadline(time.Now().Add(cmTimeout))
	var h fhdr
	err = c.rd.header(&h)
	if err != nil || h.typ != frReq || h.aux != tcpMagic || h.len > maxPrivData {
		d.track(c, false)
		c.abort()
		return
	}
	priv, err := c.rd.bytes(int(h.len))
	if err != nil {
		d.track(c, false)
		c.abort()
		return
	}
	if h.flags != tcpVersion {
		d.track(c, false)
		c.reject(rejVersion)
		c.drain()
		return
	}
	l := d.lookupQual(p, h.addr)
	if l == nil {
		d.track(c, false)
		c.reject(rejNoListener)
		c.drain()
		return
	}
	_ = s.SetReadDeadline(time.Time{})
	c.peerGrant.Store(h.grant)
	r := &tcpReq{c: c, qual: h.addr, priv: priv, remote: addrPortOf(s.RemoteAddr())}
	l.h.ConnRequest(r)

	// The next frame is the RTU that follows our ACC, or nothing: the
	// active side gave up (timeout, cancel) or the consumer rejected.
	err = c.rd.header(&h)
	r.mu.Lock()
	st, q := r.state, r.q
	if st == treqPending {
		r.state = treqGone
	}
	r.mu.Unlock()
	d.track(c, false)
	switch {
	case st == treqAccepted && err == nil && h.typ == frRtu:
		if after(h.grant, c.peerGrant.Load()) {
			c.peerGrant.Store(h.grant)
		}
		if q.rtu(c) {
			c.readLoop()
			return
		}
	case st == treqAccepted:
		q.peerEnded(c, false)
	}
	c.abort()
}

// reject queues a REJ and shuts the write side after it; the caller drains
// until the active side closes (bounded by the linger deadline).
func (c *tconn) reject(reason uint32) {
	c.lingerUntil.Store(time.Now().Add(lingerTime).UnixNano())
	_ = c.sock.SetReadDeadline(time.Now().Add(lingerTime))
	c.wmu.Lock()
	it := c.queueLocked(fhdr{typ: frRej, aux: reason}, nil)
	it.fin = true
	c.wmu.Unlock()
	c.dead.Store(true)
	c.flush()
}

// States of a tcpReq.
const (
	treqPending = iota
	treqAccepted
	treqRejected
	treqGone
)

// tcpReq is an incoming connection request.
type tcpReq struct {
	c      *tconn
	qual   uint64
	priv   []byte
	remote netip.AddrPort

	mu    sync.Mutex
	state int
	q     *tqp
}

func (r *tcpReq) RemoteAddr() netip.AddrPort { return r.remote }
func (r *tcpReq) Qual() uint64               { return r.qual }
func (r *tcpReq) PrivateData() []byte        { return r.priv }

func (r *tcpReq) Reject() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != treqPending {
		return rdma.ErrState
	}
	r.state = treqRejected
	r.c.reject(rejConsumer)
	return nil
}

// Refuse turns the request away as if nobody listened: the active side sees
// a non-peer reject.
func (r *tcpReq) Refuse() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != treqPending {
		return rdma.ErrState
	}
	r.state = treqRejected
	r.c.reject(rejNoListener)
	return nil
}

func (r *tcpReq) Accept(qpi rdma.QP, priv []byte) error {
	if len(priv) > maxPrivData {
		return rdma.ErrInvalid
	}
	switch q := qpi.(type) {
	case *tqp:
		return r.accept(q, priv)
	case *aqp:
		return q.acceptTCP(r, priv)
	}
	return rdma.ErrInvalid
}

func (r *tcpReq) accept(q *tqp, priv []byte) error {
	r.mu.Lock()
	if r.state != treqPending && r.state != treqGone {
		r.mu.Unlock()
		return rdma.ErrState
	}
	q.mu.Lock()
	if q.state != tIdle {
		st := q.state
		q.mu.Unlock()
		r.mu.Unlock()
		if st == tDestroyed {
			return rdma.ErrClosed
		}
		return rdma.ErrState
	}
	if r.state == treqGone {
		// The active side gave up before the accept: the QP ends as a
		// failed connection does (disconnected, receives flushed).
		q.teardownLocked(true, false)
		q.mu.Unlock()
		r.mu.Unlock()
		return rdma.ErrUnreachable
	}
	c := r.c
	q.bindLocked(c)
	q.state = tAccepting
	q.local = addrPortOf(c.sock.LocalAddr())
	q.remote = r.remote
	c.queue(fhdr{typ: frAcc, aux: tcpMagic}, append([]byte(nil), priv...))
	r.state, r.q = treqAccepted, q
	q.mu.Unlock()
	r.mu.Unlock()
	c.flush()
	return nil
}

// ---- active side ----

// bound is what the dialing goroutine tells Connect once its socket has a
// local port, or why it has none.
type bound struct {
	port uint16
	err  error
}

func (q *tqp) Connect(addr netip.AddrPort, qual uint64, priv []byte, timeout time.Duration) error {
	if len(priv) > maxPrivData {
		return rdma.ErrInvalid
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.state != tIdle {
		if q.state == tDestroyed {
			return rdma.ErrClosed
		}
		return rdma.ErrState
	}
	a := addr.Addr().Unmap()
	var ctx context.Context
	var cancel context.CancelFunc
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(context.Background(), timeout)
	} else {
		ctx, cancel = context.WithCancel(context.Background())
	}
	to := netip.AddrPortFrom(a, tcpPortOf(qual))
	bch := make(chan bound, 1)
	go q.connectRun(ctx, q.epoch, to, qual, append([]byte(nil), priv...), bch)
	// The local port is bound before Connect returns, so that it is the
	// EP's port qualifier at once and a lack of descriptors is an error of
	// this call, not an event.
	var b bound
	select {
	case b = <-bch:
	case <-time.After(cmTimeout):
		b.err = context.DeadlineExceeded
	}
	if b.err != nil {
		cancel()
		q.epoch++ // the attempt never started: no event for it
		if errors.Is(b.err, syscall.EMFILE) || errors.Is(b.err, syscall.ENFILE) || errors.Is(b.err, syscall.ENOBUFS) {
			return rdma.ErrNoResources
		}
		return rdma.ErrUnreachable
	}
	q.state = tConnecting
	q.cancel = cancel
	q.remote = to
	src := q.dev.sourceFor(a)
	if !src.IsValid() {
		src = q.dev.addr
	}
	q.local = netip.AddrPortFrom(src, b.port)
	return nil
}

// sourceFor is the local address to bind when connecting to a: the IA
// address when it can reach a, else none (the kernel picks).
func (d *tcpDevice) sourceFor(a netip.Addr) netip.Addr {
	ia := d.addr
	if ia.Is4() != a.Is4() || ia.IsLoopback() != a.IsLoopback() || ia.IsUnspecified() {
		return netip.Addr{}
	}
	return ia
}

// dialFailure maps a failed dial to the connection event it means.
func dialFailure(ctx context.Context, err error) rdma.ConnEventKind {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return rdma.ConnTimedOut
	case errors.As(err, &ne) && ne.Timeout():
		return rdma.ConnTimedOut
	case errors.Is(err, syscall.ECONNREFUSED):
		return rdma.ConnNonPeerRejected
	}
	return rdma.ConnUnreachable
}

func (q *tqp) connectFailed(ep uint64, kind rdma.ConnEventKind) {
	q.mu.Lock()
	if q.epoch != ep || q.state != tConnecting {
		q.mu.Unlock()
		return
	}
	q.teardownLocked(true, false)
	q.mu.Unlock()
	q.event(kind, nil)
}

func (q *tqp) connectRun(ctx context.Context, ep uint64, to netip.AddrPort, qual uint64, priv []byte, bch chan<- bound) {
	src := q.dev.sourceFor(to.Addr())
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
	conn, err := dl.DialContext(ctx, "tcp", to.String())
	if !told {
		bch <- bound{err: err} // no socket at all (descriptors, cancel)
		return
	}
	if err != nil {
		q.connectFailed(ep, dialFailure(ctx, err))
		return
	}
	s := conn.(*net.TCPConn)
	c, err := newTconn(q.dev, s)
	if err != nil {
		q.connectFailed(ep, rdma.ConnUnreachable)
		return
	}
	q.mu.Lock()
	if q.epoch != ep || q.state != tConnecting {
		q.mu.Unlock()
		c.abort()
		return
	}
	q.bindLocked(c)
	c.queue(fhdr{typ: frReq, flags: tcpVersion, aux: tcpMagic, addr: qual}, priv)
	q.mu.Unlock()
	c.flush()

	// The handshake reads wake at the connect deadline, or at once when
	// the attempt is cancelled (a teardown closes the socket).
	if dd, ok := ctx.Deadline(); ok {
		_ = s.SetReadDeadline(dd)
	}
	var h fhdr
	var accPriv []byte
	err = c.rd.header(&h)
	if err == nil && h.typ == frAcc {
		if h.aux != tcpMagic || h.len > maxPrivData {
			err = errProto
		} else {
			accPriv, err = c.rd.bytes(int(h.len))
		}
	}
	switch {
	case err != nil:
		kind := rdma.ConnNonPeerRejected
		if errors.Is(err, syscall.ETIMEDOUT) || ctx.Err() != nil || isTimeout(err) {
			kind = rdma.ConnTimedOut
		}
		q.connectFailed(ep, kind)
		return
	case h.typ == frRej && h.aux == rejConsumer:
		q.connectFailed(ep, rdma.ConnRejected)
		return
	case h.typ != frAcc:
		q.connectFailed(ep, rdma.ConnNonPeerRejected)
		return
	}
	if after(h.grant, c.peerGrant.Load()) {
		c.peerGrant.Store(h.grant)
	}
	q.mu.Lock()
	if q.epoch != ep || q.state != tConnecting || q.c != c {
		q.mu.Unlock()
		return
	}
	_ = s.SetReadDeadline(time.Time{})
	q.cancel() // the attempt is over: teardown closes the socket from now on
	q.cancel = nil
	c.queue(fhdr{typ: frRtu}, nil)
	q.state = tConnected
	q.local = addrPortOf(s.LocalAddr())
	q.remote = addrPortOf(s.RemoteAddr())
	q.mu.Unlock()
	c.flush()
	q.event(rdma.ConnEstablished, accPriv)
	c.readLoop()
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

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
