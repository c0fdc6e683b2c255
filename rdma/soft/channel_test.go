package soft

import (
	"math/rand/v2"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"godat/rdma"
)

func testChannel(t *testing.T) rdma.CompChannel {
	d := openDev(t, rdma.Params{"transport": "shm"}, nil)
	ch, err := d.CreateCompChannel()
	require.NoError(t, err)
	return ch
}

// A signal handler running on a thread asleep in Wait ends the sleep and
// is reported (DAT_INTERRUPTED_CALL); a Wake is not an interruption.
func TestWaitReportsEINTR(t *testing.T) {
	ch := testChannel(t)
	sig := make(chan os.Signal, 16)
	signal.Notify(sig, unix.SIGUSR1)
	defer signal.Stop(sig)

	tid := make(chan int)
	done := make(chan bool)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		done <- ch.Wait(ch.Seq(), 30*time.Second)
	}()
	id := <-tid
	deadline := time.After(testWait)
	for interrupted := false; !interrupted; {
		require.NoError(t, unix.Tgkill(os.Getpid(), id, unix.SIGUSR1))
		select {
		case interrupted = <-done:
			require.True(t, interrupted, "woken without a wake or a signal")
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatal("signals did not end the sleep")
		}
	}

	seq := ch.Seq()
	go func() { done <- ch.Wait(seq, 30*time.Second) }()
	time.Sleep(10 * time.Millisecond)
	ch.Wake()
	select {
	case interrupted := <-done:
		require.False(t, interrupted)
	case <-time.After(testWait):
		t.Fatal("a Wake did not end the sleep")
	}
}

// The Go runtime's preemption signal (SIGURG) reaching a sleeping thread is
// not the consumer's signal: the sleep goes on and reports nothing.
func TestWaitIgnoresPreemptSignal(t *testing.T) {
	ch := testChannel(t)
	tid := make(chan int)
	done := make(chan bool)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		done <- ch.Wait(ch.Seq(), 300*time.Millisecond)
	}()
	id := <-tid
	timeout := time.After(testWait)
	for {
		select {
		case interrupted := <-done:
			require.False(t, interrupted, "SIGURG reported as an interruption")
			return
		case <-time.After(5 * time.Millisecond):
			require.NoError(t, unix.Tgkill(os.Getpid(), id, unix.SIGURG))
		case <-timeout:
			t.Fatal("the sleep did not end at its timeout")
		}
	}
}

// Two threads hand a counter back and forth, each sleeping on its own
// channel with the Seq / check / Wait protocol and waking the other's
// after it moved the counter, at random moments. A lost wake-up leaves a
// waiter asleep for good (its wait has no bound), which the watchdog
// reports instead of hanging.
func TestWaitNoLostWakeup(t *testing.T) {
	chans := [2]rdma.CompChannel{testChannel(t), testChannel(t)}
	var turn atomic.Int64 // even: side 0 moves, odd: side 1
	const rounds = 3000
	var wg sync.WaitGroup
	var progress atomic.Int64
	for side := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(side), 7))
			me, other := chans[side], chans[1-side]
			for i := int64(side); i < 2*rounds; i += 2 {
				for turn.Load() != i {
					seq := me.Seq()
					if r.IntN(4) == 0 {
						runtime.Gosched()
					}
					if turn.Load() == i {
						break
					}
					me.Wait(seq, -1)
				}
				turn.Add(1)
				progress.Add(1)
				other.Wake()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	last := int64(-1)
	for {
		select {
		case <-done:
			return
		case <-time.After(testWait):
			if p := progress.Load(); p == last {
				chans[0].Wake()
				chans[1].Wake()
				<-done
				t.Fatalf("a waiter slept through a wake-up after %d moves", p)
			} else {
				last = p
			}
		}
	}
}

// The channel fd polls readable after an armed completion, and not after a
// Seq without one.
func TestChannelFd(t *testing.T) {
	ch := testChannel(t)
	fd := ch.Fd()
	require.GreaterOrEqual(t, fd, 0)
	ch.Seq()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	require.NoError(t, err)
	require.Zero(t, n, "readable without a notification")
	ch.Wake()
	n, err = unix.Poll(fds, int(testWait/time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	ch.Seq()
	n, err = unix.Poll(fds, 0)
	require.NoError(t, err)
	require.Zero(t, n, "still readable after Seq")
}

// A CQ may notify a channel of another device: an armed completion wakes
// a waiter on that channel.
func TestCQOnAnotherDevicesChannel(t *testing.T) {
	_, b := shmPair(t)
	other := openDev(t, rdma.Params{"transport": "shm"}, nil)
	ch, err := other.CreateCompChannel()
	require.NoError(t, err)
	cq, err := b.dev.CreateCQ(16, ch, 3)
	require.NoError(t, err)
	q := b.newQP(t, nil)
	require.NoError(t, q.Reconfigure(rdma.QPInitAttr{PD: b.pd, SendCQ: b.scq, RecvCQ: cq,
		Cap: rdma.QPCap{MaxSendWR: 8, MaxRecvWR: 8, MaxSendSGE: 1, MaxRecvSGE: 1}}))
	l, err := b.dev.Listen(b.cm, 0, true, 4, 5)
	require.NoError(t, err)
	defer l.Close()
	c := newEnd(t, rdma.Params{"transport": "shm"})
	require.NoError(t, c.qp.Connect(netip.AddrPortFrom(lo, 0), l.ServiceID(), nil, testWait))
	ev := b.event(t)
	require.NoError(t, ev.Request.Accept(q, nil))
	require.Equal(t, rdma.CMEstablished, c.event(t).Type)
	require.Equal(t, rdma.CMEstablished, b.event(t).Type)
	rb, rmr := b.buf(t, 8, allAccess)
	require.NoError(t, q.PostRecv(&rdma.RecvWR{WRID: 4, SGL: []rdma.SGE{sge(rb, rmr)}}))
	sb, smr := c.buf(t, 8, allAccess)
	var wc [1]rdma.WC
	seq := ch.Seq()
	require.NoError(t, cq.Arm(false))
	require.Zero(t, cq.Poll(wc[:]))
	require.NoError(t, c.qp.PostSend(&rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{sge(sb, smr)}}))
	deadline := time.Now().Add(testWait)
	for ch.Seq() == seq {
		require.True(t, time.Now().Before(deadline), "no notification on the other device's channel")
		ch.Wait(seq, time.Until(deadline))
	}
	require.Equal(t, 1, cq.Poll(wc[:]))
	require.Equal(t, uint64(4), wc[0].WRID)
	require.ErrorIs(t, ch.Destroy(), rdma.ErrBusy)
}

// epollSleep, with epoll_pwait2 and with the millisecond fallback it takes
// where the kernel lacks the call or a seccomp filter refuses it: it
// returns for a readiness there before it slept or while it sleeps, and
// after its timeout with none.
func TestEpollSleep(t *testing.T) {
	old := noEpollPwait2.Load()
	t.Cleanup(func() { noEpollPwait2.Store(old) })
	for _, fallback := range []bool{false, true} {
		noEpollPwait2.Store(fallback)
		ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		require.NoError(t, err)
		e, err := newEventfd()
		require.NoError(t, err)
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(e)}
		require.NoError(t, unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, int(e), &ev))

		e.signal()
		require.False(t, epollSleep(ep, -1), "fallback %v: a readiness before the sleep", fallback)
		e.clear()
		start := time.Now()
		require.False(t, epollSleep(ep, 3*time.Millisecond))
		require.GreaterOrEqual(t, time.Since(start), 3*time.Millisecond, "fallback %v: the timeout", fallback)
		done := make(chan struct{})
		go func() {
			epollSleep(ep, -1)
			close(done)
		}()
		time.Sleep(5 * time.Millisecond)
		e.signal()
		select {
		case <-done:
		case <-time.After(testWait):
			t.Fatalf("fallback %v: a readiness during the sleep did not end it", fallback)
		}
		unix.Close(ep)
		e.close()
	}
}
