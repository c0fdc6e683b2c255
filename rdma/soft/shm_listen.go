package soft

// The passive side of shared-memory connections: the listening socket, the
// checks of an incoming request, and the answer.

import (
	"errors"
	"net"
	"net/netip"
	"syscall"
	"time"

	"godat/rdma"
)

// shmListen is a listener's shared-memory socket.
type shmListen struct {
	ln *net.UnixListener
}

func (l *listener) listenShm() error {
	ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: sockName(l.dev.listenAddr(), l.svc), Net: "unixpacket"})
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return rdma.ErrServiceInUse
		}
		return rdma.ErrNoResources
	}
	l.shm.ln = ln
	go l.acceptShm(ln)
	return nil
}

func (l *listener) closeShm() {
	if l.shm.ln != nil {
		l.shm.ln.Close()
	}
}

func (l *listener) acceptShm(ln *net.UnixListener) {
	for {
		s, err := ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // e.g. EMFILE; bounded retry
			continue
		}
		go l.incomingShm(s)
	}
}

// incomingShm runs the passive side of one connection's CM socket: the
// checks, the request, the wait for the answer and the confirmation, then
// the connection's CM loop.
func (l *listener) incomingShm(s *net.UnixConn) {
	pid, ok := trustedPeer(s)
	if !ok {
		s.Close()
		return
	}
	_ = s.SetReadDeadline(time.Now().Add(cmTimeout))
	m, fds, err := readCM(s)
	if err != nil || m.typ != cmReq || m.svc != l.svc {
		closeFds(fds)
		s.Close()
		return
	}
	p, err := mapPeerFds(fds)
	if err != nil {
		s.Close()
		return
	}
	if !l.admit() {
		p.unmap()
		s.Close() // refused: the requester sees the socket close unanswered
		return
	}
	_ = s.SetReadDeadline(time.Time{})
	sp := &shmPending{l: l, sock: s, maps: p, msg: m, pid: pid}
	r := &connReq{l: l, remote: netip.AddrPortFrom(m.addr, m.port), priv: m.priv, p: sp}
	l.deliver(r)

	// The next message is the RTU that follows our ACC, or nothing: the
	// requester gave up, or the consumer rejected (we closed the socket).
	m, fds, err = readCM(s)
	closeFds(fds)
	accepted := r.settle()
	w := sp.w // set by an accept that succeeded (settle's lock orders it)
	if !accepted || w == nil {
		sp.maps.unmap() // rejected, the requester left, or the accept failed: nobody has them
		s.Close()
		return
	}
	defer w.release()
	if err != nil || m.typ != cmRtu {
		w.q.peerEnded(w.c, err == nil && m.typ == cmDisc)
		return
	}
	_ = s.SetReadDeadline(time.Time{})
	if w.q.established(w.c, nil) {
		w.serve()
	}
}

// shmPending is a shared-memory request waiting for its answer.
type shmPending struct {
	l    *listener
	sock *net.UnixConn
	maps peerMaps
	msg  cmMsg
	pid  int
	w    *shmWire // set by accept (under connReq.mu)
}

// accept connects the request to q: the wire takes the peer's segments,
// and ACC carries ours. The confirmation must come within cmTimeout.
func (sp *shmPending) accept(q *qp, priv []byte, gone bool) {
	d := sp.l.dev
	var mem seg
	if !gone {
		mem = sp.maps.mem // the goroutine unmaps them once it saw the requester go
	}
	w := newShmWire(d, q, mem, false)
	c := q.newConn(w)
	w.c, w.gen = c, q.gen
	w.selfHint = hintFor(q.slot, q.gen)
	q.bindLocked(c, false)
	// A wild device's own address on this connection is the one the
	// requester dialed. The request does not carry it, but a wild
	// requester sends the address it has towards what it dialed
	// (localFor): the dialed one, or 127.0.0.1 for a loopback one.
	q.local = netip.AddrPortFrom(d.localFor(sp.msg.addr), uint16(sp.l.svc))
	q.remote = netip.AddrPortFrom(sp.msg.addr, sp.msg.port)
	keys, err := d.keysReadOnly()
	if gone || err != nil {
		// The requester left before the answer: the accepted QP fails.
		q.endLocked(endAbort, rdma.CMAcceptError)
		return
	}
	w.sock = sp.sock
	w.install(sp.maps, sp.pid, &sp.msg)
	q.shmw.Store(w)
	d.shm.conns.Add(1)
	d.wakeTCPSleeper() // a Wait asleep on the TCP sockets would not hear this peer
	sp.w = w
	_ = sp.sock.SetReadDeadline(time.Now().Add(cmTimeout))
	acc := cmMsg{typ: cmAcc, pd: q.pd.id, hint: hintBase(q.slot, q.gen), addr: q.local.Addr(), priv: priv}
	_ = writeCM(sp.sock, &acc, d.bellFd, keys) // a failure shows as the socket's end
}

// reject answers no: REJ with the consumer's private data, or for a
// refusal nothing (the socket closes as if nobody listened).
func (sp *shmPending) reject(reason rdma.RejectReason, priv []byte) {
	if reason == rdma.RejectConsumer {
		_ = writeCM(sp.sock, &cmMsg{typ: cmRej, priv: priv})
	}
	sp.sock.Close()
}
