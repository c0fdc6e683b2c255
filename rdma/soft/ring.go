package soft

// Data path rings. A connection memfd holds two directions; each direction
// is a data ring (inline payload or a rendezvous descriptor per slot) and a
// small control ring (rendezvous acks), so acks never queue behind
// unmatched messages.
//
// A slot is published by the sequence word at its start (position + 1),
// stored last; the consumer polls the slot at its tail, not a shared head
// index. A small message (header and payload in the slot's first 64 bytes)
// so costs the consumer one cache line from the producer, not three (head,
// header, payload).

const (
	dataSlots  = 64
	inlineMax  = 8192 // bytes of payload per slot
	slotHdr    = 64
	dataStride = slotHdr + inlineMax
	ctrlSlots  = 256 // also the cap on outstanding rendezvous sends per QP
	ctrlStride = 32

	ringOffTail    = 64  // uint64, consumer index
	ringOffBlocked = 128 // uint32, producer found the ring full
	ringHdr        = 192

	dataRingSize = (ringHdr + dataSlots*dataStride + 4095) &^ 4095
	ctrlRingSize = (ringHdr + ctrlSlots*ctrlStride + 4095) &^ 4095
	dirSize      = dataRingSize + ctrlRingSize
	connMemSize  = 2 * dirSize

	slotOffSeq = 0 // uint64 in every slot: position + 1 once published

	// data slot header fields
	msgOffKind  = 8  // uint32
	msgOffFlags = 12 // uint32
	msgOffLen   = 16 // uint64 total message length
	msgOffData  = 24 // inline payload, up to inlineMax bytes
	msgOffID    = 24 // rendezvous: send id (uint64), pid, SGL count;
	msgOffPid   = 32 // the SGL entries start at slotHdr
	msgOffNSGE  = 36

	msgInline     = 1
	msgRendezvous = 2
	msgSolicited  = 1

	// control slot fields
	ctlOffKind   = 8
	ctlOffStatus = 12
	ctlOffID     = 16
	ctlOffLen    = 24
	ctlAck       = 1
)

// The inline payload must fit its slot.
var _ [dataStride - msgOffData - inlineMax]struct{}

// ring is one side's view of an SPSC ring. A producer owns head (private)
// and caches tail; a consumer owns tail and reads slot sequence words.
type ring struct {
	m      shm
	base   int
	n      uint64
	stride int
	head   uint64
	tail   uint64
	pub    uint64 // consumer: tail as last published
	dirty  bool   // consumer advanced tail locally, not yet published
}

func newRing(m shm, base int, n uint64, stride int) ring {
	return ring{m: m, base: base, n: n, stride: stride}
}

func (r *ring) slot(i uint64) int { return r.base + ringHdr + int(i&(r.n-1))*r.stride }

// canPut reports whether the producer has a free slot; when the ring is
// full it sets the blocked flag so the consumer rings our doorbell.
func (r *ring) canPut() bool {
	if r.head-r.tail < r.n {
		return true
	}
	r.tail = r.m.ld64(r.base + ringOffTail)
	if r.head-r.tail < r.n {
		return true
	}
	r.m.st32(r.base+ringOffBlocked, 1)
	r.tail = r.m.ld64(r.base + ringOffTail)
	return r.head-r.tail < r.n
}

// put publishes the slot at head (its contents are written already).
func (r *ring) put() {
	r.m.st64(r.slot(r.head)+slotOffSeq, r.head+1)
	r.head++
}

// avail reports whether the consumer has a message at tail.
func (r *ring) avail() bool {
	return r.m.ld64(r.slot(r.tail)+slotOffSeq) == r.tail+1
}

func (r *ring) take() { r.tail++; r.dirty = true }

// lazyCommit is commit for a data ring, skipping the publication (a full
// barrier on the consumer's critical path) until a quarter of the ring is
// consumed or the producer found it full. Liveness: a producer that finds
// the ring full sets the blocked flag, and a ring it sees full while under
// a quarter is unpublished still holds messages the consumer will drain
// (and commit again) once their receives are posted. A control ring must
// use commit: nothing else would make its consumer commit again.
func (r *ring) lazyCommit() bool {
	if r.dirty && r.tail-r.pub < r.n/4 && r.m.ld32(r.base+ringOffBlocked) == 0 {
		return false
	}
	return r.commit()
}

// commit publishes the consumed slots; it reports whether the producer was
// blocked on a full ring and must be woken.
func (r *ring) commit() bool {
	if !r.dirty {
		return false
	}
	r.dirty = false
	r.pub = r.tail
	r.m.st64(r.base+ringOffTail, r.tail)
	if r.m.ld32(r.base+ringOffBlocked) != 0 {
		r.m.st32(r.base+ringOffBlocked, 0)
		return true
	}
	return false
}
