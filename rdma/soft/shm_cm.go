package soft

// Shared-memory connection management: one abstract SEQPACKET socket per
// listener (@godat/<ia-addr>/<service id as 16 hex digits>) and one socket
// per connection, kept open for the connection's life (its end is the
// peer's end: a dead peer is seen at once). See shm_msg.go for the
// messages.
//
// Who may connect: a peer whose uid (SO_PEERCRED, from the kernel) is ours;
// the active side checks the listener's the same way (an abstract name has
// no permissions, anyone may bind it first). The peer's pid for
// process_vm_* is the one SO_PEERCRED reports, never a field of a message.
// Every memfd a peer hands us is checked for the shrink seal and its size
// before it is mapped (seg_unsafe.go), and its registration table is mapped
// read-only.

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"godat/rdma"
)

// sockName is the abstract socket of a listener. A wild device's listener
// (params.wild) is named by 0.0.0.0: a peer that dials an IPv4 address of
// this host reaches it when no listener has that address's name (dialShm),
// as TCP reaches a listener on 0.0.0.0.
func sockName(a netip.Addr, svc uint64) string {
	return fmt.Sprintf("@godat/%s/%016x", a.WithZone("").String(), svc)
}

// lastPort numbers active shared-memory connections: the passive side sees
// it as the request's remote port.
var lastPort atomic.Uint32

func nextPort() uint16 {
	for {
		if p := uint16(lastPort.Add(1)); p != 0 {
			return p
		}
	}
}

// peerCred is the uid and pid of the process at the other end of s, as the
// kernel recorded them when the connection was made.
func peerCred(s *net.UnixConn) (uid uint32, pid int, err error) {
	rc, err := s.SyscallConn()
	if err != nil {
		return 0, 0, err
	}
	var cred *unix.Ucred
	cerr := rc.Control(func(fd uintptr) {
		cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if cerr != nil {
		return 0, 0, cerr
	}
	if err != nil {
		return 0, 0, err
	}
	return cred.Uid, int(cred.Pid), nil
}

// trustedPeer applies the admission rule: the peer runs as our uid.
func trustedPeer(s *net.UnixConn) (pid int, ok bool) {
	uid, pid, err := peerCred(s)
	return pid, err == nil && pid > 0 && uid == uint32(os.Getuid())
}

// readCM reads one message and its descriptors; on any error the
// descriptors are closed.
func readCM(s *net.UnixConn) (cmMsg, []int, error) {
	var buf [cmMaxMsg + 1]byte
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, flags, _, err := s.ReadMsgUnix(buf[:], oob)
	var fds []int
	if oobn > 0 {
		if cms, e := unix.ParseSocketControlMessage(oob[:oobn]); e == nil {
			for i := range cms {
				if f, e := unix.ParseUnixRights(&cms[i]); e == nil {
					fds = append(fds, f...)
				}
			}
		}
	}
	if err == nil && n == 0 {
		err = errDisc // the peer closed
	}
	if err == nil && flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 {
		err = errCMMsg
	}
	var m cmMsg
	if err == nil {
		m, err = decodeCM(buf[:n], len(fds))
	}
	if err != nil {
		closeFds(fds)
		return m, nil, err
	}
	return m, fds, nil
}

func closeFds(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// writeCM sends a message (and descriptors), bounded in time.
func writeCM(s *net.UnixConn, m *cmMsg, fds ...int) error {
	_ = s.SetWriteDeadline(time.Now().Add(time.Second))
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	_, _, err := s.WriteMsgUnix(encodeCM(m), oob, nil)
	return err
}

// peerMaps are a peer's segments, checked and mapped.
type peerMaps struct {
	mem, bell, keys seg
}

func (p *peerMaps) unmap() {
	p.mem.unmap()
	p.bell.unmap()
	p.keys.unmap()
}

// mapPeerFds maps the descriptors of a REQ (connection segment, bell,
// table) or an ACC (bell, table); the descriptors are closed either way.
func mapPeerFds(fds []int) (peerMaps, error) {
	defer closeFds(fds)
	var p peerMaps
	var err error
	i := 0
	if len(fds) == 3 {
		if p.mem, err = mapPeer(fds[0], connSegSize, true); err != nil {
			return p, err
		}
		i = 1
	}
	if p.bell, err = mapPeer(fds[i], bellSegSize, true); err != nil {
		p.unmap()
		return p, err
	}
	if p.keys, err = mapPeer(fds[i+1], keySegSize, false); err != nil {
		p.unmap()
		return p, err
	}
	if p.keys.ld32(keyOffMagic) != keyMagic || p.bell.ld32(bellOffMagic) != bellMagic {
		p.unmap()
		return p, errCMMsg
	}
	return p, nil
}

// keysReadOnly is the read-only descriptor of our registration table that
// peers get (opened once per device).
func (d *device) keysReadOnly() (int, error) {
	d.shm.mu.Lock()
	defer d.shm.mu.Unlock()
	if d.shm.keysRO < 0 {
		fd, err := readOnlyFd(d.keyFd)
		if err != nil {
			return -1, err
		}
		d.shm.keysRO = fd
	}
	return d.shm.keysRO, nil
}

// install gives the wire its peer: segments, identity and hint base.
func (w *shmWire) install(p peerMaps, pid int, m *cmMsg) {
	w.peerBell = bellRef{p.bell}
	w.peerKeys = p.keys
	w.peerPid = pid
	w.inProc = pid == os.Getpid()
	w.peerPD = m.pd
	w.peerHint = hintOf(m.hint)
}

// ---- active side ----

// dialShm connects to a shared-memory listener of local address a: the
// one of a's name, else, for IPv4, a wild device's (0.0.0.0);
// errNoListener when nobody listens there.
func dialShm(a netip.Addr, svc uint64) (*net.UnixConn, error) {
	s, err := dialShmName(sockName(a, svc))
	if errors.Is(err, errNoListener) && a.Is4() && !a.IsUnspecified() {
		s, err = dialShmName(sockName(netip.IPv4Unspecified(), svc))
	}
	return s, err
}

func dialShmName(name string) (*net.UnixConn, error) {
	s, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: name, Net: "unixpacket"})
	if err != nil {
		if errors.Is(err, syscall.EAGAIN) {
			return nil, syscall.EAGAIN // the listener's backlog is full
		}
		return nil, errNoListener
	}
	return s, nil
}

var errNoListener = errors.New("soft: nobody listens on that service id")

// shmReachable tells an auto device whether a peer is on this host: the
// address is ours and a shared-memory listener answers there. The probe
// connection is closed at once (the listener drops it).
func (d *device) shmReachable(a netip.Addr, svc uint64) bool {
	if !isLocalAddr(a) {
		return false
	}
	s, err := dialShm(a, svc)
	if err != nil {
		return errors.Is(err, syscall.EAGAIN)
	}
	s.Close()
	return true
}

// connectShmLocked starts an active shared-memory connection; q.mu is held.
func (q *qp) connectShmLocked(a netip.Addr, svc uint64, priv []byte, timeout time.Duration) error {
	d := q.dev
	fd, mem, err := newSegment("godat-conn", connSegSize, false)
	if err != nil {
		return fmt.Errorf("soft: connect: %v: %w", err, rdma.ErrNoResources)
	}
	w := newShmWire(d, q, mem, true)
	c := q.newConn(w)
	w.c, w.gen = c, q.gen
	w.selfHint = hintFor(q.slot, q.gen)
	q.bindLocked(c, true)
	port := nextPort()
	q.local = netip.AddrPortFrom(d.localFor(a), port)
	q.remote = netip.AddrPortFrom(a, uint16(svc))
	q.shmw.Store(w)
	d.shm.conns.Add(1)
	d.wakeTCPSleeper() // a Wait asleep on the TCP sockets would not hear this peer
	go w.connect(a, svc, port, priv, time.Now().Add(timeout), fd)
	return nil
}

// connect runs the active handshake, then the connection's CM loop.
func (w *shmWire) connect(a netip.Addr, svc uint64, port uint16, priv []byte, deadline time.Time, memFd int) {
	defer w.release()
	q, c := w.q, w.c
	ev, rejPriv := w.handshake(a, svc, port, priv, deadline, memFd)
	unix.Close(memFd)
	switch ev {
	case 0:
		w.serve()
	case torndown:
		// the consumer ended the attempt; it has reported it
	default:
		q.attemptFailed(c, ev, rejPriv)
	}
}

// torndown is handshake's result when the attempt was torn down meanwhile
// (there is no socket to serve, and nothing to report).
const torndown rdma.CMEventType = 255

// handshake runs REQ → ACC/REJ → RTU; it returns the failure event, 0
// when the QP is established, or torndown.
func (w *shmWire) handshake(a netip.Addr, svc uint64, port uint16, priv []byte, deadline time.Time, memFd int) (rdma.CMEventType, []byte) {
	q, c, d := w.q, w.c, w.d
	if !isLocalAddr(a) {
		return rdma.CMUnreachable, nil
	}
	var s *net.UnixConn
	for {
		var err error
		if s, err = dialShm(a, svc); err == nil {
			break
		}
		if errors.Is(err, syscall.EAGAIN) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
			continue
		}
		if errors.Is(err, syscall.EAGAIN) {
			return rdma.CMTimedOut, nil
		}
		return rdma.CMRefused, nil
	}
	if !w.attach(s) {
		return torndown, nil
	}
	pid, ok := trustedPeer(s)
	if !ok {
		return rdma.CMRefused, nil // a foreign process holds the name
	}
	keys, err := d.keysReadOnly()
	if err != nil {
		return rdma.CMRefused, nil
	}
	q.mu.Lock()
	req := cmMsg{typ: cmReq, pd: q.pd.id, hint: hintBase(q.slot, w.gen), addr: d.localFor(a), svc: svc, port: port, priv: priv}
	q.mu.Unlock()
	if writeCM(s, &req, memFd, d.bellFd, keys) != nil {
		return rdma.CMRefused, nil
	}
	_ = s.SetReadDeadline(deadline)
	m, fds, err := readCM(s)
	switch {
	case err != nil && isTimeout(err):
		return rdma.CMTimedOut, nil
	case err != nil:
		return rdma.CMRefused, nil // closed unanswered: nobody took it
	case m.typ == cmRej:
		return rdma.CMRejected, m.priv
	case m.typ != cmAcc:
		closeFds(fds)
		return rdma.CMRefused, nil
	}
	p, err := mapPeerFds(fds)
	if err != nil {
		return rdma.CMRefused, nil
	}
	q.mu.Lock()
	if q.c != c {
		q.mu.Unlock()
		p.unmap()
		return torndown, nil
	}
	w.install(p, pid, &m)
	q.establishLocked(c, m.priv)
	q.mu.Unlock()
	_ = s.SetReadDeadline(time.Time{})
	if writeCM(s, &cmMsg{typ: cmRtu}) != nil {
		q.peerEnded(c, false)
	}
	return 0, nil
}

// attach records the CM socket; false when the connection was torn down
// meanwhile (the socket is then closed).
func (w *shmWire) attach(s *net.UnixConn) bool {
	w.q.mu.Lock()
	defer w.q.mu.Unlock()
	if w.q.c != w.c || w.closed.Load() {
		s.Close()
		return false
	}
	w.sock = s
	return true
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// ---- both sides ----

// serve reads the CM socket for the connection's life: DISC and ACCERR
// end it in order; anything else that ends the socket is a broken
// connection (the peer died). What already arrived is delivered first.
func (w *shmWire) serve() {
	for {
		m, fds, err := readCM(w.sock)
		closeFds(fds)
		if err == nil && m.typ != cmDisc && m.typ != cmAccErr {
			continue // a late or stray message: nothing to do
		}
		if w.closed.Load() {
			return // our own shutdown closed the socket
		}
		w.deliverRemaining()
		switch {
		case err == nil && m.typ == cmAccErr:
			w.q.peerViolated(w.c)
		default:
			w.q.peerEnded(w.c, err == nil)
		}
		return
	}
}

// deliverRemaining places the messages the peer published before it went:
// verdicts, and eager messages up to the first rendezvous one (the
// sender's buffers of that are no longer its request's).
func (w *shmWire) deliverRemaining() {
	d := w.d
	d.in.mu.Lock()
	defer d.in.mu.Unlock()
	if w.closed.Load() || !w.drainCtl() {
		return
	}
	for w.rx.ready() {
		if w.mem.get64(w.rx.slot(w.rx.tail)+dsOffLen) > eagerMax {
			return
		}
		t := w.rx.tail
		if !w.drainData(uint32(t), false) || w.rx.tail == t {
			return // ended, or waiting for an SRQ receive
		}
	}
}

// shutdown ends the connection (q.mu held): the peer hears DISC or
// ACCERR when asked; closing the socket ends our serve loop, which
// releases the mappings under the drain lock.
func (w *shmWire) shutdown(how endHow) {
	w.closed.Store(true)
	s := w.sock
	if s == nil {
		return // still dialing: the handshake sees the teardown
	}
	switch how {
	case endDisc:
		_ = writeCM(s, &cmMsg{typ: cmDisc})
	case endAccess:
		_ = writeCM(s, &cmMsg{typ: cmAccErr})
	}
	s.Close()
}

// release unmaps the connection's segments and closes its socket, once
// nothing can use them: under the drain lock (the consumer side) and after
// the placement barrier (one-sided accesses and pulls).
func (w *shmWire) release() {
	d := w.d
	d.in.mu.Lock()
	w.closed.Store(true)
	w.c.placeMu.Lock()
	w.q.shmw.CompareAndSwap(w, nil)
	w.makeHot(nil)
	d.forgetLocked(w)
	w.mem.unmap()
	w.peerBell.m.unmap()
	w.peerKeys.unmap()
	w.c.placeMu.Unlock()
	d.in.mu.Unlock()
	w.q.mu.Lock()
	if w.sock != nil {
		w.sock.Close()
	}
	w.q.mu.Unlock()
	d.shm.conns.Add(-1)
}
