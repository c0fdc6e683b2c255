package cabi

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

const ms = uint64(1e6)

// A thread whose calls keep coming yields once every yieldEvery, the first
// time at its first call a full yieldEvery after its first call.
func TestTickYieldsWhileCallsKeepComing(t *testing.T) {
	var s tickState
	start := uint64(1000) * ms
	var yields []uint64
	for now := start; now <= start+4*yieldEvery; now += ms / 2 {
		if s.at(now) {
			yields = append(yields, now-start)
		}
	}
	assert.Equal(t, []uint64{yieldEvery, 2 * yieldEvery, 3 * yieldEvery, 4 * yieldEvery}, yields)
}

// A thread that calls now and then never yields: a call after a gap of
// yieldEvery or more only starts the count again.
func TestTickNoYieldAfterGap(t *testing.T) {
	var s tickState
	now := uint64(1000) * ms
	for i := 0; i < 20; i++ {
		assert.False(t, s.at(now), "call %d after a gap", i)
		now += yieldEvery + ms
	}
	// A burst that starts after a gap yields only once it has lasted
	// yieldEvery.
	start := now
	assert.False(t, s.at(start))
	for now = start + ms; now < start+yieldEvery; now += ms {
		assert.False(t, s.at(now), "at %d ms of the burst", (now-start)/ms)
	}
	assert.True(t, s.at(start+yieldEvery))
}

// The coarse clock may stand still for several milliseconds: calls at one
// instant count as one.
func TestTickCoarseClock(t *testing.T) {
	var s tickState
	now := uint64(1000) * ms
	n := 0
	for step := 0; step < 5; step++ {
		for i := 0; i < 1000; i++ {
			if s.at(now) {
				n++
			}
		}
		now += 4 * ms // HZ=250
	}
	// Calls at 0, 4, 8, 12, 16 ms: the one at 8 ms is the first a full
	// yieldEvery after the start; the next is due at 13 ms, taken at 16.
	assert.Equal(t, 2, n)
}

// On a thread whose calls keep coming a yield comes due, and waits there
// until a call that found nothing takes it.
func TestTickDueWaitsForIdleCall(t *testing.T) {
	runtime.LockOSThread() // the state is the thread's
	defer runtime.UnlockOSThread()
	tickIdle() // whatever an earlier test left
	callUntil(t, tickDue, "due")
	tickCalls(1000)
	assert.True(t, tickDue(), "calls that did something do not take the yield")
	tickIdle()
	assert.False(t, tickDue(), "the idle call took the yield")
}

// A thread whose calls come well apart never has a yield due. Apart as
// the coarse clock reads them: that clock moves in steps of a scheduler
// tick (4 ms at HZ=250) and, in a VM, stands still at times: on these
// machines two calls 6 ms apart read 0 ms apart now and then, and 61 of
// 1500 calls 6 ms apart had a yield due (the clean-clone CI failed on it
// once); calls 14 ms apart (2 yieldEvery and a step) read 8 ms apart at
// the least, and none of 1500 did.
func TestTickSparseCallsNeverDue(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var res unix.Timespec
	require.NoError(t, unix.ClockGetres(unix.CLOCK_MONOTONIC_COARSE, &res))
	gap := 2*time.Duration(yieldEvery) + time.Duration(res.Nano())
	tickIdle()
	time.Sleep(gap) // an earlier test's calls on this thread are a gap ago
	for i := 0; i < 8; i++ {
		tickCalls(tickSample)
		assert.False(t, tickDue(), "after sample %d (calls %v apart)", i, gap)
		time.Sleep(gap)
	}
}

// A yield comes due as at says; a sample that reads a later time finds it
// overdue (a sample at the same coarse instant does not); a yield taken
// starts again; a call after a gap drops a yield still due.
func TestTickOverdue(t *testing.T) {
	var s tickState
	start := uint64(1000) * ms
	now := start
	for ; s.note(now) == 0; now += ms / 2 {
		require.Less(t, now, start+2*yieldEvery, "no yield due")
	}
	assert.Equal(t, start+yieldEvery, now, "due when at says")
	assert.Equal(t, 1, s.note(now), "the same instant: not overdue yet")
	now += ms / 2
	assert.Equal(t, 2, s.note(now), "a later sample: overdue")
	assert.Equal(t, 2, s.note(now+ms), "overdue until taken")

	s.due = 0 // taken
	for now += ms / 2; now < start+2*yieldEvery; now += ms / 2 {
		assert.Equal(t, 0, s.note(now), "at %d ms", (now-start)/ms)
	}
	assert.Equal(t, 1, s.note(now), "due again a yieldEvery after it came due")

	now += yieldEvery + ms // a gap
	assert.Equal(t, 0, s.note(now), "a gap drops the yield")
}

// A yield that is only due waits for a call that found nothing; once
// overdue, a dequeue that returns an event takes it too.
func TestTickOverdueTakenByEvent(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tickIdle()
	callUntil(t, tickDue, "due")
	if !tickOverdue() {
		tickEvent()
		assert.True(t, tickDue(), "an event call leaves a yield that is only due")
	}
	callUntil(t, tickOverdue, "overdue")
	tickCalls(1000)
	assert.True(t, tickOverdue(), "calls (posts) do not take it")
	tickEvent()
	assert.False(t, tickDue(), "the event call took the overdue yield")
}

// callUntil makes calls on this thread until cond holds, for 2 s at most.
func callUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !cond() && time.Now().Before(deadline) {
		tickCalls(1000)
	}
	require.True(t, cond(), "no yield %s after 2 s of calls", what)
}
