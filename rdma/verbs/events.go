package verbs

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"

	"godat/rdma"
)

// run is the device's event thread: it sleeps in the kernel (ppoll on the
// context's async fd, the rdma_cm event channel and the kick eventfd) and
// handles what wakes it. It is the only reader of both event sources, and
// it acks each event in the same C call that reads it (rdma_destroy_id and
// ibv_destroy_* wait for acks, and are called under d.mu, which the thread
// takes only after the ack).
func (d *device) run() {
	defer close(d.done)
	var cmev C.struct_gd_cmev
	var aev C.struct_gd_aev
	for !d.stopping.Load() {
		ms := -1
		d.mu.Lock()
		if len(d.draining) > 0 {
			ms = 1 // graceful disconnects: pump their send CQs
		}
		d.mu.Unlock()
		bits := C.gd_dev_wait(d.c, d.ctx.async_fd, d.ech.fd, C.int(ms))
		if d.stopping.Load() {
			return
		}
		if bits&1 != 0 {
			for C.gd_async_next(d.ctx, &aev) > 0 {
				d.handle(func() { d.onAsync(&aev) })
			}
		}
		if bits&2 != 0 {
			for C.gd_cm_next(d.ech, &cmev) > 0 {
				d.handle(func() { d.onCM(&cmev) })
			}
		}
		for {
			h := uint64(C.gd_dev_errq(d.c))
			if h == 0 {
				break
			}
			d.handle(func() { d.onNotes(h) })
		}
		d.pumpDrains()
	}
}

// handle runs f under d.mu and delivers the asynchronous events it raised
// after unlocking (the handler must not run under the device's lock: it
// may take the consumer's locks, held by a thread calling into the device).
func (d *device) handle(f func()) {
	d.mu.Lock()
	if !d.closed {
		f()
	}
	evs := d.takeAsync()
	d.mu.Unlock()
	d.deliver(evs)
}

// raise queues an asynchronous event for delivery when d.mu is released.
func (d *device) raise(ev rdma.AsyncEvent) { d.pendingAsync = append(d.pendingAsync, ev) }

func (d *device) takeAsync() []rdma.AsyncEvent {
	evs := d.pendingAsync
	d.pendingAsync = nil
	return evs
}

func (d *device) deliver(evs []rdma.AsyncEvent) {
	for _, ev := range evs {
		d.async(ev)
	}
}

// trace, from GODAT_VERBS_TRACE=1, writes every rdma_cm and asynchronous
// event to standard error: what a device really reports, for diagnosing a
// device or a fabric.
var trace = os.Getenv("GODAT_VERBS_TRACE") == "1"

// onCM dispatches an rdma_cm event to the object its id names.
func (d *device) onCM(ev *C.struct_gd_cmev) {
	if trace {
		fmt.Fprintf(os.Stderr, "verbs: %s: rdma_cm event %d status %d (id %#x, listener %#x, %d bytes of private data)\n",
			d.attr.Name, int(ev.event), int(ev.status), uint64(ev.handle), uint64(ev.listen_handle), int(ev.plen))
	}
	if ev.event == C.RDMA_CM_EVENT_CONNECT_REQUEST {
		d.onRequest(ev)
		return
	}
	switch o := d.objs[uint64(ev.handle)].(type) {
	case *conn:
		d.onConn(o, ev)
	case *connReq:
		d.onReqEvent(o, ev)
	case nil:
		if uint64(ev.handle) == 0 && ev.event == C.RDMA_CM_EVENT_DEVICE_REMOVAL {
			d.raise(rdma.AsyncEvent{Type: rdma.AsyncDeviceFatal}) // the anchor's device went away
		}
	}
}

// onNotes acts on what Poll noted of a QP: a completion in error breaks
// its connection; the marker's completion ends a graceful drain.
func (d *device) onNotes(h uint64) {
	q, _ := d.objs[h].(*qp)
	if q == nil {
		return
	}
	bits := C.gd_qp_take(q.c)
	c := q.conn
	if c == nil || c.phase != phEstablished {
		return
	}
	switch {
	case bits&C.GD_NOTE_ERROR != 0:
		d.breakQP(q)
	case bits&C.GD_NOTE_DRAINED != 0:
		if _, ok := d.draining[q]; ok {
			d.disconnect(c)
		}
	}
}

// pumpDrains polls the send CQs of QPs in a graceful disconnect into their
// stashes (the consumer's next Poll returns them first), so that the drain
// ends even when the consumer only waits for the disconnect.
func (d *device) pumpDrains() {
	d.mu.Lock()
	if len(d.draining) == 0 {
		d.mu.Unlock()
		return
	}
	cqs := make([]*cq, 0, len(d.draining))
	for q := range d.draining {
		cqs = append(cqs, q.scq)
	}
	d.mu.Unlock()
	for _, c := range cqs {
		C.gd_cq_pump(c.c)
	}
}
