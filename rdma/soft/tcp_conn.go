package soft

// One TCP connection per queue pair. Every message is a frame: a 32-byte
// little-endian header, then its payload.
//
//	off  0  u8   type
//	off  1  u8   flags (SEND: solicited; REQ: protocol version)
//	off  4  u32  grant: receives the sender has posted on this connection
//	             (cumulative); the peer may have at most grant SENDs issued
//	off  8  u32  ack: RDMA writes and large SENDs the sender has executed
//	             for the peer (cumulative); NAK: the number of the failed one
//	off 12  u32  aux: WRITE/READREQ rkey; READDONE/NAK status; REJ reason;
//	             REQ magic; NEED the grant the asker has seen
//	off 16  u64  len: payload bytes that follow (READREQ: bytes to read)
//	off 24  u64  addr: WRITE/READREQ target address; REQ qualifier
//
// Flow control: a SEND goes out only against a grant, so it always finds a
// posted receive and the receiver never buffers a message; a sender out of
// grants sends one NEED and waits (like an RNR retry without limit). RDMA
// writes land straight in registered memory and reads are answered from
// it, so the only buffering is TCP's own window and a 64 KiB read buffer.
//
// Threads: a reader goroutine per connection places payloads (straight
// into the posted buffers or the target region), marks work done and rings
// the device doorbell; it never calls a completion sink. Writes are done by
// whoever queues a frame (a post, the reader) with non-blocking sendmsg; a
// write that would block is handed to the connection's writer goroutine,
// which sleeps in the netpoller until the socket drains. Nothing spins.

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"godat/rdma"
)

// Frame types.
const (
	frSend     = 1
	frWrite    = 2
	frReadReq  = 3
	frReadResp = 4 // payload: the bytes read; always followed by READDONE
	frReadDone = 5
	frAck      = 6 // header fields only (ack, grant)
	frNak      = 7
	frNeed     = 8 // out of grants: please send a fresh grant
	frDisc     = 9
	frReq      = 16
	frAcc      = 17
	frRej      = 18
	frRtu      = 19
)

const (
	hdrSize = 32
	hOffTyp = 0
	hOffFl  = 1
	hOffGr  = 4
	hOffAck = 8
	hOffAux = 12
	hOffLen = 16
	hOffAdr = 24

	flSolicited = 1
	flAckReq    = 2 // SEND: complete it on our ack (it is larger than inlineMax)

	tcpMagic   = 0x31544447 // "GDT1"
	tcpVersion = 1

	rejConsumer   = 1
	rejNoListener = 2
	rejVersion    = 3

	rdBufSize  = 64 << 10
	directMin  = 16 << 10 // payload left at or above this is read straight into place
	maxGather  = 64       // iovecs per sendmsg
	lingerTime = 2 * time.Second
	cmTimeout  = 5 * time.Second // an incoming connection must send its request within this
)

var (
	errDead  = errors.New("soft: tcp: connection torn down")
	errDisc  = errors.New("soft: tcp: peer disconnected")
	errProto = errors.New("soft: tcp: protocol error")
)

// fhdr is a decoded frame header.
type fhdr struct {
	typ, flags uint8
	grant, ack uint32
	aux        uint32
	len, addr  uint64
}

func (h *fhdr) put(b []byte) {
	le := binary.LittleEndian
	b[hOffTyp], b[hOffFl] = h.typ, h.flags
	b[2], b[3] = 0, 0
	le.PutUint32(b[hOffGr:], h.grant)
	le.PutUint32(b[hOffAck:], h.ack)
	le.PutUint32(b[hOffAux:], h.aux)
	le.PutUint64(b[hOffLen:], h.len)
	le.PutUint64(b[hOffAdr:], h.addr)
}

func (h *fhdr) get(b []byte) {
	le := binary.LittleEndian
	h.typ, h.flags = b[hOffTyp], b[hOffFl]
	h.grant = le.Uint32(b[hOffGr:])
	h.ack = le.Uint32(b[hOffAck:])
	h.aux = le.Uint32(b[hOffAux:])
	h.len = le.Uint64(b[hOffLen:])
	h.addr = le.Uint64(b[hOffAdr:])
}

// after reports whether counter a is past b (wrapping arithmetic).
func after(a, b uint32) bool { return int32(a-b) > 0 }

// zeros pads a read response whose source faulted.
var zeros = make([]byte, 64<<10)

// outItem is one frame waiting to be written.
type outItem struct {
	hdr      [hdrSize]byte
	tr       [hdrSize]byte // READDONE trailer of a read response
	h        fhdr
	pay      [maxSGE]iov // payload in caller memory (or own)
	npay     int
	own      []byte // Go memory behind pay[0] (private data), kept alive
	payLen   int
	zeroTail int // payload bytes replaced by zeros after a fault
	trailer  bool
	trStatus rdma.Status
	total    int
	off      int
	started  bool
	fixedAck bool // NAK: the ack field names the failed write
	fin      bool // shut the write side down once written
	send     bool // counts in sentSends once written
	readResp bool // counts in readsIn until written
}

// iovs appends iovecs for the unwritten rest of the item to dst and
// reports how many it added and whether they cover the whole rest.
func (it *outItem) iovs(dst []iov) (int, bool) {
	n, at := 0, 0
	add := func(v iov) bool {
		l := v.Len
		if it.off >= at+l {
			at += l
			return true
		}
		if n == len(dst) {
			return false
		}
		if skip := it.off - at; skip > 0 {
			v.Base += uintptr(skip)
			v.Len -= skip
		}
		dst[n] = v
		n++
		at += l
		return true
	}
	if !add(goIov(it.hdr[:])) {
		return n, false
	}
	for i := 0; i < it.npay; i++ {
		if !add(it.pay[i]) {
			return n, false
		}
	}
	for z := it.zeroTail; z > 0; {
		k := min(z, len(zeros))
		if !add(goIov(zeros[:k])) {
			return n, false
		}
		z -= k
	}
	if it.trailer && !add(goIov(it.tr[:])) {
		return n, false
	}
	return n, true
}

type nak struct {
	k      uint32
	status rdma.Status
}

// tconn is one TCP connection.
type tconn struct {
	dev       *tcpDevice
	sock      *net.TCPConn
	rc        syscall.RawConn
	done      chan struct{}
	kick      chan struct{}
	closeOnce sync.Once

	// The bound queue pair: set once, under the QP lock, before the first
	// data frame can arrive.
	q     *tqp
	epoch uint64

	dead        atomic.Bool  // torn down: the reader only drains
	lingerUntil atomic.Int64 // unix ns the drain may last
	placeMu     sync.Mutex   // held while the reader writes caller memory

	peerGrant atomic.Uint32 // the peer's grant (receives it posted)
	peerAck   atomic.Uint32 // writes the peer executed for us
	sentSends atomic.Uint32 // SEND frames completely written
	grant     atomic.Uint32 // our grant: receives posted on this connection
	starved   atomic.Bool   // the peer asked for a grant (PostRecv checks it)

	// reader goroutine only
	rd                      treader
	rdRing, rdExec, rdFlush bool
	inRead, readFault       bool
	readLen                 uint64

	// writing, under wmu
	wmu        sync.Mutex
	items      []*outItem
	head       int // first unwritten item
	nstart     int // items from head whose header is filled
	free       []*outItem
	naks       []nak
	writing    bool // someone holds the right to write
	careful    bool // after EFAULT: one iovec per sendmsg, to find the fault
	broken     bool
	writesDone uint32 // writes of the peer executed here
	ackSent    uint32
	starvedAt  uint32 // the grant the peer had seen when it asked
	peerHungry bool
	needAsk    bool
	askAt      uint32
	readsIn    int
	wiov       [maxGather]iov // the writer's scratch
	wop, rop   rawOp
}

func newTconn(d *tcpDevice, s *net.TCPConn) (*tconn, error) {
	rc, err := s.SyscallConn()
	if err != nil {
		s.Close()
		return nil, err
	}
	c := &tconn{dev: d, sock: s, rc: rc, done: make(chan struct{}), kick: make(chan struct{}, 1)}
	c.rd.c = c
	c.rd.buf = make([]byte, rdBufSize)
	c.initOps()
	_ = s.SetNoDelay(true)
	setTimeouts(s, rc, d.timeout)
	go c.writer()
	return c, nil
}

// setTimeouts makes a silent peer an error within about t: keepalive probes
// after t/2 of silence, and TCP_USER_TIMEOUT for data that stays unacked.
func setTimeouts(s *net.TCPConn, rc syscall.RawConn, t time.Duration) {
	idle := max(t/2, time.Second)
	intvl := max(t/10, time.Second)
	cnt := max(1, int((t-idle)/intvl))
	_ = s.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: idle, Interval: intvl, Count: cnt})
	_ = rc.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(t/time.Millisecond))
	})
}

func addrPortOf(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		ap := t.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

// abort closes the socket at once; the reader and writer end on errors.
func (c *tconn) abort() {
	c.closeOnce.Do(func() {
		close(c.done)
		c.sock.Close()
	})
}

// shutdown detaches the connection from its queue pair. Once it returns,
// the reader writes no more caller memory. disc sends a DISC after the
// frames already started and closes when the peer does (or after
// lingerTime); otherwise the socket closes now.
func (c *tconn) shutdown(disc bool) {
	if disc {
		c.lingerUntil.Store(time.Now().Add(lingerTime).UnixNano())
	}
	c.dead.Store(true)
	_ = c.sock.SetReadDeadline(time.Now()) // wake a reader waiting in the middle of a payload
	c.placeMu.Lock()
	c.placeMu.Unlock() //nolint:staticcheck // a barrier: wait for a placement in progress
	if !disc {
		c.abort()
		return
	}
	c.wmu.Lock()
	for i := c.head + c.nstart; i < len(c.items); i++ {
		c.freeItemLocked(c.items[i])
	}
	c.items = c.items[:c.head+c.nstart]
	c.naks = c.naks[:0]
	it := c.newItemLocked(frDisc)
	it.fin = true
	c.items = append(c.items, it)
	c.wmu.Unlock()
	time.AfterFunc(lingerTime, c.abort)
	c.flush()
}

// ---- writing ----

func (c *tconn) newItemLocked(typ uint8) *outItem {
	var it *outItem
	if n := len(c.free); n > 0 {
		it = c.free[n-1]
		c.free = c.free[:n-1]
		*it = outItem{}
	} else {
		it = &outItem{}
	}
	it.h.typ = typ
	it.total = hdrSize
	return it
}

func (c *tconn) freeItemLocked(it *outItem) {
	it.own = nil
	if len(c.free) < 64 {
		c.free = append(c.free, it)
	}
}

// queueLocked appends a frame whose payload is Go memory (private data).
func (c *tconn) queueLocked(h fhdr, own []byte) *outItem {
	it := c.newItemLocked(h.typ)
	it.h = h
	it.h.len = uint64(len(own))
	if len(own) > 0 {
		it.own = own
		it.pay[0] = goIov(own)
		it.npay = 1
		it.payLen = len(own)
	}
	it.total = hdrSize + len(own)
	c.items = append(c.items, it)
	return it
}

// queue is queueLocked for callers that do not hold wmu.
func (c *tconn) queue(h fhdr, own []byte) *outItem {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.queueLocked(h, own)
}

func (c *tconn) needAckLocked() bool {
	return c.writesDone != c.ackSent || (c.peerHungry && c.grant.Load() != c.starvedAt)
}

func (c *tconn) hasWorkLocked() bool {
	return !c.broken && (c.head < len(c.items) || len(c.naks) > 0 || c.needAckLocked() || c.needAsk)
}

// startLocked fills a frame's header as it goes on the wire: the grant and
// ack fields are as fresh as possible.
func (c *tconn) startLocked(it *outItem) {
	it.h.grant = c.grant.Load()
	if !it.fixedAck {
		it.h.ack = c.writesDone
	}
	c.ackSent = it.h.ack
	if c.peerHungry && it.h.grant != c.starvedAt {
		c.peerHungry = false
		c.starved.Store(false)
	}
	it.h.put(it.hdr[:])
	if it.trailer {
		t := fhdr{typ: frReadDone, aux: uint32(it.trStatus)}
		t.put(it.tr[:])
	}
	it.started = true
	c.nstart++
}

// gatherLocked collects the next iovecs to write into c.wiov.
func (c *tconn) gatherLocked() int {
	if c.broken {
		return 0
	}
	// A NAK must reach the peer before any header that acks past it: it
	// goes right after the frames already started.
	if len(c.naks) > 0 {
		at := c.head + c.nstart
		ins := make([]*outItem, 0, len(c.naks))
		for _, k := range c.naks {
			it := c.newItemLocked(frNak)
			it.h.ack, it.h.aux, it.fixedAck = k.k, uint32(k.status), true
			ins = append(ins, it)
		}
		c.naks = c.naks[:0]
		c.items = append(c.items[:at], append(ins, c.items[at:]...)...)
	}
	n := 0
	for i := c.head; i < len(c.items); i++ {
		it := c.items[i]
		if !it.started {
			c.startLocked(it)
		}
		k, whole := it.iovs(c.wiov[n:])
		n += k
		if !whole {
			return n
		}
	}
	if c.needAsk {
		c.needAsk = false
		it := c.newItemLocked(frNeed)
		it.h.aux = c.askAt
		c.items = append(c.items, it)
		c.startLocked(it)
		k, _ := it.iovs(c.wiov[n:])
		n += k
	} else if c.needAckLocked() && n < maxGather {
		it := c.newItemLocked(frAck)
		c.items = append(c.items, it)
		c.startLocked(it)
		k, _ := it.iovs(c.wiov[n:])
		n += k
	}
	return n
}

// advanceLocked accounts for w bytes written; it reports whether SENDs
// completed and whether the write side must now be shut.
func (c *tconn) advanceLocked(w int) (sent, fin bool) {
	for w > 0 && c.head < len(c.items) {
		it := c.items[c.head]
		k := min(w, it.total-it.off)
		it.off += k
		w -= k
		if it.off < it.total {
			break
		}
		if it.send {
			c.sentSends.Add(1)
			sent = true
		}
		if it.readResp {
			c.readsIn--
		}
		fin = fin || it.fin
		c.items[c.head] = nil
		c.head++
		c.nstart--
		c.freeItemLocked(it)
	}
	if c.head == len(c.items) {
		c.items, c.head = c.items[:0], 0
	} else if c.head > 64 && c.head > len(c.items)/2 {
		n := copy(c.items, c.items[c.head:])
		clear(c.items[n:])
		c.items, c.head = c.items[:n], 0
	}
	return sent, fin
}

// faultLocked handles EFAULT at the current write position (known exactly
// in careful mode): a read response is padded with zeros and fails in its
// trailer; anything else (the consumer unmapped its own registered memory)
// breaks the connection.
func (c *tconn) faultLocked() bool {
	if c.head >= len(c.items) {
		return false
	}
	it := c.items[c.head]
	p := it.off - hdrSize
	if !it.readResp || p < 0 || p >= it.payLen {
		return false
	}
	for i, left := 0, p; i < it.npay; i++ {
		if left < it.pay[i].Len {
			it.pay[i].Len = left
			it.npay = i + 1
			break
		}
		left -= it.pay[i].Len
	}
	it.zeroTail = it.payLen - p
	it.trStatus = rdma.StatusRemoteAccess
	t := fhdr{typ: frReadDone, aux: uint32(it.trStatus)}
	t.put(it.tr[:])
	return true
}

// flush writes what is queued unless someone else is writing. It never
// blocks: on a full socket the writer goroutine takes over.
func (c *tconn) flush() {
	c.wmu.Lock()
	if c.writing || !c.hasWorkLocked() {
		c.wmu.Unlock()
		return
	}
	c.writing = true
	c.wmu.Unlock()
	c.writeLoop(false)
}

func (c *tconn) writeLoop(block bool) {
	sentAny := false
	defer func() {
		if sentAny {
			c.dev.db.Ring()
		}
	}()
	for {
		c.wmu.Lock()
		n := c.gatherLocked()
		if n == 0 {
			c.writing, c.careful = false, false
			c.wmu.Unlock()
			return
		}
		if c.careful {
			n = 1
		}
		c.wmu.Unlock()
		w, err := c.sendv(c.wiov[:n], block)
		c.wmu.Lock()
		sent, fin := c.advanceLocked(w)
		ok := err == nil || err == unix.EAGAIN
		if err == unix.EFAULT {
			// The kernel drops a whole copy chunk on a fault, so the
			// failing item is only known when writing one iovec at a time.
			ok = !c.careful || c.faultLocked()
			c.careful = true
		}
		if !ok {
			c.broken = true
			c.writing = false
		}
		c.wmu.Unlock()
		sentAny = sentAny || sent
		if fin {
			_ = c.sock.CloseWrite()
		}
		switch {
		case !ok:
			c.abort()
			return
		case err == unix.EAGAIN:
			// Only in non-blocking mode: the writer goroutine keeps the
			// right to write and waits for room.
			select {
			case c.kick <- struct{}{}:
			default:
			}
			return
		}
	}
}

// rawOp is one socket call made through the RawConn with a callback built
// once per connection, so the data path does not allocate.
type rawOp struct {
	v     []iov
	n     int
	err   error
	block bool
	fn    func(fd uintptr) bool
}

func (c *tconn) initOps() {
	w, r := &c.wop, &c.rop
	w.fn = func(fd uintptr) bool {
		w.n, w.err = sendmsgv(int(fd), w.v)
		return !(w.block && w.err == unix.EAGAIN)
	}
	r.fn = func(fd uintptr) bool {
		r.n, r.err = readv(int(fd), r.v)
		return r.err != unix.EAGAIN
	}
}

// sendv writes with one sendmsg; block waits for room first when the
// socket is full. Only the holder of the right to write calls it.
func (c *tconn) sendv(v []iov, block bool) (int, error) {
	w := &c.wop
	w.v, w.block = v, block
	werr := c.rc.Write(w.fn)
	w.v = nil
	if werr != nil {
		return 0, werr
	}
	return w.n, w.err
}

func (c *tconn) writer() {
	for {
		select {
		case <-c.kick:
			c.writeLoop(true)
		case <-c.done:
			return
		}
	}
}

// ---- reading ----

// treader is the connection's buffered reader; payloads of directMin bytes
// or more skip the buffer.
type treader struct {
	c    *tconn
	buf  []byte
	r, w int
	v    [maxSGE]iov
	one  [1]iov
}

// recvv reads with one readv, waiting for data. Only the reader calls it.
func (c *tconn) recvv(v []iov) (int, error) {
	r := &c.rop
	r.v = v
	rerr := c.rc.Read(r.fn)
	r.v = nil
	if rerr != nil {
		return 0, rerr
	}
	if r.err == nil && r.n == 0 {
		return 0, io.EOF
	}
	return r.n, r.err
}

// retryAfterDeadline: the deadline that woke a torn-down reader is replaced
// by the linger deadline so the reader can drain to the peer's close.
func (c *tconn) retryAfterDeadline(err error) bool {
	if !errors.Is(err, os.ErrDeadlineExceeded) || !c.dead.Load() {
		return false
	}
	lu := c.lingerUntil.Load()
	if lu <= time.Now().UnixNano() {
		return false
	}
	_ = c.sock.SetReadDeadline(time.Unix(0, lu))
	return true
}

// fill reads at least one more byte into the buffer. Before it may block it
// publishes what the frames read so far produced, unless pub is false (a
// placement in progress holds placeMu, and publishing takes the QP lock).
func (b *treader) fill() error { return b.fillp(true) }

func (b *treader) fillp(pub bool) error {
	if b.r == b.w {
		b.r, b.w = 0, 0
	} else if b.w == len(b.buf) {
		b.w = copy(b.buf, b.buf[b.r:b.w])
		b.r = 0
	}
	for {
		if pub {
			b.c.publish()
		}
		b.one[0] = goIov(b.buf[b.w:])
		n, err := b.c.recvv(b.one[:])
		if err == nil {
			b.w += n
			return nil
		}
		if b.c.retryAfterDeadline(err) {
			continue
		}
		return err
	}
}

func (b *treader) header(h *fhdr) error {
	for b.w-b.r < hdrSize {
		if err := b.fill(); err != nil {
			return err
		}
	}
	h.get(b.buf[b.r:])
	b.r += hdrSize
	return nil
}

// bytes returns a copy of the next n (small) bytes.
func (b *treader) bytes(n int) ([]byte, error) {
	for b.w-b.r < n {
		if err := b.fill(); err != nil {
			return nil, err
		}
	}
	out := append([]byte(nil), b.buf[b.r:b.r+n]...)
	b.r += n
	return out, nil
}

func (b *treader) discard(n uint64) error {
	for n > 0 {
		if b.r == b.w {
			if err := b.fillp(false); err != nil {
				return err
			}
		}
		k := min(n, uint64(b.w-b.r))
		b.r += int(k)
		n -= k
	}
	return nil
}

// place reads n payload bytes into caller memory described by sgl. fault
// reports memory that could not be written (the rest of the payload is
// consumed anyway, so the stream stays in step). The caller holds placeMu.
func (b *treader) place(sgl []rdma.SGE, n uint64) (fault bool, err error) {
	i, off := 0, uint64(0)
	skip := func(k uint64) {
		off += k
		for i < len(sgl) && off >= sgl[i].Length {
			off -= sgl[i].Length
			i++
		}
	}
	skip(0)
	for n > 0 {
		if fault {
			return true, b.discard(n)
		}
		if b.r < b.w {
			k := min(n, uint64(b.w-b.r), sgl[i].Length-off)
			if !copyUser(sgl[i].Addr+off, b.buf[b.r:b.r+int(k)], true) {
				fault = true
				continue
			}
			b.r += int(k)
			n -= k
			skip(k)
			continue
		}
		if n < directMin {
			if err := b.fillp(false); err != nil {
				return fault, err
			}
		} else {
			nv, left := 0, n
			for j, o := i, off; j < len(sgl) && left > 0 && nv < len(b.v); j++ {
				l := min(sgl[j].Length-o, left)
				if l > 0 {
					b.v[nv] = iov{Base: uintptr(sgl[j].Addr + o), Len: int(l)}
					nv++
					left -= l
				}
				o = 0
			}
			got, err := b.c.recvv(b.v[:nv])
			switch {
			case err == unix.EFAULT:
				fault = true // nothing consumed: the bytes go to discard
				continue
			case err != nil:
				return fault, err
			}
			n -= uint64(got)
			skip(uint64(got))
		}
		if b.c.dead.Load() {
			return fault, errDead
		}
	}
	return fault, nil
}

// publish makes what the reader did visible: it lets the QP issue sends
// that waited for a grant or a read slot, writes acks and responses, and
// rings the doorbell. The reader calls it before every socket read.
func (c *tconn) publish() {
	if c.rdExec {
		c.rdExec = false
		if c.q != nil {
			c.q.execFromReader(c)
		}
	}
	if c.rdFlush {
		c.rdFlush = false
		c.flush()
	}
	if c.rdRing {
		c.rdRing = false
		c.dev.db.Ring()
	}
}

// readLoop reads data frames until the connection ends.
func (c *tconn) readLoop() {
	debug.SetPanicOnFault(true)
	var h fhdr
	for {
		if c.dead.Load() {
			c.drain()
			return
		}
		err := c.rd.header(&h)
		if err == nil {
			err = c.frame(&h)
		}
		if err != nil {
			if c.dead.Load() || err == errDead {
				c.drain()
				return
			}
			if c.q != nil {
				c.q.peerEnded(c, err == errDisc)
			}
			c.abort()
			return
		}
	}
}

// drain discards what the peer still sends after a teardown until it
// closes or the linger time is over, then closes.
func (c *tconn) drain() {
	for {
		c.rd.r, c.rd.w = 0, 0
		if c.rd.fill() != nil {
			break
		}
	}
	c.abort()
}

// frame handles one data frame.
func (c *tconn) frame(h *fhdr) error {
	if c.dead.Load() {
		return errDead
	}
	if c.inRead && h.typ != frReadDone {
		return errProto
	}
	if h.len > maxMsgSize {
		return errProto
	}
	q := c.q
	var err error
	switch h.typ {
	case frSend:
		err = q.onSend(c, h)
	case frWrite:
		err = c.onWrite(h)
	case frReadReq:
		err = c.onReadReq(h)
	case frReadResp:
		err = q.onReadResp(c, h)
	case frReadDone:
		err = q.onReadDone(c, h)
	case frNak:
		q.onNak(c, h)
	case frNeed:
		c.wmu.Lock()
		c.peerHungry, c.starvedAt = true, h.aux
		c.starved.Store(true)
		c.wmu.Unlock()
		c.rdFlush = true
	case frAck:
	case frDisc:
		return errDisc
	default:
		return errProto
	}
	if err != nil {
		return err
	}
	if a := h.ack; after(a, c.peerAck.Load()) {
		c.peerAck.Store(a)
		c.rdRing = true
	}
	if g := h.grant; after(g, c.peerGrant.Load()) {
		c.peerGrant.Store(g)
		c.rdExec = true
	}
	return nil
}

// onWrite executes an RDMA write of the peer after checking the key,
// bounds and rights against our registration table; a refused write
// consumes its payload without touching memory and is NAKed.
func (c *tconn) onWrite(h *fhdr) error {
	q := c.q
	status := rdma.StatusSuccess
	if !mrCheck(q.tab, h.aux, q.cfg.PD, h.addr, h.len, rdma.AccessRemoteWrite) {
		status = rdma.StatusRemoteAccess
		if err := c.rd.discard(h.len); err != nil {
			return err
		}
	} else if h.len > 0 {
		c.placeMu.Lock()
		if c.dead.Load() {
			c.placeMu.Unlock()
			return errDead
		}
		seg := [1]rdma.SGE{{Addr: h.addr, Length: h.len}}
		fault, err := c.rd.place(seg[:], h.len)
		c.placeMu.Unlock()
		if err != nil {
			return err
		}
		if fault {
			status = rdma.StatusRemoteAccess
		}
	}
	c.acked(status)
	return nil
}

// acked records the verdict on a request the peer waits to hear about (a
// write, a large send): the ack counter moves, and a failure is NAKed.
func (c *tconn) acked(status rdma.Status) {
	c.wmu.Lock()
	c.writesDone++
	if status != rdma.StatusSuccess {
		c.naks = append(c.naks, nak{k: c.writesDone, status: status})
	}
	c.wmu.Unlock()
	c.rdFlush = true
}

// onReadReq answers an RDMA read of the peer: the region is checked now and
// read when the response is written, straight from the registered memory.
func (c *tconn) onReadReq(h *fhdr) error {
	q := c.q
	ok := mrCheck(q.tab, h.aux, q.cfg.PD, h.addr, h.len, rdma.AccessRemoteRead)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.readsIn >= maxReadsPerQ {
		return errProto // the peer ignores the reads-outstanding limit
	}
	it := c.newItemLocked(frReadResp)
	it.readResp, it.trailer = true, true
	it.trStatus = rdma.StatusRemoteAccess
	if ok {
		it.trStatus = rdma.StatusSuccess
		it.h.len = h.len
		it.payLen = int(h.len)
		if h.len > 0 {
			it.pay[0] = iov{Base: uintptr(h.addr), Len: int(h.len)}
			it.npay = 1
		}
	}
	it.total = 2*hdrSize + it.payLen
	c.items = append(c.items, it)
	c.readsIn++
	c.rdFlush = true
	return nil
}
