package rdmatest

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

var asyncTests = []test{
	{"QPAccessErr", (*suite).asyncAccessErr},
	{"CQOverrunOncePerExcursion", (*suite).asyncCQOverrun},
}

// A bad remote access raises AsyncQPAccessErr at the target, naming the
// target QP's context, once.
func (s *suite) asyncAccessErr(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	tg := newTargets(b.side)
	src := a.side.buf(64, accAll)
	require.NoError(t, a.qp.PostSend(write(1, rdma.SendSignaled, tg.rw.addr, tg.badKey(), src.all())))
	checkWC(t, w.take1(a.scq), 1, rdma.WCRemAccessErr, rdma.WCRDMAWrite, a)
	w.until("AsyncQPAccessErr at the target", func() bool {
		return b.side.async.count(rdma.AsyncQPAccessErr, b.ctx) > 0
	})
	w.expectEvent(a, rdma.CMBroken)
	w.expectEvent(b, rdma.CMBroken)
	require.Equal(t, 1, b.side.async.count(rdma.AsyncQPAccessErr, b.ctx), "events: %v", b.side.async)
}

// With CapCQGrow a CQ past its depth loses nothing and raises
// AsyncCQOverrun (with the CQ's context) once per excursion.
func (s *suite) asyncCQOverrun(t *testing.T) {
	w := s.world(t)
	as, bs := w.open(), w.open()
	w.need(rdma.CapCQGrow)
	const depth, n = 4, 64
	small := bs.newCQ(depth)
	small.manual = true
	a, b := as.newQP(qpOpts{}), bs.newQP(qpOpts{rcq: small, cap: rdma.QPCap{MaxSendWR: 2 * n, MaxRecvWR: 2 * n, MaxSendSGE: 1, MaxRecvSGE: 1}})
	w.connect(a, b)
	sb, rb := as.buf(2*n*8, accAll), bs.buf(2*n*8, accAll)
	events := func() int { return bs.async.count(rdma.AsyncCQOverrun, small.ctx) }
	for round := range 2 {
		for i := round * n; i < (round+1)*n; i++ {
			require.NoError(t, b.qp.PostRecv(recv(uint64(i), rb.sge(i*8, 8))))
			binary.LittleEndian.PutUint64(sb.b[i*8:], uint64(i))
			require.NoError(t, a.qp.PostSend(send(uint64(i), rdma.SendSignaled, sb.sge(i*8, 8))))
		}
		w.take(a.scq, n)
		// The CQ is not drained: a Poll of no entries lets a backend that
		// progresses in Poll move arrivals into it.
		w.until("AsyncCQOverrun", func() bool {
			small.cq.Poll(nil)
			return events() > round
		})
		small.manual = false
		for k, wc := range w.take(small, n) {
			i := round*n + k
			checkWC(t, wc, uint64(i), rdma.WCSuccess, rdma.WCRecv, b)
			require.Equal(t, uint64(i), binary.LittleEndian.Uint64(rb.b[i*8:]))
		}
		small.manual = true
		require.Equal(t, round+1, events(), "AsyncCQOverrun events after %d excursions", round+1)
	}
}
