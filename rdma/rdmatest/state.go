package rdmatest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

var stateTests = []test{
	{"InitPosts", (*suite).stateInitPosts},
	{"ConnectEstablishes", (*suite).stateConnect},
	{"ConnectNotInit", (*suite).stateConnectNotInit},
	{"DisconnectFlushesLocal", func(s *suite, t *testing.T) { s.stateDisconnectFlushes(t, false) }},
	{"DisconnectFlushesPeer", func(s *suite, t *testing.T) { s.stateDisconnectFlushes(t, true) }},
	{"PostInErrorFlushes", (*suite).statePostInError},
	{"ResetReconnect", (*suite).stateResetReconnect},
	{"GracefulDisconnectDrains", (*suite).stateGraceful},
	{"AbruptEndsGracefulDrain", (*suite).stateAbruptEndsDrain},
	{"DestroyConnected", (*suite).stateDestroyConnected},
}

// In Init, receives may be posted (and wait for the connection), sends may
// not; Disconnect has nothing to end; Reset is a no-op.
func (s *suite) stateInitPosts(t *testing.T) {
	w := s.world(t)
	a, b := w.open().newQP(qpOpts{}), w.open().newQP(qpOpts{})
	sb, rb := a.side.buf(100, accAll), b.side.buf(100, accAll)
	state(t, a, rdma.QPSInit)
	require.NoError(t, b.qp.PostRecv(recv(7, rb.all())), "PostRecv in Init")
	isErr(t, a.qp.PostSend(send(1, rdma.SendSignaled, sb.all())), rdma.ErrState, "send in Init")
	isErr(t, a.qp.PostSend(write(2, rdma.SendSignaled, rb.addr, rb.mr.RKey(), sb.all())), rdma.ErrState, "RDMA write in Init")
	isErr(t, a.qp.PostSend(read(3, rdma.SendSignaled, rb.addr, rb.mr.RKey(), sb.all())), rdma.ErrState, "RDMA read in Init")
	isErr(t, a.qp.Disconnect(false), rdma.ErrState, "Disconnect in Init")
	require.NoError(t, b.qp.Reset(), "Reset in Init")
	state(t, b, rdma.QPSInit)

	w.connect(a, b)
	fill(sb.b, 1)
	require.NoError(t, a.qp.PostSend(send(4, rdma.SendSignaled, sb.all())))
	wc := w.take1(b.rcq)
	checkWC(t, wc, 7, rdma.WCSuccess, rdma.WCRecv, b)
	require.Equal(t, uint32(100), wc.ByteLen)
	sameBytes(t, sb.b, rb.b, "the message into the receive posted in Init")
	checkWC(t, w.take1(a.scq), 4, rdma.WCSuccess, rdma.WCSend, a)
}

// Connect and Accept take both QPs to RTS with CMEstablished on both sides;
// the addresses are the devices'.
func (s *suite) stateConnect(t *testing.T) {
	w := s.world(t)
	a, b := w.open().newQP(qpOpts{}), w.open().newQP(qpOpts{})
	l := b.side.listen(0, true, 4)
	ea, req := w.connectVia(l, a, b, nil, nil)
	require.Empty(t, ea.PrivateData, "private data of an accept without any")
	require.Empty(t, req.PrivateData(), "private data of a connect without any")
	require.Equal(t, l.l.ServiceID(), req.ServiceID())
	state(t, a, rdma.QPSRTS)
	state(t, b, rdma.QPSRTS)
	require.Equal(t, a.side.dev.Addr(), req.RemoteAddr().Addr(), "the request's remote address")
	require.Equal(t, b.side.dev.Addr(), a.qp.RemoteAddr().Addr(), "active QP's remote address")
	require.Equal(t, a.side.dev.Addr(), a.qp.LocalAddr().Addr(), "active QP's local address")
	require.Equal(t, a.side.dev.Addr(), b.qp.RemoteAddr().Addr(), "passive QP's remote address")
	require.Equal(t, b.side.dev.Addr(), b.qp.LocalAddr().Addr(), "passive QP's local address")
	require.Equal(t, a.qp.LocalAddr(), b.qp.RemoteAddr(), "the passive side sees the active side's address and port")
	require.Equal(t, b.qp.LocalAddr(), a.qp.RemoteAddr(), "the active side sees the passive side's address and port")
	require.Equal(t, req.RemoteAddr(), b.qp.RemoteAddr())
}

// Connect needs Init; Accept needs a QP in Init.
func (s *suite) stateConnectNotInit(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	isErr(t, a.qp.Connect(b.side.addr(), 1, nil, bound), rdma.ErrState, "Connect in RTS")
	isErr(t, b.qp.Connect(a.side.addr(), 1, nil, bound), rdma.ErrState, "Connect of a passive QP in RTS")

	c := a.side.newQP(qpOpts{})
	l := b.side.listen(0, true, 4)
	require.NoError(t, c.qp.Connect(b.side.addr(), l.l.ServiceID(), nil, bound))
	req := w.request(l)
	isErr(t, req.Accept(b.qp, nil), rdma.ErrState, "Accept onto a QP in RTS")
	d := b.side.newQP(qpOpts{})
	require.NoError(t, req.Accept(d.qp, nil))
	w.expectEvent(c, rdma.CMEstablished)
	w.expectEvent(d, rdma.CMEstablished)

	require.NoError(t, a.qp.Disconnect(false))
	w.expectEvent(a, rdma.CMDisconnected)
	isErr(t, a.qp.Connect(b.side.addr(), l.l.ServiceID(), nil, bound), rdma.ErrState, "Connect in Error")
}

// stuck posts on a send requests that cannot complete (the peer has no
// receive posted): a signalled send, an unsignalled send, an RDMA write
// (behind them, in order) and a signalled send. It returns the ids and
// opcodes in post order.
func stuck(t *testing.T, a *conn, peer *buf) ([]uint64, []rdma.WCOpcode) {
	t.Helper()
	sb := a.side.buf(256, accAll)
	wrs := []*rdma.SendWR{
		send(10, rdma.SendSignaled, sb.sge(0, 64)),
		send(11, 0, sb.sge(64, 64)),
		write(12, rdma.SendSignaled, peer.addr, peer.mr.RKey(), sb.sge(128, 64)),
		send(13, rdma.SendSignaled, sb.sge(192, 64)),
	}
	var ids []uint64
	var ops []rdma.WCOpcode
	for _, wr := range wrs {
		require.NoError(t, a.qp.PostSend(wr))
		ids = append(ids, wr.WRID)
		ops = append(ops, wcOp(wr.Opcode))
	}
	return ids, ops
}

// A disconnect (by this side or the peer) ends the connection on both sides
// with CMDisconnected, puts both QPs in Error and flushes everything
// outstanding: one WCWRFlushErr per request, signalled or not, in post
// order.
func (s *suite) stateDisconnectFlushes(t *testing.T, byPeer bool) {
	w := s.world(t)
	a, b := w.pair()
	tgt := b.side.buf(64, accAll)
	ids, ops := stuck(t, a, tgt)
	rb := a.side.buf(128, accAll)
	require.NoError(t, a.qp.PostRecv(recv(20, rb.sge(0, 64))))
	require.NoError(t, a.qp.PostRecv(recv(21, rb.sge(64, 64))))
	if byPeer {
		require.NoError(t, b.qp.Disconnect(false))
	} else {
		require.NoError(t, a.qp.Disconnect(false))
	}
	w.expectEvent(a, rdma.CMDisconnected)
	w.expectEvent(b, rdma.CMDisconnected)
	state(t, a, rdma.QPSErr)
	state(t, b, rdma.QPSErr)
	flushedAll(t, w.take(a.scq, len(ids)), ids, func(i int) rdma.WCOpcode { return ops[i] }, a)
	flushedAll(t, w.take(a.rcq, 2), []uint64{20, 21}, func(int) rdma.WCOpcode { return rdma.WCRecv }, a)
	// Nothing else was completed: the next completions are of requests
	// posted now, which the QP in Error flushes.
	markers(t, w, a)
	markers(t, w, b)
	zeros(t, tgt.b, "the RDMA write target of a flushed write")
	require.NoError(t, a.qp.Disconnect(false), "Disconnect in Error")
}

// markers posts an unsignalled send and a receive on c, whose QP is in
// Error, and checks that they are the next completions, flushed.
func markers(t *testing.T, w *world, c *conn) {
	t.Helper()
	m := c.side.buf(16, accAll)
	require.NoError(t, c.qp.PostSend(send(0xf1, 0, m.all())), "PostSend in Error")
	require.NoError(t, c.qp.PostRecv(recv(0xf2, m.all())), "PostRecv in Error")
	checkWC(t, w.take1(c.scq), 0xf1, rdma.WCWRFlushErr, rdma.WCSend, c)
	checkWC(t, w.take1(c.rcq), 0xf2, rdma.WCWRFlushErr, rdma.WCRecv, c)
}

// Posts on a QP in Error are accepted and flushed, unsignalled ones too,
// sends and RDMA alike.
func (s *suite) statePostInError(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	require.NoError(t, a.qp.Disconnect(false))
	w.expectEvent(a, rdma.CMDisconnected)
	w.expectEvent(b, rdma.CMDisconnected)
	tgt, sb := b.side.buf(64, accAll), a.side.buf(64, accAll)
	wrs := []*rdma.SendWR{
		write(1, 0, tgt.addr, tgt.mr.RKey(), sb.all()),
		read(2, 0, tgt.addr, tgt.mr.RKey(), sb.all()),
		send(3, 0, sb.all()),
		send(4, rdma.SendSignaled, sb.all()),
	}
	for _, wr := range wrs {
		require.NoError(t, a.qp.PostSend(wr))
	}
	flushedAll(t, w.take(a.scq, 4), []uint64{1, 2, 3, 4}, func(i int) rdma.WCOpcode { return wcOp(wrs[i].Opcode) }, a)
	markers(t, w, a)
	zeros(t, tgt.b, "the target of a flushed RDMA write")
}

// Reset takes a QP in Error back to Init (Reset in RTS is ErrState), and
// the QP connects again.
func (s *suite) stateResetReconnect(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	isErr(t, a.qp.Reset(), rdma.ErrState, "Reset in RTS")
	require.NoError(t, a.qp.Disconnect(false))
	w.expectEvent(a, rdma.CMDisconnected)
	w.expectEvent(b, rdma.CMDisconnected)
	require.NoError(t, a.qp.Reset())
	require.NoError(t, b.qp.Reset())
	state(t, a, rdma.QPSInit)
	state(t, b, rdma.QPSInit)
	sb := a.side.buf(64, accAll)
	isErr(t, a.qp.PostSend(send(1, rdma.SendSignaled, sb.all())), rdma.ErrState, "send after Reset")
	// Reversed roles this time.
	w.connect(b, a)
	exchange(t, w, a, b, 2)
	exchange(t, w, b, a, 3)
}

// exchange sends a message from a to b and checks it arrived intact.
func exchange(t *testing.T, w *world, a, b *conn, seed uint64) {
	t.Helper()
	sb, rb := a.side.buf(1000, accAll), b.side.buf(1000, accAll)
	fill(sb.b, seed)
	require.NoError(t, b.qp.PostRecv(recv(seed, rb.all())))
	require.NoError(t, a.qp.PostSend(send(seed, rdma.SendSignaled, sb.all())))
	checkWC(t, w.take1(a.scq), seed, rdma.WCSuccess, rdma.WCSend, a)
	wc := w.take1(b.rcq)
	checkWC(t, wc, seed, rdma.WCSuccess, rdma.WCRecv, b)
	require.Equal(t, uint32(1000), wc.ByteLen)
	sameBytes(t, sb.b, rb.b, "message %d", seed)
}

// A graceful disconnect lets the sends posted before it complete, then ends
// the connection: here the sends wait for receives the peer posts only
// after the disconnect began.
func (s *suite) stateGraceful(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	const n, size = 4, 1 << 20
	sb, rb := a.side.buf(n*size, accAll), b.side.buf(n*size, accAll)
	fill(sb.b, 5)
	for i := range n {
		fl := rdma.SendSignaled
		if i == 1 {
			fl = 0
		}
		require.NoError(t, a.qp.PostSend(send(uint64(i), fl, sb.sge(i*size, size))))
	}
	require.NoError(t, a.qp.Disconnect(true))
	for i := range n {
		require.NoError(t, b.qp.PostRecv(recv(uint64(i), rb.sge(i*size, size))))
	}
	for _, i := range []uint64{0, 2, 3} {
		checkWC(t, w.take1(a.scq), i, rdma.WCSuccess, rdma.WCSend, a)
	}
	for i := range n {
		wc := w.take1(b.rcq)
		checkWC(t, wc, uint64(i), rdma.WCSuccess, rdma.WCRecv, b)
		require.Equal(t, uint32(size), wc.ByteLen)
	}
	sameBytes(t, sb.b, rb.b, "messages sent before a graceful disconnect")
	w.expectEvent(a, rdma.CMDisconnected)
	w.expectEvent(b, rdma.CMDisconnected)
	state(t, a, rdma.QPSErr)
	state(t, b, rdma.QPSErr)
	markers(t, w, a)
	markers(t, w, b)
}

// An abrupt disconnect while a graceful one waits for the send queue to
// drain ends the connection at once: the sends still waiting are flushed.
func (s *suite) stateAbruptEndsDrain(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	tgt := b.side.buf(64, accAll)
	ids, ops := stuck(t, a, tgt)
	require.NoError(t, a.qp.Disconnect(true))
	require.NoError(t, a.qp.Disconnect(true), "a second graceful Disconnect")
	require.NoError(t, a.qp.Disconnect(false), "an abrupt Disconnect during the drain")
	w.expectEvent(a, rdma.CMDisconnected)
	w.expectEvent(b, rdma.CMDisconnected)
	flushedAll(t, w.take(a.scq, len(ids)), ids, func(i int) rdma.WCOpcode { return ops[i] }, a)
	markers(t, w, a)
	zeros(t, tgt.b, "the RDMA write target of a flushed write")
}

// Destroying a connected QP ends the connection: the peer sees it end and
// its work flushed; the destroyed QP refuses everything.
func (s *suite) stateDestroyConnected(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	rb := b.side.buf(64, accAll)
	require.NoError(t, b.qp.PostRecv(recv(5, rb.all())))
	require.NoError(t, a.qp.Destroy())
	isErr(t, a.qp.PostRecv(recv(1)), rdma.ErrClosed, "PostRecv after Destroy")
	isErr(t, a.qp.Disconnect(false), rdma.ErrClosed, "Disconnect after Destroy")
	ev := w.event(b.side, b.ctx)
	if ev.Type != rdma.CMDisconnected && ev.Type != rdma.CMBroken {
		t.Fatalf("the peer of a destroyed QP got %v, want disconnected or broken", ev.Type)
	}
	state(t, b, rdma.QPSErr)
	checkWC(t, w.take1(b.rcq), 5, rdma.WCWRFlushErr, rdma.WCRecv, b)
	markers(t, w, b)
}
