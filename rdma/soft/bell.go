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
// connection carried them. (A ring we watch, a CQ's hot connection, gets
// no hints while nobody of ours sleeps: shm_watch.go.)
//
// Trust. Every peer maps this segment writable, so a peer can write any
// entry, the tail, the flags. What it cannot reach is what matters: the
// payloads stay in per-connection rings (a peer can only damage its own
// connection), our head index is private, and a hint is only ever a
// suggestion to look at one connection's ring, where each slot is
// validated before use. So:
//   - a forged hint for a live connection makes us look at a ring whose
//     slots carry their own publication word: nothing unpublished is read;
//   - a hint for a QP slot or connection generation that is not live is
//     dropped;
//   - a hint lost to a full queue sets the overflow flag, which makes the
//     next drain rescan every connection's ring;
//   - a hint erased or garbled (a wrong stamp) leaves a hole the consumer
//     stops at (it cannot tell a hole from a hint not written yet without
//     a look at the tail, which the Poll fast path does not take); the
//     rescan a sleeping CompChannel.Wait runs every rescanEvery steps over
//     holes and finds the messages in their rings; a hint replaced by a
//     forged one delays its message until its connection's next hint
//     (which names a later position and so covers it) or that rescan:
//     nothing is lost. (A consumer that only polls and never sleeps gets
//     no such rescan.)
// A same-uid peer could attach to us with ptrace anyway; the point of the
// checks is that a buggy or dying peer costs us nothing but its connection.
//
// The queue has no reservation step that could leave a hole (a peer killed
// between reserving and writing would stall every later hint): a producer
// claims the slot of the tail position with one compare-and-swap from what
// it read there (a hint of the previous lap, or nothing), then advances
// the tail; a producer that finds the slot holding the hint for that very
// position (another producer's) helps advance the tail. Every hint carries
// its position (the stamp), so the consumer takes the slot at its head
// only if it holds the hint for that position, and never writes the queue:
// a hint line crosses between cores once per message, not twice. Instead
// it publishes its head now and then (every headEvery hints), and a
// producer treats the queue as full when the tail is a lap past that.

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
	bellOffHead     = 320 // uint64 the consumer's head, published every headEvery
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
	// headEvery is how often the consumer publishes its head.
	headEvery = 1024
)

// A hint is a uint64 entry:
//
//	bits  0-18  position of the message in the connection's ring (low bits);
//	            for a kick, hintAll (1) asks to take every published message
//	bit   19    kick: no new message; retry what waits (grant, ring space)
//	bits 20-27  connection generation of the QP slot
//	bits 28-39  QP slot on the receiving device
//	bits 40-63  stamp: the queue position, low 23 bits, with bit 23 set
const (
	hintSeqBits = 19
	hintSeqMask = 1<<hintSeqBits - 1
	hintKick    = 1 << 19
	hintAll     = 1 // with hintKick: resume the messages that waited
	hintGenSh   = 20
	hintIdxSh   = 28
	hintStampSh = 40
)

func hintStamp(pos uint64) uint64 { return (pos&(1<<23-1) | 1<<23) << hintStampSh }

// hintAt reports whether slot content v is the hint for position pos.
func hintAt(v, pos uint64) bool { return v&^(1<<hintStampSh-1) == hintStamp(pos) }

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
		if t-m.ld64(bellOffHead) >= inSlots-headEvery {
			break // full (as far as the consumer's published head tells)
		}
		off := inSlotOff(t)
		v := m.ld64(off)
		if hintAt(v, t) {
			m.cas64(bellOffTail, t, t+1) // another producer's: help it along
			continue
		}
		if m.cas64(off, v, hintStamp(t)|hint) {
			m.cas64(bellOffTail, t, t+1)
			lost = false
			break
		}
	}
	if lost {
		m.st32(bellOffOverflow, 1)
	}
	b.ring()
}

// ring bumps the word and wakes sleepers if there are any. A sleeper
// announces itself before its last check (see sleepOnBell), and this loads
// the count after the hint is in place, so one of the two sees the other.
func (b bellRef) ring() {
	if b.m.ld32(bellOffSleepers) != 0 {
		b.m.add32(bellOffSeq, 1)
		futexWakeAll(b.m.addr(bellOffSeq))
	}
}

// inbound is the consumer side of our own queue.
type inbound struct {
	mu       sync.Mutex    // the drain: one consumer at a time (TryLock)
	head     atomic.Uint64 // next position to take; written under mu
	rescan   atomic.Bool   // a drain must look at every connection
	lastScan atomic.Int64  // unix ns of the last full rescan
	pulled   bool          // the drain placed a rendezvous payload (under mu)
	hand     cqHand        // a polling drainer's first WC slot (under mu; cq.go)
	watch    []watchedRing // rings whose peers may skip hints, oldest first (under mu; shm_watch.go)
	nwatch   atomic.Int32  // len(watch), for a look without mu
	cooled   int           // entries of watch no longer hot (under mu)
}

// ready reports whether the hint for the head position waits (one load).
func (in *inbound) ready(m seg) bool {
	h := in.head.Load()
	return hintAt(m.ld64(inSlotOff(h)), h)
}
