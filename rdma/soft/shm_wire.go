package soft

// The shared-memory wire: one connection between two processes of this
// host. Messages travel in the rings of a connection segment (shm_ring.go);
// each published message is followed by a hint in the receiver's inbound
// queue (bell.go), which its Poll drains, unless the receiver watches the
// ring (shm_watch.go). An eager payload is copied into
// the slot at issue (a fault-safe copy: a region unmapped after
// registration fails the request, not the process); a rendezvous message
// carries a descriptor of the sender's memory, which the receiver reads
// with process_vm_readv. RDMA reads and writes are one-sided: the initiator
// checks the target's registration table (mapped read-only) and moves the
// data with process_vm_readv/writev. The pid those calls name is the one
// the kernel reported for the connection's socket (SO_PEERCRED), never one
// a peer supplied.

import (
	"net"
	"sync/atomic"

	"godat/rdma"
)

type shmWire struct {
	d        *device
	q        *qp
	c        *conn
	gen      uint8
	selfHint uint64 // our hint base for this connection (self-kicks)
	peerHint uint64 // the peer's, for its bell
	mem      seg    // the connection segment
	peerBell bellRef
	peerKeys seg // the peer's registration table, read-only
	peerPid  int
	peerPD   uint32
	inProc   bool          // the peer is a device of this process (shm_dev.go)
	sock     *net.UnixConn // the CM socket, open for the connection's life
	txDir    int           // our producing direction's control block
	rxDir    int           // our consuming direction's control block

	// Producer side, under qp.mu.
	tx, txc   ring
	txChunk   uint64 // chunks used
	txChunkOK uint64 // chunks the consumer freed, as last read

	// Consumer side, under the device's inbound.mu.
	rx, rxc    ring
	rxWait     bool   // the data ring's head waits for an SRQ receive
	rxChunk    uint64 // chunks consumed
	rxChunkPub uint64 // ... as last published
	rdvIn      rdvDesc
	inl        shmInline // the payload of the message being placed
	pull       shmPull

	peerG   uint32        // the peer's grant as last heard (q.mu)
	rxGrant uint32        // the grant of the message being placed (drain)
	naksIn  atomic.Uint32 // the peer's NAKs taken from the control ring and applied (drain)
	ackIn   uint32        // the verdict count last reported to the engine (drain)
	hotIn   *cq           // the CQ whose hot connection we are (drain)
	watched bool          // our dirOffWatched is set: the peer may skip hints (drain)
	naksOut uint32        // our NAKs published (qp.mu)
	closed  atomic.Bool
	iov     [2][maxSGE]iov // one-sided access scratch: [0] local, [1] remote (one issuer at a time)
}

// newShmWire builds the wire over a mapped connection segment; active is
// the side that created it (it produces in the first direction).
func newShmWire(d *device, q *qp, mem seg, active bool) *shmWire {
	w := &shmWire{d: d, q: q, mem: mem}
	tx, rx := 0, dirSize
	if !active {
		tx, rx = dirSize, 0
	}
	w.txDir, w.rxDir = tx, rx
	w.tx = ring{m: mem, base: tx + dataRingOff, n: dataSlots, stride: dataStride, tailOff: tx + dirOffTail}
	w.txc = ring{m: mem, base: tx + ctlRingOff, n: ctlSlots, stride: ctlStride, tailOff: tx + dirOffCtlTail}
	w.rx = ring{m: mem, base: rx + dataRingOff, n: dataSlots, stride: dataStride, tailOff: rx + dirOffTail}
	w.rxc = ring{m: mem, base: rx + ctlRingOff, n: ctlSlots, stride: ctlStride, tailOff: rx + dirOffCtlTail}
	return w
}

func (w *shmWire) oneSided() bool { return true }

// watchAcks asks the peer to kick us when its verdicts pass seen, then
// looks once more (the peer stores its count before it reads our word).
func (w *shmWire) watchAcks(seen uint32) {
	w.mem.st64(w.txDir+dirOffWantAck, 1<<32|uint64(seen))
	if n, ok := w.ackedNow(); !ok || after(n, seen) {
		bellRef{w.d.bell}.post(w.selfHint | hintKick)
	}
}

// ackedNow reads the peer's verdict word: its count, unless it counts a
// NAK whose verdict the drain has not applied yet (the NAK is published
// before the count that covers it, so that count must wait).
func (w *shmWire) ackedNow() (uint32, bool) {
	v := w.mem.ld64(w.txDir + dirOffAcked)
	if uint32(v>>32) != w.naksIn.Load() {
		return 0, false
	}
	return uint32(v), true
}

// notifyPeer appends a hint for the data slot at pos (or a kick).
func (w *shmWire) notifyPeer(pos uint64, kick bool) {
	h := w.peerHint | pos&hintSeqMask
	if kick {
		h |= hintKick
	}
	w.peerBell.post(h)
	if w.inProc {
		ringLocal()
	}
}

// send issues a SEND: a payload of up to slotInline bytes is copied into
// the slot, one of up to eagerMax bytes into the next chunk, and a larger
// one travels as a descriptor in the next chunk; the verdict completes it.
func (w *shmWire) send(h *hdr, sgl []rdma.SGE) issued {
	if w.c.acked-w.c.peerAcked >= ctlSlots {
		// Every message without a verdict must find room for its NAK.
		w.watchAcks(w.c.peerAcked)
		return issuedFull
	}
	inChunk := h.len > slotInline
	if !w.tx.room() || inChunk && !w.chunkRoom() {
		w.mem.st32(w.txDir+dirOffBlocked, 1)
		if !w.tx.room() || inChunk && !w.chunkRoom() { // the consumer may have committed meanwhile
			return issuedFull
		}
	}
	off := w.tx.slot(w.tx.head)
	dst := off + dsOffData
	if inChunk {
		dst = w.txDir + chunkOff + int(w.txChunk%chunkSlots)*chunkSize
	}
	nsge := 0
	if h.len > eagerMax {
		nsge = putRdvDesc(w.mem, dst, sgl)
	} else if len(sgl) == 1 { // the usual send: one segment of h.len bytes
		if !copyIn(w.mem.b[dst:dst+int(h.len)], sgl[0].Addr) {
			return issuedFault // nothing published: the slot is reused
		}
	} else {
		b := w.mem.b[dst : dst+int(h.len)]
		for i := range sgl {
			l := int(sgl[i].Length)
			if l == 0 {
				continue
			}
			if !copyIn(b[:l], sgl[i].Addr) {
				return issuedFault // nothing published: the slot is reused
			}
			b = b[l:]
		}
	}
	if inChunk {
		h.num = 1
		w.txChunk++
	}
	putDataSlot(w.mem, off, h, w.c.grantLocked(), nsge)
	// The peer's inbound tail, read before we publish: every hint below
	// it was appended before this post began (see peekHot).
	w.mem.put32(off+dsOffStamp, uint32(w.peerBell.m.ld64(bellOffTail)))
	pos := w.tx.head
	watched := w.mem.ld32(w.txDir+dirOffWatched) != 0
	w.tx.publish(watched)
	if watched && w.unhinted() {
		return issuedAcked
	}
	w.notifyPeer(pos, false)
	return issuedAcked
}

// unhinted reports, after a fenced publish, whether the message may go
// without a hint: the consumer still looks at this ring directly
// (dirOffWatched) and nobody of its process sleeps. It is one half of a
// store-then-load handshake: the consumer clears the word, or counts a
// sleeper, before it looks at the ring, so either it sees this message
// there or we see the word cleared (or the sleeper) and append the hint,
// which also rings the sleepers. The hint's compare-and-swap on
// a line the consumer polls cost the sender about 140-200 ns a message
// and left the consumer a stale hint to drop after it had taken the
// message from the ring.
func (w *shmWire) unhinted() bool {
	if w.mem.ld32(w.txDir+dirOffWatched) == 0 || w.peerBell.m.ld32(bellOffSleepers) != 0 {
		return false
	}
	return !w.inProc || local.sleepers.Load() == 0
}

// chunkRoom reports whether a chunk is free, refreshing the consumer's
// count when none seems to be (taken only if it moved forward and no
// further than ours).
func (w *shmWire) chunkRoom() bool {
	if w.txChunk-w.txChunkOK < chunkSlots {
		return true
	}
	if t := w.mem.ld64(w.txDir + dirOffChunkTail); t-w.txChunkOK <= w.txChunk-w.txChunkOK {
		w.txChunkOK = t
	}
	return w.txChunk-w.txChunkOK < chunkSlots
}

// access performs a one-sided RDMA read or write after checking the
// target's registration (key, bounds, right, the target QP's PD) in its
// table. It runs without the QP lock, under the teardown barrier (see
// qp.issueLocked).
func (w *shmWire) access(op rdma.WROpcode, sgl []rdma.SGE, L, raddr uint64, rkey uint32) rdma.WCStatus {
	need := rdma.AccessRemoteWrite
	if op == rdma.WRRDMARead {
		need = rdma.AccessRemoteRead
	}
	r, ok := lookupKey(w.peerKeys, rkey)
	if !ok || r.pd != w.peerPD || r.access&need != need || !r.covers(raddr, L) {
		return rdma.WCRemAccessErr
	}
	if L == 0 {
		return rdma.WCSuccess
	}
	local := fillIov(w.iov[0][:], sgl, L)
	w.iov[1][0] = iov{Base: uintptr(raddr), Len: int(L)}
	got, err := vmRW(w.peerPid, w.iov[0][:local], w.iov[1][:1], op == rdma.WRRDMAWrite)
	if err == nil && uint64(got) == L {
		return rdma.WCSuccess
	}
	// Which side faulted? Only our own memory can be probed.
	if !localOK(op, sgl, L) {
		return rdma.WCLocProtErr
	}
	return rdma.WCRemAccessErr // registered but not mapped (or gone) at the target
}

// localOK probes our segments of a failed transfer: readable for a write,
// writable for a read.
func localOK(op rdma.WROpcode, sgl []rdma.SGE, L uint64) bool {
	for i := range sgl {
		if L == 0 {
			break
		}
		n := min(uint64(sgl[i].Length), L)
		var ok bool
		if op == rdma.WRRDMARead {
			ok = probeWritable(sgl[i].Addr, n)
		} else {
			ok = probeReadable(sgl[i].Addr, n)
		}
		if !ok {
			return false
		}
		L -= n
	}
	return true
}

// fillIov builds iovecs for the first L bytes of sgl; it returns the count.
func fillIov(dst []iov, sgl []rdma.SGE, L uint64) int {
	n := 0
	for i := range sgl {
		if L == 0 {
			break
		}
		l := min(uint64(sgl[i].Length), L)
		if l == 0 {
			continue
		}
		dst[n] = iov{Base: uintptr(sgl[i].Addr), Len: int(l)}
		n++
		L -= l
	}
	return n
}

func (w *shmWire) readResp(uint64, uint64, rdma.WCStatus) {} // one-sided: no responder

// peerGrant is the peer's grant: as carried by its last message, or, when
// that does not exceed sent, as its grant word says now.
func (w *shmWire) peerGrant(sent uint32) uint32 {
	if !after(w.peerG, sent) {
		w.heardGrantLocked(w.mem.ld32(w.txDir + dirOffGrant))
	}
	return w.peerG
}

// heardGrantLocked takes a grant of the peer (from a slot or the grant
// word) if it grants more than the one last heard; q.mu is held. The slot's
// grant is taken while its message is placed, under q.mu (qp.onSend), so
// the count needs no atomic.
func (w *shmWire) heardGrantLocked(g uint32) {
	if after(g, w.peerG) {
		w.peerG = g
	}
}

// setGrant publishes our grant in the word the peer reads; a peer that
// waits for a grant beyond what this one gives is kicked.
func (w *shmWire) setGrant(g uint32) {
	w.mem.st32(w.rxDir+dirOffGrant, g)
	w.kickIfWaiting(w.rxDir+dirOffHungry, g)
}

// kickIfWaiting kicks the peer if the word at off says it waits for a
// count beyond one that n reaches. The word names that count and is
// cleared with a compare-and-swap of its value: a peer that asks again
// meanwhile (for a later count) keeps its request, or the next move would
// not kick it. The peer stores the word before it looks at the count one
// last time, and we store the count before we look at the word, so one of
// the two sees the other.
func (w *shmWire) kickIfWaiting(off int, n uint32) {
	for {
		h := w.mem.ld64(off)
		if h == 0 || !after(n, uint32(h)) {
			return // not waiting, or waiting beyond n
		}
		if w.mem.cas64(off, h, 0) {
			w.notifyPeer(0, true)
			return
		}
	}
}

// askGrant says we wait for a grant beyond seen. The peer checks the word
// after it stores a grant, we check the grant after we store the word: if
// it moved meanwhile we kick ourselves to retry.
func (w *shmWire) askGrant(seen uint32) {
	w.mem.st64(w.txDir+dirOffHungry, 1<<32|uint64(seen))
	if after(w.mem.ld32(w.txDir+dirOffGrant), seen) {
		bellRef{w.d.bell}.post(w.selfHint | hintKick)
	}
}

// ack publishes our verdict count: the peer reads it when it looks, and
// is kicked when it asked (a signalled send kicks in drainData).
func (w *shmWire) ack(n uint32) {
	w.mem.st64(w.rxDir+dirOffAcked, uint64(w.naksOut)<<32|uint64(n))
	w.kickIfWaiting(w.rxDir+dirOffWantAck, n)
}

// nak publishes a failed verdict on the control ring (it always has room:
// a sender has at most ctlSlots messages without one), then the count that
// covers it, and kicks the peer.
func (w *shmWire) nak(k uint32, st rdma.WCStatus) {
	if !w.txc.room() {
		return // only a peer that ignores the bound gets here
	}
	putCtlSlot(w.mem, w.txc.slot(w.txc.head), msgNak, k, st)
	w.txc.publish(false)
	w.naksOut++
	w.mem.st64(w.rxDir+dirOffAcked, uint64(w.naksOut)<<32|uint64(k))
	w.notifyPeer(0, true)
}

// resume retries the message that waited for an SRQ receive, and those
// behind it: a kick in our own queue, taken by the next drain (in order
// with other arrivals).
func (w *shmWire) resume() {
	bellRef{w.d.bell}.post(w.selfHint | hintKick | hintAll)
}

func (w *shmWire) flush()       {}
func (w *shmWire) flushGrant()  {}
func (w *shmWire) flushPosted() {}
