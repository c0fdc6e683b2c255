package soft

// Epoch words: one per device, in memory that stays mapped for the life of
// the process, so that a watch handed out by cq.Quiet (quiet.go) may be
// read by C code after the device is gone. Each word sits alone on its
// cache line: the posting thread bumps it on every completion.

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

const epochLine = 64 // bytes per word: one cache line each

var epochWords struct {
	mu   sync.Mutex
	free []*atomic.Uint64
}

// takeEpoch gives a device its epoch word: a released one (its value only
// ever grows, so a stale watch of it never matches again), else one of a
// freshly mapped page. nil when no page can be mapped: the device then
// hands out no watch.
func takeEpoch() *atomic.Uint64 {
	epochWords.mu.Lock()
	defer epochWords.mu.Unlock()
	if len(epochWords.free) == 0 {
		page := unix.Getpagesize()
		b, err := unix.Mmap(-1, 0, page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return nil
		}
		for off := 0; off < len(b); off += epochLine {
			epochWords.free = append(epochWords.free, (*atomic.Uint64)(unsafe.Pointer(&b[off])))
		}
	}
	n := len(epochWords.free)
	w := epochWords.free[n-1]
	epochWords.free = epochWords.free[:n-1]
	return w
}

// dropEpoch gives the word back, bumped once more.
func dropEpoch(w *atomic.Uint64) {
	if w == nil {
		return
	}
	w.Add(1)
	epochWords.mu.Lock()
	epochWords.free = append(epochWords.free, w)
	epochWords.mu.Unlock()
}

// wordAddr is the address C code reads the word at.
func wordAddr(w *atomic.Uint64) uint64 { return uint64(uintptr(unsafe.Pointer(w))) }
