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

// sockCall makes socket system call trap (sendto, sendmsg, recvfrom,
// readv) on fd with arguments a1 to a3 (the rest zero), moving n bytes at
// most; it retries EINTR.
func sockCall(trap uintptr, fd int, a1, a2, a3 uintptr, n int) (int, error) {
	for {
		var r uintptr
		var e syscall.Errno
		if n <= rawMax {
			r, _, e = unix.RawSyscall6(trap, uintptr(fd), a1, a2, a3, 0, 0)
		} else {
			r, _, e = unix.Syscall6(trap, uintptr(fd), a1, a2, a3, 0, 0)
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

// sockSend writes the iovecs with one non-blocking call: sendto for one
// buffer, sendmsg for more. sendto spares the kernel the message header and
// the iovec import (a polled 8-byte ping-pong over loopback sends one
// buffer per message). MSG_NOSIGNAL: a peer that went away must be an EPIPE
// here, never a SIGPIPE in the host program.
func sockSend(fd int, v []iov) (int, error) {
	const flags = unix.MSG_NOSIGNAL | unix.MSG_DONTWAIT
	switch len(v) {
	case 0:
		return 0, nil
	case 1:
		return sockCall(unix.SYS_SENDTO, fd, v[0].Base, uintptr(v[0].Len), flags, v[0].Len)
	}
	var m unix.Msghdr
	m.Iov = (*unix.Iovec)(unsafe.Pointer(&v[0]))
	m.SetIovlen(len(v))
	return sockCall(unix.SYS_SENDMSG, fd, uintptr(unsafe.Pointer(&m)), flags, 0, iovLen(v))
}

// sockRecv reads into the iovecs with one non-blocking call: recvfrom for one
// buffer, readv for more. Every empty poll of a TCP device is one such
// call, and recvfrom's path is the shorter one (readv goes through the VFS
// and imports the iovec): an empty look took 0.7-0.9 us against 1.1-1.4
// us with readv in apppat's ping-pong over godat-tcp.
func sockRecv(fd int, v []iov) (int, error) {
	switch len(v) {
	case 0:
		return 0, nil
	case 1:
		return sockCall(unix.SYS_RECVFROM, fd, v[0].Base, uintptr(v[0].Len), unix.MSG_DONTWAIT, v[0].Len)
	}
	return sockCall(unix.SYS_READV, fd, uintptr(unsafe.Pointer(&v[0])), uintptr(len(v)), 0, iovLen(v))
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
