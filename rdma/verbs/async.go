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

// The origins of an SRQ limit event, for the log (rdma.AsyncEvent.Origin):
// ctest/test_dat_srq_set_lw.c checks which one each event of the VM's
// device had.
const (
	originDevice = "the device's SRQ limit (IBV_EVENT_SRQ_LIMIT_REACHED)"
	originArming = "the backend: already below the limit when armed"
)

// onAsync maps an asynchronous event of the device's context
// (ibv_get_async_event) to the contract's, naming the object by the
// context the backend gave it.
func (d *device) onAsync(ev *C.struct_gd_aev) {
	h := uint64(ev.handle)
	if trace {
		fmt.Fprintf(os.Stderr, "verbs: %s: asynchronous event %d (object %#x, port %d)\n", d.attr.Name, int(ev._type), h, int(ev.port))
	}
	switch ev._type {
	case C.IBV_EVENT_QP_FATAL, C.IBV_EVENT_QP_REQ_ERR, C.IBV_EVENT_QP_ACCESS_ERR:
		q, _ := d.objs[h].(*qp)
		if q == nil {
			return
		}
		t := rdma.AsyncQPFatal
		if ev._type == C.IBV_EVENT_QP_ACCESS_ERR {
			t = rdma.AsyncQPAccessErr
		}
		d.raise(rdma.AsyncEvent{Type: t, Context: q.ctx})
		d.breakQP(q)
	case C.IBV_EVENT_QP_LAST_WQE_REACHED:
		if q, _ := d.objs[h].(*qp); q != nil && !q.lastWQE {
			q.lastWQE = true
			d.raise(rdma.AsyncEvent{Type: rdma.AsyncQPLastWQE, Context: q.ctx})
		}
	case C.IBV_EVENT_COMM_EST:
		// Data arrived before the CM's ready-to-use message: tell the
		// CM, as the QP is the backend's and not the CM's.
		if q, _ := d.objs[h].(*qp); q != nil && q.conn != nil && q.conn.phase == phAccepting {
			C.gd_cm_notify(q.conn.id, C.IBV_EVENT_COMM_EST)
		}
	case C.IBV_EVENT_SRQ_LIMIT_REACHED:
		if s, _ := d.objs[h].(*srq); s != nil {
			s.fired++
			s.armed = 0
			d.raise(rdma.AsyncEvent{Type: rdma.AsyncSRQLimitReached, Context: s.ctx, Origin: originDevice})
		}
	case C.IBV_EVENT_CQ_ERR:
		if c, _ := d.objs[h].(*cq); c != nil {
			d.raise(rdma.AsyncEvent{Type: rdma.AsyncCQOverrun, Context: c.ctx})
		}
	case C.IBV_EVENT_PORT_ERR:
		if int(ev.port) == d.port {
			d.raise(rdma.AsyncEvent{Type: rdma.AsyncPortDown})
		}
	case C.IBV_EVENT_PORT_ACTIVE:
		if int(ev.port) == d.port {
			d.raise(rdma.AsyncEvent{Type: rdma.AsyncPortUp})
		}
	case C.IBV_EVENT_DEVICE_FATAL:
		d.raise(rdma.AsyncEvent{Type: rdma.AsyncDeviceFatal})
	}
}

// raiseLastWQE raises AsyncQPLastWQE for a QP of an SRQ that the backend
// put in Error, on a device that raises no QP events itself (rxe): from
// then on the QP takes none of the SRQ's receives.
func (q *qp) raiseLastWQE() {
	if q.srq != nil && q.d.noQPEvents && !q.lastWQE {
		q.lastWQE = true
		q.d.raise(rdma.AsyncEvent{Type: rdma.AsyncQPLastWQE, Context: q.ctx})
	}
}
