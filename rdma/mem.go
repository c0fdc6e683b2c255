package rdma

// Access is a set of memory access rights (enum ibv_access_flags). Local
// read is always allowed, as in verbs: there is no flag for it.
type Access uint32

// Memory access rights.
const (
	AccessLocalWrite  Access = 1 << iota // IBV_ACCESS_LOCAL_WRITE
	AccessRemoteWrite                    // IBV_ACCESS_REMOTE_WRITE (needs AccessLocalWrite)
	AccessRemoteRead                     // IBV_ACCESS_REMOTE_READ
	AccessMWBind                         // IBV_ACCESS_MW_BIND (with CapMemoryWindows)
)

// PD is a protection domain (ibv_pd): memory regions, queue pairs and SRQs
// of one PD may be used together; a work request naming memory of another
// PD fails.
type PD interface {
	// RegMR registers [addr, addr+length) of this process with the given
	// access (ibv_reg_mr). Registration pins nothing in the software
	// backend; a backend may check that the range is mapped (and writable
	// when AccessLocalWrite is asked).
	// Errors: ErrInvalid (length 0, a range that wraps or exceeds MaxMRSize,
	// AccessRemoteWrite without AccessLocalWrite), ErrFault (the range is
	// not mapped, or not writable where write access is asked, and the
	// backend checks), ErrNoResources (out of keys, RLIMIT_MEMLOCK),
	// ErrClosed.
	RegMR(addr, length uint64, access Access) (MR, error)
	// Dealloc frees the PD (ibv_dealloc_pd). Errors: ErrBusy while a QP,
	// SRQ or MR uses it; ErrClosed.
	Dealloc() error
}

// MR is a registered memory region (ibv_mr).
type MR interface {
	// LKey names the region in local scatter/gather entries (lkey).
	LKey() uint32
	// RKey names the region to a peer's RDMA reads and writes (rkey). A
	// backend makes keys hard to guess: a peer may only reach a region
	// whose key it was given.
	RKey() uint32
	// Dereg deregisters the region (ibv_dereg_mr): from its return, work
	// requests and peers naming its keys fail. Errors: ErrClosed.
	Dereg() error
}

// Within reports whether [addr, addr+n) lies inside the region [base,
// base+size), without overflow: the one bounds check of a segment against
// a registration, for the backends' checks of local segments and of a
// peer's requests.
func Within(base, size, addr, n uint64) bool {
	end := addr + n
	return end >= addr && addr >= base && end <= base+size
}
