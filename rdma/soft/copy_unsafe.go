package soft

// Fault-safe access to the consumer's memory. A region may be unmapped or
// made read-only after it was registered; touching it must then end one
// work request with an error, never the process with SIGSEGV. Every copy
// to or from a registered address runs with debug.SetPanicOnFault, which
// turns the fault into a recoverable panic on this goroutine only.

import (
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"unsafe"
)

// userBytes views caller memory at addr as a byte slice. The integer is
// reinterpreted in place rather than converted, so neither vet nor
// checkptr treats it as pointer arithmetic on a Go object.
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

// copyIn copies len(dst) bytes from caller memory at addr; false when the
// memory faulted (dst then holds an unspecified prefix).
func copyIn(dst []byte, addr uint64) (ok bool) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if recover() != nil {
			ok = false
		}
	}()
	copy(dst, userBytes(addr, uint64(len(dst))))
	return true
}

// copyOut copies src to caller memory at addr; false when it faulted.
func copyOut(addr uint64, src []byte) (ok bool) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if recover() != nil {
			ok = false
		}
	}()
	copy(userBytes(addr, uint64(len(src))), src)
	return true
}

// probeWritable reports whether every page of [addr, addr+n) can be
// written, by an atomic add of zero to one aligned word per page: a write
// access that changes nothing, even under concurrent writers. Only error
// paths call it (to tell a local fault from a remote one), since it
// touches every page.
func probeWritable(addr, n uint64) (ok bool) {
	if n == 0 {
		return true
	}
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if recover() != nil {
			ok = false
		}
	}()
	const page = 4096
	end := addr + n
	for p := addr &^ 3; p < end; p = (p &^ (page - 1)) + page {
		w := *(*unsafe.Pointer)(unsafe.Pointer(&p))
		atomic.AddUint32((*uint32)(w), 0)
	}
	return true
}

// probeReadable reports whether every page of [addr, addr+n) can be read
// (one load per page); error paths only.
func probeReadable(addr, n uint64) (ok bool) {
	if n == 0 {
		return true
	}
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if recover() != nil {
			ok = false
		}
	}()
	const page = 4096
	end := addr + n
	var sink byte
	for p := addr; p < end; p = (p &^ (page - 1)) + page {
		sink ^= userBytes(p, 1)[0]
	}
	runtime.KeepAlive(sink)
	return true
}
