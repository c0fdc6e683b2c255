package rdmatest

import "unsafe"

// addrOf is the address of b's first byte, for registrations and
// scatter/gather entries. The suite only takes it of mmap'ed memory, which
// the garbage collector never moves or frees.
func addrOf(b []byte) uint64 {
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
}
