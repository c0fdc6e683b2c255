package core

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"godat/rdma"
)

// IAs opened from the same dat.conf entry (the same backend and parameters)
// share one transport device, as reference uDAPL providers share one HCA
// between the IAs opened on it. That is what lets an EP of one IA complete
// into an EVD of another IA of the process: their CQs and QPs are objects
// of one device. The device closes with the last IA that uses it.
type device struct {
	key     string
	backend string // the rdma.Register name it was opened with
	dev     rdma.Device
	attr    rdma.DeviceAttr
	refs    int // IAs using the device; guarded by devicesMu

	// qps maps the device's QP numbers (uint32) to EPs (*EP), for receive
	// completions of QPs on an SRQ (their work-request id names the SRQ's
	// receive, not the EP). A sync.Map: read without a lock on the
	// completion path, and recording an EP costs the same with ten
	// thousand others there (a copied-on-write map cost O(EPs) per EP).
	qps sync.Map

	iasMu sync.Mutex
	ias   map[*IA]struct{} // for device-wide asynchronous events
}

var (
	devicesMu sync.Mutex
	devices   = map[string]*device{}
)

// deviceKey identifies a device by backend and parameters.
func deviceKey(backend string, p rdma.Params) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(backend)
	for _, k := range keys {
		fmt.Fprintf(&b, "\x00%s=%s", k, p[k])
	}
	return b.String()
}

// acquireDevice opens the device of backend and p, or shares the one open.
func acquireDevice(backend string, p rdma.Params) (*device, error) {
	key := deviceKey(backend, p)
	devicesMu.Lock()
	defer devicesMu.Unlock()
	if d := devices[key]; d != nil {
		d.refs++
		return d, nil
	}
	d := &device{key: key, backend: backend, ias: map[*IA]struct{}{}}
	dev, err := rdma.Open(backend, p, d.async)
	if err != nil {
		return nil, err
	}
	d.dev, d.attr, d.refs = dev, dev.Query(), 1
	devices[key] = d
	return d, nil
}

// release drops one IA's use of the device, closing it with the last.
func (d *device) release() error {
	devicesMu.Lock()
	d.refs--
	last := d.refs == 0
	if last {
		delete(devices, d.key)
	}
	devicesMu.Unlock()
	if last {
		return d.dev.Close()
	}
	return nil
}

func (d *device) addIA(ia *IA, on bool) {
	d.iasMu.Lock()
	defer d.iasMu.Unlock()
	if on {
		d.ias[ia] = struct{}{}
	} else {
		delete(d.ias, ia)
	}
}

// setQP records (ep != nil) or forgets the EP of a QP number.
func (d *device) setQP(num uint32, ep *EP) {
	if ep != nil {
		d.qps.Store(num, ep)
	} else {
		d.qps.Delete(num)
	}
}

// epOfQP is the EP of a QP number of this device.
func (d *device) epOfQP(num uint32) *EP {
	if v, ok := d.qps.Load(num); ok {
		return v.(*EP)
	}
	return nil
}

// async turns the device's asynchronous events into DAT asynchronous
// events on the async EVD of the IA that owns the object concerned. It runs
// on backend goroutines or inside calls into the device: it only queues.
func (d *device) async(ev rdma.AsyncEvent) {
	switch ev.Type {
	case rdma.AsyncQPFatal, rdma.AsyncQPAccessErr:
		if ep := epIDs.get(uint32(ev.Context)); ep != nil {
			ep.ia.asyncError(EventAsyncEPBroken, ep, ReasonEPTransferToError)
		}
	case rdma.AsyncSRQLimitReached:
		if s := srqIDs.get(uint32(ev.Context)); s != nil {
			// The line a test reads to tell the device's own SRQ limit
			// from the backend's emulation (test_dat_srq_set_lw.c).
			if ev.Origin != "" {
				Logf(LevelDebug, "srq: low watermark event of SRQ %#x from %s", s.Handle(), ev.Origin)
			}
			s.limitReached()
		}
	case rdma.AsyncCQOverrun:
		if e := evdIDs.get(uint32(ev.Context)); e != nil {
			e.ia.asyncError(EventAsyncEVDOverflow, e, ReasonEVDOverflow)
		}
	case rdma.AsyncDeviceFatal:
		d.iasMu.Lock()
		ias := make([]*IA, 0, len(d.ias))
		for ia := range d.ias {
			ias = append(ias, ia)
		}
		d.iasMu.Unlock()
		for _, ia := range ias {
			ia.asyncError(EventAsyncIACatastrophic, ia, ReasonIACatastrophic)
		}
	default:
		Logf(LevelInfo, "device %s: asynchronous event %d (context %#x) ignored", d.attr.Name, ev.Type, ev.Context)
	}
}
