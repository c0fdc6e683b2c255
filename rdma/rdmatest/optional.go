package rdmatest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

var optionalTests = []test{
	{"Outstanding", (*suite).optOutstanding},
	{"Reconfigure", (*suite).optReconfigure},
}

// outstanding waits until c's QP reports send and recv outstanding.
func (w *world) outstanding(c *conn, send, recv int) {
	w.t.Helper()
	var s, r int
	w.until(fmt.Sprintf("Outstanding() = (%d, %d)", send, recv), func() bool {
		var err error
		s, r, err = c.qp.Outstanding()
		require.NoError(w.t, err)
		return s == send && r == recv
	})
}

// Outstanding counts the requests posted and not completed, signalled or
// not (with CapQPOutstanding; ErrNotSupported without).
func (s *suite) optOutstanding(t *testing.T) {
	w := s.world(t)
	as, bs := w.open(), w.open()
	a, b := as.newQP(qpOpts{}), bs.newQP(qpOpts{})
	if as.attr.Caps&rdma.CapQPOutstanding == 0 {
		_, _, err := a.qp.Outstanding()
		isErr(t, err, rdma.ErrNotSupported, "Outstanding without CapQPOutstanding")
		t.Skip("the device lacks CapQPOutstanding")
	}
	ab, bb := as.buf(4*64, accAll), bs.buf(4*64, accAll)
	w.outstanding(a, 0, 0)
	for i := range 3 {
		require.NoError(t, a.qp.PostRecv(recv(uint64(i), ab.sge(i*64, 64))))
	}
	w.outstanding(a, 0, 3)
	w.connect(a, b)
	require.NoError(t, a.qp.PostSend(send(10, 0, ab.sge(0, 8))))
	require.NoError(t, a.qp.PostSend(send(11, 0, ab.sge(8, 8))))
	w.outstanding(a, 2, 3) // the peer has no receive: both wait
	require.NoError(t, b.qp.PostRecv(recv(0, bb.sge(0, 64))))
	require.NoError(t, b.qp.PostRecv(recv(1, bb.sge(64, 64))))
	w.take(b.rcq, 2)
	w.outstanding(a, 0, 3) // unsignalled, completed without a completion
	require.NoError(t, b.qp.PostSend(send(20, rdma.SendSignaled, bb.sge(0, 8))))
	w.take(a.rcq, 1)
	w.outstanding(a, 0, 2)
	require.NoError(t, a.qp.Disconnect(false))
	w.expectEvent(a, rdma.CMDisconnected)
	w.take(a.rcq, 2)
	w.outstanding(a, 0, 0)
}

// Reconfigure changes the PD, CQs and capacities of a QP in Init, keeping
// its posted receives; it refuses fewer receives than are posted,
// capacities above the device's, and a connected QP (with
// CapQPReconfigure; ErrNotSupported without).
func (s *suite) optReconfigure(t *testing.T) {
	w := s.world(t)
	as, bs := w.open(), w.open()
	a, b := as.newQP(qpOpts{}), bs.newQP(qpOpts{})
	attr := func(pd rdma.PD, rcq *cqLog, recvWR int) rdma.QPInitAttr {
		return rdma.QPInitAttr{PD: pd, SendCQ: b.scq.cq, RecvCQ: rcq.cq, CM: bs.cm, Context: b.ctx,
			Cap: rdma.QPCap{MaxSendWR: 4, MaxRecvWR: recvWR, MaxSendSGE: 1, MaxRecvSGE: 1}}
	}
	if bs.attr.Caps&rdma.CapQPReconfigure == 0 {
		isErr(t, b.qp.Reconfigure(attr(bs.pd, b.rcq, 4)), rdma.ErrNotSupported, "Reconfigure without CapQPReconfigure")
		t.Skip("the device lacks CapQPReconfigure")
	}
	rb := bs.buf(8*64, accAll)
	for i := range 3 {
		require.NoError(t, b.qp.PostRecv(recv(uint64(i), rb.sge(i*64, 64))))
	}
	isErr(t, b.qp.Reconfigure(attr(bs.pd, b.rcq, 2)), rdma.ErrInvalid, "room for 2 receives with 3 posted")
	big := attr(bs.pd, b.rcq, 4)
	big.Cap.MaxRecvSGE = bs.attr.MaxSGE + 1
	isErr(t, b.qp.Reconfigure(big), rdma.ErrInvalid, "more SGEs than the device's")

	// Another PD: the posted receives stay, new ones must be of its memory.
	pd2, err := bs.dev.AllocPD()
	require.NoError(t, err)
	require.NoError(t, b.qp.Reconfigure(attr(pd2, b.rcq, 4)))
	if bs.attr.Caps&rdma.CapPostCheck != 0 {
		isErr(t, b.qp.PostRecv(recv(50, rb.sge(3*64, 64))), rdma.ErrProtection, "a receive of the old PD's memory")
	}
	// Back to the first PD, with another receive CQ and room for exactly
	// what is granted.
	rcq2 := bs.newCQ(bs.defaultDepth())
	require.NoError(t, b.qp.Reconfigure(attr(bs.pd, rcq2, 3)))
	room := b.qp.Cap().MaxRecvWR
	require.GreaterOrEqual(t, room, 3)
	more := bs.buf(room*64, accAll)
	for i := 3; i < room; i++ {
		require.NoError(t, b.qp.PostRecv(recv(uint64(i), more.sge(i*64, 64))))
	}
	isErr(t, b.qp.PostRecv(recv(99, more.sge(0, 64))), rdma.ErrQueueFull, "a receive beyond the new capacity")

	w.connect(a, b)
	isErr(t, b.qp.Reconfigure(attr(pd2, rcq2, 8)), rdma.ErrState, "Reconfigure of a connected QP")
	sb := as.buf(8, accAll)
	for i := range room {
		require.NoError(t, a.qp.PostSend(send(uint64(i), rdma.SendSignaled, sb.all())))
		checkWC(t, w.take1(rcq2), uint64(i), rdma.WCSuccess, rdma.WCRecv, b)
	}
	require.Empty(t, b.rcq.wcs, "completions on the receive CQ the QP left")
}
