package soft

// The futex calls behind CompChannel.Wait, and the eventfd behind the
// channels' Fd.

import (
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	futexWait = 0 // FUTEX_WAIT (shared: peers wake us through their mapping)
	futexWake = 1 // FUTEX_WAKE
)

// preemptSignal is the signal the Go runtime preempts goroutines with.
var preemptSignal = func() (s unix.Sigset_t) {
	s.Val[(unix.SIGURG-1)/64] = 1 << ((unix.SIGURG - 1) % 64)
	return s
}()

// futexWaitOn sleeps while *addr == val, at most d (d < 0: no bound). It
// reports whether a signal handler interrupted the sleep (EINTR).
func futexWaitOn(addr uintptr, val uint32, d time.Duration) bool {
	// tsp stays an unsafe.Pointer until the call's argument list: the calls
	// below may grow and move the stack, and only a pointer is moved with
	// it (an address kept as uintptr would name the old stack).
	var tsp unsafe.Pointer
	var ts unix.Timespec
	if d >= 0 {
		ts = unix.NsecToTimespec(int64(d))
		tsp = unsafe.Pointer(&ts)
	}
	return sleepCall(func() unix.Errno {
		_, _, e := unix.Syscall6(unix.SYS_FUTEX, addr, futexWait, uintptr(val), uintptr(tsp), 0, 0)
		return e
	}) == unix.EINTR
}

// sleepCall makes call, a system call that sleeps, and returns its errno.
//
// The Go runtime's own preemption signal must not count: one sent while the
// thread was still in Go code can land during the sleep, and the consumer
// would see DAT_INTERRUPTED_CALL for a signal it never had. So SIGURG is
// blocked on this thread for the sleep and delivered after it; a thread in
// a system call needs no preemption. The thread is locked so that the mask
// is restored on the thread it was changed on.
func sleepCall(call func() unix.Errno) unix.Errno {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old unix.Sigset_t
	masked := unix.PthreadSigmask(unix.SIG_BLOCK, &preemptSignal, &old) == nil
	errno := call()
	if masked {
		_ = unix.PthreadSigmask(unix.SIG_SETMASK, &old, nil)
	}
	return errno
}

// noEpollPwait2: epoll_pwait2 is not there (before Linux 5.11) or not
// allowed, found once so that each sleep does not try it first.
var noEpollPwait2 atomic.Bool

// epollSleep waits at most d (d < 0: no bound) for the epoll set epfd to
// report a readiness, and leaves it for others to act on (the set holds
// level-triggered entries: a nested set, an eventfd). It reports EINTR.
func epollSleep(epfd int, d time.Duration) bool {
	var ev [1]unix.EpollEvent
	var tsp unsafe.Pointer
	var ts unix.Timespec
	if d >= 0 {
		ts = unix.NsecToTimespec(int64(d))
		tsp = unsafe.Pointer(&ts)
	}
	var errno unix.Errno
	if !noEpollPwait2.Load() {
		errno = sleepCall(func() unix.Errno {
			_, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(epfd), uintptr(unsafe.Pointer(&ev[0])), 1, uintptr(tsp), 0, 0)
			return e
		})
		if errno == unix.ENOSYS || errno == unix.EPERM {
			// EPERM: a seccomp filter that predates the call (container
			// runtimes' defaults of before 2021) refuses it; taken for a
			// wake-up, it would make every Wait spin.
			noEpollPwait2.Store(true)
		}
	}
	if noEpollPwait2.Load() { // before Linux 5.11: a timeout in whole ms
		ms := -1
		if d >= 0 {
			ms = int((d + time.Millisecond - 1) / time.Millisecond)
		}
		errno = sleepCall(func() unix.Errno {
			_, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&ev[0])), 1, uintptr(ms), 0, 0)
			return e
		})
	}
	return errno == unix.EINTR
}

// futexWakeAll wakes every waiter on addr.
func futexWakeAll(addr uintptr) {
	unix.Syscall6(unix.SYS_FUTEX, addr, futexWake, uintptr(0x7fffffff), 0, 0, 0)
}

// eventfd is a non-blocking eventfd: readable while its count is non-zero.
type eventfd int

func newEventfd() (eventfd, error) {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	return eventfd(fd), err
}

// signal makes the descriptor readable.
func (e eventfd) signal() {
	one := uint64(1)
	unix.Write(int(e), (*[8]byte)(unsafe.Pointer(&one))[:])
}

// clear makes it unreadable again.
func (e eventfd) clear() {
	var b [8]byte
	unix.Read(int(e), b[:])
}

func (e eventfd) close() { unix.Close(int(e)) }
