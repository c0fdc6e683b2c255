package soft

import (
	"bytes"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

func TestTCPPortOf(t *testing.T) {
	require.Equal(t, uint16(5000), tcpPortOf(5000))
	require.Equal(t, uint16(5000), tcpPortOf(1<<40|5000))
	require.Equal(t, uint16(64512), tcpPortOf(0))
	require.Equal(t, uint16(65535), tcpPortOf(1023))
	require.Equal(t, uint16(1024), tcpPortOf(1024))
}

func TestOpenParams(t *testing.T) {
	for _, p := range []rdma.Params{{"transport": "udp"}, {"timeout": "0"}, {"timeout": "x"}, {"addr": "no-such-if0"}} {
		_, err := rdma.Open("soft", p, nil)
		require.Error(t, err, "%v", p)
	}
	d := openDev(t, rdma.Params{"transport": "tcp", "addr": "lo", "timeout": "3"}, nil)
	require.Equal(t, lo, d.Addr())
	require.Equal(t, "soft-tcp", d.Query().Name)
	require.Equal(t, 3*time.Second, d.(*device).timeout)
}

// A client that does not speak the protocol is dropped without a request
// reaching the consumer, and the listener goes on.
func TestTCPGarbageClient(t *testing.T) {
	b := newEnd(t, rdma.Params{"transport": "tcp"})
	l, err := b.dev.Listen(b.cm, 0, true, 4, 5)
	require.NoError(t, err)
	defer l.Close()
	c, err := net.Dial("tcp", netip.AddrPortFrom(lo, tcpPortOf(l.ServiceID())).String())
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write(bytes.Repeat([]byte("GET / HTTP/1.0\r\n"), 4))
	require.NoError(t, err)
	_ = c.SetReadDeadline(time.Now().Add(testWait))
	_, err = c.Read(make([]byte, 16))
	require.Error(t, err) // closed by the listener
	var ev rdma.CMEvent
	require.ErrorIs(t, b.cm.Get(&ev, 20*time.Millisecond), rdma.ErrTimeout)
	a := newEnd(t, rdma.Params{"transport": "tcp"})
	require.NoError(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), l.ServiceID(), nil, testWait))
	ev = b.event(t)
	require.Equal(t, rdma.CMConnectRequest, ev.Type)
	require.NoError(t, ev.Request.Accept(b.qp, nil))
	require.Equal(t, rdma.CMEstablished, a.event(t).Type)
}

// An auto device reaches an auto or shm-capable listener of this host
// through shared memory and a TCP-only one through TCP; an auto listener
// serves both kinds of client on one service id; receives posted before
// the connection stay with the QP whatever the wire.
func TestAutoPicksWire(t *testing.T) {
	auto := rdma.Params{"transport": "auto"}
	for _, peer := range []string{"auto", "tcp", "shm"} {
		t.Run(peer, func(t *testing.T) {
			a := newEnd(t, auto)
			b := newEnd(t, rdma.Params{"transport": peer})
			rb, rmr := a.buf(t, 8, allAccess)
			require.NoError(t, a.qp.PostRecv(&rdma.RecvWR{WRID: 77, SGL: []rdma.SGE{sge(rb, rmr)}}))
			connect(t, a, b, nil, nil)
			q := a.qp.(*qp)
			q.mu.Lock()
			_, isShm := q.c.w.(*shmWire)
			q.mu.Unlock()
			require.Equal(t, peer != "tcp", isShm, "shared memory chosen")
			sb, smr := b.buf(t, 8, allAccess)
			copy(sb, "payload!")
			require.NoError(t, b.qp.PostSend(&rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{sge(sb, smr)}}))
			wc := pollN(t, a.rcq, 1)[0]
			require.Equal(t, uint64(77), wc.WRID)
			require.Equal(t, "payload!", string(rb))
		})
	}
	s := newEnd(t, auto)
	// A fixed id whose port (4660) is outside the ephemeral range, where an
	// outgoing connection of another test could hold it.
	l, err := s.dev.Listen(s.cm, 0x4242_0000_1234, false, 4, 5)
	require.NoError(t, err)
	defer l.Close()
	for _, peer := range []string{"tcp", "shm"} {
		c := newEnd(t, rdma.Params{"transport": peer})
		require.NoError(t, c.qp.Connect(netip.AddrPortFrom(lo, 0), 0x4242_0000_1234, nil, testWait))
		ev := s.event(t)
		require.Equal(t, rdma.CMConnectRequest, ev.Type)
		require.Equal(t, uint64(0x4242_0000_1234), ev.Request.ServiceID())
		require.NoError(t, ev.Request.Accept(s.qp, nil))
		require.Equal(t, rdma.CMEstablished, c.event(t).Type)
		require.Equal(t, rdma.CMEstablished, s.event(t).Type)
		sendTag(t, c, s, 5)
		require.NoError(t, c.qp.Disconnect(false))
		require.Equal(t, rdma.CMDisconnected, c.event(t).Type)
		require.Equal(t, rdma.CMDisconnected, s.event(t).Type)
		pollN(t, s.rcq, 0)
		require.NoError(t, s.qp.Reset())
	}
}

// The active side's established event comes before the handshake's
// goroutine hands the connection to the device's loop (establish), so a
// consumer may end the connection while that runs. An abort then, which
// looked for the loop before it was set, left the connection in the
// loop's set for ever (and raced on the wire's loop field): whichever of
// the two comes second now takes it out. Each round aborts the wire right
// after the event and checks that the loop ends up without it.
func TestTCPAbortRacesEstablish(t *testing.T) {
	for round := 0; round < 20; round++ {
		a := newEnd(t, rdma.Params{"transport": "tcp"})
		b := newEnd(t, rdma.Params{"transport": "tcp"})
		l, err := b.dev.Listen(b.cm, 0, true, 4, 99)
		require.NoError(t, err)
		require.NoError(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), l.ServiceID(), nil, testWait))
		ev := b.event(t)
		require.Equal(t, rdma.CMConnectRequest, ev.Type)
		require.NoError(t, ev.Request.Accept(b.qp, nil))
		require.Equal(t, rdma.CMEstablished, a.event(t).Type, "round %d", round)
		q := a.qp.(*qp)
		q.mu.Lock()
		w := q.c.w.(*tcpWire)
		q.mu.Unlock()
		w.abort()
		d := a.dev.(*device)
		waitFor(t, "the aborted connection out of its device's loop", func() bool {
			lp := d.tcp.live.Load()
			return lp == nil || lp.nconns.Load() == 0
		}, nil)
		require.NoError(t, l.Close())
	}
}
