package soft

// The consumer side of the shared-memory wire: what a hint makes us do.
// Everything here runs under the device's inbound.mu (the drain), which
// also guards the connection's mappings: they are released under it.

import (
	"godat/rdma"
)

// onHint processes what a hint for this connection names: the peer's
// verdicts (its count word, and NAKs on the control ring), then the
// messages on the data ring up to position seq, then, for a kick, whatever
// the send queue waits for (a grant, ring room, verdicts). A kick takes no
// message (each has its own hint, and taking one ahead of other
// connections' earlier ones would break arrival order) unless it says
// hintAll: the resume of a message that waited for an SRQ receive (the
// hints of those behind it were spent on it), or a rescan.
func (w *shmWire) onHint(seq uint32, kick bool) {
	if w.closed.Load() {
		return
	}
	// Verdict news comes with a kick (a signalled send, a sender that
	// asked, a NAK); a plain message's hint leaves the word alone (it is
	// the peer's line: reading it costs a miss). The count is read before
	// the NAKs are taken: a NAK it covers was published before it, so the
	// drain below sees it first.
	var v uint64
	if kick {
		v = w.mem.ld64(w.txDir + dirOffAcked)
	}
	if !w.drainCtl() {
		return
	}
	if n := uint32(v); kick && n != w.ackIn && uint32(v>>32) == w.naksIn.Load() {
		w.ackIn = n
		if !w.q.verdict(w.c, msgAck, n, rdma.WCSuccess) {
			return
		}
	}
	if (!kick || seq&hintAll != 0) && !w.drainData(seq, kick) {
		return
	}
	if w.commitRx() {
		w.notifyPeer(0, true) // the peer found the ring full: room now
	}
	if kick {
		w.q.kick(w.c)
	}
}

// behind reports whether the message at position seq was taken already
// (in.mu held): a hot connection's message is usually taken before its
// hint is (peekHot), and that hint then asks for nothing. A message's hint
// carries no verdict news (those come with kicks), and what taking the
// message owed (commitRx) was done when it was taken.
func (w *shmWire) behind(seq uint32) bool {
	return (seq-uint32(w.rx.tail))&hintSeqMask >= 1<<(hintSeqBits-1)
}

// drainCtl takes every published NAK; false when the connection ended.
func (w *shmWire) drainCtl() bool {
	for w.rxc.ready() {
		num, st, ok := getCtlSlot(w.mem, w.rxc.slot(w.rxc.tail))
		w.rxc.take()
		if !ok {
			w.violation()
			return false
		}
		// Counted once its verdict is in: until then ackedNow refuses
		// the count that covers it, which a poster reading the count
		// under q.mu (ackedNow) would otherwise take for the NAKed
		// request's success while this drain waits for q.mu.
		if !w.q.verdict(w.c, msgNak, num, st) {
			return false
		}
		w.naksIn.Add(1)
	}
	w.rxc.commit()
	return true
}

// drainData places the published messages up to position seq (all of
// them when all); false when the connection ended. The bound is tested
// before the next slot is looked at: that slot's line is usually not here
// yet, and the caller waits for its completion.
func (w *shmWire) drainData(seq uint32, all bool) bool {
	for {
		if !all && w.behind(seq) {
			return true // past the hinted message: later ones have hints of their own
		}
		if !w.rx.ready() {
			return true
		}
		off := w.rx.slot(w.rx.tail)
		chunk := w.rxDir + chunkOff + int(w.rxChunk%chunkSlots)*chunkSize
		h, grant, pay, ok := getDataSlot(w.mem, off, chunk, &w.rdvIn)
		if !ok {
			w.violation()
			return false
		}
		w.rxGrant = grant // taken under q.mu by onSend
		var p payload
		if h.len > eagerMax {
			w.pull = shmPull{w: w}
			p = &w.pull
		} else {
			w.inl = shmInline{m: w.mem, off: pay}
			p = &w.inl
		}
		switch err := w.q.onSend(w.c, &h, p); err {
		case nil:
			w.rx.take()
			if h.num == 1 {
				w.rxChunk++
			}
			w.rxWait = false
			if cq := w.c.placedIn; cq != nil && (cq.hot.Load() != w || !w.watched) {
				w.makeHot(cq)
			}
			if h.flags&flNotify != 0 {
				w.notifyPeer(0, true) // a signalled send: its verdict is out
			}
			if w.d.in.pulled {
				return true // one large placement per drain (drainInbound)
			}
		case errWait:
			w.rxWait = true // resumed by the SRQ's next post
			return true
		case errGone:
			return false
		default:
			w.violation()
			return false
		}
	}
}

// commitRx publishes what was consumed (slots and chunks): lazily, each
// once a quarter of its kind is consumed (a store the producer's next full
// check pulls across), or at once when the producer found either full; it
// reports whether the producer was blocked and must be kicked. Liveness: a
// producer that finds no room sets the blocked flag before its last look;
// one that finds the slots or chunks full while under a quarter of them
// is unpublished still has messages here that will be taken (and commit
// again) once their receives are posted.
func (w *shmWire) commitRx() bool {
	blockedOff := w.rxDir + dirOffBlocked
	if w.mem.ld32(blockedOff) == 0 {
		if w.rxChunk-w.rxChunkPub >= chunkSlots/4 {
			w.rxChunkPub = w.rxChunk
			w.mem.st64(w.rxDir+dirOffChunkTail, w.rxChunk)
		}
		if w.rx.tail-w.rx.pub >= dataSlots/4 {
			w.rx.commit()
		}
		return false
	}
	w.rxChunkPub = w.rxChunk
	w.mem.st64(w.rxDir+dirOffChunkTail, w.rxChunk)
	w.rx.commit()
	w.mem.st32(blockedOff, 0)
	return true
}

// violation: the peer broke the protocol; its connection ends.
func (w *shmWire) violation() { w.q.protocolError(w.c) }

// shmInline is an eager payload in a data slot.
type shmInline struct {
	m   seg
	off int
}

func (p *shmInline) inMemory() bool { return true }

func (p *shmInline) place(dst []rdma.SGE, n uint64) (local, src bool, err error) {
	b := p.m.b[p.off : p.off+int(n)]
	if len(dst) == 1 { // the usual receive (n fits it: recvStatus)
		return !copyOut(dst[0].Addr, b), false, nil
	}
	for i := 0; i < len(dst) && len(b) > 0; i++ {
		k := min(int(dst[i].Length), len(b))
		if !copyOut(dst[i].Addr, b[:k]) {
			return true, false, nil
		}
		b = b[k:]
	}
	return false, false, nil
}

func (p *shmInline) discard(uint64) error { return nil }

// shmPull is a rendezvous payload: read from the sender with
// process_vm_readv, straight into the receive's buffers.
type shmPull struct {
	w     *shmWire
	local [maxSGE]iov
}

func (p *shmPull) inMemory() bool { return false }

func (p *shmPull) place(dst []rdma.SGE, n uint64) (local, src bool, err error) {
	w := p.w
	nl := fillIov(p.local[:], dst, n)
	d := &w.rdvIn
	w.d.in.pulled = true
	got, e := vmRW(w.peerPid, p.local[:nl], d.seg[:d.n], false)
	if e == nil && uint64(got) == n {
		return false, false, nil
	}
	// Our receive buffers, or the sender's memory? Probe ours.
	if !localOK(rdma.WRRDMARead, dst, n) {
		return true, false, nil
	}
	return false, true, nil
}

func (p *shmPull) discard(uint64) error { return nil }

// makeHot makes us the connection cq's Poll looks at directly (nil: none),
// and lets our peer skip the hints of its messages while we are
// (watchLocked); in.mu held. A connection is hot in at most one CQ and a
// CQ has at most one: the messages of its other connections keep their
// hints, which order them against the hot one's (shm_watch.go).
func (w *shmWire) makeHot(cq *cq) {
	d := w.d
	// A hot CQ has no watch, and a ring watched from now on sends no hints
	// (quiet.go): the bump comes after those changes, so that a Poll that
	// sampled the epoch before them publishes an epoch already old.
	defer d.bump()
	if w.hotIn != nil && w.hotIn != cq {
		w.hotIn.hot.CompareAndSwap(w, nil)
		d.unwatchLocked(w)
	}
	w.hotIn = cq
	if cq == nil {
		return
	}
	if old := cq.hot.Swap(w); old != nil && old != w {
		old.hotIn = nil
		d.unwatchLocked(old)
	}
	d.watchLocked(w)
}
