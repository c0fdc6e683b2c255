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
// the SRQ's next post resumes it. The loop itself never blocks but in
// epoll_wait.

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Results of one turn of a connection.
const (
	stepIdle   = iota // nothing more until the socket is readable again
	stepMore          // another turn may find more (buffered, or unread)
	stepParked        // out of the queue until resumed (helper, SRQ)
	stepDone          // the connection ended
)

type tcpLoop struct {
	epfd int
	wake eventfd // in the epoll set: control requests

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
	l := &tcpLoop{epfd: epfd, wake: wk, conns: map[int32]*tcpWire{}, gone: make(chan struct{})}
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

// remove takes a connection out of the loop (it ended); the loop thread
// only.
func (l *tcpLoop) remove(w *tcpWire) {
	l.mu.Lock()
	if l.conns[w.loopFd] == w {
		delete(l.conns, w.loopFd)
		_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, int(w.loopFd), nil)
	}
	l.mu.Unlock()
}

func (l *tcpLoop) run() {
	defer close(l.gone)
	var evs [64]unix.EpollEvent
	var run []*tcpWire // the queue of connections to give a turn
	for {
		timeout := -1
		if len(run) > 0 {
			timeout = 0
		}
		n, err := unix.EpollWait(l.epfd, evs[:], timeout)
		if err != nil && err != unix.EINTR {
			n = 0
		}
		for i := 0; i < n; i++ {
			fd := evs[i].Fd
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
			// An edge: data arrived since the last read. A connection in
			// the queue or parked keeps it for its next turn (the edge
			// does not come again).
			w.edge = true
			if !w.queued && !w.parked {
				w.queued = true
				run = append(run, w)
			}
		}
		l.mu.Lock()
		if l.stopped {
			for _, w := range l.conns {
				_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, int(w.loopFd), nil)
			}
			clear(l.conns)
			l.mu.Unlock()
			unix.Close(l.epfd)
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
		// more go to the back, behind what became readable meanwhile.
		k := len(run)
		for i := 0; i < k; i++ {
			w := run[i]
			w.queued = false
			switch w.step() {
			case stepMore:
				w.queued = true
				run = append(run, w)
			case stepParked:
				w.parked = true
			case stepDone:
				l.remove(w)
			}
		}
		run = append(run[:0], run[k:]...)
	}
}
