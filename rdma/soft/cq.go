package soft

// Completion queues: a software ring of rdma.WC per CQ. Completions are
// pushed by whoever completes the work (the posting thread, a Poll that
// drains the device's inbound queue, a TCP reader or writer goroutine), in
// the order the work completed; Poll takes them oldest first.
//
// The empty Poll is the hot path of a polling consumer: it costs the load
// of the inbound queue's head slot and of the CQ's count, whatever the
// number of queue pairs completing into the CQ.

import (
	"sync"
	"sync/atomic"

	"godat/rdma"
)

// maxCQE is the deepest CQ a consumer may ask for; a CQ grows past its
// depth rather than drop a completion (CapCQGrow).
const maxCQE = 1 << 20

type cq struct {
	dev   *device
	ch    *compChannel // nil: only polled
	ctx   uint64
	n     atomic.Int64            // completions held: the lock-free empty check
	hot   atomic.Pointer[shmWire] // the connection that last completed a receive here (shm_dev.go)
	idle  atomic.Uint32           // Polls without a hint to take (watchEvery)
	refs  atomic.Int32            // QPs completing into it
	dead  atomic.Bool
	armd  atomic.Bool // armed, for lent's look without mu
	mu    sync.Mutex  // leaf, below qp.mu (see the lock order in qp.go)
	ring  []rdma.WC
	head  uint64
	tail  uint64
	depth int
	armed bool
	solic bool // armed for solicited (and error) completions only
	over  bool // in an excursion past depth: AsyncCQOverrun already raised
}

func pow2(n uint64) uint64 {
	p := uint64(1)
	for p < n {
		p <<= 1
	}
	return p
}

// CreateCQ creates a completion queue (ibv_create_cq).
func (d *device) CreateCQ(depth int, ch rdma.CompChannel, ctx uint64) (rdma.CQ, error) {
	if d.closed.Load() {
		return nil, rdma.ErrClosed
	}
	if depth < 1 || depth > maxCQE {
		return nil, rdma.ErrInvalid
	}
	var c *compChannel
	if ch != nil {
		// A channel of another soft device is accepted (core may let an
		// EP of one IA complete into an EVD of another): the CQ's device
		// then runs its bridge, since a waiter sleeps on the channel's
		// device's bell, which this device's peers do not ring.
		var ok bool
		if c, ok = ch.(*compChannel); !ok || c == nil {
			return nil, rdma.ErrInvalid
		}
	}
	q := &cq{dev: d, ch: c, ctx: ctx, depth: depth, ring: make([]rdma.WC, pow2(uint64(depth)))}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		return nil, rdma.ErrClosed
	}
	if c != nil {
		if c.dead.Load() {
			return nil, rdma.ErrInvalid
		}
		c.refs.Add(1)
		if c.dev != d {
			d.startBridge()
		}
	}
	d.cqs[q] = struct{}{}
	return q, nil
}

// push appends a completion (the caller may hold a QP lock; cq.mu is below
// it). It notifies the channel when the CQ is armed for it, and raises
// AsyncCQOverrun once per excursion past the depth.
func (q *cq) push(wc *rdma.WC) {
	q.mu.Lock()
	if q.dead.Load() {
		q.mu.Unlock()
		return
	}
	if q.tail-q.head == uint64(len(q.ring)) {
		q.grow(2 * len(q.ring))
	}
	q.ring[q.tail&uint64(len(q.ring)-1)] = *wc
	q.tail++
	q.n.Add(1)
	q.dev.bump()
	overrun := false
	if q.tail-q.head > uint64(q.depth) && !q.over {
		q.over, overrun = true, true
	}
	notify := q.armed && (!q.solic || wc.Flags&rdma.WCSolicited != 0 || wc.Status != rdma.WCSuccess)
	if notify {
		q.armed = false
		q.armd.Store(false)
	}
	q.mu.Unlock()
	if notify && q.ch != nil {
		q.ch.notify()
	}
	if overrun {
		q.dev.async(rdma.AsyncEvent{Type: rdma.AsyncCQOverrun, Context: q.ctx})
	}
}

// grow resizes the ring to size slots (a power of two), keeping the
// completions in order; q.mu is held.
func (q *cq) grow(size int) {
	r := make([]rdma.WC, size)
	n := q.tail - q.head
	for i := uint64(0); i < n; i++ {
		r[i] = q.ring[(q.head+i)&uint64(len(q.ring)-1)]
	}
	q.ring, q.head, q.tail = r, 0, n
}

// cqHand is a Poll's first WC slot, lent to the drain it runs (under
// inbound.mu): the first receive that drain completes into that CQ while
// the CQ holds nothing goes straight there, the oldest completion, without
// the ring and its lock twice.
type cqHand struct {
	cq   *cq
	wc   *rdma.WC
	used bool
}

// lent is the slot h lends, marked used, if h is lent by q's poller and
// still free, and q holds no completion (so the next one is the oldest)
// and waits for no notification (push keeps that logic); nil otherwise.
// The caller fills the slot in place (no copy of a freshly written WC,
// which would stall on store forwarding); h is under inbound.mu, which
// the caller holds.
func (q *cq) lent(h *cqHand) *rdma.WC {
	if h == nil || h.cq != q || h.used || q.n.Load() != 0 || q.armd.Load() || q.dead.Load() {
		return nil
	}
	h.used = true
	return h.wc
}

// Poll takes up to len(wc) completions (ibv_poll_cq). It first drains the
// device's inbound queue (bounded), which is where messages from peers on
// this host become completions (the drain may complete the first of them
// straight into wc[0]: cqHand), and serves the device's TCP connections
// that are readable (tcp_loop.go: one epoll_wait, then non-blocking reads).
//
// It takes no count and no lock to look: the bell it reads stays mapped
// after Close (retireBell), and it writes the bell only in a drain, which
// checks under inbound.mu that the device is open (drainFor, peekHot).
func (q *cq) Poll(wc []rdma.WC) int {
	k := q.poll(wc)
	if k == 0 {
		q.dev.tcp.yieldToMovers()
	}
	return k
}

func (q *cq) poll(wc []rdma.WC) int {
	d := q.dev
	if q.dead.Load() {
		return 0
	}
	if l := d.tcp.live.Load(); l != nil {
		l.progress()
	}
	if d.ndeferred.Load() != 0 {
		d.runDeferred()
	}
	k := 0
	if q.hot.Load() != nil {
		k = d.peekHot(q, wc)
	} else if d.in.ready(d.bell) || d.in.nwatch.Load() != 0 && q.idle.Add(1)%watchEvery == 0 {
		k = d.drainFor(q, wc)
	}
	if q.n.Load() == 0 || k == len(wc) {
		return k
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	mask := uint64(len(q.ring) - 1)
	taken := 0
	for k < len(wc) && q.head != q.tail {
		wc[k] = q.ring[q.head&mask]
		q.head++
		k++
		taken++
	}
	q.n.Add(int64(-taken))
	if q.over && q.tail-q.head <= uint64(q.depth) {
		q.over = false // the excursion is over: the next one raises again
	}
	return k
}

// Arm requests one notification for the next completion
// (ibv_req_notify_cq).
func (q *cq) Arm(solicitedOnly bool) error {
	if q.dead.Load() {
		return rdma.ErrClosed
	}
	q.mu.Lock()
	q.armed, q.solic = true, solicitedOnly
	q.armd.Store(true)
	q.mu.Unlock()
	return nil
}

// Resize changes the depth, keeping the completions (ibv_resize_cq).
func (q *cq) Resize(depth int) error {
	if depth < 1 || depth > maxCQE {
		return rdma.ErrInvalid
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.dead.Load():
		return rdma.ErrClosed
	case uint64(depth) < q.tail-q.head:
		return rdma.ErrInvalid
	}
	q.depth = depth
	if want := int(pow2(uint64(depth))); want != len(q.ring) && uint64(want) >= q.tail-q.head {
		q.grow(want)
	}
	q.over = q.tail-q.head > uint64(depth)
	return nil
}

// Destroy frees the CQ (ibv_destroy_cq).
func (q *cq) Destroy() error {
	d := q.dev
	d.mu.Lock()
	if q.dead.Load() {
		d.mu.Unlock()
		return rdma.ErrClosed
	}
	if q.refs.Load() > 0 {
		d.mu.Unlock()
		return rdma.ErrBusy
	}
	q.kill()
	delete(d.cqs, q)
	d.mu.Unlock()
	return nil
}

// kill marks the CQ destroyed and drops its completions; d.mu is held.
func (q *cq) kill() {
	q.mu.Lock()
	q.dead.Store(true)
	q.ring, q.head, q.tail = nil, 0, 0
	q.n.Store(0)
	q.mu.Unlock()
	q.dev.bump()
	if q.ch != nil {
		q.ch.refs.Add(-1)
	}
}
