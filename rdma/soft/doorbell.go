package soft

import (
	"runtime"
	"sync/atomic"
	"time"
)

// IA segment layout (shared memfd, mapped by every connected peer).
const (
	iaOffSeq     = 0   // uint32 futex word
	iaOffWaiters = 64  // uint32 sleeping waiters
	iaOffMagic   = 128 // uint32 magic
	iaOffPid     = 132 // uint32 owner pid
	iaOffTable   = 4096
	mrEntrySize  = 32
	mrTableCap   = 1 << mrIdxBits
	mrIdxBits    = 14
	iaSegSize    = iaOffTable + mrTableCap*mrEntrySize
	iaMagic      = 0x67646174 // "gdat"
)

// spinFor is how long a waiter spins before sleeping on the futex.
const spinFor = 5 * time.Microsecond

// spinners counts threads currently spinning in Doorbell.Wait, process-wide.
var spinners atomic.Int32

func maxSpinners() int32 {
	n := runtime.GOMAXPROCS(0)
	if c := runtime.NumCPU(); c < n {
		n = c
	}
	return int32(n - 1)
}

// doorbell is the futex word in an IA segment (ours or a peer's).
type doorbell struct {
	m shm
}

func (d *doorbell) Seq() uint32 { return d.m.ld32(iaOffSeq) }

// Ring bumps the count and wakes sleepers; the syscall happens only when
// someone sleeps.
func (d *doorbell) Ring() {
	d.m.add32(iaOffSeq, 1)
	if d.m.ld32(iaOffWaiters) != 0 {
		futexWakeAll(d.m.addr32(iaOffSeq))
	}
}

// Wait returns when the count differs from seq, after at most about dur
// (dur < 0: unbounded). It may return early.
func (d *doorbell) Wait(seq uint32, dur time.Duration) { d.WaitIntr(seq, dur) }

// WaitIntr is Wait, reporting whether a signal handler interrupted the
// sleep on the futex.
func (d *doorbell) WaitIntr(seq uint32, dur time.Duration) (interrupted bool) {
	if d.m.ld32(iaOffSeq) != seq || dur == 0 {
		return false
	}
	var start time.Time
	if spinners.Add(1) <= maxSpinners() {
		start = time.Now()
		for i := 0; ; i++ {
			if d.m.ld32(iaOffSeq) != seq {
				spinners.Add(-1)
				return false
			}
			if i&15 == 15 {
				el := time.Since(start)
				if el >= spinFor || (dur > 0 && el >= dur) {
					break
				}
			}
		}
	}
	spinners.Add(-1)
	if dur > 0 && !start.IsZero() {
		dur -= time.Since(start)
		if dur <= 0 {
			return false
		}
	}
	// Announce ourselves before the final check: a Ring after this point
	// either changes the word before FUTEX_WAIT compares it or sees waiters.
	d.m.add32(iaOffWaiters, 1)
	if d.m.ld32(iaOffSeq) == seq {
		interrupted = futexWaitOn(d.m.addr32(iaOffSeq), seq, dur)
	}
	d.m.add32(iaOffWaiters, -1)
	return interrupted
}
