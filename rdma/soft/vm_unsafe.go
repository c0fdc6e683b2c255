package soft

// Cross-memory attach: process_vm_readv/writev with both iovec arrays given
// as raw addresses, so no integer is turned into a Go pointer.

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// iov is an iovec in either address space (same layout as struct iovec).
type iov = unix.RemoteIovec

// vmRW performs one process_vm_readv (write=false: remote → local) or
// process_vm_writev (write=true: local → remote) call. The kernel stops at
// the first fault on either side and returns what it moved, so a count
// short of the total is a fault as much as EFAULT is.
func vmRW(pid int, local, remote []iov, write bool) (int, error) {
	if len(local) == 0 || len(remote) == 0 {
		return 0, nil
	}
	nr := uintptr(unix.SYS_PROCESS_VM_READV)
	if write {
		nr = unix.SYS_PROCESS_VM_WRITEV
	}
	n, _, e := unix.Syscall6(nr, uintptr(pid),
		uintptr(unsafe.Pointer(&local[0])), uintptr(len(local)),
		uintptr(unsafe.Pointer(&remote[0])), uintptr(len(remote)), 0)
	if e != 0 {
		return 0, syscall.Errno(e)
	}
	return int(n), nil
}
