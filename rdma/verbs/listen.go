package verbs

// Listeners and connection requests. A service id is served on the rdma_cm
// port portOf(id) of the device's address, by one listening id per port
// that every service id mapping to the port shares; a request names its
// service id in its private data header and goes to that listener's CM
// channel, or is refused (as if nobody listened) when none has it. Two
// devices (or processes) cannot listen on ids that map to the same port:
// the second gets ErrServiceInUse, as with the software TCP transport.

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"net/netip"

	"godat/rdma"
)

// cmBacklog is the kernel's backlog of a listening id; the contract's
// backlog is kept per service id by the backend.
const cmBacklog = 1024

// portListener is the listening rdma_cm_id of one port.
type portListener struct {
	d        *device
	id       *C.struct_rdma_cm_id
	h        uint64
	port     uint16
	services map[uint64]*listener
}

// listener is one listening service id.
type listener struct {
	p       *portListener
	sid     uint64
	ch      *cmChannel
	ctx     uint64
	backlog int
	pending int // requests delivered and not answered
	dead    bool
}

// Listen binds serviceID (or a port rdma_cm picks, with any) at the
// device's address (rdma_bind_addr, rdma_listen).
func (d *device) Listen(x rdma.CMChannel, serviceID uint64, any bool, backlog int, ctx uint64) (rdma.Listener, error) {
	var out *listener
	err := d.locked(func() error {
		ch, err := d.cmChanOf(x)
		if err != nil {
			return err
		}
		if ch == nil {
			return fmt.Errorf("verbs: Listen without a CM channel: %w", rdma.ErrInvalid)
		}
		backlog = max(backlog, 1)
		if !any {
			if p := d.ports[portOf(serviceID)]; p != nil {
				if p.services[serviceID] != nil {
					return rdma.ErrServiceInUse
				}
				out = &listener{p: p, sid: serviceID, ch: ch, ctx: ctx, backlog: backlog}
				p.services[serviceID] = out
				return nil
			}
		}
		var port uint16
		if !any {
			port = portOf(serviceID)
		}
		p := &portListener{d: d, h: newHandle(), services: map[uint64]*listener{}}
		if r := C.gd_cm_create_id(d.ech, C.uint64_t(p.h), &p.id); r != 0 {
			return wrap("rdma_create_id", errnoOf(r, nil))
		}
		sa := sockaddr(netip.AddrPortFrom(d.addr, port))
		r := C.gd_cm_bind(p.id, saPtr(&sa))
		if r == 0 {
			r = C.gd_cm_listen(p.id, cmBacklog)
		}
		if r != 0 {
			C.gd_cm_destroy_id(p.id)
			return wrap(fmt.Sprintf("listen on port %d", port), errnoOf(r, nil))
		}
		p.port = uint16(C.gd_id_port(p.id))
		if any {
			serviceID = uint64(p.port)
		}
		d.ports[p.port] = p
		d.objs[p.h] = p
		out = &listener{p: p, sid: serviceID, ch: ch, ctx: ctx, backlog: backlog}
		p.services[serviceID] = out
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ServiceID is the id bound.
func (l *listener) ServiceID() uint64 { return l.sid }

// Close stops listening; requests already delivered stay valid.
func (l *listener) Close() error {
	p := l.p
	return p.d.locked(func() error {
		if l.dead {
			return rdma.ErrClosed
		}
		l.dead = true
		delete(p.services, l.sid)
		if len(p.services) == 0 {
			p.destroyLocked()
		}
		return nil
	})
}

func (p *portListener) destroyLocked() {
	d := p.d
	if d.ports[p.port] == p {
		delete(d.ports, p.port)
	}
	delete(d.objs, p.h)
	for _, l := range p.services {
		l.dead = true
	}
	if p.id != nil {
		C.gd_cm_destroy_id(p.id)
		p.id = nil
	}
}

// connReq is a connection request not yet answered, on its own rdma_cm_id.
type connReq struct {
	d        *device
	id       *C.struct_rdma_cm_id
	h        uint64
	l        *listener
	sid      uint64
	priv     []byte
	local    netip.AddrPort
	remote   netip.AddrPort
	initMax  int // what this side may use as initiator depth (the peer's responder resources)
	respNeed int // the responder resources the peer asks for (its initiator depth)
	answered bool
	gaveUp   bool // the requester went away (its CM rejected or timed out)
}

// onRequest takes a CONNECT_REQUEST on a listening port.
func (d *device) onRequest(ev *C.struct_gd_cmev) {
	id := ev.id
	p, _ := d.objs[uint64(ev.listen_handle)].(*portListener)
	var l *listener
	sid, priv, ok := parseReq(pdata(ev))
	if ok && p != nil {
		l = p.services[sid]
	}
	if l == nil || l.dead || l.pending >= l.backlog {
		hdr := rejHeader(rejRefused, nil)
		C.gd_cm_reject(id, bytesPtr(hdr), C.int(len(hdr)))
		C.gd_cm_destroy_id(id)
		return
	}
	r := &connReq{d: d, id: id, h: newHandle(), l: l, sid: sid, priv: priv,
		local: addrPort(&ev.local), remote: addrPort(&ev.peer),
		initMax: int(ev.initiator_depth), respNeed: int(ev.responder_resources)}
	C.gd_id_set_handle(id, C.uint64_t(r.h))
	d.objs[r.h] = r
	d.reqs[r] = struct{}{}
	l.pending++
	l.ch.push(rdma.CMEvent{Type: rdma.CMConnectRequest, Context: l.ctx, Request: r, PrivateData: priv})
}

// onReqEvent notes that the requester of an unanswered request gave up.
func (d *device) onReqEvent(r *connReq, ev *C.struct_gd_cmev) {
	switch ev.event {
	case C.RDMA_CM_EVENT_REJECTED, C.RDMA_CM_EVENT_CONNECT_ERROR, C.RDMA_CM_EVENT_UNREACHABLE,
		C.RDMA_CM_EVENT_DISCONNECTED, C.RDMA_CM_EVENT_DEVICE_REMOVAL:
		r.gaveUp = true
	}
}

// RemoteAddr is the requester's address and port.
func (r *connReq) RemoteAddr() netip.AddrPort { return r.remote }

// ServiceID is the service id the request was made to.
func (r *connReq) ServiceID() uint64 { return r.sid }

// PrivateData is the requester's private data.
func (r *connReq) PrivateData() []byte { return r.priv }

// answerLocked marks the request answered: it leaves its listener's
// backlog.
func (r *connReq) answerLocked() {
	r.answered = true
	r.l.pending--
	delete(r.d.reqs, r)
	delete(r.d.objs, r.h)
}

// Accept connects the request to qp (RTR, RTS, rdma_accept).
func (r *connReq) Accept(x rdma.QP, priv []byte) error {
	d := r.d
	if len(priv) > d.attr.MaxPrivateData {
		return rdma.ErrInvalid
	}
	return d.locked(func() error {
		if r.answered {
			return rdma.ErrState
		}
		q, err := d.qpOf(x)
		if err != nil {
			return err
		}
		if q.conn != nil || C.gd_qp_state(q.c) != C.GD_QPS_INIT {
			return rdma.ErrState
		}
		r.answerLocked()
		c := &conn{q: q, id: r.id, h: r.h, phase: phAccepting, sid: r.sid, local: r.local, remote: r.remote}
		q.conn = c
		d.objs[c.h] = c
		q.setState(C.GD_QPS_CONN)
		if r.gaveUp {
			d.fail(c, rdma.CMAcceptError, nil)
			return nil
		}
		resp, init := min(r.respNeed, q.maxRd), min(r.initMax, q.maxInit)
		srq := C.int(0)
		if q.srq != nil {
			srq = 1
		}
		hdr := repHeader(priv)
		rr := C.gd_cm_ready(c.id, q.ibqp, C.int(resp), C.int(init), cBool(d.ib))
		if rr == 0 {
			rr = C.gd_cm_accept(c.id, C.uint32_t(q.num), srq, bytesPtr(hdr), C.int(len(hdr)),
				C.int(resp), C.int(init))
		}
		if rr != 0 {
			// The requester is gone (its CM already tore the request
			// down): the contract reports it as an accept that fails.
			d.fail(c, rdma.CMAcceptError, nil)
		}
		return nil
	})
}

// Reject turns the request down (rdma_reject).
func (r *connReq) Reject(reason rdma.RejectReason, priv []byte) error {
	d := r.d
	if len(priv) > d.attr.MaxPrivateData {
		return rdma.ErrInvalid
	}
	kind := byte(rejConsumer)
	switch reason {
	case rdma.RejectConsumer:
	case rdma.RejectRefused:
		kind, priv = rejRefused, nil
	default:
		return rdma.ErrInvalid
	}
	return d.locked(func() error {
		if r.answered {
			return rdma.ErrState
		}
		r.answerLocked()
		hdr := rejHeader(kind, priv)
		C.gd_cm_reject(r.id, bytesPtr(hdr), C.int(len(hdr)))
		C.gd_cm_destroy_id(r.id)
		r.id = nil
		return nil
	})
}

// refuseLocked turns down a request the device can no longer serve.
func (r *connReq) refuseLocked() {
	if r.answered {
		return
	}
	r.answerLocked()
	hdr := rejHeader(rejRefused, nil)
	C.gd_cm_reject(r.id, bytesPtr(hdr), C.int(len(hdr)))
	C.gd_cm_destroy_id(r.id)
	r.id = nil
}
