package soft

// Raw socket I/O for the TCP wire: scatter/gather straight between the
// socket and caller memory given as addresses (house rule: unsafe only in
// *_unsafe.go).

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawMax bounds the transfers made with RawSyscall, without telling the
// scheduler: the sockets are non-blocking (tcp_sock.go), so no call waits,
// and for a copy this small the bookkeeping of Syscall (entersyscall,
// exitsyscall: a few hundred ns, and their variance) costs more than the
// call; a larger copy goes through Syscall, so that a stop-the-world never
// waits for it.
const rawMax = 64 << 10

// sockCall makes socket system call trap (sendmsg, readv) on fd with
// arguments a1 and a2, moving n bytes at most; it retries EINTR.
func sockCall(trap uintptr, fd int, a1, a2 uintptr, n int) (int, error) {
	for {
		var r uintptr
		var e syscall.Errno
		if n <= rawMax {
			r, _, e = unix.RawSyscall(trap, uintptr(fd), a1, a2)
		} else {
			r, _, e = unix.Syscall(trap, uintptr(fd), a1, a2)
		}
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return int(r), nil
	}
}

// iovLen is the number of bytes v describes.
func iovLen(v []iov) int {
	n := 0
	for i := range v {
		n += v[i].Len
	}
	return n
}

// sendmsgv writes the iovecs with one non-blocking sendmsg call.
// MSG_NOSIGNAL: a peer that went away must be an EPIPE here, never a
// SIGPIPE in the host program.
func sendmsgv(fd int, v []iov) (int, error) {
	if len(v) == 0 {
		return 0, nil
	}
	var m unix.Msghdr
	m.Iov = (*unix.Iovec)(unsafe.Pointer(&v[0]))
	m.SetIovlen(len(v))
	return sockCall(unix.SYS_SENDMSG, fd, uintptr(unsafe.Pointer(&m)), unix.MSG_NOSIGNAL|unix.MSG_DONTWAIT, iovLen(v))
}

// readv reads into the iovecs with one readv call (the socket is
// non-blocking).
func readv(fd int, v []iov) (int, error) {
	if len(v) == 0 {
		return 0, nil
	}
	return sockCall(unix.SYS_READV, fd, uintptr(unsafe.Pointer(&v[0])), uintptr(len(v)), iovLen(v))
}

// epollPoll is epoll_wait with timeout 0 (it never waits, so RawSyscall):
// the number of events put in evs.
func epollPoll(epfd int, evs []unix.EpollEvent) int {
	for {
		n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&evs[0])),
			uintptr(len(evs)), 0, 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0
		}
		return int(n)
	}
}

// goIov describes Go memory b as an iovec. The caller keeps b reachable
// until the I/O that uses the iovec is over (Go heap objects do not move).
func goIov(b []byte) iov {
	if len(b) == 0 {
		return iov{}
	}
	return iov{Base: uintptr(unsafe.Pointer(&b[0])), Len: len(b)}
}
