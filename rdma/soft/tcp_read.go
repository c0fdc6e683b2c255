package soft

// Reading the TCP wire: the device's receive loop (tcp_loop.go) gives each
// connection turns; a turn reads and checks one frame (checkFrame) and
// hands it to the engine. Payloads of directMin bytes or more that are not
// in memory yet are read straight into place: by the serving thread once
// the socket holds all of it (tcp_whole.go), else by a helper goroutine
// with blocking reads; smaller ones come through a 64 KiB buffer. The reader is
// the payload (treader implements the engine's payload interface).

import (
	"errors"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"godat/rdma"
)

// treader is the connection's buffered reader.
type treader struct {
	w      *tcpWire
	buf    []byte
	rp, wp int
	want   uint64 // the current frame's payload length
	cur    frame  // the frame of the current turn, once its header is read
	hdrOK  bool
	more   bool // the last read filled the buffer: the socket may hold more
	v      [maxSGE]iov
	one    [1]iov
}

// recvv reads with one call (recvfrom or readv), waiting for data. Only the
// reader calls it.
func (w *tcpWire) recvv(v []iov) (int, error) {
	n, err := w.sock.read(v)
	if err == nil && n == 0 {
		return 0, io.EOF
	}
	return n, err
}

// retryAfterDeadline: the deadline that woke a shut-down reader is
// replaced by the linger deadline so that it can drain to the peer's close.
func (w *tcpWire) retryAfterDeadline(err error) bool {
	if !errors.Is(err, os.ErrDeadlineExceeded) || !w.dead.Load() {
		return false
	}
	lu := w.lingerUntil.Load()
	if lu <= time.Now().UnixNano() {
		return false
	}
	_ = w.sock.SetReadDeadline(time.Unix(0, lu))
	return true
}

// fill reads at least one more byte into the buffer. Before it may block
// it publishes what the frames read so far produced, unless placing (a
// placement holds the teardown barrier, and a shut-down connection stops
// placing at once rather than linger).
func (b *treader) fill(placing bool) error {
	if b.rp == b.wp {
		b.rp, b.wp = 0, 0
	} else if b.wp == len(b.buf) {
		b.wp = copy(b.buf, b.buf[b.rp:b.wp])
		b.rp = 0
	}
	for {
		if !placing {
			b.w.publish()
		}
		b.one[0] = goIov(b.buf[b.wp:])
		n, err := b.w.recvv(b.one[:])
		if err == nil {
			b.wp += n
			return nil
		}
		if !placing && b.w.retryAfterDeadline(err) {
			continue
		}
		return err
	}
}

// fillNB reads what the socket holds without waiting; ok false and err
// nil: nothing there now. inLoop: the loop reads (it owns the edge flag).
func (b *treader) fillNB(inLoop bool) (ok bool, err error) {
	if b.rp == b.wp {
		b.rp, b.wp = 0, 0
	} else if b.wp == len(b.buf) || len(b.buf)-b.rp < frameHdr+eagerMax {
		b.wp = copy(b.buf, b.buf[b.rp:b.wp])
		b.rp = 0
	}
	b.one[0] = goIov(b.buf[b.wp:])
	if inLoop {
		b.w.edge = false // an arrival from now on is a new edge
	}
	n, err := b.w.sock.readNB(b.one[:])
	switch {
	case isErrno(err, unix.EAGAIN):
		b.more = false
		return false, nil
	case err != nil:
		return false, err
	case n == 0:
		return false, io.EOF
	}
	b.more = n == len(b.buf)-b.wp
	b.wp += n
	if inLoop {
		b.w.loop.Load().reads++
	}
	return true, nil
}

func (b *treader) header(f *frame) error {
	for b.wp-b.rp < frameHdr {
		if err := b.fill(false); err != nil {
			return err
		}
	}
	f.get(b.buf[b.rp:])
	b.rp += frameHdr
	return nil
}

// bytes returns a copy of the next n (small) bytes.
func (b *treader) bytes(n int) ([]byte, error) {
	for b.wp-b.rp < n {
		if err := b.fill(false); err != nil {
			return nil, err
		}
	}
	out := append([]byte(nil), b.buf[b.rp:b.rp+n]...)
	b.rp += n
	return out, nil
}

// inMemory: the whole payload is in the buffer already.
func (b *treader) inMemory() bool { return uint64(b.wp-b.rp) >= b.want }

func (b *treader) discard(n uint64) error {
	for n > 0 {
		if b.rp == b.wp {
			if err := b.fill(true); err != nil {
				return err
			}
		}
		k := min(n, uint64(b.wp-b.rp))
		b.rp += int(k)
		n -= k
	}
	return nil
}

// place reads n payload bytes into the memory dst describes. A fault of
// that memory is reported (local) and the rest of the payload consumed,
// so the stream stays in step.
func (b *treader) place(dst []rdma.SGE, n uint64) (local, src bool, err error) {
	i, off := 0, uint64(0)
	skip := func(k uint64) {
		off += k
		for i < len(dst) && off >= uint64(dst[i].Length) {
			off -= uint64(dst[i].Length)
			i++
		}
	}
	skip(0)
	for n > 0 {
		if local {
			return true, false, b.discard(n)
		}
		if b.rp < b.wp {
			k := min(n, uint64(b.wp-b.rp), uint64(dst[i].Length)-off)
			if !copyOut(dst[i].Addr+off, b.buf[b.rp:b.rp+int(k)]) {
				local = true
				continue
			}
			b.rp += int(k)
			n -= k
			skip(k)
			continue
		}
		if b.w.dead.Load() {
			return local, false, errGone
		}
		if n < directMin {
			if err := b.fill(true); err != nil {
				return local, false, err
			}
			continue
		}
		nv, left := 0, n
		for j, o := i, off; j < len(dst) && left > 0 && nv < len(b.v); j++ {
			l := min(uint64(dst[j].Length)-o, left)
			if l > 0 {
				b.v[nv] = iov{Base: uintptr(dst[j].Addr + o), Len: int(l)}
				nv++
				left -= l
			}
			o = 0
		}
		got, err := b.w.recvv(b.v[:nv])
		switch {
		case err == unix.EFAULT:
			local = true // nothing consumed: the bytes go to discard
			continue
		case err != nil:
			return local, false, err
		}
		n -= uint64(got)
		skip(uint64(got))
	}
	return local, false, nil
}

// publish makes what the reader did visible: it lets the QP issue sends
// that waited for a grant or a read slot, and writes acknowledgements and
// responses. The reader calls it before every socket read that may block.
func (w *tcpWire) publish() { w.publishAcks(false) }

// publishAcks is publish; lazy (a consumer's Poll serves) lets verdicts
// nobody waits for at once ride on a later frame (flushAcks), and files
// the connection in the loop's list of those owed.
func (w *tcpWire) publishAcks(lazy bool) {
	if w.rdKick {
		w.rdKick = false
		if w.q != nil {
			w.q.kick(w.c)
		}
	}
	if l := w.loop.Load(); w.flushAcks(lazy) && !w.owed && l != nil {
		w.owed = true
		l.owed = append(l.owed, w)
	}
}

// step is one turn of the receive loop: it reads and handles at most one
// frame without blocking. What the frames did (acknowledgements, grants,
// read responses) is published when the connection has no further whole
// frame buffered: one acknowledgement for a batch of SENDs read at once.
func (w *tcpWire) step() int {
	r := w.turn()
	switch {
	case r == stepDone || r == stepHelper:
	case r == stepMore && w.rd.wp-w.rd.rp >= frameHdr:
	default:
		l := w.loop.Load()
		w.publishAcks(l != nil && l.lazy)
	}
	return r
}

func (w *tcpWire) turn() int {
	b := &w.rd
	if w.dead.Load() {
		go w.drain()
		return stepDone
	}
	if !b.hdrOK {
		for b.wp-b.rp < frameHdr {
			if ok, err := b.fillNB(true); !ok {
				if err != nil {
					return w.ended(err)
				}
				return stepIdle
			}
		}
		b.cur.get(b.buf[b.rp:])
		b.rp += frameHdr
		b.hdrOK = true
		if !checkFrame(&b.cur) {
			return w.ended(errProto)
		}
	}
	f := &b.cur
	var need uint64
	if f.typ == msgSend || f.typ == msgWrite || f.typ == msgReadResp {
		need = f.len
	}
	for uint64(b.wp-b.rp) < need {
		if left := need - uint64(b.wp-b.rp); left >= directMin {
			switch w.whole(left) {
			case wholeWait:
				return stepIdle
			case wholeHere:
				goto place
			}
			w.publish() // the helper publishes from now on
			w.d.tcp.setMoving(&w.rdMoving, true)
			go w.helper()
			return stepHelper
		}
		if ok, err := b.fillNB(true); !ok {
			if err != nil {
				return w.ended(err)
			}
			return stepIdle
		}
	}
place:
	if f.typ == msgSend && w.order != nil {
		if !w.order.due(f.stamp) {
			return stepGap // an earlier SEND of the peer device may be queued elsewhere
		}
		w.order.took(f.stamp)
	}
	err := w.frame(f, false)
	if err == errWait {
		return stepParked // resumed by the SRQ's next post
	}
	b.hdrOK = false
	if err != nil {
		return w.ended(err)
	}
	if b.more || w.edge || b.wp-b.rp >= frameHdr {
		return stepMore
	}
	return stepIdle
}

// helper reads the current frame's large payload straight into place
// with blocking reads, and the next frames too while they are large ones
// (their completions are ordered by placement anyway); then it gives the
// connection back to the loop, which serves small frames in arrival order.
func (w *tcpWire) helper() {
	yieldToWaker()
	b := &w.rd
	for {
		if b.cur.typ == msgSend && w.order != nil {
			w.order.took(b.cur.stamp) // placement order: not held for earlier stamps
		}
		err := w.frame(&b.cur, true)
		b.hdrOK = false
		if err != nil {
			w.ended(err)
			break // the loop removes it
		}
		w.publish()
		if !w.nextLarge() {
			break
		}
	}
	w.d.tcp.setMoving(&w.rdMoving, false)
	if l := w.loop.Load(); l != nil {
		l.resume(w)
	}
}

// nextLarge reads the next frame's header if it is there without waiting,
// and reports whether it has a large payload still to read.
func (w *tcpWire) nextLarge() bool {
	b := &w.rd
	for b.wp-b.rp < frameHdr {
		if ok, _ := b.fillNB(false); !ok {
			return false
		}
	}
	b.cur.get(b.buf[b.rp:])
	f := &b.cur
	if !checkFrame(f) || f.typ != msgSend && f.typ != msgWrite && f.typ != msgReadResp ||
		f.len < uint64(b.wp-b.rp-frameHdr)+directMin {
		return false // the loop takes it from here (the header stays unread)
	}
	b.rp += frameHdr
	b.hdrOK = true
	return true
}

// ended handles the end of the connection's stream (err says how): the
// engine hears of it unless we tore it down ourselves; then the socket
// drains or closes.
func (w *tcpWire) ended(err error) int {
	if w.dead.Load() || err == errGone {
		go w.drain()
		return stepDone
	}
	w.q.peerEnded(w.c, err == errDisc)
	w.abort()
	return stepDone
}

// frame hands one data frame to the engine, then takes the grant and the
// acknowledgement its header carries. A message that waits for an SRQ
// receive makes it return errWait (the loop parks the connection), or,
// when block, wait here for the SRQ's next post.
func (w *tcpWire) frame(f *frame, block bool) error {
	q, c := w.q, w.c
	if c.inRead && f.typ != msgReadDone {
		return errProto
	}
	w.rd.want = f.len
	if f.flags&flNotify != 0 {
		w.wmu.Lock()
		w.ackUrgent = true // the sender waits for this verdict
		w.wmu.Unlock()
	}
	h := hdr{typ: f.typ, flags: f.flags, aux: f.aux, len: f.len, addr: f.addr}
	var err error
	switch f.typ {
	case msgSend:
		for {
			if err = q.onSend(c, &h, &w.rd); err != errWait || !block {
				break
			}
			// An empty SRQ: this message, and what follows it on the
			// connection, waits for a receive (an RNR wait without limit).
			w.publish()
			select {
			case <-w.resumeCh:
			case <-w.done:
				return errGone
			}
		}
		if err == errWait {
			return errWait
		}
	case msgWrite:
		err = q.onWrite(c, &h, &w.rd)
	case msgReadReq:
		err = q.onReadReq(c, &h)
	case msgReadResp:
		err = q.onReadResp(c, &h, &w.rd)
	case msgReadDone:
		err = q.onReadDone(c, rdma.WCStatus(f.aux))
	case msgNak:
		if !q.verdict(c, msgNak, uint32(f.addr), rdma.WCStatus(f.aux)) {
			err = errGone
		}
	case msgNeed:
		w.wmu.Lock()
		w.peerHungry, w.starvedAt = true, f.aux
		w.starved.Store(true)
		w.wmu.Unlock()
	case msgDisc:
		// The peer's last verdicts ride on its DISC (a polling consumer
		// defers them): the requests it acknowledges completed.
		if !w.heardAck(f) {
			return errGone
		}
		return errDisc
	}
	if err != nil {
		return err
	}
	if !w.heardAck(f) {
		return errGone
	}
	if w.heardGrant(f) {
		w.rdKick = true
	}
	return nil
}

// heardAck takes the cumulative acknowledgement of a header; false when
// the engine refuses it (the connection is gone).
func (w *tcpWire) heardAck(f *frame) bool {
	if !after(f.ack, w.lastAck) {
		return true
	}
	w.lastAck = f.ack
	return w.q.verdict(w.c, msgAck, f.ack, rdma.WCSuccess)
}

// drain discards what the peer still sends after a shutdown until it
// closes or the linger time is over, then closes the socket (on its own
// goroutine: the reads block).
func (w *tcpWire) drain() {
	if !w.draining.CompareAndSwap(false, true) {
		return
	}
	lu := w.lingerUntil.Load()
	if lu == 0 || lu <= time.Now().UnixNano() {
		w.abort()
		return
	}
	_ = w.sock.SetReadDeadline(time.Unix(0, lu))
	w.setLowat(0) // the reads below take whatever comes
	b := &w.rd
	for {
		b.rp, b.wp = 0, 0
		b.one[0] = goIov(b.buf)
		if _, err := w.recvv(b.one[:]); err != nil {
			if w.retryAfterDeadline(err) {
				continue // the shutdown's own deadline came after ours
			}
			break
		}
	}
	w.abort()
}
