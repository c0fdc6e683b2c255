package verbs

import (
	"bytes"
	"debug/elf"
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// params are the open parameters of the tests' device: GODAT_VERBS_PARAMS
// ("addr=10.66.0.1" in the VM harness), else the first active device.
func params() rdma.Params {
	p := rdma.Params{}
	for _, kv := range strings.Split(os.Getenv("GODAT_VERBS_PARAMS"), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			p[k] = v
		}
	}
	return p
}

// openOrSkip opens a device, or skips the test (saying why) on a machine
// without one: the tests need a real RDMA device (make check-verbs runs
// them in a VM with Soft-RoCE).
func openOrSkip(t testing.TB, async rdma.AsyncHandler) rdma.Device {
	t.Helper()
	d, err := rdma.Open("verbs", params(), async)
	if errors.Is(err, rdma.ErrNoDevice) {
		t.Skipf("no RDMA device: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// The package must not link libibverbs or librdmacm (they are opened with
// dlopen): the test binary imports neither library nor any of their
// symbols.
func TestNoLinkDependency(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	f, err := elf.Open(exe)
	require.NoError(t, err)
	defer f.Close()
	libs, err := f.ImportedLibraries()
	require.NoError(t, err)
	for _, l := range libs {
		require.False(t, strings.Contains(l, "ibverbs") || strings.Contains(l, "rdmacm"), "the binary links %s", l)
	}
	syms, err := f.ImportedSymbols()
	require.NoError(t, err)
	for _, s := range syms {
		require.False(t, strings.HasPrefix(s.Name, "ibv_") || strings.HasPrefix(s.Name, "rdma_"),
			"the binary imports %s from %s", s.Name, s.Library)
	}
}

func TestPortOf(t *testing.T) {
	for id, want := range map[uint64]uint16{0: 64512, 1023: 65535, 1024: 1024, 65535: 65535, 1<<40 | 4791: 4791, 1 << 16: 64512} {
		require.Equal(t, want, portOf(id), "service id %#x", id)
	}
}

func TestPrivateDataHeaders(t *testing.T) {
	priv := []byte("hello")
	sid, got, ok := parseReq(reqHeader(0x1234_5678_9abc_def0, priv))
	require.True(t, ok)
	require.Equal(t, uint64(0x1234_5678_9abc_def0), sid)
	require.Equal(t, priv, got)
	// InfiniBand delivers the whole fixed-size field, zero padded.
	padded := append(reqHeader(7, nil), make([]byte, 40)...)
	sid, got, ok = parseReq(padded)
	require.True(t, ok)
	require.Equal(t, uint64(7), sid)
	require.Nil(t, got)
	_, _, ok = parseReq([]byte{1, 2, 3})
	require.False(t, ok, "a request without the header")
	bad := reqHeader(7, nil)
	bad[8] = 200
	_, _, ok = parseReq(bad)
	require.False(t, ok, "a length past the data")

	require.Equal(t, priv, parseRep(append(repHeader(priv), make([]byte, 100)...)))
	require.Nil(t, parseRep(repHeader(nil)))
	require.Nil(t, parseRep(nil))

	kind, got := parseRej(append(rejHeader(rejConsumer, priv), make([]byte, 100)...))
	require.Equal(t, byte(rejConsumer), kind)
	require.Equal(t, priv, got)
	kind, _ = parseRej(make([]byte, 148)) // a CM's own reject: zeros
	require.Equal(t, byte(rejRefused), kind)
	kind, got = parseRej(rejHeader(rejConsumer, nil))
	require.Equal(t, byte(rejConsumer), kind)
	require.Nil(t, got)
	require.Equal(t, 47, maxPrivateData(false))
	require.True(t, bytes.Equal(priv, priv))
}

func TestSockaddr(t *testing.T) {
	for _, s := range []string{"10.66.0.1:4791", "[fe80::1]:80", "[2001:db8::2]:65535", "0.0.0.0:0"} {
		ap := netip.MustParseAddrPort(s)
		sa := sockaddr(ap)
		require.Equal(t, ap, addrPort(&sa), s)
	}
	ap := netip.MustParseAddrPort("[::ffff:10.0.0.1]:7")
	sa := sockaddr(ap)
	require.Equal(t, netip.MustParseAddrPort("10.0.0.1:7"), addrPort(&sa), "IPv4-mapped addresses become IPv4")
}

// Unknown parameters and absent devices are ErrNoDevice with a reason.
func TestOpenErrors(t *testing.T) {
	_, err := rdma.Open("verbs", rdma.Params{"bogus": "1"}, nil)
	require.ErrorIs(t, err, rdma.ErrNoDevice)
	_, err = rdma.Open("verbs", rdma.Params{"addr": "192.0.2.77"}, nil)
	require.ErrorIs(t, err, rdma.ErrNoDevice)
	if !librariesLoad() {
		require.Contains(t, err.Error(), "cannot load")
		t.Skipf("rdma-core's libraries do not load here: %v", err)
	}
	require.Contains(t, err.Error(), "192.0.2.77")
	_, err = rdma.Open("verbs", rdma.Params{"dev": "nosuchdev0"}, nil)
	require.ErrorIs(t, err, rdma.ErrNoDevice)
	require.Contains(t, err.Error(), "nosuchdev0")
	_, err = rdma.Open("verbs", rdma.Params{"netdev": "nosuchif0"}, nil)
	require.ErrorIs(t, err, rdma.ErrNoDevice)
}

// A connection to a loopback address goes to the IA's own address.
func TestRemoteAddr(t *testing.T) {
	own := netip.MustParseAddr("10.66.0.1")
	for in, want := range map[string]string{"127.0.0.1": "10.66.0.1", "::1": "10.66.0.1",
		"::ffff:127.0.0.1": "10.66.0.1", "10.66.0.2": "10.66.0.2", "::ffff:10.0.0.9": "10.0.0.9", "fe80::1": "fe80::1"} {
		require.Equal(t, want, remoteAddr(netip.MustParseAddr(in), own).String(), in)
	}
}
