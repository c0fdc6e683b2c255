package soft

// Listeners and connection requests, common to both wires: the backlog,
// the CMConnectRequest event, and the answer (accept or reject) that a
// wire carries out (shm_listen.go; for TCP, tcp_dev.go and tcp_cm.go).

import (
	"crypto/rand"
	"encoding/binary"
	"net/netip"
	"sync"
	"sync/atomic"

	"godat/rdma"
)

type listener struct {
	dev     *device
	ch      *cmChannel
	svc     uint64
	ctx     uint64
	backlog int32
	pend    atomic.Int32 // requests not yet answered
	closed  atomic.Bool
	once    sync.Once

	shm shmListen
	tcp tcpListen
}

// Listen binds serviceID (or a random unused one) on the device's
// transports (rdma_bind_addr + rdma_listen).
func (d *device) Listen(ch rdma.CMChannel, serviceID uint64, any bool, backlog int, ctx uint64) (rdma.Listener, error) {
	cc, ok := ch.(*cmChannel)
	if !ok || cc == nil || cc.dev != d {
		return nil, rdma.ErrInvalid
	}
	if d.closed.Load() {
		return nil, rdma.ErrClosed
	}
	l := &listener{dev: d, ch: cc, svc: serviceID, ctx: ctx, backlog: int32(max(backlog, 1))}
	for try := 0; ; try++ {
		if any {
			l.svc = randSvc()
		}
		err := l.bind()
		if err == nil {
			break
		}
		if err != rdma.ErrServiceInUse || !any || try >= 100 {
			return nil, err
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		l.unbind()
		return nil, rdma.ErrClosed
	}
	d.lsns[l] = struct{}{}
	return l, nil
}

// randSvc draws a service id from the whole 64-bit space.
func randSvc() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// bind listens on the device's transports.
func (l *listener) bind() error {
	d := l.dev
	if d.tr != trTCP {
		if err := l.listenShm(); err != nil {
			return err
		}
	}
	if d.tr != trShm {
		if err := l.listenTCP(); err != nil {
			l.unbind()
			return err
		}
	}
	return nil
}

func (l *listener) unbind() {
	l.closeShm()
	l.closeTCP()
}

// ServiceID is the id bound.
func (l *listener) ServiceID() uint64 { return l.svc }

// Close stops listening; requests not yet answered stay valid.
func (l *listener) Close() error {
	err := rdma.ErrClosed
	l.once.Do(func() {
		err = nil
		l.closed.Store(true)
		l.unbind()
		l.dev.mu.Lock()
		delete(l.dev.lsns, l)
		l.dev.mu.Unlock()
	})
	return err
}

// admit reserves a backlog place for a new request; false: refuse it.
func (l *listener) admit() bool {
	if l.closed.Load() {
		return false
	}
	if l.pend.Add(1) > l.backlog {
		l.pend.Add(-1)
		return false
	}
	return true
}

// deliver queues a CMConnectRequest for an admitted request.
func (l *listener) deliver(r *connReq) {
	l.ch.put(rdma.CMEvent{Type: rdma.CMConnectRequest, Context: l.ctx, Request: r, PrivateData: r.priv})
}

// States of a connection request.
const (
	reqPending = iota
	reqAccepted
	reqRejected
	reqGone // the requester went away unanswered
)

// pending is the wire's side of a request; connReq.mu serializes its
// calls with the wire's settle.
type pending interface {
	// accept connects the request to q (q.mu held, q in Init). gone says
	// the requester already left: q then fails at once with
	// CMAcceptError.
	accept(q *qp, priv []byte, gone bool)
	// reject answers no (consumer: with priv; refused: as if nobody
	// listened).
	reject(reason rdma.RejectReason, priv []byte)
}

// connReq is a connection request (rdma.ConnRequest).
type connReq struct {
	l      *listener
	remote netip.AddrPort
	priv   []byte
	p      pending
	mu     sync.Mutex // below listener, above qp.mu; held across the pending's calls
	state  int
}

// RemoteAddr is the requester's address and port.
func (r *connReq) RemoteAddr() netip.AddrPort { return r.remote }

// ServiceID is the id the request was made to.
func (r *connReq) ServiceID() uint64 { return r.l.svc }

// PrivateData is the requester's private data.
func (r *connReq) PrivateData() []byte { return r.priv }

// Accept connects the request to qp (rdma_accept).
func (r *connReq) Accept(qpi rdma.QP, priv []byte) error {
	q, ok := qpi.(*qp)
	if !ok || q == nil || q.dev != r.l.dev || len(priv) > maxPrivData {
		return rdma.ErrInvalid
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != reqPending && r.state != reqGone {
		return rdma.ErrState
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if err := q.initLocked(); err != nil {
		return err
	}
	r.p.accept(q, append([]byte(nil), priv...), r.state == reqGone)
	if r.state == reqPending {
		r.l.pend.Add(-1)
	}
	r.state = reqAccepted
	return nil
}

// Reject turns the request down (rdma_reject).
func (r *connReq) Reject(reason rdma.RejectReason, priv []byte) error {
	if len(priv) > maxPrivData || reason != rdma.RejectConsumer && reason != rdma.RejectRefused {
		return rdma.ErrInvalid
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state != reqPending && r.state != reqGone {
		return rdma.ErrState
	}
	if r.state == reqPending {
		r.l.pend.Add(-1)
		r.p.reject(reason, append([]byte(nil), priv...))
	}
	r.state = reqRejected
	return nil
}

// settle: the wire saw the request's socket end (or the confirmation
// come). It reports whether the request was accepted; if it was not
// answered yet, the requester is gone and its backlog place frees.
func (r *connReq) settle() (accepted bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state == reqPending {
		r.state = reqGone
		r.l.pend.Add(-1)
	}
	return r.state == reqAccepted
}
