package soft

// A connected TCP socket outside Go's network poller.
//
// The runtime's poller registers every socket it knows edge-triggered for
// reading, and one of the process's threads sleeps in epoll_wait on it
// whenever the scheduler has nothing to run: every arrival on a data
// connection would wake that thread, which finds no goroutine waiting for
// it and sleeps again. For a polling application pinned to one CPU per
// process (an MPI rank) that is a context switch per message on the very
// CPU it polls on. So once dialed or accepted, a connection's descriptor is
// taken out of the poller (detachTCP) and read and written here with
// non-blocking system calls: the device's receive loop learns of arrivals
// from its own epoll set (tcp_loop.go).
//
// The few goroutines that must wait for a socket (a handshake, a large
// payload, a full send buffer, a linger drain) wait through sockWaits: the
// socket joins one epoll set of the process one-shot for the length of the
// wait, and one goroutine sleeping in the runtime's poller on that set
// wakes them. So a wait costs no thread, and a socket nobody waits for
// wakes nobody.
//
// The descriptor is reference counted like the runtime's own: Close marks
// it closed and wakes the waiters, and the last call in progress closes it,
// so a descriptor number is never reused under a call that still uses it.

import (
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const (
	sockClosed = 1 << 62 // Close was called: no new calls
	sockGone   = 1 << 61 // the descriptor is closed
)

// Directions a goroutine waits for (tcpSock.ready).
const (
	waitIn = iota
	waitOut
)

type tcpSock struct {
	fd     int
	refs   atomic.Int64 // the owner's reference, calls in progress, sockClosed, sockGone
	rdl    atomic.Int64 // read deadline in unix ns; 0: none
	local  netip.AddrPort
	remote netip.AddrPort

	ready  [2]chan struct{} // a wait's readiness (waitIn, waitOut), from sockWaits
	redl   chan struct{}    // the read deadline moved: a waiting reader looks again
	closed chan struct{}    // closed by Close
	want   uint32           // events armed in sockWaits (under sockWaits.mu)
	inSet  bool             // the descriptor is in sockWaits' set (under sockWaits.mu)
}

// detachTCP takes the socket of s out of the runtime's poller: it keeps a
// duplicate of the descriptor (non-blocking, as the open file is) and
// closes s, which unregisters s's own.
func detachTCP(s *net.TCPConn) (*tcpSock, error) {
	rc, err := s.SyscallConn()
	if err != nil {
		s.Close()
		return nil, err
	}
	fd, derr := -1, error(nil)
	if err := rc.Control(func(f uintptr) { fd, derr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		derr = err
	}
	so := &tcpSock{fd: fd, local: addrPortOf(s.LocalAddr()), remote: addrPortOf(s.RemoteAddr()),
		ready: [2]chan struct{}{make(chan struct{}, 1), make(chan struct{}, 1)},
		redl:  make(chan struct{}, 1), closed: make(chan struct{})}
	s.Close()
	if derr != nil {
		if fd >= 0 {
			unix.Close(fd)
		}
		return nil, os.NewSyscallError("dup", derr)
	}
	so.refs.Store(1)
	return so, nil
}

// acquire starts a call on the descriptor; false once it is closed.
func (s *tcpSock) acquire() bool {
	if s.refs.Add(1)&sockClosed != 0 {
		s.release()
		return false
	}
	return true
}

// release ends a call; the last one after Close closes the descriptor.
func (s *tcpSock) release() {
	if s.refs.Add(-1) == sockClosed && s.refs.CompareAndSwap(sockClosed, sockClosed|sockGone) {
		waits.forget(s)
		unix.Close(s.fd)
	}
}

// Close ends the socket: waiting calls return net.ErrClosed at once, and
// the last call in progress closes the descriptor.
func (s *tcpSock) Close() error {
	for {
		v := s.refs.Load()
		if v&sockClosed != 0 {
			return net.ErrClosed
		}
		if s.refs.CompareAndSwap(v, v|sockClosed) {
			break
		}
	}
	close(s.closed)
	s.release() // the owner's reference
	return nil
}

// CloseWrite sends FIN after what is queued.
func (s *tcpSock) CloseWrite() error {
	if !s.acquire() {
		return net.ErrClosed
	}
	defer s.release()
	return unix.Shutdown(s.fd, unix.SHUT_WR)
}

// SetReadDeadline bounds the reads that wait (read); the zero time removes
// the bound. A reader waiting looks at the new deadline at once.
func (s *tcpSock) SetReadDeadline(t time.Time) error {
	if t.IsZero() {
		s.rdl.Store(0)
	} else {
		s.rdl.Store(max(t.UnixNano(), 1))
	}
	select {
	case s.redl <- struct{}{}:
	default:
	}
	return nil
}

// isErrno reports whether err is the system error e. A comparison of err
// with e itself calls the runtime's interface equality, and every empty look
// at a socket (a polling consumer's many) ends in EAGAIN.
func isErrno(err error, e unix.Errno) bool {
	x, ok := err.(unix.Errno)
	return ok && x == e
}

// readNB reads into v without waiting: unix.EAGAIN when nothing is there.
func (s *tcpSock) readNB(v []iov) (int, error) {
	if !s.acquire() {
		return 0, net.ErrClosed
	}
	n, err := sockRecv(s.fd, v)
	s.release()
	return n, err
}

// read reads into v, waiting for data until the read deadline
// (os.ErrDeadlineExceeded) or Close (net.ErrClosed).
func (s *tcpSock) read(v []iov) (int, error) {
	if !s.acquire() {
		return 0, net.ErrClosed
	}
	defer s.release()
	for {
		if dl := s.rdl.Load(); dl != 0 && time.Now().UnixNano() >= dl {
			return 0, os.ErrDeadlineExceeded
		}
		n, err := sockRecv(s.fd, v)
		if !isErrno(err, unix.EAGAIN) {
			return n, err
		}
		if err := s.wait(waitIn); err != nil {
			return 0, err
		}
	}
}

// write writes v with one sendmsg; block waits for room first when the
// socket is full.
func (s *tcpSock) write(v []iov, block bool) (int, error) {
	if !s.acquire() {
		return 0, net.ErrClosed
	}
	defer s.release()
	for {
		n, err := sockSend(s.fd, v)
		if !isErrno(err, unix.EAGAIN) || !block {
			return n, err
		}
		if err := s.wait(waitOut); err != nil {
			return 0, err
		}
	}
}

// wait sleeps until the socket may be ready for dir, the read deadline
// passes or moves (waitIn), or the socket closes. The caller holds a
// reference and retries its call; one reader and one writer wait at most.
func (s *tcpSock) wait(dir int) error {
	select { // a readiness left from an earlier wait says nothing now
	case <-s.ready[dir]:
	default:
	}
	if err := waits.arm(s, dir); err != nil {
		return err
	}
	var tc <-chan time.Time
	var redl <-chan struct{}
	if dir == waitIn {
		redl = s.redl
		if dl := s.rdl.Load(); dl != 0 {
			t := time.NewTimer(time.Duration(dl - time.Now().UnixNano()))
			defer t.Stop()
			tc = t.C
		}
	}
	select {
	case <-s.ready[dir]:
		return nil
	case <-s.closed:
		return net.ErrClosed
	case <-tc:
	case <-redl:
	}
	waits.disarm(s, dir)
	return nil
}

// sockWaits is the process's epoll set of the sockets goroutines wait for,
// and the goroutine that sleeps in the runtime's poller on it (started by
// the first wait; it lives as long as the process, as the runtime's poller
// does). Entries are one-shot, and in the set only while a wait is under
// way: added by the wait, taken out when it ends.
type sockWaits struct {
	once  sync.Once
	err   error
	epfd  int
	ep    *os.File
	rc    syscall.RawConn
	mu    sync.Mutex // leaf: the entries
	socks map[int32]*tcpSock
	evs   [32]unix.EpollEvent
}

var waits sockWaits

// epoll events of each direction a wait may be woken by.
var dirEvents = [2]uint32{unix.EPOLLIN | unix.EPOLLRDHUP, unix.EPOLLOUT}

func (ws *sockWaits) start() error {
	ws.once.Do(func() {
		fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			ws.err = os.NewSyscallError("epoll_create1", err)
			return
		}
		_ = unix.SetNonblock(fd, true) // so that os.NewFile registers it with the poller
		ws.ep = os.NewFile(uintptr(fd), "godat-tcp-waits")
		if ws.rc, err = ws.ep.SyscallConn(); err != nil {
			ws.ep.Close()
			ws.err = err
			return
		}
		ws.epfd = fd
		ws.socks = map[int32]*tcpSock{}
		go ws.run()
	})
	return ws.err
}

// arm adds dir to the events the socket's entry waits for.
func (ws *sockWaits) arm(s *tcpSock, dir int) error {
	if err := ws.start(); err != nil {
		return err
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	s.want |= dirEvents[dir]
	ev := unix.EpollEvent{Events: s.want | unix.EPOLLONESHOT, Fd: int32(s.fd)}
	op := unix.EPOLL_CTL_MOD
	if !s.inSet {
		op = unix.EPOLL_CTL_ADD
	}
	if err := unix.EpollCtl(ws.epfd, op, s.fd, &ev); err != nil {
		s.want &^= dirEvents[dir]
		return os.NewSyscallError("epoll_ctl", err)
	}
	s.inSet = true
	ws.socks[int32(s.fd)] = s
	return nil
}

// disarm takes dir out of the socket's entry after a wait that ended
// otherwise than by readiness, so that arrivals nobody waits for wake
// nobody.
func (ws *sockWaits) disarm(s *tcpSock, dir int) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if !s.inSet || s.want&dirEvents[dir] == 0 {
		return
	}
	s.want &^= dirEvents[dir]
	ws.rearmLocked(s)
}

// rearmLocked arms the socket's entry for what is still waited for, or
// takes it out of the set when nothing is: an entry, even a spent one,
// costs every arrival on the socket a callback (ws.mu held).
func (ws *sockWaits) rearmLocked(s *tcpSock) {
	if s.want == 0 {
		_ = unix.EpollCtl(ws.epfd, unix.EPOLL_CTL_DEL, s.fd, nil)
		delete(ws.socks, int32(s.fd))
		s.inSet = false
		return
	}
	ev := unix.EpollEvent{Events: s.want | unix.EPOLLONESHOT, Fd: int32(s.fd)}
	_ = unix.EpollCtl(ws.epfd, unix.EPOLL_CTL_MOD, s.fd, &ev)
}

// forget takes the socket out of the set before its descriptor closes.
func (ws *sockWaits) forget(s *tcpSock) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if s.inSet {
		_ = unix.EpollCtl(ws.epfd, unix.EPOLL_CTL_DEL, s.fd, nil)
		delete(ws.socks, int32(s.fd))
		s.inSet, s.want = false, 0
	}
}

// run wakes the waiters of the sockets the set reports.
func (ws *sockWaits) run() {
	var n int
	harvest := func(fd uintptr) bool {
		k, err := unix.EpollWait(int(fd), ws.evs[:], 0)
		n = max(k, 0)
		return k > 0 || err != nil && err != unix.EINTR
	}
	for {
		if err := ws.rc.Read(harvest); err != nil {
			return
		}
		ws.mu.Lock()
		ws.wakeLocked(ws.evs[:n])
		ws.mu.Unlock()
	}
}

// wakeLocked wakes the waiters of the sockets evs reports (ws.mu held).
func (ws *sockWaits) wakeLocked(evs []unix.EpollEvent) {
	for _, ev := range evs {
		s := ws.socks[ev.Fd]
		if s == nil {
			continue
		}
		// The one-shot entry is spent: the directions it reported are
		// woken, the others armed again.
		got := ev.Events
		if got&(unix.EPOLLERR|unix.EPOLLHUP) != 0 {
			got |= dirEvents[waitIn] | dirEvents[waitOut]
		}
		for dir, bits := range dirEvents {
			if s.want&bits != 0 && got&bits != 0 {
				s.want &^= bits
				select {
				case s.ready[dir] <- struct{}{}:
				default:
				}
			}
		}
		ws.rearmLocked(s)
	}
}

// pump is run's work done by a consumer's Poll, without waiting: in a
// process whose runtime has one P, which a busy-polling consumer holds
// nearly all the time, the runtime's poller (and so run) would hear of a
// socket's readiness only every 10 ms or so (its background check).
func (ws *sockWaits) pump() {
	if ws.start() != nil {
		return
	}
	var evs [8]unix.EpollEvent
	ws.mu.Lock()
	n, _ := unix.EpollWait(ws.epfd, evs[:], 0)
	if n > 0 {
		ws.wakeLocked(evs[:n])
	}
	ws.mu.Unlock()
}
