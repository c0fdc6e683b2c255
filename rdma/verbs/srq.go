package verbs

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"syscall"

	"godat/rdma"
)

// srq is a shared receive queue (ibv_srq); its slots are a pool (srq.c).
//
// The limit is the device's (ibv_modify_srq with IBV_SRQ_LIMIT; the device
// raises IBV_EVENT_SRQ_LIMIT_REACHED and disarms it). Devices fire only
// when a message takes a receive, so the contract's "at once when fewer
// are already held" is the backend's: arming below the limit (as counted
// by the backend: receives posted minus receive completions polled, never
// fewer than the device holds) raises the event at once and leaves the
// device unarmed. A receive the device took whose completion is not polled
// yet still counts as held: arming then waits for the device.
type srq struct {
	d    *device
	c    *C.struct_gd_srq
	p    *pd
	h    uint64
	ctx  uint64
	max  int
	sge  int
	refs int // QPs on it; under d.mu
	dead bool
	// fired counts the limit events the device raised, emulated those the
	// backend raised at arming (tests and logs tell them apart).
	fired, emulated int
	// armed is the limit as the backend knows it (0 after an event), for
	// devices that cannot query an SRQ (siw).
	armed int
	// keys caches the last region the SRQ's posts named (keys.go).
	keys keyCache
}

// CreateSRQ creates a shared receive queue (ibv_create_srq).
func (d *device) CreateSRQ(a rdma.SRQInitAttr) (rdma.SRQ, error) {
	if d.attr.Caps&rdma.CapSRQ == 0 {
		return nil, rdma.ErrNotSupported
	}
	var out *srq
	err := d.locked(func() error {
		if a.PD == nil {
			return fmt.Errorf("verbs: SRQ without a PD: %w", rdma.ErrInvalid)
		}
		p, err := d.pdOf(a.PD)
		if err != nil {
			return err
		}
		at := d.attr
		switch {
		case a.MaxWR < 1 || a.MaxWR > at.MaxSRQWR:
			return fmt.Errorf("verbs: SRQ of %d receives (the device allows %d): %w", a.MaxWR, at.MaxSRQWR, rdma.ErrInvalid)
		case a.MaxSGE < 1 || a.MaxSGE > at.MaxSRQSGE:
			return fmt.Errorf("verbs: SRQ of %d SGEs (the device allows %d): %w", a.MaxSGE, at.MaxSRQSGE, rdma.ErrInvalid)
		case a.Limit < 0 || a.Limit > a.MaxWR:
			return fmt.Errorf("verbs: SRQ limit %d of %d: %w", a.Limit, a.MaxWR, rdma.ErrInvalid)
		}
		var ia C.struct_ibv_srq_init_attr
		ia.attr.max_wr = C.uint32_t(a.MaxWR)
		ia.attr.max_sge = C.uint32_t(a.MaxSGE)
		h := newHandle()
		ib, cerr := C.gd_create_srq(p.c, &ia, C.uint64_t(h))
		if ib == nil {
			return wrap("ibv_create_srq", errnoOf(-1, cerr))
		}
		s := &srq{d: d, p: p, h: h, ctx: a.Context, max: int(ia.attr.max_wr), sge: int(ia.attr.max_sge)}
		if s.c = C.gd_srq_new(ib, C.int(s.max), C.int(s.sge)); s.c == nil {
			C.gd_destroy_srq_raw(ib)
			return fmt.Errorf("verbs: SRQ slots: %w", rdma.ErrNoResources)
		}
		runtime.AddCleanup(s, func(c *C.struct_gd_srq) { C.gd_srq_free(c) }, s.c)
		p.refs++
		d.srqs[s] = struct{}{}
		d.objs[h] = s
		out = s
		if a.Limit > 0 {
			return s.armLocked(a.Limit)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// PostRecv appends a receive (ibv_post_srq_recv): one C call.
func (s *srq) PostRecv(wr *rdma.RecvWR) error {
	n := len(wr.SGL)
	if n > s.sge {
		return rdma.ErrInvalid
	}
	if err := s.d.keys.check(&s.keys, s.p, wr.SGL, rdma.AccessLocalWrite); err != nil {
		return err
	}
	if r := C.gd_post_srq_recv(s.c, C.uint64_t(wr.WRID), sgePtr(wr.SGL), C.int(n)); r != 0 {
		return postErr(r)
	}
	return nil
}

// Modify resizes the SRQ and/or arms its limit (ibv_modify_srq).
func (s *srq) Modify(attr rdma.SRQAttr, mask rdma.SRQAttrMask) error {
	d := s.d
	return d.locked(func() error {
		if s.dead {
			return rdma.ErrClosed
		}
		max := s.max
		if mask&rdma.SRQMaxWR != 0 {
			held := int(C.gd_srq_held(s.c))
			switch {
			case !d.srqResize:
				return fmt.Errorf("verbs: the device does not resize SRQs: %w", rdma.ErrNotSupported)
			case attr.MaxWR < 1 || attr.MaxWR > d.attr.MaxSRQWR || attr.MaxWR < held:
				return fmt.Errorf("verbs: SRQ of %d receives (%d held, the device allows %d): %w",
					attr.MaxWR, held, d.attr.MaxSRQWR, rdma.ErrInvalid)
			}
			max = attr.MaxWR
		}
		if mask&rdma.SRQLimit != 0 && (attr.Limit < 0 || attr.Limit > max) {
			return fmt.Errorf("verbs: SRQ limit %d of %d: %w", attr.Limit, max, rdma.ErrInvalid)
		}
		if mask&rdma.SRQMaxWR != 0 {
			if r := C.gd_modify_srq(s.c.srq, C.uint32_t(max), 0, C.IBV_SRQ_MAX_WR); r != 0 {
				return wrap("ibv_modify_srq max_wr", errnoOf(r, nil))
			}
			var qa C.struct_ibv_srq_attr
			if C.gd_query_srq(s.c.srq, &qa) == 0 && int(qa.max_wr) > max {
				max = int(qa.max_wr)
			}
			if r := C.gd_srq_resize(s.c, C.uint32_t(max)); r != 0 {
				return wrap("SRQ slots", errnoOf(r, nil))
			}
			s.max = max
		}
		if mask&rdma.SRQLimit != 0 {
			return s.armLocked(attr.Limit)
		}
		return nil
	})
}

// armLocked arms the limit (0 disarms); see srq.
func (s *srq) armLocked(limit int) error {
	if limit > 0 && int(C.gd_srq_held(s.c)) < limit {
		C.gd_modify_srq(s.c.srq, 0, 0, C.IBV_SRQ_LIMIT)
		s.armed = 0
		s.emulated++
		s.d.raise(rdma.AsyncEvent{Type: rdma.AsyncSRQLimitReached, Context: s.ctx, Origin: originArming})
		return nil
	}
	if r := C.gd_modify_srq(s.c.srq, 0, C.uint32_t(limit), C.IBV_SRQ_LIMIT); r != 0 {
		return wrap("ibv_modify_srq limit", errnoOf(r, nil))
	}
	s.armed = limit
	return nil
}

// Query reports the SRQ's attributes (ibv_query_srq): the limit is the
// device's, 0 once it fired.
func (s *srq) Query() (rdma.SRQAttr, error) {
	var out rdma.SRQAttr
	err := s.d.locked(func() error {
		if s.dead {
			return rdma.ErrClosed
		}
		out = rdma.SRQAttr{MaxWR: s.max, MaxSGE: s.sge, Limit: s.armed}
		var qa C.struct_ibv_srq_attr
		switch r := C.gd_query_srq(s.c.srq, &qa); {
		case r == 0:
			out.Limit = int(qa.srq_limit)
		case syscall.Errno(r) != syscall.EOPNOTSUPP:
			return wrap("ibv_query_srq", errnoOf(r, nil))
		}
		return nil
	})
	return out, err
}

// Destroy frees the SRQ (ibv_destroy_srq).
func (s *srq) Destroy() error {
	return s.d.locked(func() error {
		switch {
		case s.dead:
			return rdma.ErrClosed
		case s.refs > 0:
			return rdma.ErrBusy
		}
		if r := C.gd_srq_kill(s.c); r != 0 {
			return wrap("ibv_destroy_srq", errnoOf(r, nil))
		}
		s.forget()
		return nil
	})
}

func (s *srq) destroyLocked() {
	if !s.dead {
		C.gd_srq_kill(s.c)
		s.forget()
	}
}

func (s *srq) forget() {
	s.dead = true
	s.p.refs--
	delete(s.d.srqs, s)
	delete(s.d.objs, s.h)
}

// srqOf is the SRQ of this device behind an rdma.SRQ.
func (d *device) srqOf(x rdma.SRQ) (*srq, error) {
	s, ok := x.(*srq)
	switch {
	case !ok || s == nil || s.d != d:
		return nil, fmt.Errorf("verbs: an SRQ of another device: %w", rdma.ErrInvalid)
	case s.dead:
		return nil, rdma.ErrClosed
	}
	return s, nil
}
