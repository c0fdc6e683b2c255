package soft

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	futexWait = 0 // FUTEX_WAIT (shared: no FUTEX_PRIVATE_FLAG)
	futexWake = 1 // FUTEX_WAKE
)

// futexWaitOn sleeps while *addr == val, at most d (d < 0: no bound). It
// reports whether a signal handler interrupted the sleep (EINTR).
func futexWaitOn(addr uintptr, val uint32, d time.Duration) bool {
	var tsp uintptr
	var ts unix.Timespec
	if d >= 0 {
		ts = unix.NsecToTimespec(int64(d))
		tsp = uintptr(unsafe.Pointer(&ts))
	}
	_, _, errno := unix.Syscall6(unix.SYS_FUTEX, addr, futexWait, uintptr(val), tsp, 0, 0)
	return errno == unix.EINTR
}

// futexWakeAll wakes every waiter on addr.
func futexWakeAll(addr uintptr) {
	unix.Syscall6(unix.SYS_FUTEX, addr, futexWake, uintptr(0x7fffffff), 0, 0, 0)
}
