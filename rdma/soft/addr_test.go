package soft

import (
	"net"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// A TCP-capable device without addr= is wild: it reports the host's first
// address; a shared-memory one and one with addr= keep their address.
func TestParamsWild(t *testing.T) {
	for _, c := range []struct {
		p    rdma.Params
		wild bool
		addr netip.Addr
	}{
		{rdma.Params{"transport": "tcp"}, true, hostAddr()},
		{rdma.Params{"transport": "auto"}, true, hostAddr()},
		{rdma.Params{"transport": "shm"}, false, lo},
		{rdma.Params{}, false, lo},
		{rdma.Params{"transport": "tcp", "addr": "127.0.0.1"}, false, lo},
		{rdma.Params{"transport": "auto", "addr": "lo"}, false, lo},
		{rdma.Params{"transport": "tcp", "addr": "::1"}, false, netip.IPv6Loopback()},
	} {
		p, err := parseParams(c.p)
		require.NoError(t, err, "%v", c.p)
		require.Equal(t, c.wild, p.wild, "%v", c.p)
		require.Equal(t, c.addr, p.addr, "%v", c.p)
	}
}

// hostAddr: the first non-loopback IPv4 address of an interface that is
// up, else 127.0.0.1.
func TestHostAddr(t *testing.T) {
	a := hostAddr()
	require.True(t, a.Is4(), a)
	ifcs, err := net.Interfaces()
	require.NoError(t, err)
	var first netip.Addr
	for _, ifc := range ifcs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, x := range addrs {
			if p, ok := x.(*net.IPNet); ok && p.IP.To4() != nil && !p.IP.IsLoopback() && !first.IsValid() {
				first, _ = netip.AddrFromSlice(p.IP.To4())
			}
		}
	}
	if !first.IsValid() {
		require.Equal(t, lo, a, "no IPv4 address but loopback ones")
		return
	}
	require.False(t, a.IsLoopback(), a)
	require.True(t, isLocalAddr(a), a)
	if !first.IsLinkLocalUnicast() {
		require.Equal(t, first, a)
	}
}

// A wild device listens on every IPv4 address of the host: a client
// reaches it at 127.0.0.2 (which a listener on 127.0.0.1 does not serve),
// through TCP or, for an auto listener, shared memory; the addresses each
// side reports are those of the connection. A device with addr= listens
// there only.
func TestWildListens(t *testing.T) {
	lo2 := netip.MustParseAddr("127.0.0.2")
	for _, c := range []struct{ server, client string }{
		{"tcp", "tcp"}, {"auto", "tcp"}, {"auto", "auto"}, {"auto", "shm"}, {"tcp", "auto"},
	} {
		t.Run(c.server+"-"+c.client, func(t *testing.T) {
			s := newEnd(t, rdma.Params{"transport": c.server})
			cl := newEnd(t, rdma.Params{"transport": c.client})
			l, err := s.dev.Listen(s.cm, 0, true, 4, 7)
			require.NoError(t, err)
			defer l.Close()
			require.NoError(t, cl.qp.Connect(netip.AddrPortFrom(lo2, 0), l.ServiceID(), nil, testWait))
			ev := s.event(t)
			require.Equal(t, rdma.CMConnectRequest, ev.Type)
			// The kernel's source for 127.0.0.2 is 127.0.0.1; the shared-
			// memory wire says the same.
			require.Equal(t, lo, ev.Request.RemoteAddr().Addr())
			require.NoError(t, ev.Request.Accept(s.qp, nil))
			require.Equal(t, rdma.CMEstablished, cl.event(t).Type)
			require.Equal(t, rdma.CMEstablished, s.event(t).Type)
			q := cl.qp.(*qp)
			q.mu.Lock()
			_, isShm := q.c.w.(*shmWire)
			q.mu.Unlock()
			require.Equal(t, c.server == "auto" && c.client != "tcp", isShm, "shared memory chosen")
			require.Equal(t, ev.Request.RemoteAddr(), s.qp.RemoteAddr())
			require.Equal(t, ev.Request.RemoteAddr(), cl.qp.LocalAddr())
			require.Equal(t, lo2, cl.qp.RemoteAddr().Addr())
			if !isShm {
				require.Equal(t, netip.AddrPortFrom(lo2, tcpPortOf(l.ServiceID())), s.qp.LocalAddr())
			}
			sendTag(t, cl, s, 3)
		})
	}
	t.Run("addr", func(t *testing.T) {
		s := newEnd(t, rdma.Params{"transport": "tcp", "addr": "127.0.0.1"})
		cl := newEnd(t, rdma.Params{"transport": "tcp"})
		l, err := s.dev.Listen(s.cm, 0, true, 4, 7)
		require.NoError(t, err)
		defer l.Close()
		require.NoError(t, cl.qp.Connect(netip.AddrPortFrom(lo2, 0), l.ServiceID(), nil, testWait))
		require.Equal(t, rdma.CMRefused, cl.event(t).Type)
	})
}
