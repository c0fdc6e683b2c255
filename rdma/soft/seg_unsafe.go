package soft

// Shared-memory segments: memfds we create (sealed) and peers' memfds we
// map after checking them. Everything that turns a byte offset into a
// pointer lives here (house rule: unsafe only in *_unsafe.go).

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seg is a mapping of a memfd. Offsets passed to its accessors are computed
// from constants and indexes the caller has bounds-checked; a peer-supplied
// value is never used as an offset before that check.
type seg struct {
	b []byte
}

// ourSeals are the seals on every memfd we hand to a peer: it can neither
// shrink it under our mappings (SIGBUS) nor grow it, and no seal can be
// added later (a peer with a writable descriptor could otherwise add
// F_SEAL_FUTURE_WRITE and break our own new mappings).
const ourSeals = unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_SEAL

var errUnsealed = errors.New("soft: peer memory is not sealed against shrinking")

// newSegment creates a sealed memfd of size bytes and maps it read/write.
// frozen also seals it with F_SEAL_FUTURE_WRITE once our mapping exists:
// that mapping stays writable, but no descriptor can write it or map it
// writable again. A read-only descriptor alone does not keep a peer of our
// uid out: opening /proc/self/fd/N of it O_RDWR checks only the file's
// mode (0777 for a memfd), so the registration table, which peers must
// never write, is frozen.
func newSegment(name string, size int, frozen bool) (int, seg, error) {
	return newSegmentAt(name, size, frozen, nil)
}

// newSegmentAt is newSegment mapped over the range at (of size bytes) when
// at is not nil.
func newSegmentAt(name string, size int, frozen bool, at []byte) (int, seg, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return -1, seg{}, err
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Close(fd)
		return -1, seg{}, err
	}
	var b []byte
	if at != nil {
		_, err = unix.MmapPtr(fd, 0, unsafe.Pointer(&at[0]), uintptr(size), unix.PROT_READ|unix.PROT_WRITE,
			unix.MAP_SHARED|unix.MAP_FIXED)
		b = at
	} else {
		b, err = unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	}
	if err != nil {
		unix.Close(fd)
		return -1, seg{}, err
	}
	seals := ourSeals
	if frozen {
		seals |= unix.F_SEAL_FUTURE_WRITE
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		if at != nil {
			_ = zeroRange(at)
		} else {
			_ = unix.Munmap(b)
		}
		unix.Close(fd)
		return -1, seg{}, err
	}
	return fd, seg{b: b}, nil
}

// Bell ranges. Poll reads its device's bell (the inbound queue's head
// slot) without a lock or a count, so a bell's address range stays mapped
// for the life of the process: Close puts a private read-only mapping of
// zeros in place of the segment (one mmap with MAP_FIXED, so the range is
// never unmapped, even for an instant), and the next device maps its own
// bell over that range. A late Poll of a closed device reads zeros or that
// next device's queue; either way all it does next is TryLock the closed
// device's inbound.mu, under which it sees the device closed before it
// writes anything (shm_dev.go).
var bellRanges struct {
	mu   sync.Mutex
	free [][]byte // ranges of bellSegSize bytes, mapped to zeros
}

// newBell creates a device's bell segment, in a retired bell's range when
// there is one.
func newBell() (int, seg, error) {
	bellRanges.mu.Lock()
	var at []byte
	if n := len(bellRanges.free); n > 0 {
		at = bellRanges.free[n-1]
		bellRanges.free = bellRanges.free[:n-1]
	}
	bellRanges.mu.Unlock()
	if at == nil {
		return newSegment("godat-bell", bellSegSize, false)
	}
	fd, m, err := newSegmentAt("godat-bell", bellSegSize, false, at)
	if err != nil {
		retireRange(at) // zeros again, kept for the next bell
	}
	return fd, m, err
}

// retireBell replaces a closed device's bell with zeros and keeps its range
// for the next bell.
func retireBell(m seg) {
	if m.b != nil {
		retireRange(m.b)
	}
}

func retireRange(b []byte) {
	if zeroRange(b) != nil {
		return // still mapped as it was: kept out of the pool
	}
	bellRanges.mu.Lock()
	bellRanges.free = append(bellRanges.free, b)
	bellRanges.mu.Unlock()
}

// zeroRange maps private read-only zeros over b, in place.
func zeroRange(b []byte) error {
	_, err := unix.MmapPtr(-1, 0, unsafe.Pointer(&b[0]), uintptr(len(b)), unix.PROT_READ,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED)
	return err
}

// readOnlyFd opens a second, read-only descriptor of our memfd fd: what a
// peer gets for memory it may read but never write (our registration
// table). The peer cannot map it writable, truncate it or add seals, and
// reopening it read-write gains nothing: the table is frozen (newSegment).
func readOnlyFd(fd int) (int, error) {
	return unix.Open(fmt.Sprintf("/proc/self/fd/%d", fd), unix.O_RDONLY|unix.O_CLOEXEC, 0)
}

// mapPeer maps a peer's memfd of at least size bytes, after checking that
// it is sealed against shrinking (so no access through the mapping can
// ever fault) and large enough. writable maps it read/write.
func mapPeer(fd int, size int, writable bool) (seg, error) {
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil || seals&unix.F_SEAL_SHRINK == 0 {
		return seg{}, errUnsealed
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return seg{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size < int64(size) {
		return seg{}, fmt.Errorf("soft: peer memory of %d bytes, want %d", st.Size, size)
	}
	prot := unix.PROT_READ
	if writable {
		prot |= unix.PROT_WRITE
	}
	b, err := unix.Mmap(fd, 0, size, prot, unix.MAP_SHARED)
	if err != nil {
		return seg{}, err
	}
	return seg{b: b}, nil
}

func (m *seg) unmap() {
	if m.b != nil {
		_ = unix.Munmap(m.b)
		m.b = nil
	}
}

func (m seg) p32(off int) *uint32 { return (*uint32)(unsafe.Pointer(&m.b[off])) }
func (m seg) p64(off int) *uint64 { return (*uint64)(unsafe.Pointer(&m.b[off])) }

func (m seg) ld32(off int) uint32            { return atomic.LoadUint32(m.p32(off)) }
func (m seg) st32(off int, v uint32)         { atomic.StoreUint32(m.p32(off), v) }
func (m seg) add32(off int, v int32) uint32  { return atomic.AddUint32(m.p32(off), uint32(v)) }
func (m seg) ld64(off int) uint64            { return atomic.LoadUint64(m.p64(off)) }
func (m seg) st64(off int, v uint64)         { atomic.StoreUint64(m.p64(off), v) }
func (m seg) add64(off int, v uint64) uint64 { return atomic.AddUint64(m.p64(off), v) }
func (m seg) cas64(off int, old, v uint64) bool {
	return atomic.CompareAndSwapUint64(m.p64(off), old, v)
}

// Plain field access for slot contents published by a later atomic store
// (producer) or read after an atomic load of the publication (consumer).
func (m seg) get32(off int) uint32    { return *m.p32(off) }
func (m seg) put32(off int, v uint32) { *m.p32(off) = v }
func (m seg) get64(off int) uint64    { return *m.p64(off) }
func (m seg) put64(off int, v uint64) { *m.p64(off) = v }

// addr is the address of the word at off in the mapping, for the kernel
// (futex calls) and for C code that reads it (the quiet table's watch).
func (m seg) addr(off int) uintptr { return uintptr(unsafe.Pointer(&m.b[off])) }
