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

// How a blocking wait (dat_evd_wait, dat_cno_wait) waits: it spins on the
// doorbell word for a short, adaptive budget, then sleeps on it with
// FUTEX_WAIT. The rules:
//
//   - Spin only with a core to spare: at most spinLimit threads of the
//     process spin at once, one fewer than the usable CPUs (so none on a
//     single CPU, where a spinner only delays the thread that would ring).
//     Admission is a compare-and-swap, so the limit holds at every instant;
//     a waiter refused admission goes straight to sleep.
//   - The budget is per IA, between spinMin and spinMax, and follows what
//     recent waits needed: a wait that slept but was rung within spinMax
//     sets it to twice its duration (spinning that long would have saved the
//     sleep and the wake-up); a wait that lasted longer than spinMax halves
//     it, so an idle consumer stops spinning after a few waits.
//   - A spinner that sees it was descheduled (a gap of preemptGap between two
//     clock reads) stops, sleeps and halves the budget: the CPUs are
//     oversubscribed and spinning steals time from whoever would ring.
//
// No wake-up is lost: a waiter passes the count it read before checking its
// condition; Ring bumps the count before it looks for sleepers, and a
// sleeper announces itself before its last check of the count (then
// FUTEX_WAIT compares it once more, atomically), so either the waiter sees
// the new count or the ringer sees the sleeper and wakes it.
const (
	spinMin    = 2 * time.Microsecond
	spinInit   = 10 * time.Microsecond
	spinMax    = 50 * time.Microsecond
	preemptGap = 20 * time.Microsecond
)

var (
	spinners  atomic.Int32 // threads of this process spinning in Wait
	spinLimit atomic.Int32 // most threads that may spin at once
	spinPeak  atomic.Int32 // highest spinners ever admitted (tests)
)

func init() { spinLimit.Store(defaultSpinLimit()) }

// defaultSpinLimit is one fewer than the CPUs this process may use.
func defaultSpinLimit() int32 {
	n := runtime.GOMAXPROCS(0)
	if c := runtime.NumCPU(); c < n {
		n = c
	}
	return int32(n - 1)
}

// spinEnter admits a spinner if the limit allows.
func spinEnter() bool {
	for {
		n := spinners.Load()
		if n >= spinLimit.Load() {
			return false
		}
		if spinners.CompareAndSwap(n, n+1) {
			for p := spinPeak.Load(); n+1 > p && !spinPeak.CompareAndSwap(p, n+1); p = spinPeak.Load() {
			}
			return true
		}
	}
}

func spinLeave() { spinners.Add(-1) }

// nextSpin is the spin budget after a wait that slept and ended after el
// (rung: the count changed, rather than a timeout).
func nextSpin(budget, el time.Duration, rung bool) time.Duration {
	switch {
	case rung && el <= spinMax:
		budget = 2 * el
	case el > spinMax:
		budget /= 2
	}
	return min(max(budget, spinMin), spinMax)
}

type spinResult uint8

const (
	spinRung spinResult = iota
	spinExpired
	spinPreempted
)

// doorbell is the futex word in an IA segment (ours or a peer's).
type doorbell struct {
	m    shm
	spin atomic.Int64 // spin budget of waits on our own doorbell, ns
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

// spinOn polls the count for at most budget; start is when the wait began.
func (d *doorbell) spinOn(seq uint32, start time.Time, budget time.Duration) spinResult {
	last := start
	for i := 1; ; i++ {
		if d.m.ld32(iaOffSeq) != seq {
			return spinRung
		}
		if i&63 == 0 {
			now := time.Now()
			if now.Sub(last) > preemptGap {
				return spinPreempted
			}
			last = now
			if now.Sub(start) >= budget {
				return spinExpired
			}
		}
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
	start := time.Now()
	budget := time.Duration(d.spin.Load())
	if budget == 0 {
		budget = spinInit
	}
	if spinEnter() {
		b := budget
		if dur > 0 && b > dur {
			b = dur
		}
		r := d.spinOn(seq, start, b)
		spinLeave()
		switch r {
		case spinRung:
			return false
		case spinPreempted:
			budget = max(budget/2, spinMin)
			d.spin.Store(int64(budget))
		}
	}
	if dur > 0 {
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
	d.spin.Store(int64(nextSpin(budget, time.Since(start), d.m.ld32(iaOffSeq) != seq)))
	return interrupted
}
