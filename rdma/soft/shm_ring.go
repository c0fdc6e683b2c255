package soft

// Shared-memory rings. A connection segment (a sealed memfd the active side
// creates) holds two directions; each is a data ring (a message's header and
// eager payload, or a rendezvous descriptor, per slot) and a small control
// ring (acknowledgements), so acknowledgements never queue behind messages
// (a rendezvous message is taken only when its acknowledgement fits, and
// the control ring holds one per rendezvous message in flight).
//
// A slot is published by the sequence word at its start (position + 1),
// stored last; the consumer polls the slot at its tail, not a shared head
// index, so a small message costs it one cache line from the producer.
//
// The segment is shared with the peer, who may write anything anywhere in
// it: every field read from a slot is checked before use (shm_frame.go),
// and nothing read from it is ever an offset outside this connection's
// segment.

const (
	dataSlots  = 64
	slotHdr    = 64
	dataStride = slotHdr + eagerMax
	ctlSlots   = 256 // also the bound on rendezvous messages in flight
	ctlStride  = 32

	// direction control block, at the start of each direction
	dirOffGrant   = 0   // uint64 the consumer's credit (it writes)
	dirOffHungry  = 8   // uint32 the producer waits for a grant (it writes)
	dirOffTail    = 64  // uint64 data ring consumer index
	dirOffBlocked = 128 // uint32 the producer found the data ring full
	dirOffCtlTail = 192 // uint64 control ring consumer index
	dirCtl        = 256

	dataRingOff = dirCtl
	ctlRingOff  = dataRingOff + dataSlots*dataStride
	dirSize     = (ctlRingOff + ctlSlots*ctlStride + 4095) &^ 4095
	connSegSize = 2 * dirSize

	slotOffSeq = 0 // uint64 in every slot: position + 1 once published
)

// The eager payload must fit its slot.
var _ [dataStride - slotHdr - eagerMax]struct{}

// ring is one side's view of an SPSC ring. A producer owns head and caches
// tail; a consumer owns tail and publishes it (tailOff) to the producer.
type ring struct {
	m       seg
	base    int // first slot
	n       uint64
	stride  int
	tailOff int // where the consumer publishes its tail
	head    uint64
	tail    uint64
	pub     uint64 // consumer: tail as last published
}

func (r *ring) slot(i uint64) int { return r.base + int(i&(r.n-1))*r.stride }

// room reports whether the producer has a free slot (refreshing its view
// of the consumer's tail when it seems full).
func (r *ring) room() bool {
	if r.head-r.tail < r.n {
		return true
	}
	// The peer writes the tail: take it only if it moved forward and no
	// further than head (a bad one could only make us overwrite the
	// peer's own unconsumed messages, but the check is free).
	if t := r.m.ld64(r.tailOff); t-r.tail <= r.head-r.tail {
		r.tail = t
	}
	return r.head-r.tail < r.n
}

// publish makes the slot at head visible (its contents are written).
func (r *ring) publish() {
	r.m.st64(r.slot(r.head)+slotOffSeq, r.head+1)
	r.head++
}

// ready reports whether the consumer has a message at tail.
func (r *ring) ready() bool {
	return r.m.ld64(r.slot(r.tail)+slotOffSeq) == r.tail+1
}

// take consumes the slot at tail.
func (r *ring) take() { r.tail++ }

// commit publishes the consumed slots.
func (r *ring) commit() {
	if r.pub != r.tail {
		r.pub = r.tail
		r.m.st64(r.tailOff, r.tail)
	}
}

// lazyCommit is commit for the data ring, skipped (it is a store the
// producer's next full check pulls across) until a quarter of the ring is
// consumed or the producer found it full; it reports whether the producer
// was blocked and must be kicked. Liveness: a producer that finds the ring
// full sets the blocked flag before its last look at the tail.
func (r *ring) lazyCommit(blockedOff int) bool {
	if r.pub == r.tail {
		return false
	}
	if r.tail-r.pub < r.n/4 && r.m.ld32(blockedOff) == 0 {
		return false
	}
	r.commit()
	if r.m.ld32(blockedOff) != 0 {
		r.m.st32(blockedOff, 0)
		return true
	}
	return false
}
