package verbs

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"syscall"

	"godat/rdma"
)

// errnoOf turns what a C call returned (an errno value, or -1 with errno
// set, as the two-value cgo call gives it) into a syscall.Errno.
func errnoOf(ret C.int, err error) syscall.Errno {
	if ret > 0 {
		return syscall.Errno(ret)
	}
	var e syscall.Errno
	if errors.As(err, &e) && e != 0 {
		return e
	}
	return syscall.EIO
}

// wrap describes a failed verbs or rdma_cm call as the contract's error.
func wrap(op string, e syscall.Errno) error {
	var base error
	switch e {
	case syscall.EINVAL:
		base = rdma.ErrInvalid
	case syscall.EOPNOTSUPP, syscall.ENOSYS:
		base = rdma.ErrNotSupported
	case syscall.EBUSY:
		base = rdma.ErrBusy
	case syscall.EFAULT:
		base = rdma.ErrFault
	case syscall.EADDRINUSE:
		base = rdma.ErrServiceInUse
	case syscall.ENODEV, syscall.ENXIO, syscall.EADDRNOTAVAIL:
		base = rdma.ErrNoDevice
	default: // ENOMEM, EAGAIN, EMFILE, ENOSPC, and what is left
		base = rdma.ErrNoResources
	}
	return fmt.Errorf("verbs: %s: %v: %w", op, e, base)
}

// postErr maps the post calls' results (shim.h GD_E*, else an errno).
func postErr(r C.int) error {
	switch r {
	case C.GD_ECLOSED:
		return rdma.ErrClosed
	case C.GD_ESTATE:
		return rdma.ErrState
	case C.GD_EFULL:
		return rdma.ErrQueueFull
	}
	return wrap("post", syscall.Errno(r))
}

// wrapMsg is an error with a message of the C side.
func wrapMsg(op, msg string, base error) error { return fmt.Errorf("verbs: %s: %s: %w", op, msg, base) }
