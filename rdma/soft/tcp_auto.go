package soft

// transport=auto: an IA that listens through shared memory and TCP at once
// and connects through shared memory when the peer is on this host, TCP
// otherwise.
//
// "On this host" is decided at connect time: the remote address is an
// address of this host in the caller's network namespace (loopback or an
// interface address), and an IA listens on that address and qualifier
// through shared memory (its abstract socket @godat/<addr>/<qual> exists; a
// process in another network namespace has its own abstract namespace and
// is therefore never "on this host"). Everything else, including a
// TCP-only IA on this host, is reached over TCP.
//
// A queue pair of an auto IA is a pair of queue pairs, one per transport;
// the first connect or accept picks one. Receives posted before that wait
// in the TCP one and move to the shared-memory one if it is picked.

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"godat/rdma"
)

const (
	autoNone = iota
	autoShm
	autoTCP
)

// aqp is the queue pair of an auto IA.
type aqp struct {
	dev  *tcpDevice
	s    *qp
	t    *tqp
	conn rdma.ConnHandler

	mu   sync.Mutex // serializes the choice with receives posted before it
	kind atomic.Int32
}

// fwd hands the shared-memory QP's connection events on under the auto
// QP's name.
type fwd struct{ a *aqp }

func (f fwd) ConnEvent(_ rdma.QP, ev rdma.ConnEvent) {
	if f.a.conn != nil {
		f.a.conn.ConnEvent(f.a, ev)
	}
}

func (d *tcpDevice) newAutoQP(cfg rdma.QPConfig) (rdma.QP, error) {
	a := &aqp{dev: d, conn: cfg.Conn}
	t, err := d.newTQP(cfg)
	if err != nil {
		return nil, err
	}
	scfg := cfg
	scfg.Conn = fwd{a}
	sq, err := d.device.CreateQP(scfg)
	if err != nil {
		_ = t.Destroy()
		return nil, err
	}
	a.t, a.s = t, sq.(*qp)
	t.self = a
	a.s.mu.Lock()
	a.s.comp.QP = a
	a.s.mu.Unlock()
	return a, nil
}

// cur is the queue pair in use (the TCP one until a choice is made).
func (a *aqp) cur() rdma.QP {
	if a.kind.Load() == autoShm {
		return a.s
	}
	return a.t
}

// moveRecvsLocked moves the receives waiting in the TCP queue pair to the
// shared-memory one (a.mu held, the TCP one idle).
func (a *aqp) moveRecvsLocked() {
	for _, wr := range a.t.takeRecvs() {
		_ = a.s.PostRecv(&wr)
	}
}

// takeRecvs removes the receives of an idle queue pair, in order.
func (q *tqp) takeRecvs() []rdma.RecvWR {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []rdma.RecvWR
	for ; q.rqHead != q.rqTl; q.rqHead++ {
		r := &q.rq[q.rqHead&q.rqMask]
		out = append(out, rdma.RecvWR{Cookie: r.cookie, SGL: append([]rdma.SGE(nil), r.sgl[:r.nsge]...)})
	}
	q.rqRd = q.rqTl
	return out
}

// shmListening probes whether an IA listens on addr/qual through shared
// memory in this network namespace.
func shmListening(addr netip.Addr, qual uint64) bool {
	c, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: sockName(addr, qual), Net: "unixpacket"})
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func (a *aqp) Connect(addr netip.AddrPort, qual uint64, priv []byte, timeout time.Duration) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kind.Load() != autoNone {
		return a.cur().Connect(addr, qual, priv, timeout) // ErrState or ErrClosed
	}
	if isLocalAddr(addr.Addr()) && shmListening(addr.Addr().Unmap(), qual) {
		if err := a.s.Connect(addr, qual, priv, timeout); err != nil {
			return err
		}
		a.moveRecvsLocked()
		a.kind.Store(autoShm)
		return nil
	}
	if err := a.t.Connect(addr, qual, priv, timeout); err != nil {
		return err
	}
	a.kind.Store(autoTCP)
	return nil
}

// acceptTCP accepts a TCP request on the auto QP.
func (a *aqp) acceptTCP(r *tcpReq, priv []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kind.Load() != autoNone {
		return rdma.ErrState
	}
	if err := r.accept(a.t, priv); err != nil {
		return err
	}
	a.kind.Store(autoTCP)
	return nil
}

// acceptShm accepts a shared-memory request on the auto QP.
func (a *aqp) acceptShm(req rdma.ConnRequest, priv []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kind.Load() != autoNone {
		return rdma.ErrState
	}
	if err := req.Accept(a.s, priv); err != nil {
		return err
	}
	a.moveRecvsLocked()
	a.kind.Store(autoShm)
	return nil
}

func (a *aqp) PostSend(wr *rdma.SendWR) error { return a.cur().PostSend(wr) }

func (a *aqp) PostRecv(wr *rdma.RecvWR) error {
	if a.kind.Load() != autoNone {
		return a.cur().PostRecv(wr)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cur().PostRecv(wr)
}

func (a *aqp) Progress() int {
	switch a.kind.Load() {
	case autoShm:
		return a.s.Progress()
	case autoTCP:
		return a.t.Progress()
	}
	return 0
}

func (a *aqp) Disconnect(graceful bool) error { return a.cur().Disconnect(graceful) }

func (a *aqp) Reset() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.cur().Reset(); err != nil {
		return err
	}
	a.kind.Store(autoNone)
	return nil
}

// Idle reports the queue pair in use.
func (a *aqp) Idle() (recv, send bool) {
	if a.kind.Load() == autoShm {
		return a.s.Idle()
	}
	return a.t.Idle()
}

// Reconfigure reconfigures both halves of an unconnected auto QP.
func (a *aqp) Reconfigure(pd uint32, maxSend, maxRecv, maxSendSGE, maxRecvSGE int) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kind.Load() != autoNone {
		return rdma.ErrState
	}
	if err := a.t.Reconfigure(pd, maxSend, maxRecv, maxSendSGE, maxRecvSGE); err != nil {
		return err
	}
	return a.s.Reconfigure(pd, maxSend, maxRecv, maxSendSGE, maxRecvSGE)
}

func (a *aqp) LocalAddr() netip.AddrPort  { return a.cur().LocalAddr() }
func (a *aqp) RemoteAddr() netip.AddrPort { return a.cur().RemoteAddr() }

func (a *aqp) Destroy() error {
	err := a.t.Destroy()
	if e := a.s.Destroy(); err == nil {
		err = e
	}
	return err
}

// ---- listening ----

// autoListener is a qualifier bound on both transports.
type autoListener struct {
	s rdma.Listener
	t *tcpListener
}

func (l *autoListener) Qual() uint64 { return l.t.qual }

func (l *autoListener) Close() error {
	err := l.t.Close()
	if e := l.s.Close(); err == nil {
		err = e
	}
	return err
}

// shmReqs wraps the shared-memory transport's requests so that accepting
// one on an auto QP picks its shared-memory half.
type shmReqs struct{ h rdma.ListenHandler }

func (s shmReqs) ConnRequest(r rdma.ConnRequest) { s.h.ConnRequest(autoShmReq{r}) }

type autoShmReq struct{ rdma.ConnRequest }

// Refuse passes a refusal on to the shared-memory request.
func (r autoShmReq) Refuse() error {
	if f, ok := r.ConnRequest.(rdma.Refuser); ok {
		return f.Refuse()
	}
	return r.ConnRequest.Reject()
}

func (r autoShmReq) Accept(qpi rdma.QP, priv []byte) error {
	if a, ok := qpi.(*aqp); ok {
		return a.acceptShm(r.ConnRequest, priv)
	}
	return r.ConnRequest.Accept(qpi, priv)
}

func (d *tcpDevice) listenAuto(qual uint64, any bool, h rdma.ListenHandler) (rdma.Listener, error) {
	for try := 0; ; try++ {
		t, err := d.listenTCP(qual, any, h)
		if err != nil {
			return nil, err
		}
		s, err := d.device.Listen(t.qual, false, shmReqs{h})
		if err == nil {
			return &autoListener{s: s, t: t}, nil
		}
		_ = t.Close()
		// A kernel-picked port whose qualifier another IA of this host
		// uses through shared memory only: pick again.
		if !any || err != rdma.ErrQualInUse || try >= 100 {
			return nil, err
		}
	}
}
