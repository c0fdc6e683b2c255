package soft

// A consumer asleep in CompChannel.Wait serves its device's TCP loop
// itself (the way a libfabric tcp endpoint's wait set holds its sockets):
// it sleeps on an epoll set that holds the loop's set, wakes when a
// connection becomes readable, reads and completes what came, and looks at
// the bell word again. With the loop goroutine in between instead, every
// message woke two threads (the runtime's poller thread, then the waiter
// on the futex), and in a process whose runtime has one P (GOMAXPROCS 1: a
// process pinned to one CPU before it starts, as mpirun --bind-to core
// does) the goroutine could not run at all while the waiter slept in its
// system call holding that P, until the runtime's monitor took the P back
// some tens of microseconds later.
//
// One waiter per loop serves (sleeper); others of the same device sleep on
// the bell as before and are woken by the completions it makes (and serve
// what they find when they poll). Only a device without shared-memory
// connections is served this way: a peer on this host wakes a sleeper
// through the futex word of the bell, which an epoll set cannot hear. A
// local notification (ringSelf) writes the sleeper's own eventfd while a
// sleeper is there (wakeSleeper), which the sleep hears; a device that
// gains a shared-memory connection does the same, so the sleeper goes back
// to the futex.
//
// The goroutine stands aside while a waiter serves (polled), with looks
// further and further apart (asideMax) so that a process blocked in a long
// Wait stays idle; once they are apart, the waiter pokes it when it leaves
// (aside), so that an application that stops calling the library after its
// Wait has its connections served again within standDown.
//
// sleepEp holds the loop's set for the loop's life, level-triggered: while
// nobody sleeps on it, an arrival finds the entry already on its ready list
// and costs nothing more.

import (
	"time"

	"golang.org/x/sys/unix"
)

// asideMax bounds how long the goroutine stands aside for a sleeping
// waiter before it looks again (a safety net: the waiter pokes it).
const asideMax = 128 * time.Millisecond

// claimSleeper makes the calling Wait the loop's sleeper; false if another
// one is, or the loop is stopping.
func (l *tcpLoop) claimSleeper() bool {
	if l.nconns.Load() == 0 || !l.sleeper.CompareAndSwap(false, true) {
		return false
	}
	// stopped is set under l.mu before the goroutine waits for the sleeper
	// to leave (waitSleeperGone): seen false here, the descriptors stay
	// until releaseSleeper.
	l.mu.Lock()
	ok := !l.stopped
	l.mu.Unlock()
	if !ok {
		l.sleeper.Store(false)
	}
	return ok
}

// releaseSleeper ends the claim. others: threads still sleep on the bell of
// the device, whom the goroutine serves from now on; otherwise the consumer
// is about to poll, and the goroutine stands down as after a Poll.
func (l *tcpLoop) releaseSleeper(others bool) {
	if others {
		l.lastPoll.Store(0)
	} else {
		l.lastPoll.Store(monoNow())
	}
	l.sleeper.Store(false)
	if others {
		l.kick()
	} else {
		l.pokeIfAside()
	}
}

// pokeIfAside pokes the goroutine if it stands aside for long (it stores
// aside before it looks at sleeper again; the sleeper clears sleeper
// before it looks at aside: one of them sees the other).
func (l *tcpLoop) pokeIfAside() {
	if l.aside.Load() {
		l.nudge()
	}
}

// serveAwake serves what woke the sleeper, until nothing is left or the
// bell word moves off seq (a completion it made notified a channel). The
// consumer is about to have control back and most likely replies, so
// verdicts wait for a frame to ride on, as in a Poll (payOwedLater).
func (l *tcpLoop) serveAwake(dev *device, seq uint32) {
	l.turn.Lock()
	defer l.turn.Unlock()
	if l.closed {
		return
	}
	l.awakes++
	l.lazy = true
	for l.serve(1) {
		if dev.bell.ld32(bellOffSeq) != seq {
			l.signal() // what is left wakes the next sleep, or the goroutine
			break
		}
	}
	l.lazy = false
	l.payOwedLater()
}

// payAll writes every verdict owed: while the sleeper sleeps, nobody else
// would.
func (l *tcpLoop) payAll() {
	l.turn.Lock()
	defer l.turn.Unlock()
	if !l.closed && len(l.owed) > 0 {
		l.payOwed(true)
	}
}

// sleepServing is one sleep of the sleeper: at most d (d < 0: no bound),
// until a connection is readable, work is left in the loop's queue, the
// loop's wake eventfd is written (sleepEp holds the loop's set, which
// reports all three) or wakeSleeper writes the sleeper's own; then it
// serves what is there. What was ready before it slept
// ends the sleep at once. Like sleepOnBell it counts itself a sleeper of
// the bell before its last look at the word, so that a ringSelf sees it.
// It reports EINTR.
func (l *tcpLoop) sleepServing(dev *device, seq uint32, d time.Duration) bool {
	l.payAll()
	l.handWrites() // a sleeper does not write: the writer goroutines do
	m := dev.bell
	m.add32(bellOffSleepers, 1)
	local.sleepers.Add(1)
	drainLocalWatched() // as sleepOnBell: other devices of the process may have watched rings
	intr := false
	if m.ld32(bellOffSeq) == seq && !dev.in.ready(m) && !localReady() && dev.shm.conns.Load() == 0 && !l.isStopped() {
		intr = epollSleep(l.sleepEp, d)
		// What woke it is looked at from here on (the caller's checks, the
		// serving below): a wakeSleeper after this clear stays for the
		// next sleep.
		l.sleepWake.clear()
	}
	local.sleepers.Add(-1)
	m.add32(bellOffSleepers, -1)
	if !intr {
		l.serveAwake(dev, seq)
	}
	return intr
}

// wakeSleeper makes the sleeper's epoll sleep end, so that it looks at the
// bell word and the device again (a local notification, a shared-memory
// connection that the epoll set cannot hear, a second waiter, the loop
// stopping). It writes the sleeper's own eventfd: the loop's wake eventfd
// is cleared by whoever serves next, and a consumer's Poll that did so
// before the sleeper looked left it asleep with its notification taken
// (it woke, found nothing reported and slept on: epoll_wait does not
// return without an event).
func (l *tcpLoop) wakeSleeper() {
	if l.sleeper.Load() {
		l.mu.Lock()
		if !l.fdsGone {
			l.sleepWake.signal()
		}
		l.mu.Unlock()
	}
}

// newSleepSet creates the sleeper's epoll set: the loop's set and the
// sleeper's own eventfd, both level-triggered.
func newSleepSet(epfd int) (int, eventfd, error) {
	sep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return -1, -1, err
	}
	sw, err := newEventfd()
	if err != nil {
		unix.Close(sep)
		return -1, -1, err
	}
	for _, fd := range []int{epfd, int(sw)} {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
		if err := unix.EpollCtl(sep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
			unix.Close(sep)
			sw.close()
			return -1, -1, err
		}
	}
	return sep, sw, nil
}

// waitSleeperGone waits, in the goroutine stopping the loop, for the
// sleeper to leave (stop's kick woke it, and it sees stopped) before the
// descriptors it sleeps on close.
func (l *tcpLoop) waitSleeperGone() {
	for l.sleeper.Load() {
		time.Sleep(20 * time.Microsecond)
	}
}

// tcpServed is the loop a Wait on the device serves while it sleeps, nil
// when the device has shared-memory connections or no TCP ones; the caller
// then holds the claim (releaseSleeper).
func (d *device) tcpServed() *tcpLoop {
	l := d.tcp.live.Load()
	if l == nil || d.shm.conns.Load() > 0 || !l.claimSleeper() {
		return nil
	}
	return l
}

// wakeTCPSleeper ends the epoll sleep of a Wait that serves the device's
// TCP loop.
func (d *device) wakeTCPSleeper() {
	if l := d.tcp.live.Load(); l != nil {
		l.wakeSleeper()
	}
}
