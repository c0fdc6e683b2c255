package soft

// The shared-memory wire: one connection between two processes of this
// host. Messages travel in the rings of a connection segment (shm_ring.go);
// each published message is followed by a hint in the receiver's inbound
// queue (bell.go), which its Poll drains. An eager payload is copied into
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
	sock     *net.UnixConn // the CM socket, open for the connection's life
	txDir    int           // our producing direction's control block
	rxDir    int           // our consuming direction's control block

	// Producer side, under qp.mu.
	tx, txc ring

	// Consumer side, under the device's inbound.mu.
	rx, rxc ring
	rxWait  bool // the data ring's head waits for an SRQ receive
	rdvIn   rdvDesc
	inl     shmInline // the payload of the message being placed
	pull    shmPull

	peerG  atomic.Uint64 // the peer's credit as last heard
	closed atomic.Bool
	iov    [2][maxSGE]iov // one-sided access scratch: [0] local, [1] remote (one issuer at a time)
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

// eagerArrives: the copy into the ring and the hint in the receiver's
// queue are the message's arrival.
func (w *shmWire) eagerArrives() bool { return true }

// notifyPeer appends a hint for the data slot at pos (or a kick).
func (w *shmWire) notifyPeer(pos uint64, kick bool) {
	h := w.peerHint | pos&hintSeqMask
	if kick {
		h |= hintKick
	}
	w.peerBell.post(h)
}

// send issues a SEND: eager ones are copied into the slot now; rendezvous
// ones carry a descriptor and wait for the receiver's verdict.
func (w *shmWire) send(h *hdr, sgl []rdma.SGE) issued {
	acked := h.flags&flAckReq != 0
	rdv := h.len > eagerMax
	if acked && w.c.acked-w.c.peerAcked >= ctlSlots {
		return issuedFull // the control ring must hold every verdict
	}
	if !w.tx.room() {
		w.mem.st32(w.txDir+dirOffBlocked, 1)
		if !w.tx.room() { // the consumer may have committed meanwhile
			return issuedFull
		}
	}
	off := w.tx.slot(w.tx.head)
	nsge := 0
	if rdv {
		nsge = putRdvDesc(w.mem, off, sgl)
	} else {
		dst := w.mem.b[off+dsOffData : off+dsOffData+int(h.len)]
		for i := range sgl {
			l := int(sgl[i].Length)
			if l == 0 {
				continue
			}
			if !copyIn(dst[:l], sgl[i].Addr) {
				return issuedFault // nothing published: the slot is reused
			}
			dst = dst[l:]
		}
	}
	putDataSlot(w.mem, off, h, w.c.grantLocked(), nsge)
	pos := w.tx.head
	w.tx.publish()
	w.notifyPeer(pos, false)
	if acked {
		return issuedAcked
	}
	return issuedDone
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

// peerGrant is the peer's credit: as carried by its last message, or, when
// that does not exceed sent, as its grant word says now.
func (w *shmWire) peerGrant(sent uint32) credit {
	g := credit(w.peerG.Load())
	if after(g.n(), sent) {
		return g
	}
	return w.heardGrant(credit(w.mem.ld64(w.txDir + dirOffGrant)))
}

// heardGrant takes a credit of the peer (from a slot or the grant word)
// if it grants more than the one last heard, and returns the newest.
func (w *shmWire) heardGrant(g credit) credit {
	for {
		old := credit(w.peerG.Load())
		if !after(g.n(), old.n()) {
			return old
		}
		if w.peerG.CompareAndSwap(uint64(old), uint64(g)) {
			return g
		}
	}
}

// setGrant publishes our credit in the word the peer reads; a peer that
// said it waits for one is kicked.
func (w *shmWire) setGrant(g credit) {
	w.mem.st64(w.rxDir+dirOffGrant, uint64(g))
	if w.mem.ld32(w.rxDir+dirOffHungry) != 0 {
		w.mem.st32(w.rxDir+dirOffHungry, 0)
		w.notifyPeer(0, true)
	}
}

// askGrant says we wait for a grant beyond seen. The peer checks the flag
// after it stores a grant, we check the grant after we set the flag: if it
// moved meanwhile we kick ourselves to retry.
func (w *shmWire) askGrant(seen uint32) {
	w.mem.st32(w.txDir+dirOffHungry, 1)
	if after(credit(w.mem.ld64(w.txDir+dirOffGrant)).n(), seen) {
		bellRef{w.d.bell}.post(w.selfHint | hintKick)
	}
}

// ack and nak write a verdict on the control ring (it always has room: one
// slot per rendezvous message in flight, see send).
func (w *shmWire) ack(n uint32) { w.verdict(msgAck, n, rdma.WCSuccess) }

func (w *shmWire) nak(k uint32, st rdma.WCStatus) { w.verdict(msgNak, k, st) }

func (w *shmWire) verdict(typ uint8, n uint32, st rdma.WCStatus) {
	if !w.txc.room() {
		return // only a peer that ignores the rendezvous bound gets here
	}
	putCtlSlot(w.mem, w.txc.slot(w.txc.head), typ, n, st)
	w.txc.publish()
	w.notifyPeer(0, true)
}

// resume retries the message that waited for an SRQ receive: a kick in
// our own queue, taken by the next drain (in order with other arrivals).
func (w *shmWire) resume() {
	bellRef{w.d.bell}.post(w.selfHint | hintKick)
}

func (w *shmWire) flush() {}
