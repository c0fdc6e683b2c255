package rdmatest

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// The reference backend copies user memory with process_vm_readv and
// process_vm_writev on its own process: a bad address is an EFAULT, not a
// dead process.

var errShort = errors.New("short copy")

// readMem copies n bytes at addr.
func readMem(addr uint64, n int) ([]byte, error) {
	b := make([]byte, n)
	if n == 0 {
		return b, nil
	}
	got, err := unix.ProcessVMReadv(os.Getpid(), []unix.Iovec{{Base: &b[0], Len: uint64(n)}},
		[]unix.RemoteIovec{{Base: uintptr(addr), Len: n}}, 0)
	if err != nil {
		return nil, err
	}
	if got != n {
		return nil, errShort
	}
	return b, nil
}

// writeMem copies b to addr.
func writeMem(addr uint64, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	got, err := unix.ProcessVMWritev(os.Getpid(), []unix.Iovec{{Base: &b[0], Len: uint64(len(b))}},
		[]unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}, 0)
	if err != nil {
		return err
	}
	if got != len(b) {
		return errShort
	}
	return nil
}
