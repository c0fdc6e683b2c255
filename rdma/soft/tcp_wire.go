package soft

// The TCP wire: one TCP connection per queue pair (tcp_frame.go for the
// format).
//
// Threads: the device's receive loop (tcp_loop.go: a polling consumer's
// Poll, or the loop goroutine when nobody polls) reads frames, one per
// connection per turn, and hands them to the engine, which places payloads
// straight into the posted buffers or the RDMA target and pushes
// completions in placement order; a large payload is read into place
// once the socket holds all of it (tcp_whole.go), or by a helper
// goroutine. Writes are done by whoever queues a frame (a post, the
// reader) with non-blocking sendmsg, outside every lock but the writer's
// own short one; a write that would block, or a large one, goes on in the
// consumer's Polls while it polls (tcp_pollwrite.go), else in the
// connection's writer goroutine, which sleeps until the socket drains. Nothing spins. The socket is not in Go's
// network poller (tcp_sock.go says why).
//
// Credits and acknowledgements ride in every frame header (grant, ack), so
// a busy connection needs no frames of their own; an idle one sends a bare
// ACK when it owes one, and NEED when it waits for a grant.

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"godat/rdma"
)

const (
	rdBufSize = 64 << 10
	directMin = 16 << 10 // payload left at or above this is read straight into place
	maxGather = 64       // iovecs per sendmsg
	// A verdict nobody waits for at once waits at most ackDelay, or for
	// lazyAckMax others, for a frame to ride on (needAckLocked).
	ackDelay = 50 * time.Microsecond
	// A verdict someone waits for (flNotify) waits at most urgentAckDelay
	// for the consumer's reply while a consumer's Poll serves.
	urgentAckDelay = 5 * time.Microsecond
	lazyAckMax     = 16
	lingerTime     = 2 * time.Second
)

type tcpWire struct {
	d         *device
	q         *qp
	c         *conn
	sock      *tcpSock
	done      chan struct{} // closed by abort
	kickW     chan struct{} // wakes the writer goroutine
	resumeCh  chan struct{} // wakes a reader waiting for an SRQ receive
	lastOut   chan struct{} // closed once a shutdown's last frame is written, or the socket closed
	lastOnce  sync.Once
	closeOnce sync.Once
	lingerMu  sync.Mutex  // leaf: linger
	linger    *time.Timer // aborts a shut-down connection after lingerTime

	dead        atomic.Bool  // shut down: the reader only drains
	draining    atomic.Bool  // a goroutine drains the socket
	lingerUntil atomic.Int64 // unix ns the drain may last

	peerG   atomic.Uint32 // the peer's grant
	grant   atomic.Uint32 // ours: stamped into every header
	starved atomic.Bool   // the peer asked for a grant

	// The reader's state: the loop's, or the helper's while parked.
	rd          treader
	loop        atomic.Pointer[tcpLoop] // nil until established (set while posts and aborts look)
	loopFd      int32
	queued      bool      // in the loop's queue (loop thread only)
	parked      bool      // out of it until resumed (loop thread only)
	edge        bool      // readable since the last read (loop thread only)
	lastAck     uint32    // the peer's ack as last taken
	order       *tcpOrder // stamps shared with the peer device; set before any data frame
	rdKick      bool      // a grant arrived: retry the send queue
	owed        bool      // in the loop's list of deferred verdicts (turn holder)
	lowat       uint64    // the socket's SO_RCVLOWAT while a payload waits to be whole; 0: default (reader)
	lowatCapped int       // marks the kernel set lower than asked (reader; for tests)
	wholes      int       // payloads placed whole by the serving thread (reader; for tests)
	// A helper goroutine places a payload (rdMoving), the writer goroutine
	// holds the right to write (wrMoving): tcpDev.moving counts them.
	rdMoving, wrMoving atomic.Bool

	// Writing, under wmu (a leaf below qp.mu).
	wmu        sync.Mutex
	items      []*outItem
	head       int // first unwritten item
	nstart     int // items from head whose header is filled
	free       []*outItem
	naks       []nakRec
	writing    bool // someone holds the right to write
	handed     bool // ... and handed it to the writer goroutine
	polls      bool // ... or to the consumer's Polls (tcp_pollwrite.go)
	slow       bool // the writer goroutine holds it (it may wait for room)
	wwait      int  // posters waiting in flushPosted for a short write
	wcond      sync.Cond
	careful    bool // after EFAULT: one iovec per sendmsg, to find the fault
	broken     bool
	executed   uint32 // the peer's acknowledged requests executed here
	ackSent    uint32
	ackUrgent  bool   // a verdict owed is awaited at once (flNotify)
	ackDue     int64  // monoNow by which a deferred verdict goes; 0: at once
	starvedAt  uint32 // the grant the peer had seen when it asked
	peerHungry bool
	needAsk    bool
	askAt      uint32
	nAcked     uint32         // acknowledged requests queued (numbers them)
	answering  int            // read responses started, not yet told to the engine
	wiov       [maxGather]iov // the writer's scratch
}

type nakRec struct {
	k  uint32
	st rdma.WCStatus
}

// newTCPWire takes a connected socket out of Go's network poller, wraps it
// and starts its writer goroutine.
func newTCPWire(d *device, s *net.TCPConn) (*tcpWire, error) {
	_ = s.SetNoDelay(true)
	setTimeouts(s, d.timeout)
	so, err := detachTCP(s)
	if err != nil {
		return nil, err
	}
	w := &tcpWire{d: d, sock: so, done: make(chan struct{}), kickW: make(chan struct{}, 1),
		resumeCh: make(chan struct{}, 1), lastOut: make(chan struct{})}
	w.rd.w = w
	w.wcond.L = &w.wmu
	w.rd.buf = make([]byte, rdBufSize)
	go w.writer()
	return w, nil
}

// setTimeouts makes a silent peer an error within about t: keepalive probes
// after t/2 of silence, and TCP_USER_TIMEOUT for data that stays unacked.
func setTimeouts(s *net.TCPConn, t time.Duration) {
	idle := max(t/2, time.Second)
	intvl := max(t/10, time.Second)
	cnt := max(1, int((t-idle)/intvl))
	_ = s.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: idle, Interval: intvl, Count: cnt})
	if rc, err := s.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(t/time.Millisecond))
		})
	}
}

func addrPortOf(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

// setOrder takes the stamp order shared with the peer device whose token
// the handshake brought; the handshake's goroutine, before the connection
// carries data frames. An abort may come first (the attempt torn down as
// the answer arrived): the reference is then dropped at once, or the
// order would outlive every connection to that device.
func (w *tcpWire) setOrder(token uint32) {
	o := w.d.tcp.orderFor(w.sock.remote.Addr(), token)
	w.wmu.Lock()
	gone := w.aborted() // abort closes done before it takes the order under wmu
	if !gone {
		w.order = o
	}
	w.wmu.Unlock()
	if gone {
		w.d.tcp.releaseOrder(o)
	}
}

// aborted reports whether abort has begun (it closes done first).
func (w *tcpWire) aborted() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// bind attaches the wire to connection c of q.
func (w *tcpWire) bind(q *qp, c *conn) {
	w.q, w.c = q, c
}

// abort closes the socket at once; the reader and writer end on errors.
// The connection leaves the receive loop's epoll set before the socket
// closes, so that the descriptor number, once reused, never reaches this
// wire. done is closed before the loop is looked for: an establish that
// sets the loop meanwhile sees done after its add and takes the
// connection out itself (establish), so one of the two always does.
func (w *tcpWire) abort() {
	w.closeOnce.Do(func() {
		close(w.done)
		if l := w.loop.Load(); l != nil {
			l.forget(w)
		}
		w.sock.Close()
		w.lastWritten()
		w.wmu.Lock() // against setOrder on the handshake's goroutine, which sees done closed
		o := w.order
		w.wmu.Unlock()
		w.d.tcp.releaseOrder(o)
		// A pending linger timer would keep the wire, and its QP's
		// queues, reachable for lingerTime after the connection ended.
		w.lingerMu.Lock()
		if w.linger != nil {
			w.linger.Stop()
			w.linger = nil
		}
		w.lingerMu.Unlock()
	})
}

func (w *tcpWire) oneSided() bool { return false }

// ackedNow: acknowledgements come in frame headers, which the reader
// reports as they arrive; nothing to watch.
func (w *tcpWire) ackedNow() (uint32, bool) { return 0, false }
func (w *tcpWire) watchAcks(uint32)         {}

// send queues a SEND, WRITE or READREQ frame. Payloads are written
// straight from the consumer's memory when the socket takes them.
func (w *tcpWire) send(h *hdr, sgl []rdma.SGE) issued {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if w.broken {
		// The connection failed; its teardown is on its way and flushes
		// the request.
		return issuedFull
	}
	it := w.newItemLocked(h.typ)
	it.f = frame{typ: h.typ, flags: h.flags, aux: h.aux, len: h.len, addr: h.addr}
	if h.typ != msgReadReq {
		for i := range sgl {
			if sgl[i].Length > 0 {
				it.pay[it.npay] = iov{Base: uintptr(sgl[i].Addr), Len: int(sgl[i].Length)}
				it.npay++
			}
		}
		it.payLen = int(h.len)
		it.total = frameHdr + int(h.len)
	}
	w.items = append(w.items, it)
	if h.typ == msgReadReq {
		return issuedSent // the engine tracks reads itself
	}
	w.nAcked++
	it.acked, it.seq = true, w.nAcked
	return issuedAcked
}

func (w *tcpWire) access(rdma.WROpcode, []rdma.SGE, uint64, uint64, uint32) rdma.WCStatus {
	return rdma.WCLocQPOpErr // two-sided: never called
}

// readResp queues a read response: the data is read from the registered
// region as the frame is written, and the READDONE trailer carries the
// verdict.
func (w *tcpWire) readResp(addr, L uint64, st rdma.WCStatus) {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	it := w.newItemLocked(msgReadResp)
	it.readResp, it.trailer, it.trStatus = true, true, st
	if st == rdma.WCSuccess && L > 0 {
		it.f.len = L
		it.pay[0] = iov{Base: uintptr(addr), Len: int(L)}
		it.npay = 1
		it.payLen = int(L)
	}
	it.total = 2*frameHdr + it.payLen
	w.items = append(w.items, it)
}

func (w *tcpWire) peerGrant(uint32) uint32 { return w.peerG.Load() }

// setGrant records our grant; the next header carries it, and a peer that
// asked gets it at the next flush.
func (w *tcpWire) setGrant(g uint32) { w.grant.Store(g) }

// heardGrant takes the grant of a header that grants more.
func (w *tcpWire) heardGrant(f *frame) bool {
	if !after(f.grant, w.peerG.Load()) {
		return false
	}
	w.peerG.Store(f.grant)
	return true
}

// askGrant queues one NEED.
func (w *tcpWire) askGrant(seen uint32) {
	w.wmu.Lock()
	w.needAsk, w.askAt = true, seen
	w.wmu.Unlock()
}

// ack records that the peer's requests up to n were executed; headers
// carry it (a bare ACK when nothing else goes out).
func (w *tcpWire) ack(n uint32) {
	w.wmu.Lock()
	w.executed = n
	w.wmu.Unlock()
}

// nak records a failure; it goes out before any header that acknowledges
// past it (gatherLocked).
func (w *tcpWire) nak(k uint32, st rdma.WCStatus) {
	w.wmu.Lock()
	w.executed = k
	w.naks = append(w.naks, nakRec{k: k, st: st})
	w.wmu.Unlock()
}

// resume wakes the reader whose message waits for an SRQ receive: the
// helper, or the loop that parked the connection.
func (w *tcpWire) resume() {
	select {
	case w.resumeCh <- struct{}{}:
	default:
	}
	if l := w.loop.Load(); l != nil {
		l.resume(w)
	}
}

// establish hands the connection to the device's receive loop.
func (w *tcpWire) establish() bool {
	l, err := w.d.tcp.startLoop()
	if err != nil {
		return false
	}
	w.d.bump() // the device's Polls read sockets now: no watch of its CQs holds
	w.loop.Store(l)
	if !l.add(w) {
		return false
	}
	if w.aborted() { // an abort meanwhile may have looked for the loop before it was set
		l.forget(w)
		return false
	}
	return true
}

// shutdown ends the connection (q.mu held; nothing here blocks). The
// engine then waits for a placement in progress (the read deadline wakes
// a reader in the middle of a payload). An orderly end sends DISC after
// the frames already started; a flushed one (a NAK that must arrive) lets
// every queued frame go; both then close the write side and let the
// reader drain until the peer closes or lingerTime passes.
func (w *tcpWire) shutdown(how endHow) {
	if how == endAbort {
		w.dead.Store(true)
		w.abort()
		return
	}
	// The linger time first: a reader that sees dead drains until then
	// (with none it would close the socket before DISC went out).
	w.lingerUntil.Store(time.Now().Add(lingerTime).UnixNano())
	w.dead.Store(true)
	w.d.tcp.addEnding(w) // before the frame exists: it cannot be written first
	_ = w.sock.SetReadDeadline(time.Now())
	w.wmu.Lock()
	if how == endDisc {
		for i := w.head + w.nstart; i < len(w.items); i++ {
			w.freeItemLocked(w.items[i])
		}
		w.items = w.items[:w.head+w.nstart]
		w.naks = w.naks[:0]
	}
	typ := uint8(msgDisc)
	if how != endDisc {
		typ = msgAck
	}
	it := w.newItemLocked(typ)
	it.fin = true
	w.items = append(w.items, it)
	w.wmu.Unlock()
	t := time.AfterFunc(lingerTime, w.abort)
	w.lingerMu.Lock()
	w.linger = t
	w.lingerMu.Unlock()
	w.kickWriter()
}

// lastWritten: the shutdown's last frame is written (or never will be:
// the socket closed); the device's close no longer waits for it.
func (w *tcpWire) lastWritten() {
	w.lastOnce.Do(func() {
		t := &w.d.tcp
		t.mu.Lock()
		close(w.lastOut)
		delete(t.ending, w)
		t.mu.Unlock()
	})
}

// kickWriter hands the writing to the writer goroutine.
func (w *tcpWire) kickWriter() {
	select {
	case w.kickW <- struct{}{}:
	default:
	}
}
