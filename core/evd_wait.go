package core

import "time"

// Wait removes the first event once threshold events are queued, or fails
// with DAT_TIMEOUT_EXPIRED after timeout (negative: no bound), or with
// DAT_INTERRUPTED_CALL when a signal handler runs on the sleeping thread.
// It returns the number of events left on the queue in all three cases
// (dat_evd_wait).
func (e *EVD) Wait(timeout time.Duration, threshold int, out *Event) (int, error) {
	e.mu.Lock()
	switch {
	case e.dead:
		e.mu.Unlock()
		return 0, ErrHandle(SubNone)
	case threshold <= 0 || threshold > e.qlen:
		e.mu.Unlock()
		return 0, ErrArg(ArgThreshold)
	case !e.waitable:
		e.mu.Unlock()
		return 0, ErrState(SubStateEVDUnwaitable)
	case e.waiting:
		e.mu.Unlock()
		return 0, ErrState(SubStateEVDWaiter)
	case threshold > 1 && e.notifyCtl > 0:
		e.mu.Unlock()
		return 0, ErrState(SubStateEVDConfigNotify)
	}
	e.waiting = true
	e.blocked.Store(true)
	e.bumpQuiet()
	e.mu.Unlock()

	n, err := e.waitLoop(timeout, threshold, out)

	e.mu.Lock()
	e.waiting = false
	e.blocked.Store(e.dead)
	e.mu.Unlock()
	return n, err
}

func (e *EVD) ready(threshold int) bool {
	if threshold == 1 {
		// Only notification events wake a waiter (solicited wait and
		// unsignalled completions stay queued until one arrives).
		return e.notifies > 0
	}
	return e.count >= threshold
}

// waitResult is what one look at the EVD found.
type waitResult uint8

const (
	waitNotYet waitResult = iota
	waitGot
	waitAbort
	waitUnwaitable
)

// look pumps the CQ and takes the first event if the EVD is ready; n is the
// number of events then left.
func (e *EVD) look(threshold int, out *Event) (r waitResult, n int) {
	max := 1
	if threshold > 1 {
		max = -1 // the threshold counts every completion
	}
	e.pump(max)
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.dead:
		return waitAbort, 0
	case !e.waitable:
		return waitUnwaitable, 0
	case e.ready(threshold):
		e.popLocked(out)
		return waitGot, e.count
	}
	return waitNotYet, e.count
}

func (e *EVD) waitLoop(timeout time.Duration, threshold int, out *Event) (int, error) {
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	ia := e.ia
	sp := newSpinner(&ia.spinBudget)
	var r waitResult
	var n int
	if timeout != 0 {
		sp.spin(timeout, func() bool {
			r, n = e.look(threshold, out)
			return r != waitNotYet || ia.closed.Load()
		})
	}
	armed := false
	for {
		seq := ia.comp.Seq()
		if r == waitNotYet {
			r, n = e.look(threshold, out)
		}
		switch r {
		case waitGot:
			sp.done(true)
			return n, nil
		case waitAbort:
			return 0, E(KindAbort, SubNone)
		case waitUnwaitable:
			return 0, ErrState(SubStateEVDUnwaitable)
		}
		if ia.closed.Load() {
			return n, E(KindAbort, SubNone)
		}
		var left time.Duration = -1
		if timeout == 0 {
			return n, ErrTimeout
		}
		if timeout > 0 {
			if left = time.Until(deadline); left <= 0 {
				sp.done(false)
				return n, ErrTimeout
			}
		}
		if !armed && e.cq != nil {
			// Arm, then look once more: a completion that came before
			// the arm does not notify.
			e.arm()
			armed = true
			if r, n = e.look(threshold, out); r != waitNotYet {
				continue
			}
		}
		sp.slept = true
		if ia.sleep(seq, left) {
			return n, ErrInterrupted
		}
		// A notification disarms the CQ; anything else may have woken
		// us with the arm still pending, and arming again is harmless.
		armed = false
		r = waitNotYet
	}
}
