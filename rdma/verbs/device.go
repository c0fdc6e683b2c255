package verbs

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"

	"godat/rdma"
)

// rxeVendorID is Soft-RoCE's vendor id: a device that raises no QP
// asynchronous events (rdma_rxe in Linux 6.1 raises only port, CQ, SRQ
// limit and SQ drained events).
const rxeVendorID = 0xffffff

// device is one IA's device: a context of its own (so that its
// asynchronous events are its own) on the device rdma_cm maps its address
// to, and an rdma_cm event channel of its own that the event thread reads
// (events.go).
type device struct {
	c      *C.struct_gd_dev
	ctx    *C.struct_ibv_context
	ech    *C.struct_rdma_event_channel
	anchor *C.struct_rdma_cm_id // bound to addr: the port and the QPs' INIT attributes
	addr   netip.Addr
	port   int
	attr   rdma.DeviceAttr
	ib     bool // InfiniBand link layer (cm.c's attribute mask quirk)
	iwarp  bool // iWARP transport (siw, Chelsio): a reset QP is replaced, posts in Error flushed here (qp.go)
	// noQPEvents: the device raises no QP asynchronous events, so the
	// backend raises AsyncQPLastWQE itself when it puts a QP of an SRQ in
	// Error (srq.go).
	noQPEvents bool
	srqResize  bool
	// maxSGERd is max_sge_rd, the SGEs an RDMA read may scatter into
	// (siw: 1), which the contract's MaxSGE does not tell.
	maxSGERd int
	async    rdma.AsyncHandler
	// keys are the live registrations, for the post-time checks (keys.go).
	keys keyTable

	stopping atomic.Bool
	done     chan struct{}

	mu       sync.Mutex
	closed   bool
	objs     map[uint64]any // handles: *qp, *conn, *cq, *srq, *portListener, *connReq
	pds      map[*pd]struct{}
	mrs      map[*mr]struct{}
	cqs      map[*cq]struct{}
	chans    map[*compChannel]struct{}
	cmchans  map[*cmChannel]struct{}
	qps      map[*qp]struct{}
	srqs     map[*srq]struct{}
	reqs     map[*connReq]struct{}
	ports    map[uint16]*portListener
	draining map[*qp]struct{}
	// pendingAsync are asynchronous events raised under mu, delivered
	// once it is released (events.go).
	pendingAsync []rdma.AsyncEvent
}

func open(p rdma.Params, async rdma.AsyncHandler) (rdma.Device, error) {
	var msg [512]C.char
	if C.gd_load(&msg[0], C.int(len(msg))) != 0 {
		return nil, fmt.Errorf("verbs: %s: %w", C.GoString(&msg[0]), rdma.ErrNoDevice)
	}
	addr, err := pickAddr(p)
	if err != nil {
		return nil, err
	}
	d := &device{addr: addr, async: async, done: make(chan struct{}),
		objs: map[uint64]any{}, pds: map[*pd]struct{}{}, mrs: map[*mr]struct{}{}, cqs: map[*cq]struct{}{},
		chans: map[*compChannel]struct{}{}, cmchans: map[*cmChannel]struct{}{}, qps: map[*qp]struct{}{},
		srqs: map[*srq]struct{}{}, reqs: map[*connReq]struct{}{}, ports: map[uint16]*portListener{},
		draining: map[*qp]struct{}{}}
	if err := d.init(); err != nil {
		d.release()
		return nil, err
	}
	runtime.AddCleanup(d, func(c *C.struct_gd_dev) { C.gd_dev_put(c) }, d.c)
	go d.run()
	return d, nil
}

// init opens what the device needs; release undoes a partial init.
func (d *device) init() error {
	if d.c = C.gd_dev_new(); d.c == nil {
		return fmt.Errorf("verbs: eventfd: %w", rdma.ErrNoResources)
	}
	ech, err := C.gd_cm_channel()
	if ech == nil {
		return wrap("rdma_create_event_channel", errnoOf(-1, err))
	}
	d.ech = ech
	if r := C.gd_cm_create_id(d.ech, 0, &d.anchor); r != 0 {
		return wrap("rdma_create_id", errnoOf(r, nil))
	}
	sa := sockaddr(netip.AddrPortFrom(d.addr, 0))
	if r := C.gd_cm_bind(d.anchor, saPtr(&sa)); r != 0 {
		C.gd_cm_destroy_id(d.anchor)
		d.anchor = nil
		return fmt.Errorf("verbs: no RDMA device has address %s: %w", d.addr, wrap("rdma_bind_addr", errnoOf(r, nil)))
	}
	d.port = int(C.gd_id_port_num(d.anchor))
	ctx, err := C.gd_open_device(d.anchor)
	if ctx == nil {
		return fmt.Errorf("verbs: ibv_open_device: %v: %w", err, rdma.ErrNoDevice)
	}
	d.ctx = ctx
	if C.gd_set_nonblock(d.ctx.async_fd) != 0 {
		return fmt.Errorf("verbs: the device's async fd: %w", rdma.ErrNoResources)
	}
	return d.query()
}

func (d *device) release() {
	if d.ctx != nil {
		C.gd_close_device(d.ctx)
	}
	if d.anchor != nil {
		C.gd_cm_destroy_id(d.anchor)
	}
	if d.ech != nil {
		C.gd_cm_channel_destroy(d.ech)
	}
	if d.c != nil {
		C.gd_dev_put(d.c)
	}
}

// query fills d.attr with the device's and the port's real limits.
func (d *device) query() error {
	var da C.struct_ibv_device_attr
	if r := C.gd_query_device(d.ctx, &da); r != 0 {
		return wrap("ibv_query_device", errnoOf(r, nil))
	}
	var pa C.struct_ibv_port_attr
	if r := C.gd_query_port(d.ctx, C.uint8_t(d.port), &pa); r != 0 {
		return wrap("ibv_query_port", errnoOf(r, nil))
	}
	d.ib = pa.link_layer == C.IBV_LINK_LAYER_INFINIBAND
	d.iwarp = C.gd_transport(d.ctx) == C.IBV_TRANSPORT_IWARP
	d.noQPEvents = da.vendor_id == rxeVendorID
	d.srqResize = da.device_cap_flags&C.IBV_DEVICE_SRQ_RESIZE != 0
	d.maxSGERd = int(da.max_sge_rd)
	if d.maxSGERd <= 0 {
		d.maxSGERd = int(da.max_sge)
	}
	a := rdma.DeviceAttr{
		Name:            C.GoString(C.gd_device_name(d.ctx)),
		Vendor:          fmt.Sprintf("vendor %#x part %#x hw %#x", uint32(da.vendor_id), uint32(da.vendor_part_id), uint32(da.hw_ver)),
		MaxQP:           int(da.max_qp),
		MaxQPWR:         int(da.max_qp_wr),
		MaxSGE:          int(da.max_sge),
		MaxSGERd:        d.maxSGERd,
		MaxCQ:           int(da.max_cq),
		MaxCQE:          int(da.max_cqe),
		MaxMR:           int(da.max_mr),
		MaxMRSize:       uint64(da.max_mr_size),
		MaxPD:           int(da.max_pd),
		MaxMsgSize:      uint64(pa.max_msg_sz),
		MaxInline:       int(C.gd_probe_inline(d.ctx)),
		MaxQPRdAtom:     int(da.max_qp_rd_atom),
		MaxQPInitRdAtom: int(da.max_qp_init_rd_atom),
		MaxSRQ:          int(da.max_srq),
		MaxSRQWR:        int(da.max_srq_wr),
		MaxSRQSGE:       int(da.max_srq_sge),
		MaxPrivateData:  maxPrivateData(d.iwarp),
	}
	// Read atomics travel in the CM's 8-bit fields.
	a.MaxQPRdAtom, a.MaxQPInitRdAtom = min(a.MaxQPRdAtom, 255), min(a.MaxQPInitRdAtom, 255)
	if a.MaxSRQ > 0 && a.MaxSRQWR > 0 {
		// Every device with SRQs has the limit (IBV_SRQ_LIMIT).
		a.Caps |= rdma.CapSRQ | rdma.CapSRQLimit
	}
	// The backend checks posted segments itself (keys.go) and makes a new
	// QP to reconfigure one (qp.go).
	a.Caps |= rdma.CapPostCheck | rdma.CapQPReconfigure
	if !d.iwarp {
		// Solicited sends carry a mark in their immediate data (qp.go).
		a.Caps |= rdma.CapSolicitedFlag
	}
	d.attr = a
	return nil
}

// Query reports the device's limits (ibv_query_device, ibv_query_port).
func (d *device) Query() rdma.DeviceAttr { return d.attr }

// Addr is the IA address.
func (d *device) Addr() netip.Addr { return d.addr }

// locked runs f under d.mu unless the device is closed, then delivers
// the asynchronous events f raised.
func (d *device) locked(f func() error) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return rdma.ErrClosed
	}
	err := f()
	evs := d.takeAsync()
	d.mu.Unlock()
	d.deliver(evs)
	return err
}

// Close destroys every object of the device, connections first (their
// peers are told: rdma_destroy_id sends a disconnect or a reject), then
// stops the event thread and closes the context.
func (d *device) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return rdma.ErrClosed
	}
	d.closed = true
	for q := range d.qps {
		q.destroyLocked()
	}
	for r := range d.reqs {
		r.refuseLocked()
	}
	for _, p := range d.ports {
		p.destroyLocked()
	}
	for s := range d.srqs {
		s.destroyLocked()
	}
	for c := range d.cqs {
		c.destroyLocked()
	}
	for ch := range d.chans {
		ch.destroyLocked()
	}
	for ch := range d.cmchans {
		ch.destroyLocked()
	}
	for m := range d.mrs {
		m.deregLocked()
	}
	for p := range d.pds {
		p.deallocLocked()
	}
	d.mu.Unlock()
	d.stopping.Store(true)
	C.gd_dev_kick(d.c)
	<-d.done
	C.gd_cm_destroy_id(d.anchor)
	C.gd_cm_channel_destroy(d.ech)
	C.gd_close_device(d.ctx)
	d.anchor, d.ech, d.ctx = nil, nil, nil
	return nil
}

// CreateSRQ is in srq.go, the other objects' constructors beside them.
var _ rdma.Device = (*device)(nil)
