package soft

// Data path rings. A connection memfd holds two directions; each direction
// is a data ring (inline payload or a rendezvous descriptor per slot) and a
// small control ring (rendezvous acks), so acks never queue behind
// unmatched messages.

const (
	dataSlots  = 64
	inlineMax  = 8192 // bytes of payload per slot
	slotHdr    = 64
	dataStride = slotHdr + inlineMax
	ctrlSlots  = 256 // also the cap on outstanding rendezvous sends per QP
	ctrlStride = 32

	ringOffHead    = 0   // uint64, producer index
	ringOffTail    = 64  // uint64, consumer index
	ringOffBlocked = 128 // uint32, producer found the ring full
	ringHdr        = 192

	dataRingSize = (ringHdr + dataSlots*dataStride + 4095) &^ 4095
	ctrlRingSize = (ringHdr + ctrlSlots*ctrlStride + 4095) &^ 4095
	dirSize      = dataRingSize + ctrlRingSize
	connMemSize  = 2 * dirSize

	// data slot header fields
	msgOffKind  = 0 // uint32
	msgOffFlags = 4 // uint32
	msgOffLen   = 8 // uint64 total message length
	msgOffID    = 16
	msgOffPid   = 24
	msgOffNSGE  = 28

	msgInline     = 1
	msgRendezvous = 2
	msgSolicited  = 1

	// control slot fields
	ctlOffKind   = 0
	ctlOffStatus = 4
	ctlOffID     = 8
	ctlOffLen    = 16
	ctlAck       = 1
)

// ring is one side's view of an SPSC ring. A producer owns head and caches
// tail; a consumer owns tail and caches head.
type ring struct {
	m      shm
	base   int
	n      uint64
	stride int
	head   uint64
	tail   uint64
	dirty  bool // consumer advanced tail locally, not yet published
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

// put publishes the slot at head.
func (r *ring) put() {
	r.head++
	r.m.st64(r.base+ringOffHead, r.head)
}

// avail reports whether the consumer has a message at tail.
func (r *ring) avail() bool {
	if r.tail != r.head {
		return true
	}
	r.head = r.m.ld64(r.base + ringOffHead)
	return r.tail != r.head
}

func (r *ring) take() { r.tail++; r.dirty = true }

// commit publishes the consumed slots; it reports whether the producer was
// blocked on a full ring and must be woken.
func (r *ring) commit() bool {
	if !r.dirty {
		return false
	}
	r.dirty = false
	r.m.st64(r.base+ringOffTail, r.tail)
	if r.m.ld32(r.base+ringOffBlocked) != 0 {
		r.m.st32(r.base+ringOffBlocked, 0)
		return true
	}
	return false
}
