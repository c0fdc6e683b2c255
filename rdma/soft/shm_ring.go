package soft

// Shared-memory rings. A connection segment (a sealed memfd the active side
// creates) holds two directions; each is a data ring of small slots (a
// message's header and, up to slotInline bytes, its payload), an area of
// chunks used in ring order (the payload of a larger eager message, or the
// descriptor of a rendezvous one), a control ring (NAKs: failed verdicts,
// in order) and a control block of words: the consumer's grant and its
// count of verdicts (which a sender reads instead of a message per
// acknowledgement), and the producer's requests to be told when either
// moves. A sender has at most ctlSlots messages without a verdict, so a
// NAK always fits.
//
// The data ring is deep (dataSlots) so that a sender can have as many
// messages published as it has grants, up to that: a sender whose ring is
// full waits, and another connection's later message goes first. Its slots
// are small so that its pages stay few; chunks, which hold up to eagerMax
// bytes each, are fewer.
//
// A slot is published by the sequence word at its start (position + 1),
// stored last; the consumer polls the slot at its tail, not a shared head
// index, and the payload follows the header fields in the same line, so a
// message of up to 16 bytes costs it one cache line from the producer.
//
// The segment is shared with the peer, who may write anything anywhere in
// it: every field read from a slot is checked before use (shm_frame.go),
// and nothing read from it is ever an offset outside this connection's
// segment.

const (
	dataSlots  = 1024
	dataStride = 256
	slotInline = dataStride - dsOffData // payload bytes a slot holds
	chunkSlots = 64
	chunkSize  = eagerMax
	ctlSlots   = 1024 // also the bound on messages without a verdict
	ctlStride  = 32

	// Direction control block, at the start of each direction: words the
	// consumer writes, then (on their own lines) words the producer writes.
	dirOffGrant     = 0   // uint32 the consumer's grant
	dirOffAcked     = 8   // uint64 the consumer's verdicts: count executed | NAKs published<<32
	dirOffTail      = 64  // uint64 data ring consumer index
	dirOffWatched   = 72  // uint32 the consumer looks at this ring without hints (see shmWire.send)
	dirOffBlocked   = 128 // uint32 the producer found the data ring full
	dirOffHungry    = 136 // uint64 the producer waits for a grant beyond (see askGrant)
	dirOffWantAck   = 144 // uint64 the producer waits for verdicts beyond (see send)
	dirOffCtlTail   = 192 // uint64 control ring consumer index
	dirOffChunkTail = 200 // uint64 chunks consumed
	dirCtl          = 256

	dataRingOff = dirCtl
	ctlRingOff  = dataRingOff + dataSlots*dataStride
	chunkOff    = (ctlRingOff + ctlSlots*ctlStride + 4095) &^ 4095
	dirSize     = chunkOff + chunkSlots*chunkSize
	connSegSize = 2 * dirSize

	slotOffSeq = 0 // uint64 in every slot: position + 1 once published
)

// A rendezvous descriptor fits a chunk.
var _ [chunkSize - maxSGE*16]struct{}

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

// publish makes the slot at head visible (its contents are written);
// fenced, the store is sequentially consistent (a locked exchange on
// amd64): the loads after it cannot pass it (see shmWire.send).
func (r *ring) publish(fenced bool) {
	if fenced {
		r.m.st64(r.slot(r.head)+slotOffSeq, r.head+1)
	} else {
		r.m.pub64(r.slot(r.head)+slotOffSeq, r.head+1)
	}
	r.head++
}

// ready reports whether the consumer has a message at tail.
func (r *ring) ready() bool { return r.published(r.tail) }

// published reports whether the slot at position i holds its message.
func (r *ring) published(i uint64) bool {
	return r.m.ld64(r.slot(i)+slotOffSeq) == i+1
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
