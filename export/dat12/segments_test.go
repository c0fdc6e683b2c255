//go:build cgotest

package dat12

import (
	"errors"
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"godat/core"
)

func wantSegment(i int) core.Segment {
	return core.Segment{Addr: uint64(0x1000 * (i + 1)), Length: uint64(64 * (i + 1)), LMRContext: uint32(100 + i)}
}

// The consumer's triplets become core segments field by field; a count
// longer than core takes is refused before a triplet is read, and a fill
// never goes past its buffer.
func TestSegmentConversion(t *testing.T) {
	p, free := cTriplets(100)
	defer free()
	iov := func(p unsafe.Pointer, n int32) ([]core.Segment, error) {
		if err := CheckIOV(p, n); err != nil {
			return nil, err
		}
		var large SegmentBuf
		segs := large.Fill(p, int(n))
		if n <= SmallIOV {
			var small SmallSegmentBuf
			require.Equal(t, segs, small.Fill(p, int(n)))
		}
		return segs, nil
	}
	for _, n := range []int{1, SmallIOV, SmallIOV + 1, 16, core.MaxSegments} {
		segs, err := iov(p, int32(n))
		require.NoError(t, err)
		require.Len(t, segs, n)
		for i := range segs {
			require.Equal(t, wantSegment(i), segs[i], "%d of %d", i, n)
		}
	}
	_, err := iov(p, core.MaxSegments+1)
	require.Equal(t, core.ErrArg(core.ArgSegmentCount), err, "refused before a triplet is read")
	_, err = iov(p, math.MaxInt32)
	require.Equal(t, core.ErrArg(core.ArgSegmentCount), err)
	var large SegmentBuf
	segs := large.Fill(p, 100)
	require.Len(t, segs, core.MaxSegments+1, "never past the buffer")
	require.Equal(t, wantSegment(core.MaxSegments), segs[core.MaxSegments])
	segs, err = iov(nil, 0)
	require.NoError(t, err)
	require.Empty(t, segs)
	_, err = iov(nil, 1)
	require.Equal(t, ArgAt(2), err)
	_, err = iov(p, -1)
	require.Equal(t, ArgAt(2), err)
	var small SmallSegmentBuf
	require.Len(t, small.Fill(p, 100), SmallIOV, "never past the buffer")
	require.Equal(t, wantSegment(5), Segment(unsafe.Add(p, 5*24)))

	r, freeR := cRemote(7, 0x2000, 4096)
	defer freeR()
	require.Equal(t, core.RemoteSegment{Addr: 0x2000, Length: 4096, RMRContext: 7}, Remote(r))
}

// A long sync list is handed over in buffer-sized chunks, in order, and
// the first error stops it.
func TestEachChunk(t *testing.T) {
	p, free := cTriplets(100)
	defer free()
	var got []core.Segment
	require.NoError(t, EachChunk(p, 100, func(s []core.Segment) error {
		require.LessOrEqual(t, len(s), len(SegmentBuf{}))
		got = append(got, s...)
		return nil
	}))
	require.Len(t, got, 100)
	for i := range got {
		require.Equal(t, wantSegment(i), got[i])
	}
	calls := 0
	stop := errors.New("stop")
	require.Equal(t, stop, EachChunk(p, 100, func([]core.Segment) error { calls++; return stop }))
	require.Equal(t, 1, calls)
}

// post converts n segments as the post wrappers do (the small buffer for
// the common short list) and hands them to core, here a sum.
func post(p unsafe.Pointer, n int) uint64 {
	if n <= SmallIOV {
		var b SmallSegmentBuf
		return sumLength(b.Fill(p, n))
	}
	var b SegmentBuf
	return sumLength(b.Fill(p, n))
}

//go:noinline
func sumLength(s []core.Segment) uint64 {
	var x uint64
	for i := range s {
		x += s[i].Length
	}
	return x
}

// The conversion of a post's IOV allocates nothing, short or long.
func TestSegmentConversionAllocs(t *testing.T) {
	p, free := cTriplets(16)
	defer free()
	var sink uint64
	for _, n := range []int{1, 16} {
		allocs := testing.AllocsPerRun(100, func() { sink += post(p, n) })
		require.Zero(t, allocs, "%d segments", n)
	}
	require.NotZero(t, sink)
}

var benchSink uint64

func benchmarkIOV(b *testing.B, n int) {
	p, free := cTriplets(n)
	defer free()
	b.ReportAllocs()
	for b.Loop() {
		benchSink += post(p, n)
	}
}

// The cost of converting a post's local IOV on the stack, clearing the
// buffer and handing the segments to a (non-inlined) function included:
// what a post pays over viewing the consumer's array in place.
func BenchmarkIOV1(b *testing.B)  { benchmarkIOV(b, 1) }
func BenchmarkIOV16(b *testing.B) { benchmarkIOV(b, 16) }
