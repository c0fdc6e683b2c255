package rdmatest

// memtest is a tiny in-memory reference backend: every device lives in this
// process, one lock guards them all, work is done synchronously at post
// time (or when the receive it waits for is posted), and completions go
// into plain ordered slices. It exists so that the suite can be run, and
// each of its tests shown able to fail, without a real backend; it is no
// model for one (a real backend does not hold a lock across a copy).

import (
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"godat/rdma"
)

// memConfig is a variant of the reference backend.
type memConfig struct {
	name        string
	caps        rdma.Caps
	maxPrivData int
	sgeRd       int // MaxSGERd (0: MaxSGE)
}

var (
	memFull = memConfig{name: "memtest", maxPrivData: 256, caps: rdma.CapSRQ | rdma.CapSRQLimit | rdma.CapSolicitedFlag |
		rdma.CapQPOutstanding | rdma.CapQPReconfigure | rdma.CapCQGrow | rdma.CapAnyServiceID | rdma.CapPostCheck}
	memMin = memConfig{name: "memtest-min", maxPrivData: 56, sgeRd: 1}
)

// memBackend is the suite's Backend for a variant.
func memBackend(c memConfig) Backend {
	return Backend{Name: c.name, Allocates: true, Open: func(async rdma.AsyncHandler) (rdma.Device, error) {
		return &mDevice{cfg: c, async: async, qps: map[*mQP]bool{}}, nil
	}}
}

// fab is the one fabric all memtest devices share, and its lock.
var fab = struct {
	sync.Mutex
	listeners map[uint64]*mListener
	lkeys     map[uint32]*mMR
	rkeys     map[uint32]*mMR
	nextQPN   uint32
	nextPort  uint16
}{listeners: map[uint64]*mListener{}, lkeys: map[uint32]*mMR{}, rkeys: map[uint32]*mMR{}, nextQPN: 100, nextPort: 40000}

var loopback = netip.MustParseAddr("127.0.0.1")

type mDevice struct {
	cfg    memConfig
	async  rdma.AsyncHandler
	closed bool
	qps    map[*mQP]bool
	lists  []*mListener
	cms    []*mCM
	chans  []*mChan
	cqs    []*mCQ
	pds    []*mPD
	mrs    []*mMR
	srqs   []*mSRQ
}

func (d *mDevice) Query() rdma.DeviceAttr {
	return rdma.DeviceAttr{Name: d.cfg.name, Vendor: "rdmatest", Caps: d.cfg.caps,
		MaxQP: 1 << 16, MaxQPWR: 4096, MaxSGE: 8, MaxCQ: 1 << 16, MaxCQE: 1 << 16, MaxMR: 1 << 20,
		MaxMRSize: 1 << 40, MaxPD: 1 << 10, MaxMsgSize: 1 << 30, MaxInline: 64, MaxQPRdAtom: 16,
		MaxQPInitRdAtom: 16, MaxSRQ: 1024, MaxSRQWR: 4096, MaxSRQSGE: 8, MaxPrivateData: d.cfg.maxPrivData,
		MaxSGERd: d.cfg.sgeRd}
}

func (d *mDevice) Addr() netip.Addr { return loopback }

func (d *mDevice) AllocPD() (rdma.PD, error) {
	fab.Lock()
	defer fab.Unlock()
	if d.closed {
		return nil, rdma.ErrClosed
	}
	pd := &mPD{dev: d}
	d.pds = append(d.pds, pd)
	return pd, nil
}

func (d *mDevice) CreateCompChannel() (rdma.CompChannel, error) {
	fab.Lock()
	defer fab.Unlock()
	if d.closed {
		return nil, rdma.ErrClosed
	}
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, rdma.ErrNoResources
	}
	c := &mChan{dev: d, fd: fd, wake: make(chan struct{})}
	d.chans = append(d.chans, c)
	return c, nil
}

func (d *mDevice) CreateCQ(depth int, ch rdma.CompChannel, ctx uint64) (rdma.CQ, error) {
	fab.Lock()
	defer fab.Unlock()
	if d.closed {
		return nil, rdma.ErrClosed
	}
	if depth < 1 || depth > d.Query().MaxCQE {
		return nil, rdma.ErrInvalid
	}
	cq := &mCQ{dev: d, depth: depth, ctx: ctx}
	if ch != nil {
		c, ok := ch.(*mChan)
		if !ok || c.dev != d || c.closed {
			return nil, rdma.ErrInvalid
		}
		cq.ch = c
		c.refs++
	}
	d.cqs = append(d.cqs, cq)
	return cq, nil
}

func (d *mDevice) CreateCMChannel() (rdma.CMChannel, error) {
	fab.Lock()
	defer fab.Unlock()
	if d.closed {
		return nil, rdma.ErrClosed
	}
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC|unix.EFD_SEMAPHORE)
	if err != nil {
		return nil, rdma.ErrNoResources
	}
	c := &mCM{fd: fd, wake: make(chan struct{})}
	d.cms = append(d.cms, c)
	return c, nil
}

func (d *mDevice) Close() error {
	fab.Lock()
	defer fab.Unlock()
	if d.closed {
		return rdma.ErrClosed
	}
	d.closed = true
	for q := range d.qps {
		q.destroyLocked()
	}
	for _, l := range d.lists {
		l.closeLocked()
	}
	for _, c := range d.cms {
		c.destroy()
	}
	for _, c := range d.chans {
		c.closed = true
		c.notify()
	}
	for _, m := range d.mrs {
		m.deregLocked()
	}
	return nil
}

func (d *mDevice) check(pd rdma.PD) (*mPD, error) {
	p, ok := pd.(*mPD)
	if !ok || p.dev != d {
		return nil, rdma.ErrInvalid
	}
	if p.closed {
		return nil, rdma.ErrClosed
	}
	return p, nil
}

func (d *mDevice) checkCQ(cq rdma.CQ) (*mCQ, error) {
	c, ok := cq.(*mCQ)
	if !ok || c.dev != d {
		return nil, rdma.ErrInvalid
	}
	if c.closed {
		return nil, rdma.ErrClosed
	}
	return c, nil
}

type mPD struct {
	dev    *mDevice
	refs   int
	closed bool
}

func (p *mPD) RegMR(addr, length uint64, acc rdma.Access) (rdma.MR, error) {
	fab.Lock()
	defer fab.Unlock()
	if p.closed || p.dev.closed {
		return nil, rdma.ErrClosed
	}
	if length == 0 || addr+length < addr || length > p.dev.Query().MaxMRSize ||
		acc&rdma.AccessRemoteWrite != 0 && acc&rdma.AccessLocalWrite == 0 {
		return nil, rdma.ErrInvalid
	}
	m := &mMR{dev: p.dev, pd: p, addr: addr, length: length, acc: acc, lkey: newKey(fab.lkeys), rkey: newKey(fab.rkeys)}
	fab.lkeys[m.lkey], fab.rkeys[m.rkey] = m, m
	p.refs++
	p.dev.mrs = append(p.dev.mrs, m)
	return m, nil
}

func newKey(used map[uint32]*mMR) uint32 {
	for {
		if k := rand.Uint32(); k != 0 && used[k] == nil {
			return k
		}
	}
}

func (p *mPD) Dealloc() error {
	fab.Lock()
	defer fab.Unlock()
	if p.closed || p.dev.closed {
		return rdma.ErrClosed
	}
	if p.refs > 0 {
		return rdma.ErrBusy
	}
	p.closed = true
	return nil
}

type mMR struct {
	dev          *mDevice
	pd           *mPD
	addr, length uint64
	acc          rdma.Access
	lkey, rkey   uint32
	closed       bool
}

func (m *mMR) LKey() uint32 { return m.lkey }
func (m *mMR) RKey() uint32 { return m.rkey }

func (m *mMR) Dereg() error {
	fab.Lock()
	defer fab.Unlock()
	if m.closed || m.dev.closed {
		return rdma.ErrClosed
	}
	m.deregLocked()
	return nil
}

func (m *mMR) deregLocked() {
	if m.closed {
		return
	}
	m.closed = true
	delete(fab.lkeys, m.lkey)
	delete(fab.rkeys, m.rkey)
	m.pd.refs--
}

// covers reports whether [addr, addr+n) lies in the region.
func (m *mMR) covers(addr uint64, n uint32) bool {
	end := addr + uint64(n)
	return addr >= m.addr && end >= addr && end <= m.addr+m.length
}

type mCQ struct {
	dev     *mDevice
	ch      *mChan
	ctx     uint64
	depth   int
	q       []rdma.WC
	armed   bool
	solOnly bool
	over    bool
	refs    int
	closed  bool
}

func (c *mCQ) Poll(wc []rdma.WC) int {
	fab.Lock()
	defer fab.Unlock()
	if len(c.q) == 0 {
		return 0
	}
	n := copy(wc, c.q)
	c.q = c.q[n:]
	if len(c.q) <= c.depth {
		c.over = false
	}
	return n
}

// add appends a completion, notifying an armed channel and reporting an
// excursion past the depth once.
func (c *mCQ) add(wc rdma.WC) { c.addSol(wc, false) }

// addSol is add for a receive whose message was sent solicited.
func (c *mCQ) addSol(wc rdma.WC, solicited bool) {
	c.q = append(c.q, wc)
	if len(c.q) > c.depth && !c.over {
		c.over = true
		c.dev.async(rdma.AsyncEvent{Type: rdma.AsyncCQOverrun, Context: c.ctx})
	}
	if c.armed && (!c.solOnly || solicited || wc.Status != rdma.WCSuccess) {
		c.armed = false
		if c.ch != nil {
			c.ch.notify()
		}
	}
}

// Resize resizes in the full variant (with CapCQGrow, standing in for a
// backend that can), and is not supported in the other.
func (c *mCQ) Resize(depth int) error {
	fab.Lock()
	defer fab.Unlock()
	if c.dev.cfg.caps&rdma.CapCQGrow == 0 {
		return rdma.ErrNotSupported
	}
	if c.closed || c.dev.closed {
		return rdma.ErrClosed
	}
	if depth < 1 || depth < len(c.q) || depth > c.dev.Query().MaxCQE {
		return rdma.ErrInvalid
	}
	c.depth = depth
	return nil
}

func (c *mCQ) Arm(solicitedOnly bool) error {
	fab.Lock()
	defer fab.Unlock()
	if c.closed || c.dev.closed {
		return rdma.ErrClosed
	}
	c.armed, c.solOnly = true, solicitedOnly
	return nil
}

func (c *mCQ) Destroy() error {
	fab.Lock()
	defer fab.Unlock()
	if c.closed || c.dev.closed {
		return rdma.ErrClosed
	}
	if c.refs > 0 {
		return rdma.ErrBusy
	}
	c.closed = true
	if c.ch != nil {
		c.ch.refs--
	}
	return nil
}

type mChan struct {
	dev    *mDevice
	fd     int
	seq    atomic.Uint32
	mu     sync.Mutex
	wake   chan struct{}
	refs   int
	closed bool
}

func (c *mChan) Fd() int     { return c.fd }
func (c *mChan) Seq() uint32 { return c.seq.Load() }
func (c *mChan) Wake()       { c.notify() }
func (c *mChan) notify() {
	c.mu.Lock()
	c.seq.Add(1)
	close(c.wake)
	c.wake = make(chan struct{})
	c.mu.Unlock()
	var one [8]byte
	one[0] = 1
	_, _ = unix.Write(c.fd, one[:])
}

func (c *mChan) Wait(seq uint32, d time.Duration) bool {
	var timeout <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	for {
		c.mu.Lock()
		if c.seq.Load() != seq {
			c.mu.Unlock()
			return false
		}
		w := c.wake
		c.mu.Unlock()
		select {
		case <-w:
		case <-timeout:
			return false
		}
	}
}

func (c *mChan) Destroy() error {
	fab.Lock()
	defer fab.Unlock()
	if c.closed || c.dev.closed {
		return rdma.ErrClosed
	}
	if c.refs > 0 {
		return rdma.ErrBusy
	}
	c.closed = true
	c.notify()
	return nil
}

type mCM struct {
	fd     int
	mu     sync.Mutex
	q      []rdma.CMEvent
	wake   chan struct{}
	closed bool
}

func (c *mCM) Fd() int { return c.fd }

func (c *mCM) push(ev rdma.CMEvent) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.q = append(c.q, ev)
	close(c.wake)
	c.wake = make(chan struct{})
	var one [8]byte
	one[0] = 1
	_, _ = unix.Write(c.fd, one[:])
}

func (c *mCM) Get(ev *rdma.CMEvent, d time.Duration) error {
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return rdma.ErrClosed
		}
		if len(c.q) > 0 {
			*ev = c.q[0]
			c.q = c.q[1:]
			var b [8]byte
			_, _ = unix.Read(c.fd, b[:])
			c.mu.Unlock()
			return nil
		}
		w := c.wake
		c.mu.Unlock()
		if d == 0 {
			return rdma.ErrTimeout
		}
		select {
		case <-w:
		case <-timeout:
			return rdma.ErrTimeout
		}
	}
}

func (c *mCM) Destroy() error {
	if !c.destroy() {
		return rdma.ErrClosed
	}
	return nil
}

func (c *mCM) destroy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.closed = true
	close(c.wake)
	return true
}
