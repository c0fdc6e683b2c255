package core

import (
	"runtime"
	"sync/atomic"
	"time"
)

// How a blocking wait (dat_evd_wait, dat_cno_wait) waits: it polls its CQs
// for a short, adaptive budget, then arms them and sleeps on the IA's
// completion channel. Sleeping costs a wake-up of several microseconds;
// an event that comes within the spin is seen at once. The rules:
//
//   - Spin only with a core to spare: at most spinLimit threads of the
//     process spin at once, one fewer than the usable CPUs (so none on a
//     single CPU, where a spinner only delays the thread that would
//     produce the event). Admission is a compare-and-swap, so the limit
//     holds at every instant; a waiter refused admission sleeps at once.
//   - The budget is per IA, between spinMin and spinMax, and follows what
//     recent waits needed: a wait that slept but got its event within
//     spinMax sets it to twice its duration (spinning that long would have
//     saved the sleep); a wait that lasted longer than spinMax halves it,
//     so an idle consumer stops spinning after a few waits.
//   - A spinner that sees it was descheduled (a gap of preemptGap between
//     two clock reads) stops, sleeps and halves the budget: the CPUs are
//     oversubscribed and spinning steals time from whoever would produce.
const (
	spinMin    = 2 * time.Microsecond
	spinInit   = 10 * time.Microsecond
	spinMax    = 50 * time.Microsecond
	preemptGap = 20 * time.Microsecond
)

var (
	spinners  atomic.Int32 // threads of this process spinning in a wait
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
// (got: its event came, rather than a timeout).
func nextSpin(budget, el time.Duration, got bool) time.Duration {
	switch {
	case got && el <= spinMax:
		budget = 2 * el
	case el > spinMax:
		budget /= 2
	}
	return min(max(budget, spinMin), spinMax)
}

// spinner is one wait's use of the IA's spin budget.
type spinner struct {
	budget *atomic.Int64 // the IA's, in nanoseconds
	start  time.Time
	b      time.Duration
	slept  bool
}

func newSpinner(budget *atomic.Int64) spinner {
	b := time.Duration(budget.Load())
	if b == 0 {
		b = spinInit
	}
	return spinner{budget: budget, start: time.Now(), b: b}
}

// spin calls ready until it reports true or the budget (capped at limit,
// when limit > 0) is spent; it reports whether ready did.
func (s *spinner) spin(limit time.Duration, ready func() bool) bool {
	if !spinEnter() {
		return false
	}
	defer spinLeave()
	b := s.b
	if limit > 0 && b > limit {
		b = limit
	}
	last := s.start
	for i := 1; ; i++ {
		if ready() {
			return true
		}
		if i&15 == 0 {
			now := time.Now()
			if now.Sub(last) > preemptGap {
				s.b = max(s.b/2, spinMin)
				s.budget.Store(int64(s.b))
				return false
			}
			last = now
			if now.Sub(s.start) >= b {
				return false
			}
		}
	}
}

// done records how the wait ended, adapting the budget when it slept.
func (s *spinner) done(got bool) {
	if s.slept {
		s.budget.Store(int64(nextSpin(s.b, time.Since(s.start), got)))
	}
}
