package soft

// The TCP receive loop: every established connection of a device is read
// in the order the kernel reports them readable (an edge-triggered epoll
// set, whose ready list is kept in the order data arrived), one frame per
// turn. So frames of several connections complete in about the order they
// arrived: a connection with several frames buffered goes to the back of
// the queue after each, behind those that became readable meanwhile. This
// is what makes the completions of a CQ shared by many TCP connections
// come in arrival order across them (the shared-memory wire has its
// inbound queue for that).
//
// Who serves. The queue, the epoll set's events and the connections'
// reader state belong to whoever holds the turn lock (tcpLoop.turn), and
// two parties take it:
//   - the consumer's own calls: every Poll of a CQ of the device TryLocks
//     it and serves what is ready (one epoll_wait with timeout 0 for all
//     the connections, then non-blocking reads; on a device with one
//     connection, a non-blocking read of it straight away, see lone), so a
//     polling application sees its data as soon as the kernel has it,
//     without waiting for the Go scheduler; a Poll that loses the TryLock
//     leaves the work to the winner;
//   - a consumer asleep in Wait on a device without shared-memory
//     connections: it sleeps on the set itself and serves what wakes it
//     (tcp_wait.go), so that no other thread stands between an arrival
//     and the waiter;
//   - the device's loop goroutine, for when nobody polls: a consumer asleep
//     in Wait on another device, or an RDMA-write target that never calls
//     the library. It
//     sleeps in Go's netpoller on a second epoll set that holds the first
//     one-shot: it hears at most one readiness per sleep, and while a
//     consumer has polled within standDown it does not re-arm (it sleeps
//     on a timer instead), so a polling application's messages wake no
//     thread of ours. A Wait (channel.go) hands the work back at once.
// Whoever serves, the lock makes one reader per connection at a time; a
// frame is read by the turn that started it or, when its payload is not
// all there yet, by a later turn holder (or the helper it handed the
// payload to), the reader's state being the connection's; so the order
// rules below hold whoever serves.
//
// A frame whose payload is not in memory yet and is large (directMin or
// more) waits, its header read, until the socket holds all of it, and a
// later turn reads it into place (tcp_whole.go); one the socket cannot
// hold whole is handed to a goroutine that reads it straight into place
// with blocking reads, and the connection rejoins the queue when it is
// done; a
// connection whose message waits for an SRQ receive leaves the queue until
// the SRQ's next post resumes it. No goroutine of ours blocks in
// epoll_wait: a thread blocked there would hold its scheduler slot until
// the runtime took it back, stalling the consumer's goroutines that poll.
// (A consumer's thread asleep in Wait does, as it would in its futex
// sleep: it has nothing else to run meanwhile.)

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Results of one turn of a connection.
const (
	stepIdle   = iota // nothing more until the socket is readable again
	stepMore          // another turn may find more (buffered, or unread)
	stepParked        // out of the queue until resumed (an SRQ receive)
	stepDone          // the connection ended
	stepGap           // a SEND waits for earlier stamps (tcp_order.go)
	stepHelper        // parked: the helper goroutine reads a large payload
)

const (
	// standDown is how long after a consumer's Poll the loop goroutine
	// leaves the serving to the consumer; it then looks again at most this
	// often (a timer, not the socket).
	standDown = time.Millisecond
	// consumerPasses bounds the passes over the queue one Poll makes; what
	// is left goes to the next Poll, or to the goroutine.
	consumerPasses = 4
	// A consumer's Polls that found nothing for quietAfter look at the
	// sockets every quietGap only (the first arrival after a quiet spell
	// waits that much more).
	quietAfter = 100 * time.Microsecond
	quietGap   = 5 * time.Microsecond
	// drainedGap: after a Poll that served data and left nothing, the
	// next Poll does not look, and none looks sooner than this
	// (progress).
	drainedGap = time.Microsecond
)

// monoBase anchors monoNow.
var monoBase = time.Now()

// monoNow is a monotonic clock in ns, never 0.
func monoNow() int64 { return int64(time.Since(monoBase)) + 1 }

type tcpLoop struct {
	epfd      int             // the connections and wake (edge-triggered)
	outer     int             // holds epfd one-shot; the goroutine sleeps on it
	sleepEp   int             // holds epfd and sleepWake; a waiter sleeps on it (tcp_wait.go)
	sleepWake eventfd         // in sleepEp: the sleeper must look again (only it clears it)
	ep        *os.File        // outer, registered with the netpoller
	rc        syscall.RawConn // waits for outer to be readable
	wake      eventfd         // in epfd: control requests, work left over
	poke      chan struct{}   // ends the goroutine's stand-down early

	lastPoll  atomic.Int64 // monoNow of the last consumer Poll; 0: none waits
	quietNext atomic.Int64 // monoNow before which a Poll does not look
	skipNext  atomic.Bool  // the next Poll does not look (one served data and drained the sockets)
	nconns    atomic.Int32
	lone      atomic.Pointer[tcpWire] // the only connection; nil unless there is exactly one (kept under mu)
	asleep    atomic.Bool             // the goroutine sleeps (or is about to) on the epoll set
	sleeper   atomic.Bool             // a Wait serves the loop (tcp_wait.go): the goroutine stands aside
	aside     atomic.Bool             // the goroutine stands aside for longer than standDown: poke it
	owing     atomic.Bool             // owed is not empty (kept by the turn holder)

	turn      sync.Mutex          // the right to serve (see above); above qp.mu
	run       []*tcpWire          // the queue of connections to give a turn
	evs       [64]unix.EpollEvent // the last epoll_wait's
	nev       int
	closed    bool       // the descriptors are gone
	lazy      bool       // a consumer's Poll serves: verdicts may wait
	polling   bool       // a consumer's Poll serves (not a waiter): see collect
	found     bool       // the last epoll_wait (or lone read) of a Poll's serve found something
	reads     uint64     // the turn holders' reads that got data
	loneReads uint64     // reads when a Poll's collect queued the lone connection
	loneLook  bool       // this pass's collect did (serve turns reads into found)
	looks     int        // Polls that looked at the sockets (for tests)
	asks      int        // epoll_waits on the set by the turn holders (for tests)
	awakes    int        // sleeps of a waiter that ended in serving (for tests)
	quietFrom int64      // monoNow since which Polls found nothing; 0: they did
	owed      []*tcpWire // connections with verdicts deferred

	// Writes the consumer's Polls carry on (tcp_pollwrite.go).
	wpay    sync.Mutex   // the right to pay the list; taken holding nothing, above qp.mu
	wpaying []*tcpWire   // the list being paid (wpay held)
	paid    int          // turns the Polls wrote (wpay held; for tests)
	wq      []*tcpWire   // connections whose right to write the polls hold (under mu)
	wqn     atomic.Int32 // len(wq)
	oev     [1]unix.EpollEvent

	mu      sync.Mutex // leaf: adds and resumes from other goroutines
	conns   map[int32]*tcpWire
	resumed []*tcpWire
	stopped bool
	fdsGone bool
	gone    chan struct{}
}

// startLoop creates the device's loop on first use.
func (t *tcpDev) startLoop() (*tcpLoop, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.loop != nil {
		return t.loop, nil
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	outer, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	wk, err := newEventfd()
	if err != nil {
		unix.Close(epfd)
		unix.Close(outer)
		return nil, err
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wk)}
	sleepEp, sleepWake := -1, eventfd(-1)
	err = unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, int(wk), &ev)
	if err == nil {
		sleepEp, sleepWake, err = newSleepSet(epfd)
	}
	if err != nil {
		unix.Close(epfd)
		unix.Close(outer)
		wk.close()
		return nil, err
	}
	_ = unix.SetNonblock(outer, true) // so that os.NewFile registers it with the netpoller
	ep := os.NewFile(uintptr(outer), "godat-tcp-loop")
	rc, err := ep.SyscallConn()
	if err != nil {
		ep.Close()
		unix.Close(epfd)
		unix.Close(sleepEp)
		sleepWake.close()
		wk.close()
		return nil, err
	}
	l := &tcpLoop{epfd: epfd, outer: outer, sleepEp: sleepEp, sleepWake: sleepWake, ep: ep, rc: rc, wake: wk, poke: make(chan struct{}, 1),
		conns: map[int32]*tcpWire{}, gone: make(chan struct{})}
	t.loop = l
	t.live.Store(l)
	go l.loop()
	return l, nil
}

// kick makes the loop look: the goroutine wakes (from its sleep on the
// epoll set, or from a stand-down), and so does a consumer's next Poll.
func (l *tcpLoop) kick() {
	l.signal()
	l.nudge()
}

// nudge ends the goroutine's stand-down (a poke left unread ends the next).
func (l *tcpLoop) nudge() {
	select {
	case l.poke <- struct{}{}:
	default:
	}
}

// signal makes the epoll set readable, unless its descriptors are gone.
func (l *tcpLoop) signal() {
	l.mu.Lock()
	if !l.fdsGone {
		l.wake.signal()
	}
	l.mu.Unlock()
}

// idle says the consumer stops polling (it is about to sleep in Wait):
// the goroutine serves from now on.
func (l *tcpLoop) idle() {
	if l.lastPoll.Load() == 0 || l.sleeper.Load() {
		return // the goroutine serves already, or the waiter does
	}
	l.lastPoll.Store(0)
	l.nudge()
}

// tcpIdle hands the TCP connections of every device of the process to
// their loop goroutines: a thread is about to sleep in Wait.
func tcpIdle() {
	eachLocal(func(d *device) {
		if l := d.tcp.live.Load(); l != nil {
			l.idle()
		}
	})
}

// stop ends the loop and waits for it.
func (l *tcpLoop) stop() {
	l.mu.Lock()
	l.stopped = true
	l.mu.Unlock()
	l.kick()
	l.wakeSleeper() // it leaves, and the goroutine waits for that
	<-l.gone
}

// add hands an established connection to the loop; its reader may hold
// frames already (read with the handshake).
func (l *tcpLoop) add(w *tcpWire) bool {
	// Held while the descriptor joins the set: a socket closed meanwhile
	// must not have its number, reused, added.
	if !w.sock.acquire() {
		return false
	}
	defer w.sock.release()
	fd := w.sock.fd
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return false
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(fd)}
	if unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev) != nil {
		return false
	}
	w.loopFd = int32(fd)
	l.conns[int32(fd)] = w
	l.nconns.Add(1)
	l.setLoneLocked()
	l.resumed = append(l.resumed, w) // a first turn: the handshake may have read ahead
	l.wake.signal()
	return true
}

// resume puts a parked connection back in the queue.
func (l *tcpLoop) resume(w *tcpWire) {
	l.mu.Lock()
	if !l.stopped {
		l.resumed = append(l.resumed, w)
	}
	l.mu.Unlock()
	l.kick()
}

// forget takes a connection out of the loop (it ended, or its socket is
// about to close); any goroutine.
func (l *tcpLoop) forget(w *tcpWire) {
	l.mu.Lock()
	if l.conns[w.loopFd] == w {
		delete(l.conns, w.loopFd)
		l.nconns.Add(-1)
		l.setLoneLocked()
		_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, int(w.loopFd), nil)
	}
	l.mu.Unlock()
}

// setLoneLocked keeps lone: the connection when there is one only (l.mu
// held).
func (l *tcpLoop) setLoneLocked() {
	var one *tcpWire
	if len(l.conns) == 1 {
		for _, w := range l.conns {
			one = w
		}
	}
	l.lone.Store(one)
}

// progress is a consumer's share of the work, from Poll: it serves what is
// ready unless another thread is serving. Work it leaves (a bounded number
// of passes) is announced, so that a consumer that stops polling leaves
// none behind for nobody.
func (l *tcpLoop) progress() {
	if l.nconns.Load() == 0 {
		return
	}
	now := monoNow()
	l.lastPoll.Store(now)
	if l.wqn.Load() != 0 {
		l.payWrites()
	}
	look := now >= l.quietNext.Load()
	if look && l.skipNext.Load() {
		l.skipNext.Store(false)
		look = false
	}
	if !look && !l.owing.Load() || !l.turn.TryLock() {
		return
	}
	left := false
	if !l.closed {
		if look {
			l.looks++
			l.lazy, l.polling, l.found = true, true, false
			left = l.serve(consumerPasses)
			l.lazy, l.polling = false, false
		}
		l.payOwedLater()
		// A poller that has found nothing for quietAfter looks every
		// quietGap only: an empty Poll then mostly costs no system call.
		// One that served data and drained the sockets makes the next
		// Poll skip its look, and looks come again after drainedGap at
		// the earliest: the application's next Poll after the completion
		// it got is usually its other EVD's dequeue (a post does not
		// poll), and an epoll_wait from it would find nothing at the
		// price of the read that just emptied the sockets. A time alone
		// did not cover it: that dequeue came 1-2 us after the look on a
		// slow host, past drainedGap. An arrival meanwhile stays in the
		// epoll set for the next look. Verdicts owed are paid when due whether
		// the Poll looks or not.
		switch {
		case !look:
		case left:
			l.quietFrom = 0
			l.quietNext.Store(0)
			l.skipNext.Store(false)
		case l.found:
			l.quietFrom = 0
			l.quietNext.Store(monoNow() + int64(drainedGap))
			l.skipNext.Store(true)
		case l.quietFrom == 0:
			l.quietFrom = now
		case now-l.quietFrom >= int64(quietAfter):
			l.quietNext.Store(now + int64(quietGap))
		}
	}
	l.turn.Unlock()
	if left {
		l.signal()
	}
}

// payOwedLater pays the verdicts due and leaves the others to the
// consumer's later calls, or to the goroutine once they stop (l.turn held).
func (l *tcpLoop) payOwedLater() {
	l.payOwed(false)
	if len(l.owed) > 0 && l.asleep.CompareAndSwap(true, false) {
		// Verdicts are deferred, and if this consumer stops calling
		// nobody else would write them: the goroutine, asleep on the
		// epoll set, does not wake for them (a readiness it might wake
		// for, our Polls take first). Its sleep ends now, without a
		// system call; it stands down on its timer and pays them once
		// the calls stop.
		_ = l.ep.SetReadDeadline(aLongTimeAgo)
	}
}

// aLongTimeAgo is a read deadline that has passed: it ends the goroutine's
// sleep on the epoll set.
var aLongTimeAgo = time.Unix(1, 0)

// polled reports whether a consumer polled within standDown, or serves
// from its Wait.
func (l *tcpLoop) polled() bool {
	t := l.lastPoll.Load()
	return t != 0 && monoNow()-t < int64(standDown) || l.sleeper.Load()
}

// loop is the goroutine: it serves while nobody polls, and sleeps.
func (l *tcpLoop) loop() {
	defer close(l.gone)
	wait := func(fd uintptr) bool {
		k, err := unix.EpollWait(int(fd), l.oev[:], 0)
		return k > 0 || err != nil && err != unix.EINTR
	}
	var tm *time.Timer
	aside := time.Duration(0)
	for {
		if h := testHookLoop.Load(); h != nil {
			(*h)(l)
		}
		if l.isStopped() {
			l.waitSleeperGone()
			l.end()
			return
		}
		if l.polled() {
			// A consumer serves; look again later, or when it goes to
			// sleep in Wait. While a waiter serves, the looks come
			// further apart (an idle process stays idle), and once they
			// are, the waiter pokes us when it leaves.
			period := standDown
			if l.sleeper.Load() {
				aside = min(max(2*aside, standDown), asideMax)
				period = aside
				if period > standDown {
					l.aside.Store(true)
					if !l.sleeper.Load() {
						period = standDown // it left before it could see aside
					}
				}
			} else {
				aside = 0
			}
			if tm == nil {
				tm = time.NewTimer(period)
			} else {
				tm.Reset(period)
			}
			select {
			case <-tm.C:
			case <-l.poke:
				if !tm.Stop() {
					<-tm.C
				}
			}
			l.aside.Store(false)
			continue
		}
		aside = 0
		l.handWrites() // nobody polls: the writer goroutines write
		l.turn.Lock()
		left := true
		for left && !l.polled() {
			left = l.serve(1)
		}
		l.payOwed(true)
		l.turn.Unlock()
		if left {
			// A consumer polls, or a Wait serves, from now on (polled):
			// the work left must wake it, or its sleep would not end
			// for it (the readiness is spent).
			l.signal()
		}
		// Work left in the queue (a consumer's Poll cut the serving short,
		// then went to sleep in Wait and handed the work back) is not in
		// the epoll set any more: serve it before any sleep, or nobody
		// would.
		if left || l.polled() || l.isStopped() || l.wqn.Load() != 0 {
			continue
		}
		// Put the set in the outer one (a readiness that came meanwhile is
		// reported at once), then sleep until it has something, or a
		// consumer's Poll defers verdicts (progress). asleep is set before
		// owing is looked at, and a Poll sets owing before it looks at
		// asleep: one of them sees the other.
		ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLONESHOT, Fd: int32(l.epfd)}
		if unix.EpollCtl(l.outer, unix.EPOLL_CTL_ADD, l.epfd, &ev) != nil {
			// No sleep on the set without its entry: look again on the
			// stand-down timer.
			l.lastPoll.Store(monoNow())
			continue
		}
		select {
		case <-l.poke: // drop a stale one: the look below is fresh
		default:
		}
		_ = l.ep.SetReadDeadline(time.Time{})
		l.asleep.Store(true)
		if !l.owing.Load() && l.wqn.Load() == 0 {
			_ = l.rc.Read(wait)
		}
		l.asleep.Store(false)
		// Out of the outer set again: while it is in, every arrival runs
		// the outer set's callback too (spent one-shot or not: a one-shot
		// entry is spent only when an epoll_wait reports it, which a sleep
		// ended by its deadline does not do, and an armed one would wake
		// the runtime's poller thread), a cost on every message the
		// consumers' own Polls take.
		_ = unix.EpollCtl(l.outer, unix.EPOLL_CTL_DEL, l.epfd, nil)
	}
}

// testHookLoop, set by tests only, runs at the top of every round of a
// loop goroutine.
var testHookLoop atomic.Pointer[func(*tcpLoop)]

func (l *tcpLoop) isStopped() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stopped
}

// end releases the loop's descriptors, with the turn held so that no
// consumer's Poll is using them.
func (l *tcpLoop) end() {
	l.handWrites() // stopped is set: none is listed from now on
	l.turn.Lock()
	l.payOwed(true) // before l.mu: a failed write forgets its connection
	l.mu.Lock()
	for _, w := range l.conns {
		_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, int(w.loopFd), nil)
	}
	clear(l.conns)
	l.nconns.Store(0)
	l.lone.Store(nil)
	l.closed = true
	clear(l.run)
	l.run = l.run[:0]
	l.ep.Close()
	unix.Close(l.epfd)
	unix.Close(l.sleepEp)
	l.sleepWake.close()
	l.wake.close()
	l.fdsGone = true
	l.mu.Unlock()
	l.turn.Unlock()
}

// payOwed writes the deferred verdicts that are due (all: every one; l.turn
// held).
func (l *tcpLoop) payOwed(all bool) {
	n := 0
	for _, w := range l.owed {
		if w.flushAcks(!all) {
			l.owed[n] = w
			n++
		} else {
			w.owed = false
		}
	}
	clear(l.owed[n:])
	l.owed = l.owed[:n]
	l.owing.Store(n > 0)
}

// serve makes up to passes passes over the queue, collecting what became
// readable before each; it reports whether work is left (l.turn held).
func (l *tcpLoop) serve(passes int) bool {
	for p := 0; p < passes; p++ {
		l.collect()
		l.mu.Lock()
		for _, w := range l.resumed {
			if w.rdMoving.Load() {
				// An SRQ post woke its helper, which reads the stream
				// until it resumes the connection itself.
				continue
			}
			w.parked = false
			if !w.queued {
				w.queued = true
				l.run = append(l.run, w)
			}
		}
		clear(l.resumed)
		l.resumed = l.resumed[:0]
		l.mu.Unlock()
		if len(l.run) == 0 {
			return false
		}
		l.pass()
		if l.loneLook {
			l.found = l.found || l.reads != l.loneReads
			l.loneLook = false
		}
		if len(l.run) == 0 {
			// Nothing left buffered: what arrives from now on is for the
			// next look (a consumer's next Poll), not for this one, which
			// has a completion to return.
			break
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.run) > 0 || len(l.resumed) > 0
}

// pass gives one turn each to the connections queued now; those that have
// more go to the back, behind what became readable meanwhile. A SEND that
// skips ahead of its peer device's stamps gives its turn to the earliest
// one queued (tcp_order.go).
func (l *tcpLoop) pass() {
	run := l.run
	k := len(run)
	for i := 0; i < k; i++ {
		w := run[i]
		if w == nil {
			continue // served out of turn
		}
		w.queued = false
		r := w.step()
		if r == stepGap {
			// w is queued while earliest looks at the epoll set: an edge
			// of w must not queue it a second time. A second entry was
			// served after the first had parked w, while its helper read
			// the same stream (frames torn apart: a 20-byte send took
			// the next frame's header as its payload).
			w.queued = true
			var v *tcpWire
			if run, v = l.earliest(run, i, w); v != w {
				v.queued = false
				run = l.after(run, v, v.step())
				i-- // w's turn again
				continue
			}
			w.queued = false
			r = w.step()
		}
		run = l.after(run, w, r)
	}
	n := 0
	for _, w := range run[k:] {
		if w != nil {
			run[n] = w
			n++
		}
	}
	clear(run[n:])
	l.run = run[:n]
	if h := testHookPassed.Load(); h != nil {
		(*h)(l.run)
	}
}

// testHookPassed, set by tests only, sees the queue each pass leaves
// (l.turn held).
var testHookPassed atomic.Pointer[func(run []*tcpWire)]

// after files connection w by the result of its turn.
func (l *tcpLoop) after(run []*tcpWire, w *tcpWire, r int) []*tcpWire {
	switch r {
	case stepMore, stepGap:
		w.queued = true
		run = append(run, w)
	case stepParked, stepHelper:
		w.parked = true
	case stepDone:
		l.forget(w)
	}
	return run
}

// collect looks at the epoll set without waiting and queues what became
// readable (l.turn held).
//
// A consumer's Poll on a device with one connection queues it without
// asking the set: its turn's non-blocking read is the look, and the
// epoll_wait that came first on every arrival was one system call more
// on each one-way of a ping-pong (a polled 8-byte send/recv ping-pong
// over godat-tcp, apppat pp, took 6-10% less). The arrivals it reads
// leave their edges in the set's ready list, stale: epoll drops such an
// entry when a look finds its socket has nothing (the sleeping
// goroutine's or waiter's nested set does not wake for it), and the
// goroutine's next serve, which asks the set, reads it once more to find
// it empty. An arrival after the last epoll_wait always has its edge
// there, so handing the work back to the goroutine or a waiter loses none.
// A waiter's serve asks the set as before: it must clear the wake eventfd
// that may have ended its sleep, or its next sleep would end at once.
// Nor does a Poll on a device of several connections read them in turn:
// the set's ready list keeps their arrival order (and a look costs one
// system call however many there are).
func (l *tcpLoop) collect() {
	if w := l.lone.Load(); w != nil && l.polling {
		if w.parked {
			return // its helper reads, or it waits for an SRQ receive
		}
		l.found = l.found || w.queued // frames buffered from the last turn
		l.loneLook, l.loneReads = true, l.reads
		if !w.queued {
			w.queued = true
			l.run = append(l.run, w)
		}
		return
	}
	l.asks++
	k := epollPoll(l.epfd, l.evs[:])
	l.nev = k
	l.found = l.found || k > 0 || len(l.run) > 0
	l.run = l.edges(l.run)
}

// edges queues the connections of the last epoll_wait.
func (l *tcpLoop) edges(run []*tcpWire) []*tcpWire {
	for i := 0; i < l.nev; i++ {
		fd := l.evs[i].Fd
		if fd == int32(l.wake) {
			l.wake.clear()
			continue
		}
		l.mu.Lock()
		w := l.conns[fd]
		l.mu.Unlock()
		if w == nil {
			continue
		}
		// An edge: data arrived since the last read. A connection in the
		// queue or parked keeps it for its next turn (the edge does not
		// come again).
		w.edge = true
		if !w.queued && !w.parked {
			w.queued = true
			run = append(run, w)
		}
	}
	l.nev = 0
	return run
}

// earliestFrames bounds the frames earliest handles on one connection to
// reach the SEND behind them.
const earliestFrames = 8

// earliest finds the SEND to serve before w's, which skips ahead of its
// peer device's stamps: it queues what became readable, reads the heads of
// the queued connections from the same device (those after position i)
// and returns the one with the earliest stamp, out of the queue (its slot
// is nil), or w itself, whose stamp then becomes due.
func (l *tcpLoop) earliest(run []*tcpWire, i int, w *tcpWire) ([]*tcpWire, *tcpWire) {
	l.run = run
	l.collect()
	run = l.run
	o := w.order
	best, bs, bj := w, w.rd.cur.stamp, -1
	for j := i + 1; j < len(run); j++ {
		v := run[j]
		if v == nil || v.order != o {
			continue
		}
		s, ok, other := v.headStamp()
		// Frames before the connection's next SEND (a request for a grant
		// the peer wrote before the grant came, an acknowledgement) would
		// hide it: handle them now, a few at most.
		for n := 0; other && n < earliestFrames; n++ {
			if r := v.step(); r != stepMore {
				v.queued = false
				run[j] = nil
				run = l.after(run, v, r)
				break
			}
			s, ok, other = v.headStamp()
		}
		if run[j] == v && ok && int16(s-bs) < 0 {
			best, bs, bj = v, s, j
		}
	}
	if bj >= 0 {
		run[bj] = nil
	}
	o.skipTo(bs)
	return run, best
}
