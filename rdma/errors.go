package rdma

import "errors"

// Errors a backend returns synchronously; core maps them to DAT codes in one
// place. A backend may wrap them with detail (fmt.Errorf("...: %w", ...));
// callers test with errors.Is.
var (
	// ErrNoBackend: no backend is registered under the name given to Open.
	ErrNoBackend = errors.New("rdma: no such backend")
	// ErrNoDevice: the backend has no usable device for the parameters
	// (an address or interface this host lacks, a device that is absent).
	ErrNoDevice = errors.New("rdma: no such device")
	// ErrQueueFull: the work queue holds its capacity of requests (ENOMEM).
	ErrQueueFull = errors.New("rdma: work queue full")
	// ErrServiceInUse: the service id is already bound (EADDRINUSE).
	ErrServiceInUse = errors.New("rdma: service id in use")
	// ErrNoResources: the backend ran out of a resource (memory, fds, keys,
	// locked memory).
	ErrNoResources = errors.New("rdma: insufficient resources")
	// ErrState: the operation is not valid in the object's current state.
	ErrState = errors.New("rdma: invalid state")
	// ErrInvalid: a malformed argument (an SGE count, a length, a size).
	ErrInvalid = errors.New("rdma: invalid argument")
	// ErrProtection: memory registered in another protection domain.
	ErrProtection = errors.New("rdma: protection domain mismatch")
	// ErrPrivileges: an unknown memory key, or a region without the access
	// the operation needs.
	ErrPrivileges = errors.New("rdma: memory privileges violation")
	// ErrFault: memory that is not mapped, or not writable where writing
	// was asked (EFAULT).
	ErrFault = errors.New("rdma: bad address")
	// ErrBusy: the object is still used by another (EBUSY).
	ErrBusy = errors.New("rdma: object in use")
	// ErrTimeout: a bounded wait ended without an event.
	ErrTimeout = errors.New("rdma: timed out")
	// ErrNotSupported: an optional feature the backend does not have.
	ErrNotSupported = errors.New("rdma: not supported")
	// ErrClosed: the object (or its device) was destroyed.
	ErrClosed = errors.New("rdma: closed")
)

// SegmentError is the post-time verdict of CapPostCheck on a local segment
// whose key names a live region, in the order the contract checks: a region
// of another PD is ErrProtection, one without the rights need is
// ErrPrivileges, a segment not inside it ErrInvalid; nil when it passes.
// (A key that names no region is ErrPrivileges.) Backends that check at
// post time share it, so that they answer one bad segment alike.
func SegmentError(samePD bool, has, need Access, inside bool) error {
	switch {
	case !samePD:
		return ErrProtection
	case has&need != need:
		return ErrPrivileges
	case !inside:
		return ErrInvalid
	}
	return nil
}
