package soft

// Reading the TCP wire: the reader goroutine of a connection reads frames,
// checks them (checkFrame) and hands them to the engine; payloads of
// directMin bytes or more are read straight into place, smaller ones
// through a 64 KiB buffer. The reader is the payload (treader implements
// the engine's payload interface).

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
	v      [maxSGE]iov
	one    [1]iov
}

// recvv reads with one readv, waiting for data. Only the reader calls it.
func (w *tcpWire) recvv(v []iov) (int, error) {
	o := &w.rop
	o.v = v
	rerr := w.rc.Read(o.fn)
	o.v = nil
	if rerr != nil {
		return 0, rerr
	}
	if o.err == nil && o.n == 0 {
		return 0, io.EOF
	}
	return o.n, o.err
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
func (w *tcpWire) publish() {
	if w.rdKick {
		w.rdKick = false
		if w.q != nil {
			w.q.kick(w.c)
		}
	}
	w.flush()
}

// readLoop reads data frames until the connection ends.
func (w *tcpWire) readLoop() {
	var f frame
	for {
		if w.dead.Load() {
			w.drain()
			return
		}
		err := w.rd.header(&f)
		if err == nil {
			err = w.frame(&f)
		}
		if err != nil {
			if w.dead.Load() || err == errGone {
				w.drain()
				return
			}
			w.q.peerEnded(w.c, err == errDisc)
			w.abort()
			return
		}
	}
}

// drain discards what the peer still sends after a shutdown until it
// closes or the linger time is over, then closes.
func (w *tcpWire) drain() {
	for {
		w.rd.rp, w.rd.wp = 0, 0
		if w.rd.fill(false) != nil {
			break
		}
	}
	w.abort()
}

// frame hands one data frame to the engine, then takes the grant and the
// acknowledgement its header carries.
func (w *tcpWire) frame(f *frame) error {
	if !checkFrame(f) {
		return errProto
	}
	q, c := w.q, w.c
	if c.inRead && f.typ != msgReadDone {
		return errProto
	}
	w.rd.want = f.len
	h := hdr{typ: f.typ, flags: f.flags, aux: f.aux, len: f.len, addr: f.addr}
	var err error
	switch f.typ {
	case msgSend:
		for {
			if err = q.onSend(c, &h, &w.rd); err != errWait {
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
	case msgWrite:
		err = q.onWrite(c, &h, &w.rd)
	case msgReadReq:
		err = q.onReadReq(c, &h)
		w.rdFlush = true
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
		return errDisc
	}
	if err != nil {
		return err
	}
	if after(f.ack, w.lastAck) {
		w.lastAck = f.ack
		if !q.verdict(c, msgAck, f.ack, rdma.WCSuccess) {
			return errGone
		}
	}
	if after(f.grant, w.peerG.Load()) {
		w.peerG.Store(f.grant)
		w.rdKick = true
	}
	return nil
}
