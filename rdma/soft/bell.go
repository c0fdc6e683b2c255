package soft

// The bell segment: the part of a device that its shared-memory peers may
// write. It holds the futex word every CompChannel of the device sleeps on,
// the count of sleepers, and the device's inbound queue.
//
// The inbound queue gives arrival order across connections. A peer that
// publishes a message in its connection's ring appends a hint naming the
// connection (our QP slot and connection generation) and the message's
// position in that ring; Poll on any CQ of the device takes hints in
// queue order and processes each connection's messages up to the position
// named, so receives complete in the order the messages arrived, whichever
// connection carried them.
//
// Trust. Every peer maps this segment writable, so a peer can write any
// entry, the tail, the flags. What it cannot reach is what matters: the
// payloads stay in per-connection rings (a peer can only damage its own
// connection), our head index is private, and a hint is only ever a
// suggestion to look at one connection's ring, where each slot is
// validated before use. So:
//   - a forged hint for a live connection makes us look at a ring whose
//     slots carry their own publication word: nothing unpublished is read;
//   - a garbage hint (bad stamp, QP slot or generation) is dropped and
//     makes the next drain rescan every connection's ring;
//   - a hint lost to a full queue sets the overflow flag, which also makes
//     the next drain rescan;
//   - a hint erased or replaced without trace delays a message until that
//     connection's next hint (which names a later position and so covers
//     it), or until the rescan a sleeping CompChannel.Wait runs every
//     rescanEvery: nothing is lost. (A consumer that only polls and never
//     sleeps gets no such rescan; with the default same-uid rule a peer
//     that erases hints could as well ptrace us.)
// A same-uid peer could attach to us with ptrace anyway; the point of the
// checks is that a buggy or dying peer costs us nothing but its connection.
//
// The queue has no reservation step that could leave a hole (a peer killed
// between reserving and writing would stall every later hint): a producer
// claims the slot at the tail with one compare-and-swap from zero, then
// advances the tail, and other producers help advance a tail whose slot is
// taken. The consumer frees a slot by storing zero.

import (
	"sync"
	"sync/atomic"
	"time"
)

// Bell segment layout.
const (
	bellOffSeq      = 0   // uint32 futex word
	bellOffSleepers = 64  // uint32 threads asleep on the word
	bellOffMagic    = 128 // uint32
	bellOffTail     = 192 // uint64 inbound queue tail (producers)
	bellOffOverflow = 256 // uint32 set by a producer that lost a hint
	bellOffQueue    = 4096
	inSlots         = 1 << 14
	bellSegSize     = bellOffQueue + inSlots*8
	bellMagic       = 0x6c626467 // "gdbl"

	// rescanEvery bounds how long a message whose hint a hostile peer
	// erased waits for a sleeping consumer.
	rescanEvery = time.Second
	// hintRetries bounds a producer's attempts to append (the tail is
	// writable by every peer, so it may be garbage).
	hintRetries = 64
)

// A hint is a uint64 entry:
//
//	bits  0-18  position of the message in the connection's ring (low bits)
//	bit   19    kick: no new message; retry what waits (grant, ring space)
//	bits 20-27  connection generation of the QP slot
//	bits 28-39  QP slot on the receiving device
//	bits 40-63  stamp: the queue position, low 23 bits, with bit 23 set
const (
	hintSeqBits = 19
	hintSeqMask = 1<<hintSeqBits - 1
	hintKick    = 1 << 19
	hintGenSh   = 20
	hintIdxSh   = 28
	hintStampSh = 40
)

func hintStamp(pos uint64) uint64 { return (pos&(1<<23-1) | 1<<23) << hintStampSh }

// hintFor is the constant part of the hints of one connection.
func hintFor(idx int, gen uint8) uint64 {
	return uint64(idx)<<hintIdxSh | uint64(gen)<<hintGenSh
}

// decodeHint splits an entry taken at queue position pos; ok is false for
// an entry whose stamp is not pos's.
func decodeHint(e, pos uint64) (idx int, gen uint8, seq uint32, kick, ok bool) {
	if e&^(1<<hintStampSh-1) != hintStamp(pos) {
		return 0, 0, 0, false, false
	}
	return int(e >> hintIdxSh & (1<<12 - 1)), uint8(e >> hintGenSh), uint32(e & hintSeqMask), e&hintKick != 0, true
}

func inSlotOff(pos uint64) int { return bellOffQueue + int(pos&(inSlots-1))*8 }

// bellRef is a view of a bell segment, ours or a peer's, for ringing it.
type bellRef struct{ m seg }

// post appends a hint to the queue and wakes the owner's sleepers. The
// syscall happens only when someone sleeps.
func (b bellRef) post(hint uint64) {
	m := b.m
	lost := true
	for try := 0; try < hintRetries; try++ {
		t := m.ld64(bellOffTail)
		off := inSlotOff(t)
		if m.cas64(off, 0, hintStamp(t)|hint) {
			m.cas64(bellOffTail, t, t+1)
			lost = false
			break
		}
		e := m.ld64(off)
		if e&^(1<<hintStampSh-1) != hintStamp(t) && e != 0 {
			break // full: the slot still holds an older, untaken hint
		}
		m.cas64(bellOffTail, t, t+1) // another producer's: help it along
	}
	if lost {
		m.st32(bellOffOverflow, 1)
	}
	b.ring()
}

// ring bumps the word and wakes sleepers if there are any. A sleeper
// announces itself before its last check (see chanWait), and this loads
// the count after the hint is in place, so one of the two sees the other.
func (b bellRef) ring() {
	if b.m.ld32(bellOffSleepers) != 0 {
		b.m.add32(bellOffSeq, 1)
		futexWakeAll(b.m.addr32(bellOffSeq))
	}
}

// inbound is the consumer side of our own queue.
type inbound struct {
	mu       sync.Mutex    // the drain: one consumer at a time (TryLock)
	head     atomic.Uint64 // next position to take; written under mu
	rescan   atomic.Bool   // a drain must look at every connection
	lastScan atomic.Int64  // unix ns of the last full rescan
}

// ready reports whether a hint waits at the head (one load).
func (in *inbound) ready(m seg) bool {
	return m.ld64(inSlotOff(in.head.Load())) != 0
}
