package soft

// Raw socket I/O for the TCP wire: scatter/gather straight between the
// socket and caller memory given as addresses (house rule: unsafe only in
// *_unsafe.go).

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sendmsgv writes the iovecs with one sendmsg call. MSG_NOSIGNAL: a peer
// that went away must be an EPIPE here, never a SIGPIPE in the host program.
func sendmsgv(fd int, v []iov) (int, error) {
	if len(v) == 0 {
		return 0, nil
	}
	var m unix.Msghdr
	m.Iov = (*unix.Iovec)(unsafe.Pointer(&v[0]))
	m.SetIovlen(len(v))
	for {
		n, _, e := unix.Syscall(unix.SYS_SENDMSG, uintptr(fd), uintptr(unsafe.Pointer(&m)),
			unix.MSG_NOSIGNAL|unix.MSG_DONTWAIT)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, syscall.Errno(e)
		}
		return int(n), nil
	}
}

// readv reads into the iovecs with one readv call.
func readv(fd int, v []iov) (int, error) {
	if len(v) == 0 {
		return 0, nil
	}
	for {
		n, _, e := unix.Syscall(unix.SYS_READV, uintptr(fd), uintptr(unsafe.Pointer(&v[0])), uintptr(len(v)))
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, syscall.Errno(e)
		}
		return int(n), nil
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
