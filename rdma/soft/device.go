package soft

// The device: one per IA. It owns the registration table (keytab.go), the
// bell segment (bell.go), the sets of its objects, and the wires' device
// state (shm_dev.go, tcp_dev.go).

import (
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"godat/rdma"
)

// Limits reported by Query.
const (
	maxSGE       = 16
	maxQPWR      = 4096
	defaultWR    = 256
	maxPrivData  = 256
	maxMsgSize   = 1 << 30 // one process_vm_* call moves at most ~2 GiB
	maxMRSize    = 1 << 40
	maxQPs       = 4096 // QP slots: 12 bits of a hint
	maxRdAtom    = 16
	maxSRQs      = 4096
	maxSRQWR     = 1 << 16
	maxInline    = eagerMax
	defInline    = 64
	maxPDs       = 1 << 20
	maxCQs       = 1 << 16
	defaultDepth = 256
)

// caps are the optional features soft has.
const caps = rdma.CapSRQ | rdma.CapSRQLimit | rdma.CapSRQPDDifference | rdma.CapSolicitedFlag | rdma.CapQPOutstanding |
	rdma.CapQPReconfigure | rdma.CapCQGrow | rdma.CapAnyServiceID | rdma.CapPostCheck

func init() { rdma.Register("soft", open) }

type device struct {
	params
	async rdma.AsyncHandler
	pid   int

	keys   keyTable // the registration table
	keyFd  int
	bell   seg // futex word, sleepers, inbound queue: writable by peers
	bellFd int
	in     inbound

	// bellUsers counts calls inside the bell mapping that Close must wait
	// for before unmapping it (waits, Seq, the fd bridge).
	bellUsers atomic.Int32
	closed    atomic.Bool

	// epoch is bumped on every change a Poll would see (quiet.go); nil
	// when no word could be mapped.
	epoch *atomic.Uint64

	// qps maps QP slots (hints name them) to queue pairs.
	qps [maxQPs]atomic.Pointer[qp]

	// QPs whose large accesses wait for a Poll (qp_send.go): ndeferred is
	// Poll's lock-free look; deferPolled says a Poll took some since the
	// watcher's last tick. The rest is under deferMu.
	ndeferred     atomic.Int32
	deferPolled   atomic.Bool
	deferMu       sync.Mutex
	deferred      []*qp
	deferWatching bool          // watchDeferred runs
	deferTick     time.Duration // deferredIssueFallback when opened

	mu      sync.Mutex // object sets; above every other lock (qp.go)
	nqp     int
	nextPD  uint32
	pds     map[*pd]struct{}
	cqs     map[*cq]struct{}
	chans   map[*compChannel]struct{}
	cmchans map[*cmChannel]struct{}
	srqs    map[*srq]struct{}
	lsns    map[*listener]struct{}

	shm shmDev
	tcp tcpDev

	bridgeOnce sync.Once // bridge.go
	bridgeStop chan struct{}
	bridgeGone chan struct{}
}

// open opens a device; see parseParams for the parameters.
func open(p rdma.Params, async rdma.AsyncHandler) (rdma.Device, error) {
	pp, err := parseParams(p)
	if err != nil {
		return nil, err
	}
	allowPtrace()
	d := &device{params: pp, async: async, pid: os.Getpid(), keyFd: -1, bellFd: -1, deferTick: deferredIssueFallback,
		pds: map[*pd]struct{}{}, cqs: map[*cq]struct{}{}, chans: map[*compChannel]struct{}{},
		cmchans: map[*cmChannel]struct{}{}, srqs: map[*srq]struct{}{}, lsns: map[*listener]struct{}{}}
	fd, m, err := newSegment("godat-keys", keySegSize, true)
	if err != nil {
		return nil, fmt.Errorf("soft: registration table: %v: %w", err, rdma.ErrNoResources)
	}
	d.keyFd = fd
	d.keys.init(m)
	fd, m, err = newBell()
	if err != nil {
		d.release()
		return nil, fmt.Errorf("soft: bell: %v: %w", err, rdma.ErrNoResources)
	}
	d.bellFd, d.bell = fd, m
	d.epoch = takeEpoch()
	m.st32(bellOffMagic, bellMagic)
	d.in.lastScan.Store(time.Now().UnixNano())
	d.shm.init()
	d.tcp.init()
	registerLocal(d)
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

// Query reports the device's limits.
func (d *device) Query() rdma.DeviceAttr {
	name := [...]string{trShm: "soft-shm", trTCP: "soft-tcp", trAuto: "soft-auto"}[d.tr]
	return rdma.DeviceAttr{
		Name: name, Vendor: "godat", Caps: caps,
		MaxQP: maxQPs, MaxQPWR: maxQPWR, MaxSGE: maxSGE,
		MaxCQ: maxCQs, MaxCQE: maxCQE,
		MaxMR: keyMaxLive, MaxMRSize: maxMRSize, MaxPD: maxPDs,
		MaxMsgSize: maxMsgSize, MaxInline: maxInline,
		MaxQPRdAtom: maxRdAtom, MaxQPInitRdAtom: maxRdAtom,
		MaxSRQ: maxSRQs, MaxSRQWR: maxSRQWR, MaxSRQSGE: maxSGE,
		MaxPrivateData: maxPrivData,
	}
}

// Addr is the IA address.
func (d *device) Addr() netip.Addr { return d.addr }

// bellEnter marks a call that uses the bell mapping; false once closed.
func (d *device) bellEnter() bool {
	d.bellUsers.Add(1)
	if d.closed.Load() {
		d.bellUsers.Add(-1)
		return false
	}
	return true
}

func (d *device) bellLeave() { d.bellUsers.Add(-1) }

// ringSelf bumps our own bell word and wakes our sleepers.
func (d *device) ringSelf() {
	d.bell.add32(bellOffSeq, 1)
	if d.bell.ld32(bellOffSleepers) != 0 {
		futexWakeAll(d.bell.addr(bellOffSeq))
		d.wakeTCPSleeper() // it sleeps on its sockets (tcp_wait.go)
	}
}

// sleepOnBell sleeps while our bell word is seq and no hint waits, at most
// dur (< 0: no bound); it reports EINTR from a signal handler. The caller
// holds bellEnter.
func (d *device) sleepOnBell(seq uint32, dur time.Duration) bool {
	m := d.bell
	if m.ld32(bellOffSeq) != seq || d.in.ready(m) {
		return false
	}
	m.add32(bellOffSleepers, 1)
	local.sleepers.Add(1)
	// Senders skip no hint from now on; a message published unhinted
	// before is in a watched ring (shm_watch.go).
	drainLocalWatched()
	intr := false
	if m.ld32(bellOffSeq) == seq && !d.in.ready(m) && !localReady() {
		intr = futexWaitOn(m.addr(bellOffSeq), seq, dur)
	}
	local.sleepers.Add(-1)
	m.add32(bellOffSleepers, -1)
	return intr
}

// rescanDue reports (and arms) the periodic rescan of every shared-memory
// connection, which recovers a message whose hint a peer erased; a sleeper
// checks it before it sleeps, so it costs nothing on the Poll path.
func (d *device) rescanDue() bool {
	if d.shm.conns.Load() == 0 {
		return false
	}
	now := time.Now().UnixNano()
	last := d.in.lastScan.Load()
	return now-last >= int64(rescanEvery) && d.in.lastScan.CompareAndSwap(last, now)
}

// Close destroys every object of the device (ibv_close_device).
func (d *device) Close() error {
	d.mu.Lock()
	if d.closed.Load() {
		d.mu.Unlock()
		return rdma.ErrClosed
	}
	ls := make([]*listener, 0, len(d.lsns))
	for l := range d.lsns {
		ls = append(ls, l)
	}
	d.mu.Unlock()
	for _, l := range ls {
		_ = l.Close()
	}
	for i := range d.qps {
		if q := d.qps[i].Load(); q != nil {
			_ = q.Destroy()
		}
	}
	d.shm.close()
	d.tcp.close()
	unregisterLocal(d)
	d.stopBridge()
	d.mu.Lock()
	d.closed.Store(true)
	for s := range d.srqs {
		s.kill()
	}
	for c := range d.cqs {
		c.kill()
	}
	for c := range d.chans {
		c.kill()
	}
	for c := range d.cmchans {
		c.kill()
	}
	for p := range d.pds {
		p.dead.Store(true)
	}
	clear(d.srqs)
	clear(d.cqs)
	clear(d.chans)
	clear(d.cmchans)
	clear(d.pds)
	d.mu.Unlock()
	// Wake whoever still sleeps on the bell and wait for them to leave it
	// before it goes (they return at once: the word changed). A Poll reads
	// the bell without counting itself (its range stays mapped: retireBell)
	// and writes it only in a drain, under in.mu, after it checks closed: a
	// drain under way ends before in.mu is ours, a later one sees closed.
	d.ringSelf()
	for d.bellUsers.Load() > 0 {
		time.Sleep(50 * time.Microsecond)
	}
	d.in.mu.Lock()
	d.in.mu.Unlock() //nolint:staticcheck // an empty section: a barrier
	d.release()
	return nil
}

// release unmaps the segments and closes their descriptors. The bell's
// range stays mapped (to zeros) and d.bell keeps pointing at it: a late
// Poll may still read it (seg_unsafe.go).
func (d *device) release() {
	d.keys.mu.Lock()
	d.keys.m.unmap()
	d.keys.mu.Unlock()
	retireBell(d.bell)
	dropEpoch(d.epoch) // bumped: a watch of the device never matches again
	for _, fd := range []*int{&d.keyFd, &d.bellFd} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}
