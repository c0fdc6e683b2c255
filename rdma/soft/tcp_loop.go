package soft

// The TCP receive loop: one goroutine per device reads every established
// connection, in the order the kernel reports them readable (an
// edge-triggered epoll set, whose ready list is kept in the order data
// arrived), one frame per turn. So frames of several connections complete
// in about the order they arrived: a connection with several frames
// buffered goes to the back of the queue after each, behind those that
// became readable meanwhile. This is what makes the completions of a CQ
// shared by many TCP connections come in arrival order across them (the
// shared-memory wire has its inbound queue for that).
//
// A frame whose payload is not in memory yet and is large (directMin or
// more) is handed to a goroutine that reads it straight into place with
// blocking reads, and the connection rejoins the queue when it is done; a
// connection whose message waits for an SRQ receive leaves the queue until
// the SRQ's next post resumes it. The loop never blocks but when its epoll
// set has nothing ready, and then it waits in Go's netpoller (the epoll
// descriptor is itself pollable), not in a system call: a thread blocked in
// epoll_wait would hold its scheduler slot until the runtime took it back,
// stalling the consumer's goroutines that poll.

import (
	"os"
	"sync"
	"syscall"

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

type tcpLoop struct {
	epfd int
	ep   *os.File            // epfd, registered with the netpoller
	rc   syscall.RawConn     // waits for epfd to be readable
	wake eventfd             // in the epoll set: control requests
	evs  [64]unix.EpollEvent // the last epoll_wait's (loop goroutine)
	nev  int

	mu      sync.Mutex // leaf: adds and resumes from other goroutines
	conns   map[int32]*tcpWire
	resumed []*tcpWire
	stopped bool
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
	wk, err := newEventfd()
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wk)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, int(wk), &ev); err != nil {
		unix.Close(epfd)
		wk.close()
		return nil, err
	}
	_ = unix.SetNonblock(epfd, true) // so that os.NewFile registers it with the netpoller
	ep := os.NewFile(uintptr(epfd), "godat-tcp-loop")
	rc, err := ep.SyscallConn()
	if err != nil {
		ep.Close()
		wk.close()
		return nil, err
	}
	l := &tcpLoop{epfd: epfd, ep: ep, rc: rc, wake: wk, conns: map[int32]*tcpWire{}, gone: make(chan struct{})}
	t.loop = l
	go l.run()
	return l, nil
}

// stop ends the loop and waits for it.
func (l *tcpLoop) stop() {
	l.mu.Lock()
	l.stopped = true
	l.mu.Unlock()
	l.wake.signal()
	<-l.gone
}

// add hands an established connection to the loop; its reader may hold
// frames already (read with the handshake).
func (l *tcpLoop) add(w *tcpWire) bool {
	fd := -1
	_ = w.rc.Control(func(f uintptr) { fd = int(f) })
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped || fd < 0 {
		return false
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(fd)}
	if unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev) != nil {
		return false
	}
	w.loopFd = int32(fd)
	l.conns[int32(fd)] = w
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
	l.wake.signal()
}

// forget takes a connection out of the loop (it ended, or its socket is
// about to close); any goroutine.
func (l *tcpLoop) forget(w *tcpWire) {
	l.mu.Lock()
	if l.conns[w.loopFd] == w {
		delete(l.conns, w.loopFd)
		_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, int(w.loopFd), nil)
	}
	l.mu.Unlock()
}

func (l *tcpLoop) run() {
	defer close(l.gone)
	var run []*tcpWire // the queue of connections to give a turn
	wait := func(fd uintptr) bool {
		k, err := unix.EpollWait(int(fd), l.evs[:], 0)
		l.nev = max(k, 0)
		return l.nev > 0 || err != nil && err != unix.EINTR
	}
	for {
		// With connections to serve, only look; otherwise sleep in the
		// netpoller until the set has something ready.
		if len(run) > 0 {
			run = l.collect(run)
		} else if l.rc.Read(wait) != nil {
			l.nev = 0
		} else {
			run = l.edges(run)
		}
		l.mu.Lock()
		if l.stopped {
			for _, w := range l.conns {
				_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, int(w.loopFd), nil)
			}
			clear(l.conns)
			l.mu.Unlock()
			l.ep.Close()
			l.wake.close()
			return
		}
		for _, w := range l.resumed {
			w.parked = false
			if !w.queued {
				w.queued = true
				run = append(run, w)
			}
		}
		clear(l.resumed)
		l.resumed = l.resumed[:0]
		l.mu.Unlock()
		// One turn each for the connections queued now; those that have
		// more go to the back, behind what became readable meanwhile. A
		// SEND that skips ahead of its peer device's stamps gives its turn
		// to the earliest one queued (tcp_order.go).
		k := len(run)
		for i := 0; i < k; i++ {
			w := run[i]
			if w == nil {
				continue // served out of turn
			}
			w.queued = false
			r := w.step()
			if r == stepGap {
				var v *tcpWire
				if run, v = l.earliest(run, i, w); v != w {
					v.queued = false
					run = l.after(run, v, v.step())
					w.queued = true
					i-- // w's turn again
					continue
				}
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
		run = run[:n]
	}
}

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
// readable.
func (l *tcpLoop) collect(run []*tcpWire) []*tcpWire {
	_ = l.rc.Read(func(fd uintptr) bool {
		k, _ := unix.EpollWait(int(fd), l.evs[:], 0)
		l.nev = max(k, 0)
		return true
	})
	return l.edges(run)
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
	run = l.collect(run)
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
