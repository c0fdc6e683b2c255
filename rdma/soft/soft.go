// Package soft is the software RDMA provider: shared memory between
// processes on one host, TCP between hosts (tcp*.go).
//
// Each Device owns an "IA segment" (a shared memfd) holding its doorbell
// futex word and its memory-registration table; connected peers map it to
// check remote keys one-sidedly and to ring the doorbell. Connection
// management runs over abstract SEQPACKET unix sockets that pass the
// memfds; the data path uses SPSC rings in a per-connection memfd for small
// messages and process_vm_readv/writev for large ones and for RDMA
// read/write. See qp.go for the completion rules.
package soft

import (
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"godat/rdma"
)

// Limits reported in Attr.
const (
	maxSGE       = 16
	maxQPWR      = 4096
	defaultWR    = 256
	maxPrivData  = 256
	maxMsgSize   = 1 << 30 // one process_vm_* call moves at most ~2 GiB
	maxMRSize    = 1 << 40
	maxQPs       = 4096
	maxReadsPerQ = 16
)

type device struct {
	addr   netip.Addr
	fd     int // IA segment memfd
	seg    shm
	db     doorbell
	mrs    mrTable
	pid    int
	mu     sync.Mutex
	closed bool
	qps    map[*qp]struct{}
	srqs   map[*srq]struct{}
	lsns   map[*listener]struct{}
}

// Open opens a software IA. Params (from the dat.conf entry):
//   - transport: shm (default: processes on this host, shared memory), tcp
//     (TCP only, also on one host) or auto (shared memory to peers on this
//     host, TCP otherwise; see tcp_auto.go for how "this host" is decided);
//   - addr: the IA address, an IPv4/IPv6 literal or an interface name
//     (default 127.0.0.1);
//   - timeout: seconds after which a silent TCP peer is declared dead
//     (default 10).
func Open(params map[string]string) (rdma.Device, error) {
	addr := netip.MustParseAddr("127.0.0.1")
	if s, ok := params["addr"]; ok && s != "" {
		a, err := resolveAddr(s)
		if err != nil {
			return nil, err
		}
		addr = a
	}
	timeout, err := parseTimeout(params)
	if err != nil {
		return nil, err
	}
	switch t := params["transport"]; t {
	case "", "shm":
		return openShm(addr)
	case "tcp":
		return openTCP(addr, modeTCP, timeout)
	case "auto":
		return openTCP(addr, modeAuto, timeout)
	default:
		return nil, fmt.Errorf("soft: transport %q not supported: %w", t, rdma.ErrInvalid)
	}
}

// openShm opens the shared-memory device; the TCP device is built on it.
func openShm(addr netip.Addr) (*device, error) {
	allowPtrace()
	fd, seg, err := newMemfd("godat-ia", iaSegSize)
	if err != nil {
		return nil, fmt.Errorf("soft: IA segment: %v: %w", err, rdma.ErrNoResources)
	}
	d := &device{addr: addr, fd: fd, seg: seg, pid: os.Getpid(),
		qps: map[*qp]struct{}{}, srqs: map[*srq]struct{}{}, lsns: map[*listener]struct{}{}}
	d.db.m = seg
	seg.st32(iaOffMagic, iaMagic)
	seg.st32(iaOffPid, uint32(d.pid))
	d.mrs.init(seg)
	return d, nil
}

var ptraceOnce sync.Once

// allowPtrace lets peers use process_vm_* on us under Yama.
func allowPtrace() {
	ptraceOnce.Do(func() {
		b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
		if err != nil {
			return
		}
		if v, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && v >= 1 {
			_ = unix.Prctl(unix.PR_SET_PTRACER, unix.PR_SET_PTRACER_ANY, 0, 0, 0)
		}
	})
}

func (d *device) Attr() rdma.DeviceAttr {
	return rdma.DeviceAttr{
		Name:           "soft-shm",
		Vendor:         "godat",
		MaxQP:          maxQPs,
		MaxQPWR:        maxQPWR,
		MaxSGE:         maxSGE,
		MaxCQE:         1 << 20,
		MaxMR:          mrTableCap,
		MaxMRSize:      maxMRSize,
		MaxPD:          1 << 30,
		MaxMsgSize:     maxMsgSize,
		MaxRDMASize:    maxMsgSize,
		MaxReadsPerQP:  maxReadsPerQ,
		MaxSRQ:         maxSRQs,
		MaxSRQWR:       maxSRQWR,
		MaxPrivateData: maxPrivData,
		MaxQualAny:     ^uint64(0),
	}
}

func (d *device) Addr() netip.Addr        { return d.addr }
func (d *device) Doorbell() rdma.Doorbell { return &d.db }

// Close destroys the device's queue pairs and listeners and unmaps the IA
// segment (peers keep their own mappings until they disconnect).
func (d *device) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return rdma.ErrClosed
	}
	d.closed = true
	qps := make([]*qp, 0, len(d.qps))
	for q := range d.qps {
		qps = append(qps, q)
	}
	srqs := make([]*srq, 0, len(d.srqs))
	for s := range d.srqs {
		srqs = append(srqs, s)
	}
	ls := make([]*listener, 0, len(d.lsns))
	for l := range d.lsns {
		ls = append(ls, l)
	}
	d.mu.Unlock()
	for _, l := range ls {
		_ = l.Close()
	}
	for _, q := range qps {
		_ = q.Destroy()
	}
	for _, s := range srqs {
		_ = s.Destroy()
	}
	d.mrs.mu.Lock()
	d.mrs.m = shm{}
	d.mrs.mu.Unlock()
	// The doorbell page stays mapped (a waiter may be asleep on it); the
	// registration table goes.
	d.seg.unmapTail(iaOffTable)
	unix.Close(d.fd)
	return nil
}
