package soft

import (
	"os"
	"os/signal"
	"runtime"
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
