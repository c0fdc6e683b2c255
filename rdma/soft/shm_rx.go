package soft

// The consumer side of the shared-memory wire: what a hint makes us do.
// Everything here runs under the device's inbound.mu (the drain), which
// also guards the connection's mappings: they are released under it.

import (
	"godat/rdma"
)

// onHint processes what a hint for this connection names: the verdicts on
// the control ring, then the messages on the data ring up to position seq
// (every published one for a kick), then, for a kick, whatever the send
// queue waits for (a grant, ring room).
func (w *shmWire) onHint(seq uint32, kick bool) {
	if w.closed.Load() {
		return
	}
	if !w.drainCtl() {
		return
	}
	if !w.drainData(seq, kick) {
		return
	}
	if w.rx.lazyCommit(w.rxDir + dirOffBlocked) {
		w.notifyPeer(0, true) // the peer found the ring full: room now
	}
	if kick {
		w.q.kick(w.c)
	}
}

// drainCtl takes every published verdict; false when the connection ended.
func (w *shmWire) drainCtl() bool {
	for w.rxc.ready() {
		typ, num, st, ok := getCtlSlot(w.mem, w.rxc.slot(w.rxc.tail))
		w.rxc.take()
		if !ok {
			w.violation()
			return false
		}
		if !w.q.verdict(w.c, typ, num, st) {
			return false
		}
	}
	w.rxc.commit()
	return true
}

// drainData places the published messages up to position seq (all of
// them when all); false when the connection ended.
func (w *shmWire) drainData(seq uint32, all bool) bool {
	for w.rx.ready() {
		if !all && (seq-uint32(w.rx.tail))&hintSeqMask >= 1<<(hintSeqBits-1) {
			return true // past the hinted message: later ones have hints of their own
		}
		off := w.rx.slot(w.rx.tail)
		h, grant, ok := getDataSlot(w.mem, off, &w.rdvIn)
		if !ok {
			w.violation()
			return false
		}
		w.heardGrant(grant)
		var p payload
		if h.len > eagerMax {
			w.pull = shmPull{w: w}
			p = &w.pull
		} else {
			w.inl = shmInline{m: w.mem, off: off + dsOffData}
			p = &w.inl
		}
		switch err := w.q.onSend(w.c, &h, p); err {
		case nil:
			w.rx.take()
			w.rxWait = false
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
