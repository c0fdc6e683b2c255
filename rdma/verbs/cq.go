package verbs

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"runtime"

	"godat/rdma"
)

// cq is a completion queue (ibv_cq); the C side (cq.c) translates its
// completions. The C struct outlives Destroy until the Go object is
// garbage: Poll on a destroyed CQ returns 0.
type cq struct {
	d    *device
	c    *C.struct_gd_cq
	ch   *compChannel
	ctx  uint64
	h    uint64
	refs int // QPs completing into it; under d.mu
	dead bool
	// Under d.mu: asked is the depth the consumer asked for (CreateCQ,
	// Resize); need is the completions its QPs and SRQs can have in it at
	// once; depth is what the CQ was last created or resized to.
	asked, need, depth int
}

// The completions a QP's queues can leave in a CQ are bounded: a work
// request's slot is reused only once Poll has read its completion (shim.h),
// so a queue of n slots has at most n completions outstanding. A CQ is kept
// at least as deep as the sum over the queues completing into it, so that
// it never overruns: an overrun is fatal on verbs (IBV_EVENT_CQ_ERR, every
// QP of the CQ in Error), where the contract's consumer (core, DAT) treats
// the depth as a minimum (dat_evd_create's evd_min_qlen) and the software
// provider grows a CQ rather than lose a completion. Bounded by the
// device's max_cqe: past it the CQ is as deep as the device allows.

// fit grows the CQ to max(asked, need) when it is shallower; a device that
// refuses keeps the CQ as it was (the overrun is then possible, as before).
func (c *cq) fit() {
	want := min(max(c.asked, c.need), c.d.attr.MaxCQE)
	if c.dead || want <= c.depth {
		return
	}
	if C.gd_cq_resize(c.c, C.int(want)) == 0 {
		c.depth = want
	}
}

// hold adds (n > 0) or removes the completions a queue can leave in the CQ.
func (c *cq) hold(n int) {
	c.need += n
	if n > 0 {
		c.fit()
	}
}

// CreateCQ creates a completion queue of at least depth entries
// (ibv_create_cq) notifying ch.
func (d *device) CreateCQ(depth int, ch rdma.CompChannel, ctx uint64) (rdma.CQ, error) {
	if depth < 1 || depth > d.attr.MaxCQE {
		return nil, fmt.Errorf("verbs: CQ depth %d (the device allows 1 to %d): %w", depth, d.attr.MaxCQE, rdma.ErrInvalid)
	}
	var out *cq
	err := d.locked(func() error {
		c, err := d.chanOf(ch)
		if err != nil {
			return err
		}
		var cc *C.struct_gd_ch
		if c != nil {
			cc = c.c
		}
		h := newHandle()
		ibcq, cerr := C.gd_create_cq(d.ctx, C.int(depth), C.uint64_t(h), cc)
		if ibcq == nil {
			return wrap("ibv_create_cq", errnoOf(-1, cerr))
		}
		gc := C.gd_cq_new(ibcq)
		if gc == nil {
			C.gd_cq_destroy_raw(ibcq)
			return fmt.Errorf("verbs: CQ: %w", rdma.ErrNoResources)
		}
		out = &cq{d: d, c: gc, ch: c, ctx: ctx, h: h, asked: depth, depth: depth}
		runtime.AddCleanup(out, func(c *C.struct_gd_cq) { C.gd_cq_free(c) }, gc)
		if c != nil {
			c.refs++
		}
		d.cqs[out] = struct{}{}
		d.objs[h] = out
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Poll moves up to len(wc) completions into wc (ibv_poll_cq): one C call,
// no allocation; an empty CQ costs the device's own empty poll.
func (c *cq) Poll(wc []rdma.WC) int {
	if len(wc) == 0 {
		return 0
	}
	return int(C.gd_cq_poll_go(cqAddr(c.c), wcPtr(wc), C.int(len(wc))))
}

// Arm requests a notification for the next completion (ibv_req_notify_cq).
func (c *cq) Arm(solicitedOnly bool) error {
	s := C.int(0)
	if solicitedOnly {
		s = 1
	}
	if r := C.gd_cq_arm(c.c, s); r != 0 {
		if r == C.GD_ECLOSED {
			return rdma.ErrClosed
		}
		return wrap("ibv_req_notify_cq", errnoOf(r, nil))
	}
	return nil
}

// Resize changes the depth, keeping the completions (ibv_resize_cq).
func (c *cq) Resize(depth int) error {
	if depth < 1 || depth > c.d.attr.MaxCQE {
		return fmt.Errorf("verbs: CQ depth %d (the device allows 1 to %d): %w", depth, c.d.attr.MaxCQE, rdma.ErrInvalid)
	}
	return c.d.locked(func() error {
		if c.dead {
			return rdma.ErrClosed
		}
		// Never below what the QPs can leave in it (fit).
		real := min(max(depth, c.need), c.d.attr.MaxCQE)
		if r := C.gd_cq_resize(c.c, C.int(real)); r != 0 {
			if r == C.GD_ECLOSED {
				return rdma.ErrClosed
			}
			return wrap("ibv_resize_cq", errnoOf(r, nil))
		}
		c.asked, c.depth = depth, real
		return nil
	})
}

// Destroy frees the CQ (ibv_destroy_cq).
func (c *cq) Destroy() error {
	return c.d.locked(func() error {
		switch {
		case c.dead:
			return rdma.ErrClosed
		case c.refs > 0:
			return rdma.ErrBusy
		}
		if r := C.gd_cq_destroy(c.c); r != 0 && r != C.GD_ECLOSED {
			return wrap("ibv_destroy_cq", errnoOf(r, nil))
		}
		c.forget()
		return nil
	})
}

func (c *cq) destroyLocked() {
	if !c.dead {
		C.gd_cq_destroy(c.c)
		c.forget()
	}
}

func (c *cq) forget() {
	c.dead = true
	if c.ch != nil {
		c.ch.refs--
	}
	delete(c.d.cqs, c)
	delete(c.d.objs, c.h)
}

// cqOf is the CQ of this device behind an rdma.CQ.
func (d *device) cqOf(x rdma.CQ, what string) (*cq, error) {
	c, ok := x.(*cq)
	switch {
	case !ok || c == nil:
		return nil, fmt.Errorf("verbs: no %s CQ: %w", what, rdma.ErrInvalid)
	case c.d != d:
		return nil, fmt.Errorf("verbs: a %s CQ of another device: %w", what, rdma.ErrInvalid)
	case c.dead:
		return nil, rdma.ErrClosed
	}
	return c, nil
}
