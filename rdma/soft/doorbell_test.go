package soft

import (
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"godat/rdma"
)

// A signal handler running on a thread asleep in the doorbell ends the
// sleep and is reported, so DAT waits can return DAT_INTERRUPTED_CALL; a
// ring is not an interruption.
func TestDoorbellWaitIntr(t *testing.T) {
	d, err := Open(map[string]string{"transport": "shm"})
	require.NoError(t, err)
	defer d.Close()
	db, ok := d.Doorbell().(rdma.InterruptibleDoorbell)
	require.True(t, ok)

	sig := make(chan os.Signal, 16)
	signal.Notify(sig, unix.SIGUSR1)
	defer signal.Stop(sig)

	tid := make(chan int)
	done := make(chan bool)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		done <- db.WaitIntr(db.Seq(), 10*time.Second)
	}()
	id := <-tid
	deadline := time.After(5 * time.Second)
	for interrupted := false; !interrupted; {
		require.NoError(t, unix.Tgkill(os.Getpid(), id, unix.SIGUSR1))
		select {
		case interrupted = <-done:
			require.True(t, interrupted, "woken without a ring or a signal")
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatal("signals did not end the sleep")
		}
	}

	seq := db.Seq()
	go func() { done <- db.WaitIntr(seq, 10*time.Second) }()
	time.Sleep(10 * time.Millisecond)
	db.Ring()
	select {
	case interrupted := <-done:
		require.False(t, interrupted)
	case <-time.After(5 * time.Second):
		t.Fatal("a ring did not end the sleep")
	}
}

// The Go runtime's preemption signal (SIGURG) reaching a sleeping thread is
// not the consumer's signal: the sleep goes on and reports no interruption.
func TestDoorbellWaitIgnoresPreemptSignal(t *testing.T) {
	d, err := Open(map[string]string{"transport": "shm"})
	require.NoError(t, err)
	defer d.Close()
	db := d.Doorbell().(rdma.InterruptibleDoorbell)

	tid := make(chan int)
	done := make(chan bool)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		done <- db.WaitIntr(db.Seq(), 300*time.Millisecond)
	}()
	id := <-tid
	for {
		select {
		case interrupted := <-done:
			require.False(t, interrupted, "SIGURG reported as an interruption")
			return
		case <-time.After(5 * time.Millisecond):
			require.NoError(t, unix.Tgkill(os.Getpid(), id, unix.SIGURG))
		case <-time.After(10 * time.Second):
			t.Fatal("the sleep did not end at its timeout")
		}
	}
}

func TestNextSpin(t *testing.T) {
	for _, c := range []struct {
		name       string
		budget, el time.Duration
		rung       bool
		want       time.Duration
	}{
		{"rung soon after sleeping: spin that long next time", 10 * time.Microsecond, 7 * time.Microsecond, true, 14 * time.Microsecond},
		{"rung just within spinMax: capped", 10 * time.Microsecond, spinMax, true, spinMax},
		{"rung very soon: at least spinMin", 10 * time.Microsecond, 100 * time.Nanosecond, true, spinMin},
		{"rung after a long time: halve", 10 * time.Microsecond, time.Millisecond, true, 5 * time.Microsecond},
		{"long idle keeps halving down to spinMin", spinMin, time.Second, true, spinMin},
		{"short timeout: no information, keep", 10 * time.Microsecond, 5 * time.Microsecond, false, 10 * time.Microsecond},
		{"long timeout: halve", 40 * time.Microsecond, time.Millisecond, false, 20 * time.Microsecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, nextSpin(c.budget, c.el, c.rung))
		})
	}
}

// withSpinLimit runs f with at most limit spinners and a clean peak.
func withSpinLimit(t *testing.T, limit int32, f func()) {
	old := spinLimit.Load()
	spinLimit.Store(limit)
	spinPeak.Store(0)
	defer spinLimit.Store(old)
	f()
}

// Waiters that ring each other at random moments: before the waiter reads
// the count, while it spins, and after it went to sleep. A lost wake-up
// leaves a waiter asleep for good (its wait has no bound), which the test
// reports instead of hanging.
func TestDoorbellNoLostWakeup(t *testing.T) {
	for _, limit := range []int32{0, 1, 4} {
		t.Run(map[int32]string{0: "sleep only", 1: "one spinner", 4: "many spinners"}[limit], func(t *testing.T) {
			withSpinLimit(t, limit, func() {
				a, b := newEnd(t, 1).dev.Doorbell(), newEnd(t, 1).dev.Doorbell()
				const rounds = 3000
				var wg sync.WaitGroup
				wg.Add(2)
				// b bounces every ring of a back, after a random delay.
				sb := b.Seq()
				go func() {
					defer wg.Done()
					s := sb
					for i := 0; i < rounds; i++ {
						for b.Seq() == s {
							b.Wait(s, -1)
						}
						s = b.Seq()
						jitter(i)
						a.Ring()
					}
				}()
				go func() {
					defer wg.Done()
					s := a.Seq()
					for i := 0; i < rounds; i++ {
						jitter(i + 1)
						b.Ring()
						for a.Seq() == s {
							a.Wait(s, -1)
						}
						s = a.Seq()
					}
				}()
				done := make(chan struct{})
				go func() { wg.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(4 * testWait):
					t.Fatal("lost wake-up: a waiter never woke")
				}
				require.LessOrEqual(t, spinPeak.Load(), limit)
			})
		})
	}
}

// jitter spends a varied amount of time: none, a yield, a short busy loop
// (likely caught while the other side spins) or a sleep (likely after it
// went to sleep).
func jitter(i int) {
	switch rand.IntN(8) {
	case 0, 1:
	case 2, 3:
		runtime.Gosched()
	case 4, 5, 6:
		for n := rand.IntN(2000); n > 0; n-- {
			_ = i * n
		}
	case 7:
		time.Sleep(time.Duration(rand.IntN(100)) * time.Microsecond)
	}
}

// The spinner limit holds at every instant, whatever the number of waiters.
func TestSpinLimit(t *testing.T) {
	for _, limit := range []int32{0, 1, 2} {
		withSpinLimit(t, limit, func() {
			dbs := make([]*doorbell, 6)
			for i := range dbs {
				dbs[i] = newEnd(t, 1).dev.Doorbell().(*doorbell)
				dbs[i].spin.Store(int64(spinMax))
			}
			var wg sync.WaitGroup
			for _, db := range dbs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := 0; k < 50; k++ {
						s := db.Seq()
						db.Wait(s, 200*time.Microsecond)
					}
				}()
			}
			wg.Wait()
			require.LessOrEqual(t, spinPeak.Load(), limit, "spin limit %d", limit)
			require.Zero(t, spinners.Load())
		})
	}
}

// A wait that sleeps and is rung soon grows the budget; waits that time out
// after a long time shrink it to spinMin.
func TestSpinBudgetAdapts(t *testing.T) {
	withSpinLimit(t, 0, func() { // no spinning: every wait sleeps
		db := newEnd(t, 1).dev.Doorbell().(*doorbell)
		for i := 0; i < 12; i++ {
			db.Wait(db.Seq(), 2*time.Millisecond)
		}
		require.Equal(t, int64(spinMin), db.spin.Load())
	})
}

func TestDefaultSpinLimit(t *testing.T) {
	n := min(runtime.GOMAXPROCS(0), runtime.NumCPU())
	require.Equal(t, int32(n-1), defaultSpinLimit())
}
