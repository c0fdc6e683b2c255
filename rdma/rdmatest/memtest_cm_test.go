package rdmatest

import (
	"math/rand/v2"
	"net/netip"
	"slices"
	"time"

	"godat/rdma"
)

type mListener struct {
	dev     *mDevice
	cm      *mCM
	id      uint64
	ctx     uint64
	backlog int
	pending int
	closed  bool
}

func (d *mDevice) Listen(ch rdma.CMChannel, id uint64, any bool, backlog int, ctx uint64) (rdma.Listener, error) {
	fab.Lock()
	defer fab.Unlock()
	if d.closed {
		return nil, rdma.ErrClosed
	}
	cm, ok := ch.(*mCM)
	if !ok {
		return nil, rdma.ErrInvalid
	}
	if any {
		for {
			if d.cfg.caps&rdma.CapAnyServiceID != 0 {
				id = rand.Uint64()
			} else {
				id = 1024 + rand.Uint64N(1<<16-1024)
			}
			if id != 0 && fab.listeners[id] == nil {
				break
			}
		}
	} else if fab.listeners[id] != nil {
		return nil, rdma.ErrServiceInUse
	}
	l := &mListener{dev: d, cm: cm, id: id, ctx: ctx, backlog: max(backlog, 1)}
	fab.listeners[id] = l
	d.lists = append(d.lists, l)
	return l, nil
}

func (l *mListener) ServiceID() uint64 { return l.id }

func (l *mListener) Close() error {
	fab.Lock()
	defer fab.Unlock()
	if l.closed {
		return rdma.ErrClosed
	}
	l.closeLocked()
	return nil
}

func (l *mListener) closeLocked() {
	if !l.closed {
		l.closed = true
		delete(fab.listeners, l.id)
	}
}

// mReq is a connection request.
type mReq struct {
	active   *mQP
	l        *mListener
	from     netip.AddrPort
	id       uint64
	priv     []byte
	answered bool
	gaveUp   bool
}

func nextPort() uint16 {
	fab.nextPort++
	return fab.nextPort
}

func (q *mQP) Connect(addr netip.AddrPort, id uint64, priv []byte, timeout time.Duration) error {
	fab.Lock()
	defer fab.Unlock()
	if q.dead() {
		return rdma.ErrClosed
	}
	if q.state != rdma.QPSInit {
		return rdma.ErrState
	}
	if len(priv) > q.dev.cfg.maxPrivData {
		return rdma.ErrInvalid
	}
	q.state = rdma.QPSRTR
	q.local = netip.AddrPortFrom(loopback, nextPort())
	q.remote = netip.AddrPortFrom(addr.Addr(), 0)
	fail := func(ev rdma.CMEventType) error {
		q.toError()
		q.cm.push(rdma.CMEvent{Type: ev, Context: q.ctx})
		return nil
	}
	if addr.Addr() != loopback {
		return fail(rdma.CMUnreachable)
	}
	l := fab.listeners[id]
	if l == nil || l.pending >= l.backlog {
		return fail(rdma.CMRefused)
	}
	r := &mReq{active: q, l: l, from: q.local, id: id, priv: slices.Clone(priv)}
	l.pending++
	q.req = r
	l.cm.push(rdma.CMEvent{Type: rdma.CMConnectRequest, Context: l.ctx, Request: r})
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	time.AfterFunc(timeout, func() {
		fab.Lock()
		defer fab.Unlock()
		if q.req == r && q.state == rdma.QPSRTR {
			r.gaveUp = true
			q.req = nil
			q.toError()
			q.cm.push(rdma.CMEvent{Type: rdma.CMTimedOut, Context: q.ctx})
		}
	})
	return nil
}

func (r *mReq) RemoteAddr() netip.AddrPort { return r.from }
func (r *mReq) ServiceID() uint64          { return r.id }
func (r *mReq) PrivateData() []byte        { return slices.Clone(r.priv) }

// answer marks the request answered, freeing its backlog slot; it reports
// whether the requester still waits.
func (r *mReq) answer() bool {
	r.answered = true
	r.l.pending--
	a := r.active
	return !r.gaveUp && !a.dead() && a.req == r && a.state == rdma.QPSRTR
}

func (r *mReq) Accept(qp rdma.QP, priv []byte) error {
	fab.Lock()
	defer fab.Unlock()
	if r.answered {
		return rdma.ErrState
	}
	b, ok := qp.(*mQP)
	if !ok || b.dev != r.l.dev {
		return rdma.ErrInvalid
	}
	if b.dead() {
		return rdma.ErrClosed
	}
	if b.state != rdma.QPSInit {
		return rdma.ErrState
	}
	if len(priv) > b.dev.cfg.maxPrivData {
		return rdma.ErrInvalid
	}
	b.local, b.remote = netip.AddrPortFrom(loopback, nextPort()), r.from
	if !r.answer() {
		b.toError()
		b.cm.push(rdma.CMEvent{Type: rdma.CMAcceptError, Context: b.ctx})
		return nil
	}
	a := r.active
	a.req = nil
	a.remote = b.local
	a.peer, b.peer = b, a
	a.state, b.state = rdma.QPSRTS, rdma.QPSRTS
	a.cm.push(rdma.CMEvent{Type: rdma.CMEstablished, Context: a.ctx, PrivateData: slices.Clone(priv)})
	b.cm.push(rdma.CMEvent{Type: rdma.CMEstablished, Context: b.ctx})
	return nil
}

func (r *mReq) Reject(reason rdma.RejectReason, priv []byte) error {
	fab.Lock()
	defer fab.Unlock()
	if r.answered {
		return rdma.ErrState
	}
	if len(priv) > r.l.dev.cfg.maxPrivData {
		return rdma.ErrInvalid
	}
	if !r.answer() {
		return nil
	}
	a := r.active
	a.req = nil
	a.toError()
	ev := rdma.CMEvent{Type: rdma.CMRefused, Context: a.ctx}
	if reason == rdma.RejectConsumer {
		ev = rdma.CMEvent{Type: rdma.CMRejected, Context: a.ctx, PrivateData: slices.Clone(priv)}
	}
	a.cm.push(ev)
	return nil
}
