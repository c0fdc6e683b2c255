package soft

// Writing the TCP wire: a queue of frames (outItems) written with
// scatter/gather sendmsg, headers filled as they go on the wire (so the
// grant and ack fields are as fresh as possible). One thread at a time
// holds the right to write (writing); it never blocks: on a full socket
// it hands the right to the consumer's Polls (tcp_pollwrite.go) or to the
// writer goroutine, which waits in the netpoller.

import (
	"runtime"
	"sync/atomic"

	"godat/rdma"

	"golang.org/x/sys/unix"
)

// zeros pads a read response whose source faulted.
var zeros = make([]byte, 64<<10)

// outItem is one frame waiting to be written.
type outItem struct {
	hdr      [frameHdr]byte
	tr       [frameHdr]byte // READDONE trailer of a read response
	f        frame
	pay      [maxSGE]iov // payload in the consumer's memory (or own)
	npay     int
	own      []byte // Go memory behind pay[0] (private data), kept alive
	payLen   int
	zeroTail int // payload bytes replaced by zeros after a fault
	trailer  bool
	trStatus rdma.WCStatus
	total    int
	off      int
	started  bool
	fixedAck bool   // the handshake: no ack field
	fin      bool   // shut the write side down once written
	acked    bool   // a request the peer acknowledges
	seq      uint32 // its number among eager or acknowledged requests
	readResp bool   // a read response: the engine hears when it starts
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

func (w *tcpWire) newItemLocked(typ uint8) *outItem {
	var it *outItem
	if n := len(w.free); n > 0 {
		it = w.free[n-1]
		w.free = w.free[:n-1]
		*it = outItem{}
	} else {
		it = &outItem{}
	}
	it.f.typ = typ
	it.total = frameHdr
	return it
}

func (w *tcpWire) freeItemLocked(it *outItem) {
	it.own = nil
	if len(w.free) < 64 {
		w.free = append(w.free, it)
	}
}

// queueLocked appends a frame whose payload is Go memory (private data).
func (w *tcpWire) queueLocked(f frame, own []byte) *outItem {
	it := w.newItemLocked(f.typ)
	it.f = f
	it.f.len = uint64(len(own))
	if len(own) > 0 {
		it.own = own
		it.pay[0] = goIov(own)
		it.npay = 1
		it.payLen = len(own)
	}
	it.total = frameHdr + len(own)
	w.items = append(w.items, it)
	return it
}

// needAckLocked: a bare ACK is due when the peer waits for a grant we now
// give, or when a verdict has not gone out in a header yet and is due: at
// once unless a consumer's Poll deferred it (ackDue), then after
// urgentAckDelay for a request that asked to hear soon (flNotify: a
// signalled one, or a send queue half full), ackDelay for the others, or
// at lazyAckMax of them. Until then a verdict rides on the next frame that
// goes anyway (a polling consumer's reply); the consumer's later Polls, or
// the loop goroutine when they stop, write them when due (tcp_loop.go).
// A sender of unsignalled requests learns of them without asking, in
// bounded time: a TCP peer has no word to read.
func (w *tcpWire) needAckLocked() bool {
	if w.peerHungry && w.grant.Load() != w.starvedAt {
		return true
	}
	if w.executed == w.ackSent {
		return false
	}
	return w.ackDue == 0 || w.executed-w.ackSent >= lazyAckMax || monoNow() >= w.ackDue
}

func (w *tcpWire) hasWorkLocked() bool {
	return !w.broken && (w.head < len(w.items) || len(w.naks) > 0 || w.needAckLocked() || w.needAsk)
}

// startLocked fills a frame's header as it goes on the wire.
func (w *tcpWire) startLocked(it *outItem) {
	it.f.grant = w.grant.Load()
	if !it.fixedAck {
		it.f.ack = w.executed
		w.ackSent = it.f.ack
		w.ackUrgent, w.ackDue = false, 0
	}
	if w.peerHungry && it.f.grant != w.starvedAt {
		w.peerHungry = false
		w.starved.Store(false)
	}
	if it.f.typ == msgSend && w.order != nil {
		it.f.stamp = w.order.stamp()
	}
	it.f.put(it.hdr[:])
	if it.trailer {
		t := frame{typ: msgReadDone, aux: uint32(it.trStatus)}
		t.put(it.tr[:])
	}
	it.started = true
	w.nstart++
	if it.readResp {
		w.answering++
	}
}

// gatherLocked collects the next iovecs to write into w.wiov.
func (w *tcpWire) gatherLocked() int {
	if w.broken {
		return 0
	}
	// A NAK must reach the peer before any header that acknowledges past
	// it: it goes right after the frames already started (their headers
	// were filled before the failure was counted).
	if len(w.naks) > 0 {
		at := w.head + w.nstart
		ins := make([]*outItem, 0, len(w.naks))
		for _, k := range w.naks {
			it := w.newItemLocked(msgNak)
			it.f.addr, it.f.aux = uint64(k.k), uint32(k.st)
			ins = append(ins, it)
		}
		w.naks = w.naks[:0]
		w.items = append(w.items[:at], append(ins, w.items[at:]...)...)
	}
	n := 0
	for i := w.head; i < len(w.items); i++ {
		it := w.items[i]
		if !it.started {
			w.startLocked(it)
		}
		k, whole := it.iovs(w.wiov[n:])
		n += k
		if !whole {
			return n
		}
	}
	if w.needAsk {
		w.needAsk = false
		it := w.newItemLocked(msgNeed)
		it.f.aux = w.askAt
		w.items = append(w.items, it)
		w.startLocked(it)
		k, _ := it.iovs(w.wiov[n:])
		n += k
	} else if w.needAckLocked() && n < maxGather {
		it := w.newItemLocked(msgAck)
		w.items = append(w.items, it)
		w.startLocked(it)
		k, _ := it.iovs(w.wiov[n:])
		n += k
	}
	return n
}

// written is what a write completed, for the engine.
type written struct {
	answers int  // read responses started (startLocked), for the engine
	fin     bool // shut the write side down now
	respErr bool // a read response's source faulted: our access error
	fault   *outItem
}

// advanceLocked accounts for n bytes written.
func (w *tcpWire) advanceLocked(n int, out *written) {
	for n > 0 && w.head < len(w.items) {
		it := w.items[w.head]
		k := min(n, it.total-it.off)
		it.off += k
		n -= k
		if it.off < it.total {
			break
		}
		if it.readResp {
			out.respErr = out.respErr || it.zeroTail > 0
		}
		out.fin = out.fin || it.fin
		w.items[w.head] = nil
		w.head++
		w.nstart--
		w.freeItemLocked(it)
	}
	if w.head == len(w.items) {
		w.items, w.head = w.items[:0], 0
	} else if w.head > 64 && w.head > len(w.items)/2 {
		k := copy(w.items, w.items[w.head:])
		clear(w.items[k:])
		w.items, w.head = w.items[:k], 0
	}
}

// faultLocked handles EFAULT at the current write position (known exactly
// in careful mode): a read response is padded with zeros and fails in its
// trailer (the target's region went: an access error, which ends the
// connection once written); a payload of ours faulting cannot be undone
// (its header is out), so the connection breaks (false).
func (w *tcpWire) faultLocked(out *written) bool {
	if w.head >= len(w.items) {
		return false
	}
	it := w.items[w.head]
	p := it.off - frameHdr
	if p < 0 || p >= it.payLen {
		return false
	}
	if !it.readResp {
		out.fault = it // the request fails as a local protection error
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
	it.trStatus = rdma.WCRemAccessErr
	t := frame{typ: msgReadDone, aux: uint32(it.trStatus)}
	t.put(it.tr[:])
	return true
}

// flush writes what is queued unless someone else is writing. It never
// blocks: on a full socket the writer goroutine takes over. Verdicts go at
// once.
func (w *tcpWire) flush() { w.flushAcks(false) }

// flushAcks is flush; lazy lets verdicts that nobody waits for wait
// ackDelay for a frame to ride on (needAckLocked), and reports whether
// some do.
func (w *tcpWire) flushAcks(lazy bool) (owed bool) {
	w.wmu.Lock()
	switch {
	case !lazy:
		w.ackDue = 0
	case w.executed == w.ackSent:
	case w.ackUrgent:
		// The sender waits for it, but the consumer polling here is most
		// likely about to reply: its reply's header carries the verdict
		// for free (a bare ACK first would put a second write and a
		// second read on every round trip).
		if due := monoNow() + int64(urgentAckDelay); w.ackDue == 0 || due < w.ackDue {
			w.ackDue = due
		}
	case w.ackDue == 0:
		w.ackDue = monoNow() + int64(ackDelay)
	}
	owed = w.ackDue != 0 && w.executed != w.ackSent && !w.broken && !w.dead.Load()
	if w.writing || !w.hasWorkLocked() {
		w.wmu.Unlock()
		return owed
	}
	w.writing = true
	w.wmu.Unlock()
	budget := 0
	if lazy {
		budget = postWriteMax // a consumer's Poll: a read response may be large
	}
	w.writeLoop(false, budget)
	return owed
}

// flushGrant is flush after a receive was posted: only a peer that asked
// for a grant (NEED) needs a frame at once.
func (w *tcpWire) flushGrant() {
	if w.starved.Load() {
		w.flush()
	}
}

// flushPosted is flush for a post: when another thread holds the right to
// write for a non-blocking write (a reader's acknowledgement), the poster
// waits for it to end rather than leave its frame for that thread to write
// whenever it runs again; so posts on several connections go on the wire
// in the order they were made. It does not wait for room in a full socket
// (the writer goroutine holds the right then).
func (w *tcpWire) flushPosted() {
	w.wmu.Lock()
	for w.writing && !w.handed && !w.polls && !w.slow && !w.broken {
		w.wwait++
		w.wcond.Wait()
		w.wwait--
	}
	if w.writing || !w.hasWorkLocked() {
		w.wmu.Unlock()
		return
	}
	w.writing = true
	w.wmu.Unlock()
	w.writeLoop(false, postWriteMax)
}

// wakePostersLocked wakes the posters waiting for the write in progress.
func (w *tcpWire) wakePostersLocked() {
	if w.wwait > 0 {
		w.wcond.Broadcast()
	}
}

// postWriteMax bounds what a post (or a consumer's Poll) writes itself:
// with more queued than that, it writes nothing and hands the lot on (to
// the Polls, a chunk each, or the writer goroutine), so that it returns in
// bounded time whatever the size (the data goes straight from the
// registered memory either way).
const postWriteMax = 128 << 10

// writerChunk bounds one sendmsg of the writer goroutine (and a Poll's
// turn, pollTurn): the runtime's P
// is busy for the call's length, and with one P (a process pinned to one
// CPU: GOMAXPROCS 1) a consumer's call into the library waits for it; a
// 4 MiB sendmsg put about 0.93 ms on the 99th percentile of a post.
const writerChunk = 256 << 10

// capIovs shortens v to its first max bytes (the last iovec cut), and
// returns how many iovecs that leaves.
func capIovs(v []iov, max int) int {
	for i := range v {
		if v[i].Len >= max {
			v[i].Len = max
			return i + 1
		}
		max -= v[i].Len
	}
	return len(v)
}

// writeLoop writes while there is work; the caller holds the right to
// write. block waits for room (the writer goroutine only). budget, when
// above 0, bounds one write of this thread: more gathered than that is
// handed on, unwritten; pollTurn makes one write of writerChunk at most
// and hands the rest on.
func (w *tcpWire) writeLoop(block bool, budget int) {
	for {
		w.wmu.Lock()
		n := w.gatherLocked()
		if n == 0 {
			w.writing, w.careful, w.slow = false, false, false
			w.wakePostersLocked()
			w.wmu.Unlock()
			return
		}
		if w.careful {
			n = 1
		}
		// The responses this gather started count as answered before any
		// of their bytes go out: the peer may post its next read as soon
		// as it has a response's trailer, and that request must not find
		// the old one still counted (onReadReq refuses a peer over the
		// limit).
		var out written
		out.answers, w.answering = w.answering, 0
		var k int
		var err error
		if budget > 0 && iovLen(w.wiov[:n]) > budget {
			err = unix.EAGAIN // the writer goroutine writes it, after report
		} else {
			if block || budget == pollTurn {
				n = capIovs(w.wiov[:n], writerChunk)
			}
			w.wmu.Unlock()
			w.report(&out)
			out.answers = 0
			if h := testHookSend.Load(); h != nil {
				(*h)(w)
			}
			k, err = w.sendv(w.wiov[:n], block)
			if block {
				// Let a consumer waiting to enter the library have the
				// runtime's P: with one P (a process pinned to one CPU)
				// it would wait for the writer's whole queue.
				runtime.Gosched()
			}
			w.wmu.Lock()
		}
		w.advanceLocked(k, &out)
		again := isErrno(err, unix.EAGAIN)
		ok := err == nil || again
		if isErrno(err, unix.EFAULT) {
			// The kernel drops a whole copy chunk on a fault, so the
			// failing item is only known when writing one iovec at a time.
			ok = !w.careful || w.faultLocked(&out)
			w.careful = true
		}
		// A Poll's turn is one sendmsg: what is left waits for the next.
		handoff := ok && (again || budget == pollTurn && w.hasWorkLocked())
		if !ok {
			w.broken = true
		}
		// Polls carry the rest on while the consumer polls (tcp_pollwrite.go);
		// the writer goroutine, which waits for room, otherwise.
		l := w.loop.Load()
		toPolls := handoff && !block && l != nil && l.takesWrites()
		if !ok || handoff {
			w.writing = handoff // the writer goroutine, or the polls, keep the right
			w.handed = handoff && !toPolls
			w.polls = toPolls
			w.slow = w.slow && handoff
			w.wakePostersLocked()
		}
		var fault outItem
		if out.fault != nil {
			fault = *out.fault
		}
		w.wmu.Unlock()
		w.report(&out)
		if out.fault != nil && fault.acked {
			w.q.wireFault(w.c, fault.seq)
		}
		if out.fin {
			_ = w.sock.CloseWrite()
			w.lastWritten()
		}
		switch {
		case !ok:
			// The peer is gone (EPIPE, a reset, the user timeout): the
			// engine hears of it here, since the reader may never see
			// the closed socket.
			if w.q != nil && !w.dead.Load() {
				w.q.peerEnded(w.c, false)
			}
			w.abort()
			return
		case toPolls:
			l.oweWrite(w)
			return
		case handoff:
			w.d.tcp.setMoving(&w.wrMoving, true)
			w.kickWriter()
			return
		}
	}
}

// testHookSend, set by tests only, runs before each sendmsg of a wire's
// writeLoop (no lock held).
var testHookSend atomic.Pointer[func(*tcpWire)]

// report tells the engine what a write started or completed (no wire lock
// held).
func (w *tcpWire) report(out *written) {
	q, c := w.q, w.c
	if q == nil {
		return // the handshake
	}
	for i := 0; i < out.answers; i++ {
		q.readAnswered(c)
	}
	if out.respErr {
		q.responderFault(c)
	}
}

// sendv writes with one sendmsg; block waits for room first when the
// socket is full. Only the holder of the right to write calls it.
func (w *tcpWire) sendv(v []iov, block bool) (int, error) { return w.sock.write(v, block) }

// writer is the goroutine that writes when the socket was full (it holds
// the right handed to it), or when a shutdown queued its last frames.
func (w *tcpWire) writer() {
	for {
		select {
		case <-w.kickW:
			w.wmu.Lock()
			mine := w.handed // handed over by a writer that found the socket full
			w.handed = false
			if w.polls {
				// The polls hold it, and a shutdown or an accept kicked:
				// the writer finishes the queue (the list entry is skipped).
				w.polls, mine = false, true
			}
			if !mine && !w.writing && w.hasWorkLocked() {
				w.writing, mine = true, true
			}
			w.slow = w.slow || mine
			w.wmu.Unlock()
			if mine {
				yieldToWaker()
				w.d.tcp.setMoving(&w.wrMoving, true)
				w.d.tcp.writerRuns.Add(1)
				w.writeLoop(true, 0)
			}
			w.d.tcp.setMoving(&w.wrMoving, false)
		case <-w.done:
			w.d.tcp.setMoving(&w.wrMoving, false)
			return
		}
	}
}
