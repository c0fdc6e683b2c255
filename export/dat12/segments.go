package dat12

/*
#include <dat/udat.h>
*/
import "C"

import (
	"unsafe"

	"godat/core"
)

// SmallIOV is how many local segments the common post converts into a
// SmallSegmentBuf: clearing a full SegmentBuf on the stack costs more than
// converting a few segments.
const SmallIOV = 4

// SmallSegmentBuf holds the local segments of a post with at most
// SmallIOV of them, on the wrapper's stack.
type SmallSegmentBuf [SmallIOV]core.Segment

// SegmentBuf holds the local segments of one call, on the caller's stack.
// It has room for one segment more than core takes (a post's count is
// bounded by CheckIOV first; a sync list goes through it in chunks).
type SegmentBuf [core.MaxSegments + 1]core.Segment

// CheckIOV checks a DTO's local IOV: count and pointer, argument 2. The
// wrapper then converts it into a SmallSegmentBuf or a SegmentBuf (a
// buffer on its own stack, passed straight to core, allocates nothing).
// A count past core.MaxSegments, more than any EP or SRQ takes, is refused
// with the error core gives a count past the IOV's depth, before a triplet
// is read: the array behind a wild count may be far shorter.
func CheckIOV(iov unsafe.Pointer, n int32) error {
	if n < 0 || n > 0 && iov == nil {
		return ArgAt(2)
	}
	if n > core.MaxSegments {
		return core.ErrArg(core.ArgSegmentCount)
	}
	return nil
}

// Fill converts the first min(n, SmallIOV) triplets at iov.
func (b *SmallSegmentBuf) Fill(iov unsafe.Pointer, n int) []core.Segment { return fill(b[:], iov, n) }

// Fill converts the first min(n, len(b)) triplets at iov.
func (b *SegmentBuf) Fill(iov unsafe.Pointer, n int) []core.Segment { return fill(b[:], iov, n) }

// fill converts the first min(n, len(b)) triplets at iov into b.
func fill(b []core.Segment, iov unsafe.Pointer, n int) []core.Segment {
	n = min(n, len(b))
	if n <= 0 || iov == nil {
		return nil
	}
	t := unsafe.Slice((*C.DAT_LMR_TRIPLET)(iov), n)
	for i := range t {
		b[i] = core.Segment{Addr: uint64(t[i].virtual_address), Length: uint64(t[i].segment_length),
			LMRContext: uint32(t[i].lmr_context)}
	}
	return b[:n]
}

// EachChunk converts the n triplets at iov a buffer at a time and hands
// each chunk to f, stopping at f's first error (dat_lmr_sync_rdma_*, whose
// lists may be long).
func EachChunk(iov unsafe.Pointer, n int, f func([]core.Segment) error) error {
	var b SegmentBuf
	t := unsafe.Slice((*C.DAT_LMR_TRIPLET)(iov), n)
	for len(t) > 0 {
		k := min(len(t), len(b))
		if err := f(b.Fill(unsafe.Pointer(&t[0]), k)); err != nil {
			return err
		}
		t = t[k:]
	}
	return nil
}

// Segment converts the one DAT_LMR_TRIPLET at p.
func Segment(p unsafe.Pointer) core.Segment {
	t := (*C.DAT_LMR_TRIPLET)(p)
	return core.Segment{Addr: uint64(t.virtual_address), Length: uint64(t.segment_length), LMRContext: uint32(t.lmr_context)}
}

// Remote converts the DAT_RMR_TRIPLET at p.
func Remote(p unsafe.Pointer) core.RemoteSegment {
	t := (*C.DAT_RMR_TRIPLET)(p)
	return core.RemoteSegment{Addr: uint64(t.target_address), Length: uint64(t.segment_length), RMRContext: uint32(t.rmr_context)}
}
