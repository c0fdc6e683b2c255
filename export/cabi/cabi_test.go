package cabi

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"godat/core"
)

// obj is a core object of the zero family (CR, which owns C memory).
type obj struct{ core.Object }

// A handle resolves to its object while it lives, to nothing after, and a
// later object never answers to it; its stub starts with the ABI's
// provider pointer.
func TestHandleLifecycle(t *testing.T) {
	provider := CPtr(0xdead0000)
	Handles.SetProvider(provider)
	a := &obj{}
	require.NoError(t, Handles.Bind(a))
	h := a.Handle()
	require.NotZero(t, h)
	got, err := Lookup[*obj](h, core.TypeCR, core.SubHandleCR)
	require.NoError(t, err)
	require.Same(t, a, got)
	require.Equal(t, provider, *(*unsafe.Pointer)(CPtr(h)), "the stub's first word")
	require.Equal(t, h, HandleOf(a))
	require.Equal(t, h, HandleOfObj(a))
	require.Zero(t, HandleOf[*obj](nil))
	require.Zero(t, HandleOfObj(nil))
	o, ok := Object(h)
	require.True(t, ok)
	require.Same(t, a, o)
	m, held := HoldCMem(a)
	require.True(t, held)
	require.NotNil(t, m.Ptr(), "a CR owns C memory")
	m.Drop()
	_, err = Lookup[*obj](h, core.TypeEP, core.SubHandleEP)
	require.Equal(t, core.ErrHandle(core.SubHandleEP), err, "wrong family")

	Handles.Release(a)
	_, err = Lookup[*obj](h, core.TypeCR, core.SubHandleCR)
	require.Equal(t, core.ErrHandle(core.SubHandleCR), err)
	_, ok = Object(h)
	require.False(t, ok)
	_, held = HoldCMem(a)
	require.False(t, held, "a dead object's memory is not handed out")
	Handles.Release(a) // twice: nothing

	for i := 0; i < reuseHoldoff+2; i++ {
		b := &obj{}
		require.NoError(t, Handles.Bind(b))
		require.NotEqual(t, h, b.Handle(), "a new object never gets a freed handle")
		Handles.Release(b)
	}
	_, err = Lookup[*obj](h, core.TypeCR, core.SubHandleCR)
	require.Error(t, err)
}

// Values consumers pass where handles go never resolve, and are never
// dereferenced.
func TestLookupGarbage(t *testing.T) {
	a := &obj{}
	require.NoError(t, Handles.Bind(a))
	defer Handles.Release(a)
	for _, h := range []uintptr{0, 1, 2, Handles.base - stubSize, a.Handle() + 1, a.Handle() + 8,
		Handles.base + viewBytes*handleViews, ^uintptr(0)} {
		_, err := Lookup[*obj](h, core.TypeCR, core.SubHandleCR)
		require.Error(t, err, "%#x", h)
	}
	got, err := LookupOptional[*obj](0, core.TypeCR, core.SubHandleCR)
	require.NoError(t, err)
	require.Nil(t, got)
	require.Equal(t, "DAT_HANDLE_NULL", Describe(0))
	require.Contains(t, Describe(a.Handle()), "CR 0x")
	require.Contains(t, Describe(1), "not a live handle")
}

func TestSockaddr(t *testing.T) {
	var buf [32]byte
	p := unsafe.Pointer(&buf[0])
	for _, s := range []string{"192.0.2.7:4791", "[2001:db8::1]:18515", "[::ffff:10.1.2.3]:7"} {
		a := netip.MustParseAddrPort(s)
		require.Equal(t, p, PutSockaddr(p, a))
		got, ok := Sockaddr(p)
		require.True(t, ok, s)
		require.Equal(t, netip.AddrPortFrom(a.Addr().Unmap(), a.Port()), got, s)
	}
	buf[0], buf[1] = 0xff, 0xff // no such family
	_, ok := Sockaddr(p)
	require.False(t, ok)
	_, ok = Sockaddr(nil)
	require.False(t, ok)
}

func TestStrings(t *testing.T) {
	var buf [8]byte
	PutString(unsafe.Pointer(&buf[0]), len(buf), "godat-too-long")
	require.Equal(t, "godat-t\x00", string(buf[:]), "truncated, NUL-terminated")
	require.Equal(t, "godat-t", CString(unsafe.Pointer(&buf[0]), 256))
	require.Equal(t, "god", CString(unsafe.Pointer(&buf[0]), 3), "at most max bytes")
	require.Equal(t, "", CString(nil, 8))
	require.Nil(t, GoBytes(nil, 4))
	require.Nil(t, GoBytes(unsafe.Pointer(&buf[0]), 0))
	require.Equal(t, []byte("god"), GoBytes(unsafe.Pointer(&buf[0]), 3))
}

// An object's C memory outlives its handle while a call holds it: the
// handle's release leaves it to the last holder, a hold on a dead object
// fails, and the block is freed exactly once, by whoever lets go last.
func TestCMemHold(t *testing.T) {
	a := &obj{}
	require.NoError(t, Handles.Bind(a))
	m1, ok := HoldCMem(a)
	require.True(t, ok)
	m2, ok := HoldCMem(a)
	require.True(t, ok)
	require.Equal(t, m1.Ptr(), m2.Ptr())
	e := m1.e
	require.EqualValues(t, 3, e.refs.Load(), "the handle and two holds")
	Handles.Release(a)
	require.EqualValues(t, 2, e.refs.Load(), "released, still held")
	_, ok = HoldCMem(a)
	require.False(t, ok)
	m1.Drop()
	require.EqualValues(t, 1, e.refs.Load())
	m2.Drop() // frees the block
	require.EqualValues(t, 0, e.refs.Load())
	CMem{}.Drop() // the zero hold: nothing
	require.Nil(t, CMem{}.Ptr())
}

// The private data kept in an object's C memory is cut at CMemPrivateMax.
func TestPutPrivate(t *testing.T) {
	a := &obj{}
	require.NoError(t, Handles.Bind(a))
	defer Handles.Release(a)
	h, ok := HoldCMem(a)
	require.True(t, ok)
	defer h.Drop()
	m := h.Ptr()
	long := make([]byte, CMemPrivateMax+10)
	for i := range long {
		long[i] = byte(i)
	}
	p, n := PutPrivate(m, long)
	require.Equal(t, unsafe.Add(m, CMemPrivate), p)
	require.Equal(t, CMemPrivateMax, n)
	require.Equal(t, long[:n], unsafe.Slice((*byte)(p), n))
}

var testABI = ABI{Internal: 0x80040000, NameMax: 16,
	Names: func(ret uint32) (string, string) { return "MAJOR", "MINOR" }}

// A panic in a wrapper becomes the ABI's internal error; success and plain
// failures pass through.
func TestGuard(t *testing.T) {
	c := &Call{Name: "dat_test", ABI: &testABI}
	call := func(ret uint32, panics bool) (r uint32) {
		defer c.Done(&r, 0)
		if panics {
			panic("boom")
		}
		return ret
	}
	require.Equal(t, uint32(0), call(0, false))
	require.Equal(t, uint32(0x80060000), call(0x80060000, false))
	require.Equal(t, testABI.Internal, call(0, true))
	named := func() (r uint32) {
		name := [4]byte{'i', 'a', '0', 0}
		defer c.DoneName(&r, unsafe.Pointer(&name[0]))
		panic("boom")
	}
	require.Equal(t, testABI.Internal, named())
	require.Equal(t, `"ia0"`, c.describeName(unsafe.Pointer(&[4]byte{'i', 'a', '0', 0})))
}

// cabi is shared by the libraries of every DAT ABI: none of its files
// includes a DAT header (cgo types are per package, and the DAT 1.2 and 2.0
// headers cannot both be in one).
func TestNoABIHeaders(t *testing.T) {
	files, err := filepath.Glob("*")
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || !strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, ".c") && !strings.HasSuffix(f, ".h") {
			continue
		}
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		require.False(t, strings.Contains(string(b), "<dat/"), "%s includes a DAT header", f)
	}
}
