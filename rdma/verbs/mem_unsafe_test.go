package verbs

import "unsafe"

// addr is the address of b's first byte, as registrations and SGEs name
// memory.
func addr(b []byte) uint64 { return uint64(uintptr(unsafe.Pointer(&b[0]))) }
