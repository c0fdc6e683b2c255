package soft

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"godat/rdma"
)

// Connection management: one abstract SEQPACKET socket per listener
// (@godat/<ia-addr>/<qual as 16 hex digits>) and one socket per connection,
// kept open for the connection's life. Messages: REQ (active → passive,
// carries the connection memfd and the active IA segment), ACC (carries the
// passive IA segment), REJ, RTU (active confirms), DISC (orderly end).

const (
	msgReq  = 1
	msgAcc  = 2
	msgRej  = 3
	msgRtu  = 4
	msgDisc = 5

	cmVersion = 1
	cmHdr     = 64
	cmMaxMsg  = cmHdr + maxPrivData

	// handshake offsets
	cmOffType    = 0
	cmOffVersion = 4
	cmOffPid     = 8
	cmOffPD      = 12
	cmOffAddr    = 16 // 16 bytes
	cmOffQual    = 32
	cmOffLayout  = 40 // dataSlots, inlineMax, ctrlSlots (3 × uint32)
	cmOffPrivLen = 52
	cmOffPort    = 56 // REQ: the active side's port qualifier (0: none)

	reqReadTimeout = 5 * time.Second
)

func sockName(a netip.Addr, qual uint64) string {
	return fmt.Sprintf("@godat/%s/%016x", a.Unmap().String(), qual)
}

type hello struct {
	typ  uint32
	pid  uint32
	pd   uint32
	addr netip.Addr
	qual uint64
	port uint16
	priv []byte
	fds  []int
	ok   bool // version and layout match
}

func encodeMsg(typ uint32, pd uint32, priv []byte) []byte {
	b := make([]byte, cmHdr+len(priv))
	le := binary.LittleEndian
	le.PutUint32(b[cmOffType:], typ)
	le.PutUint32(b[cmOffVersion:], cmVersion)
	le.PutUint32(b[cmOffPid:], uint32(os.Getpid()))
	le.PutUint32(b[cmOffPD:], pd)
	le.PutUint32(b[cmOffLayout:], dataSlots)
	le.PutUint32(b[cmOffLayout+4:], inlineMax)
	le.PutUint32(b[cmOffLayout+8:], ctrlSlots)
	le.PutUint32(b[cmOffPrivLen:], uint32(len(priv)))
	copy(b[cmHdr:], priv)
	return b
}

func encodeHello(typ uint32, pd uint32, addr netip.Addr, qual uint64, port uint16, priv []byte) []byte {
	b := encodeMsg(typ, pd, priv)
	a16 := addr.As16()
	copy(b[cmOffAddr:], a16[:])
	binary.LittleEndian.PutUint64(b[cmOffQual:], qual)
	binary.LittleEndian.PutUint32(b[cmOffPort:], uint32(port))
	return b
}

// lastPort numbers active connections: each gets a port qualifier, which
// the passive side sees as the request's remote port (dat_cr_query).
var lastPort atomic.Uint32

func nextPort() uint16 {
	for {
		if p := uint16(lastPort.Add(1)); p != 0 {
			return p
		}
	}
}

// readMsg reads one CM message (and any passed descriptors).
func readMsg(c *net.UnixConn) (hello, error) {
	var h hello
	buf := make([]byte, cmMaxMsg+64)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if oobn > 0 {
		if cms, e := unix.ParseSocketControlMessage(oob[:oobn]); e == nil {
			for _, cm := range cms {
				if fds, e := unix.ParseUnixRights(&cm); e == nil {
					h.fds = append(h.fds, fds...)
				}
			}
		}
	}
	if err != nil {
		closeFds(h.fds)
		return h, err
	}
	if n == 0 {
		closeFds(h.fds)
		return h, errors.New("soft: cm: peer closed")
	}
	if n < cmHdr {
		closeFds(h.fds)
		return h, errors.New("soft: cm: short message")
	}
	le := binary.LittleEndian
	h.typ = le.Uint32(buf[cmOffType:])
	h.pid = le.Uint32(buf[cmOffPid:])
	h.pd = le.Uint32(buf[cmOffPD:])
	h.addr = netip.AddrFrom16([16]byte(buf[cmOffAddr : cmOffAddr+16])).Unmap()
	h.qual = le.Uint64(buf[cmOffQual:])
	h.port = uint16(le.Uint32(buf[cmOffPort:]))
	h.ok = le.Uint32(buf[cmOffVersion:]) == cmVersion &&
		le.Uint32(buf[cmOffLayout:]) == dataSlots &&
		le.Uint32(buf[cmOffLayout+4:]) == inlineMax &&
		le.Uint32(buf[cmOffLayout+8:]) == ctrlSlots
	pl := int(le.Uint32(buf[cmOffPrivLen:]))
	if pl > maxPrivData || cmHdr+pl > n {
		closeFds(h.fds)
		return h, errors.New("soft: cm: bad private data length")
	}
	h.priv = append([]byte(nil), buf[cmHdr:cmHdr+pl]...)
	return h, nil
}

func closeFds(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

func isFault(err error) bool { return errors.Is(err, unix.EFAULT) }

// isLocalAddr reports whether a is an address of this host.
func isLocalAddr(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, ia := range addrs {
		if p, ok := ia.(*net.IPNet); ok {
			if x, ok := netip.AddrFromSlice(p.IP); ok && x.Unmap() == a {
				return true
			}
		}
	}
	return false
}

// mapPeerSeg maps a peer's IA segment and checks it.
func mapPeerSeg(fd int) (shm, error) {
	m, err := mapFd(fd, iaSegSize)
	if err != nil {
		return shm{}, err
	}
	if m.ld32(iaOffMagic) != iaMagic {
		m.unmap()
		return shm{}, errors.New("soft: cm: bad IA segment")
	}
	return m, nil
}

// ---- listener ----

type listener struct {
	dev  *device
	qual uint64
	ln   *net.UnixListener
	h    rdma.ListenHandler
	once sync.Once
}

func (d *device) Listen(qual uint64, any bool, h rdma.ListenHandler) (rdma.Listener, error) {
	if h == nil {
		return nil, rdma.ErrInvalid
	}
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return nil, rdma.ErrClosed
	}
	var ln *net.UnixListener
	var err error
	for try := 0; ; try++ {
		if any {
			qual = 1<<62 | rand.Uint64()>>2
		}
		ln, err = net.ListenUnix("unixpacket", &net.UnixAddr{Name: sockName(d.addr, qual), Net: "unixpacket"})
		if err == nil {
			break
		}
		if errors.Is(err, syscall.EADDRINUSE) {
			if any && try < 1000 {
				continue
			}
			return nil, rdma.ErrQualInUse
		}
		return nil, fmt.Errorf("soft: listen: %v: %w", err, rdma.ErrNoResources)
	}
	l := &listener{dev: d, qual: qual, ln: ln, h: h}
	d.mu.Lock()
	d.lsns[l] = struct{}{}
	d.mu.Unlock()
	go l.serve()
	return l, nil
}

func (l *listener) Qual() uint64 { return l.qual }

func (l *listener) Close() error {
	err := rdma.ErrClosed
	l.once.Do(func() {
		err = nil
		l.ln.Close()
		l.dev.mu.Lock()
		delete(l.dev.lsns, l)
		l.dev.mu.Unlock()
	})
	return err
}

func (l *listener) serve() {
	for {
		c, err := l.ln.AcceptUnix()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // e.g. EMFILE; bounded retry
			continue
		}
		go l.incoming(c)
	}
}

// incoming runs the passive side of one connection's CM socket for its
// whole life.
func (l *listener) incoming(c *net.UnixConn) {
	c.SetReadDeadline(time.Now().Add(reqReadTimeout))
	h, err := readMsg(c)
	if err != nil || h.typ != msgReq || !h.ok || len(h.fds) != 2 {
		if err == nil {
			closeFds(h.fds)
		}
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	r := &connReq{l: l, sock: c, h: h}
	l.h.ConnRequest(r)
	for {
		m, err := readMsg(c)
		if err == nil {
			closeFds(m.fds)
		}
		switch {
		case err != nil:
			r.ended(false)
			return
		case m.typ == msgRtu:
			r.rtu()
		case m.typ == msgDisc:
			r.ended(true)
			return
		}
	}
}

// ---- connection request ----

const (
	reqPending = iota
	reqAccepted
	reqRejected
	reqGone
)

type connReq struct {
	l     *listener
	sock  *net.UnixConn
	h     hello
	mu    sync.Mutex
	state int
	qp    *qp
	epoch uint64
}

func (r *connReq) RemoteAddr() netip.AddrPort { return netip.AddrPortFrom(r.h.addr, r.h.port) }
func (r *connReq) Qual() uint64               { return r.l.qual }
func (r *connReq) PrivateData() []byte        { return r.h.priv }

func (r *connReq) Reject() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != reqPending {
		return rdma.ErrState
	}
	r.state = reqRejected
	closeFds(r.h.fds)
	r.sock.SetWriteDeadline(time.Now().Add(time.Second))
	r.sock.Write(encodeMsg(msgRej, 0, nil))
	r.sock.Close()
	return nil
}

// Refuse closes the request's socket without an answer, as a missing
// listener would: the active side sees ConnNonPeerRejected.
func (r *connReq) Refuse() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != reqPending {
		return rdma.ErrState
	}
	r.state = reqRejected
	closeFds(r.h.fds)
	r.sock.Close()
	return nil
}

func (r *connReq) Accept(qpi rdma.QP, priv []byte) error {
	q, ok := qpi.(*qp)
	if !ok || q == nil || len(priv) > maxPrivData {
		return rdma.ErrInvalid
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != reqPending && r.state != reqGone {
		return rdma.ErrState
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.idleLocked(); err != nil {
		return err
	}
	// From here a failure ends the QP as a failed connection does: it is
	// disconnected and its posted receives are flushed.
	if r.state == reqGone {
		// The active side gave up (timeout, destroyed) before the accept.
		q.teardownLocked(true)
		return rdma.ErrUnreachable
	}
	mem, err := mapFd(r.h.fds[0], connMemSize)
	if err != nil {
		q.teardownLocked(true)
		return rdma.ErrNoResources
	}
	peer, err := mapPeerSeg(r.h.fds[1])
	if err != nil {
		mem.unmap()
		q.teardownLocked(true)
		return rdma.ErrNoResources
	}
	c := newConn(mem, peer, false)
	c.sock = r.sock
	c.peerPid = int(r.h.pid)
	c.peerPD = r.h.pd
	r.sock.SetWriteDeadline(time.Now().Add(time.Second))
	_, _, err = r.sock.WriteMsgUnix(encodeMsg(msgAcc, q.cfg.PD, priv), unix.UnixRights(q.dev.fd), nil)
	if err != nil {
		c.sock = nil // the request keeps the socket; ended() closes it
		c.release()
		q.teardownLocked(true)
		return rdma.ErrUnreachable
	}
	closeFds(r.h.fds)
	r.h.fds = nil
	r.state = reqAccepted
	r.qp = q
	q.c = c
	q.state = stAccepting
	q.localPort = uint16(r.l.qual)
	q.remoteAddr = netip.AddrPortFrom(r.h.addr, r.h.port)
	r.epoch = q.epoch
	return nil
}

// rtu: the active side confirmed; the passive QP is established.
func (r *connReq) rtu() {
	r.mu.Lock()
	q, ep := r.qp, r.epoch
	r.mu.Unlock()
	if q == nil {
		return
	}
	q.mu.Lock()
	if q.epoch != ep || q.state != stAccepting {
		q.mu.Unlock()
		return
	}
	q.state = stConnected
	q.mu.Unlock()
	q.event(rdma.ConnEstablished, nil)
}

// ended: the CM socket closed (orderly: after a DISC).
func (r *connReq) ended(orderly bool) {
	r.mu.Lock()
	st, q, ep := r.state, r.qp, r.epoch
	if st == reqPending {
		r.state = reqGone
		closeFds(r.h.fds)
		r.h.fds = nil
		r.sock.Close()
	}
	r.mu.Unlock()
	if st == reqAccepted && q != nil {
		q.peerEnded(ep, orderly)
	} else if st != reqPending {
		r.sock.Close()
	}
}

// idleLocked is the state check of Accept and Connect: only an idle
// (unconnected) QP may start a connection. q.mu is held.
func (q *qp) idleLocked() error {
	switch q.state {
	case stIdle:
		return nil
	case stDestroyed:
		return rdma.ErrClosed
	}
	return rdma.ErrState
}

// ---- active side ----

func (q *qp) Connect(addr netip.AddrPort, qual uint64, priv []byte, timeout time.Duration) error {
	if len(priv) > maxPrivData {
		return rdma.ErrInvalid
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.idleLocked(); err != nil {
		return err
	}
	fd, mem, err := newMemfd("godat-conn", connMemSize)
	if err != nil {
		return fmt.Errorf("soft: connect: %v: %w", err, rdma.ErrNoResources)
	}
	q.state = stConnecting
	q.cmem = mem
	q.remoteAddr = netip.AddrPortFrom(addr.Addr().Unmap(), uint16(qual))
	q.localPort = nextPort()
	p := append([]byte(nil), priv...)
	go q.connectRun(q.epoch, addr.Addr().Unmap(), qual, q.localPort, p, timeout, fd)
	return nil
}

// connectFailed ends attempt ep with an event.
func (q *qp) connectFailed(ep uint64, kind rdma.ConnEventKind) {
	q.mu.Lock()
	if q.epoch != ep || q.state != stConnecting {
		q.mu.Unlock()
		return
	}
	q.teardownLocked(true)
	q.mu.Unlock()
	q.event(kind, nil)
}

func (q *qp) connectRun(ep uint64, addr netip.Addr, qual uint64, port uint16, priv []byte, timeout time.Duration, memFd int) {
	defer unix.Close(memFd)
	if !isLocalAddr(addr) {
		q.connectFailed(ep, rdma.ConnUnreachable)
		return
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	ua := &net.UnixAddr{Name: sockName(addr, qual), Net: "unixpacket"}
	var sock *net.UnixConn
	for {
		var err error
		sock, err = net.DialUnix("unixpacket", nil, ua)
		if err == nil {
			break
		}
		if errors.Is(err, syscall.EAGAIN) && (deadline.IsZero() || time.Now().Before(deadline)) {
			time.Sleep(time.Millisecond) // listener backlog full
			continue
		}
		if errors.Is(err, syscall.EAGAIN) {
			q.connectFailed(ep, rdma.ConnTimedOut)
		} else {
			q.connectFailed(ep, rdma.ConnNonPeerRejected)
		}
		return
	}
	q.mu.Lock()
	if q.epoch != ep || q.state != stConnecting {
		q.mu.Unlock()
		sock.Close()
		return
	}
	q.csock = sock
	pd := q.cfg.PD
	q.mu.Unlock()

	sock.SetWriteDeadline(time.Now().Add(time.Second))
	_, _, err := sock.WriteMsgUnix(encodeHello(msgReq, pd, q.dev.addr, qual, port, priv), unix.UnixRights(memFd, q.dev.fd), nil)
	if err != nil {
		q.connectFailed(ep, rdma.ConnNonPeerRejected)
		return
	}
	sock.SetReadDeadline(deadline)
	h, err := readMsg(sock)
	if err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			q.connectFailed(ep, rdma.ConnTimedOut)
		} else {
			q.connectFailed(ep, rdma.ConnNonPeerRejected)
		}
		return
	}
	switch {
	case h.typ == msgRej:
		closeFds(h.fds)
		q.connectFailed(ep, rdma.ConnRejected)
		return
	case h.typ != msgAcc || !h.ok || len(h.fds) != 1:
		closeFds(h.fds)
		q.connectFailed(ep, rdma.ConnNonPeerRejected)
		return
	}
	peer, err := mapPeerSeg(h.fds[0])
	closeFds(h.fds)
	if err != nil {
		q.connectFailed(ep, rdma.ConnNonPeerRejected)
		return
	}
	q.mu.Lock()
	if q.epoch != ep || q.state != stConnecting {
		q.mu.Unlock()
		peer.unmap()
		return
	}
	c := newConn(q.cmem, peer, true)
	q.cmem = shm{}
	c.sock = sock
	q.csock = nil
	c.peerPid = int(h.pid)
	c.peerPD = h.pd
	q.c = c
	sock.SetWriteDeadline(time.Now().Add(time.Second))
	if _, err := sock.Write(encodeMsg(msgRtu, pd, nil)); err != nil {
		q.teardownLocked(true)
		q.mu.Unlock()
		q.event(rdma.ConnBroken, nil)
		return
	}
	q.state = stConnected
	q.mu.Unlock()
	q.event(rdma.ConnEstablished, h.priv)

	sock.SetReadDeadline(time.Time{})
	for {
		m, err := readMsg(sock)
		if err != nil {
			q.peerEnded(ep, false)
			return
		}
		closeFds(m.fds)
		if m.typ == msgDisc {
			q.peerEnded(ep, true)
			return
		}
	}
}
