package core

import (
	"sync"
	"sync/atomic"
)

// The transport names core's objects by 64-bit values core chose: a QP's
// context and every work-request id carry the id of the EP behind them, an
// SRQ's context the id of the SRQ, a listener's context the id of the
// service point. An id is an index into a process-wide table plus a
// generation, so a completion of an EP freed since (still in a CQ) or an
// event of a destroyed object decodes to nothing rather than to whatever
// reused the slot.
//
// Layout of an id: bits 0-23 index, bits 24-29 generation, bits 30-31
// zero (a work-request id keeps its queue kind there). A work-request id
// puts the object's id in its high 32 bits and the request's sequence
// number (or an SRQ's slot) in the low 32.

const (
	idGenBits   = 6
	idIndexBits = 24
	idChunkBits = 12
	idChunk     = 1 << idChunkBits
	idChunks    = 1 << (idIndexBits - idChunkBits)
	idIndexMask = 1<<idIndexBits - 1
)

// idTable maps ids to objects of one kind. Lookup takes no lock: slots are
// atomic pointers in chunks that are allocated once and never freed.
type idTable[T any] struct {
	chunks [idChunks]atomic.Pointer[[idChunk]idSlot[T]]

	mu   sync.Mutex
	free []uint32
	next uint32
	gens map[uint32]uint32
}

type idSlot[T any] struct {
	obj atomic.Pointer[T]
	id  atomic.Uint32 // the full id the slot holds now
}

// add gives o an id; false when the table is full.
func (t *idTable[T]) add(o *T) (uint32, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var idx uint32
	switch {
	case len(t.free) > 0:
		idx = t.free[0]
		t.free = t.free[1:]
	case t.next < 1<<idIndexBits:
		idx = t.next
		t.next++
	default:
		return 0, false
	}
	if t.gens == nil {
		t.gens = map[uint32]uint32{}
	}
	g := t.gens[idx]%(1<<idGenBits-1) + 1 // 1..63: an id is never 0
	t.gens[idx] = g
	c := t.chunks[idx>>idChunkBits].Load()
	if c == nil {
		c = new([idChunk]idSlot[T])
		t.chunks[idx>>idChunkBits].Store(c)
	}
	id := g<<idIndexBits | idx
	s := &c[idx&(idChunk-1)]
	s.id.Store(id)
	s.obj.Store(o)
	return id, true
}

// remove frees id; lookups of it fail from now on.
func (t *idTable[T]) remove(id uint32) {
	idx := id & idIndexMask
	c := t.chunks[idx>>idChunkBits].Load()
	if c == nil {
		return
	}
	s := &c[idx&(idChunk-1)]
	if s.id.Load() != id {
		return
	}
	s.obj.Store(nil)
	s.id.Store(0)
	t.mu.Lock()
	t.free = append(t.free, idx)
	t.mu.Unlock()
}

// get returns the object with id, or nil.
func (t *idTable[T]) get(id uint32) *T {
	idx := id & idIndexMask
	c := t.chunks[idx>>idChunkBits].Load()
	if c == nil {
		return nil
	}
	s := &c[idx&(idChunk-1)]
	o := s.obj.Load()
	if o == nil || s.id.Load() != id {
		return nil
	}
	return o
}

// The process-wide tables.
var (
	epIDs  idTable[EP]
	srqIDs idTable[SRQ]
	evdIDs idTable[EVD]
	spIDs  idTable[spRef]
)

// spRef lets one table hold both kinds of service point.
type spRef struct {
	psp *PSP
	rsp *RSP
}

// wrKind is the queue a work request was posted to; it travels in the top
// bits of the request's id because verbs leaves the opcode of an error
// completion undefined.
type wrKind uint8

const (
	wrSend wrKind = iota // an EP's send queue: the id is the EP's
	wrRecv               // an EP's own receive queue: the id is the EP's
	wrSRQ                // an SRQ: the id is the SRQ's, the low bits its slot
)

// wrid builds a work-request id.
func wrid(k wrKind, id uint32, seq uint32) uint64 {
	return uint64(k)<<62 | uint64(id)<<32 | uint64(seq)
}

// wridSplit is the inverse of wrid.
func wridSplit(w uint64) (k wrKind, id uint32, seq uint32) {
	return wrKind(w >> 62), uint32(w>>32) &^ (3 << 30), uint32(w)
}
