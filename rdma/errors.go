package rdma

import "errors"

// Errors a backend returns synchronously; core maps them to DAT codes.
var (
	// ErrQueueFull: the work queue is at its configured depth.
	ErrQueueFull = errors.New("rdma: work queue full")
	// ErrQualInUse: the connection qualifier is already bound.
	ErrQualInUse = errors.New("rdma: connection qualifier in use")
	// ErrNoResources: the backend ran out of a resource (memory, fds, keys).
	ErrNoResources = errors.New("rdma: insufficient resources")
	// ErrState: the operation is not valid in the QP's current state.
	ErrState = errors.New("rdma: invalid queue pair state")
	// ErrUnreachable: the remote address cannot be reached by this device.
	ErrUnreachable = errors.New("rdma: address unreachable")
	// ErrInvalid: a malformed argument (bad SGE count, length, key).
	ErrInvalid = errors.New("rdma: invalid argument")
	// ErrProtection: memory registered in another protection domain.
	ErrProtection = errors.New("rdma: protection domain mismatch")
	// ErrPrivileges: an unknown memory key, or a region without the access
	// the operation needs.
	ErrPrivileges = errors.New("rdma: memory privileges violation")
	// ErrClosed: the object was destroyed.
	ErrClosed = errors.New("rdma: closed")
)
