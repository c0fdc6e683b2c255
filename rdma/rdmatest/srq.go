package rdmatest

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

var srqTests = []test{
	{"Lifecycle", (*suite).srqLifecycle},
	{"SharedReceives", (*suite).srqShared},
	{"EmptyHoldsSenders", (*suite).srqEmpty},
	{"LimitOncePerArm", (*suite).srqLimit},
	{"ResizeKeepsReceives", (*suite).srqResize},
	{"ShortReceive", (*suite).srqShort},
	{"PostChecks", (*suite).srqPostChecks},
	{"LastWQE", (*suite).srqLastWQE},
}

// needSRQ skips unless the device has SRQs; a device without them answers
// CreateSRQ with ErrNotSupported.
func needSRQ(t *testing.T, s *side) {
	t.Helper()
	if s.attr.Caps&rdma.CapSRQ == 0 {
		_, err := s.dev.CreateSRQ(rdma.SRQInitAttr{PD: s.pd, MaxWR: 1, MaxSGE: 1})
		isErr(t, err, rdma.ErrNotSupported, "CreateSRQ without CapSRQ")
		t.Skip("the device lacks CapSRQ")
	}
}

// newSRQ creates an SRQ on s with its context.
func (s *side) newSRQ(maxWR, maxSGE, limit int) (rdma.SRQ, uint64) {
	s.w.t.Helper()
	ctx := s.w.nextCtx()
	srq, err := s.dev.CreateSRQ(rdma.SRQInitAttr{PD: s.pd, MaxWR: maxWR, MaxSGE: maxSGE, Limit: limit, Context: ctx})
	require.NoError(s.w.t, err, "CreateSRQ")
	return srq, ctx
}

// CreateSRQ checks its sizes; the SRQ holds MaxWR receives, is busy while a
// QP uses it, and a QP on it has no receive queue of its own.
func (s *suite) srqLifecycle(t *testing.T) {
	w := s.world(t)
	a := w.open()
	needSRQ(t, a)
	at := a.attr
	if at.MaxSRQWR < math.MaxInt {
		_, err := a.dev.CreateSRQ(rdma.SRQInitAttr{PD: a.pd, MaxWR: at.MaxSRQWR + 1, MaxSGE: 1})
		isErr(t, err, rdma.ErrInvalid, "MaxWR above MaxSRQWR")
	}
	_, err := a.dev.CreateSRQ(rdma.SRQInitAttr{PD: a.pd, MaxWR: 4, MaxSGE: at.MaxSRQSGE + 1})
	isErr(t, err, rdma.ErrInvalid, "MaxSGE above MaxSRQSGE")
	_, err = a.dev.CreateSRQ(rdma.SRQInitAttr{MaxWR: 4, MaxSGE: 1})
	isErr(t, err, rdma.ErrInvalid, "no PD")

	srq, _ := a.newSRQ(16, min(2, at.MaxSRQSGE), 0)
	q, err := srq.Query()
	require.NoError(t, err)
	require.GreaterOrEqual(t, q.MaxWR, 16)
	require.GreaterOrEqual(t, q.MaxSGE, min(2, at.MaxSRQSGE))
	require.Zero(t, q.Limit, "limit of an SRQ created unarmed")
	b := a.buf(8*(q.MaxWR+1), accAll)
	for i := range q.MaxWR {
		require.NoError(t, srq.PostRecv(recv(uint64(i), b.sge(i*8, 8))))
	}
	isErr(t, srq.PostRecv(recv(99, b.sge(0, 8))), rdma.ErrQueueFull, "receive %d of an SRQ of %d", q.MaxWR+1, q.MaxWR)
	many := make([]rdma.SGE, q.MaxSGE+1)
	for i := range many {
		many[i] = b.sge(i, 1)
	}
	isErr(t, srq.PostRecv(&rdma.RecvWR{WRID: 1, SGL: many}), rdma.ErrInvalid, "MaxSGE+1 entries")

	c := a.newQP(qpOpts{srq: srq})
	isErr(t, c.qp.PostRecv(recv(1, b.sge(0, 8))), rdma.ErrState, "PostRecv on a QP with an SRQ")
	isErr(t, srq.Destroy(), rdma.ErrBusy, "Destroy of an SRQ a QP uses")
	require.NoError(t, c.qp.Destroy())
	require.NoError(t, srq.Destroy())
	isErr(t, srq.Destroy(), rdma.ErrClosed, "second Destroy")
	isErr(t, srq.PostRecv(recv(1, b.sge(0, 8))), rdma.ErrClosed, "PostRecv after Destroy")
}

// srqWorld is a side b with an SRQ and n QPs on it connected to n QPs of a;
// b's QP i uses receive CQ rcqs[i%2].
type srqWorld struct {
	a, b []*conn
	srq  rdma.SRQ
	ctx  uint64
	rcqs [2]*cqLog
}

func (w *world) srqWorld(t *testing.T, n, maxWR, limit int) *srqWorld {
	t.Helper()
	as, bs := w.open(), w.open()
	needSRQ(t, bs)
	sw := &srqWorld{rcqs: [2]*cqLog{bs.newCQ(bs.defaultDepth()), bs.newCQ(bs.defaultDepth())}}
	sw.srq, sw.ctx = bs.newSRQ(maxWR, 1, limit)
	for i := range n {
		a := as.newQP(qpOpts{})
		b := bs.newQP(qpOpts{srq: sw.srq, rcq: sw.rcqs[i%2]})
		w.connect(a, b)
		sw.a, sw.b = append(sw.a, a), append(sw.b, b)
	}
	return sw
}

// sendTo sends the 8-byte value v on connection i and waits for its send
// completion.
func (w *world) sendTo(sw *srqWorld, i int, v uint64) {
	w.t.Helper()
	a := sw.a[i]
	sb := a.side.buf(8, accAll)
	binary.LittleEndian.PutUint64(sb.b, v)
	require.NoError(w.t, a.qp.PostSend(send(v, rdma.SendSignaled, sb.all())))
	checkWC(w.t, w.take1(a.scq), v, rdma.WCSuccess, rdma.WCSend, a)
}

// Each message takes the SRQ's oldest receive; its completion goes to the
// receive CQ of the QP it arrived on, with that QP's number.
func (s *suite) srqShared(t *testing.T) {
	w := s.world(t)
	sw := w.srqWorld(t, 3, 16, 0)
	const n = 9
	rb := sw.b[0].side.buf(n*8, accAll)
	for j := range n {
		require.NoError(t, sw.srq.PostRecv(recv(uint64(j), rb.sge(j*8, 8))))
	}
	for j, i := range []int{2, 0, 1, 1, 2, 0, 0, 2, 1} {
		w.sendTo(sw, i, uint64(1000+j))
		wc := w.take1(sw.rcqs[i%2])
		checkWC(t, wc, uint64(j), rdma.WCSuccess, rdma.WCRecv, sw.b[i])
		require.Equal(t, uint32(8), wc.ByteLen)
		require.Equal(t, uint64(1000+j), binary.LittleEndian.Uint64(rb.b[j*8:]), "message %d in receive %d", j, j)
	}
}

// With the SRQ empty, senders wait; receives posted later let them proceed,
// with nothing lost and each connection's order kept.
func (s *suite) srqEmpty(t *testing.T) {
	w := s.world(t)
	sw := w.srqWorld(t, 2, 16, 0)
	const per = 4
	for i := range 2 {
		sb := sw.a[i].side.buf(per*8, accAll)
		for k := range per {
			binary.LittleEndian.PutUint64(sb.b[k*8:], uint64(i<<8|k))
			require.NoError(t, sw.a[i].qp.PostSend(send(uint64(k), rdma.SendSignaled, sb.sge(k*8, 8))))
		}
	}
	rb := sw.b[0].side.buf(2*per*8, accAll)
	for j := range 2 * per {
		require.NoError(t, sw.srq.PostRecv(recv(uint64(j), rb.sge(j*8, 8))))
	}
	for i := range 2 {
		for k, wc := range w.take(sw.a[i].scq, per) {
			checkWC(t, wc, uint64(k), rdma.WCSuccess, rdma.WCSend, sw.a[i])
		}
	}
	next := [2]int{}
	for i := range 2 {
		for _, wc := range w.take(sw.rcqs[i], per) {
			checkWC(t, wc, wc.WRID, rdma.WCSuccess, rdma.WCRecv, sw.b[i])
			v := binary.LittleEndian.Uint64(rb.b[wc.WRID*8:])
			require.Equal(t, uint64(i<<8|next[i]), v, "connection %d's messages in order", i)
			next[i]++
		}
	}
}

// The limit fires AsyncSRQLimitReached once per arm, when fewer receives
// than the limit are held, at once when that is already so, never unarmed.
func (s *suite) srqLimit(t *testing.T) {
	w := s.world(t)
	sw := w.srqWorld(t, 1, 16, 0)
	b := sw.b[0].side
	if b.attr.Caps&rdma.CapSRQLimit == 0 {
		isErr(t, sw.srq.Modify(rdma.SRQAttr{Limit: 2}, rdma.SRQLimit), rdma.ErrNotSupported, "arming a limit without CapSRQLimit")
		t.Skip("the device lacks CapSRQLimit")
	}
	events := func() int { return b.async.count(rdma.AsyncSRQLimitReached, sw.ctx) }
	rb := b.buf(16*8, accAll)
	post := func(from, to int) {
		for j := from; j < to; j++ {
			require.NoError(t, sw.srq.PostRecv(recv(uint64(j), rb.sge(j%16*8, 8))))
		}
	}
	consume := func(j int) {
		w.sendTo(sw, 0, uint64(j))
		checkWC(t, w.take1(sw.rcqs[0]), uint64(j), rdma.WCSuccess, rdma.WCRecv, sw.b[0])
	}
	isErr(t, sw.srq.Modify(rdma.SRQAttr{Limit: 17}, rdma.SRQLimit), rdma.ErrInvalid, "a limit above MaxWR")

	post(0, 8)
	consume(0) // unarmed: 7 held, no event
	require.NoError(t, sw.srq.Modify(rdma.SRQAttr{Limit: 4}, rdma.SRQLimit))
	q, err := sw.srq.Query()
	require.NoError(t, err)
	require.Equal(t, 4, q.Limit, "the armed limit")
	for j := 1; j <= 3; j++ { // 4 held: not fewer than the limit
		consume(j)
	}
	require.Zero(t, events(), "limit event with 4 receives held and the limit at 4")
	consume(4) // 3 held
	w.until("AsyncSRQLimitReached", func() bool { return events() > 0 })
	q, err = sw.srq.Query()
	require.NoError(t, err)
	require.Zero(t, q.Limit, "the limit after it fired")
	for j := 5; j <= 7; j++ { // disarmed: no more events
		consume(j)
	}
	require.Equal(t, 1, events(), "limit events after one arm")
	// Arming below the limit fires at once.
	post(8, 10)
	require.NoError(t, sw.srq.Modify(rdma.SRQAttr{Limit: 5}, rdma.SRQLimit))
	w.until("AsyncSRQLimitReached on arming below the limit", func() bool { return events() > 1 })
	// Armed at creation.
	srq2, ctx2 := b.newSRQ(8, 1, 2)
	c := b.newQP(qpOpts{srq: srq2, rcq: sw.rcqs[1]})
	a := sw.a[0].side.newQP(qpOpts{})
	w.connect(a, c)
	for j := range 4 {
		require.NoError(t, srq2.PostRecv(recv(uint64(100+j), rb.sge(j*8, 8))))
	}
	sb := a.side.buf(8, accAll)
	for j := range 3 {
		require.NoError(t, a.qp.PostSend(send(uint64(j), rdma.SendSignaled, sb.all())))
		checkWC(t, w.take1(sw.rcqs[1]), uint64(100+j), rdma.WCSuccess, rdma.WCRecv, c)
	}
	w.until("AsyncSRQLimitReached of an SRQ armed at creation", func() bool {
		return b.async.count(rdma.AsyncSRQLimitReached, ctx2) > 0
	})
	require.Equal(t, 2, events(), "limit events after two arms: %v", b.async)
	require.Equal(t, 1, b.async.count(rdma.AsyncSRQLimitReached, ctx2), "limit events of the second SRQ")
}

// Resizing keeps the posted receives, in order, and refuses to go below
// the receives held.
func (s *suite) srqResize(t *testing.T) {
	w := s.world(t)
	sw := w.srqWorld(t, 1, 16, 0)
	b := sw.b[0].side
	rb := b.buf(8*8, accAll)
	for j := range 8 {
		require.NoError(t, sw.srq.PostRecv(recv(uint64(j), rb.sge(j*8, 8))))
	}
	isErr(t, sw.srq.Modify(rdma.SRQAttr{MaxWR: 4}, rdma.SRQMaxWR), rdma.ErrInvalid, "MaxWR below the receives held")
	if b.attr.MaxSRQWR < math.MaxInt {
		isErr(t, sw.srq.Modify(rdma.SRQAttr{MaxWR: b.attr.MaxSRQWR + 1}, rdma.SRQMaxWR), rdma.ErrInvalid, "MaxWR above MaxSRQWR")
	}
	size := min(32, b.attr.MaxSRQWR)
	require.NoError(t, sw.srq.Modify(rdma.SRQAttr{MaxWR: size}, rdma.SRQMaxWR))
	q, err := sw.srq.Query()
	require.NoError(t, err)
	require.GreaterOrEqual(t, q.MaxWR, size)
	for j := range 8 {
		w.sendTo(sw, 0, uint64(j))
		checkWC(t, w.take1(sw.rcqs[0]), uint64(j), rdma.WCSuccess, rdma.WCRecv, sw.b[0])
	}
}

// An SRQ receive too small for the message: WCLocLenErr on the receiving
// QP's CQ, WCRemInvReqErr at the sender.
func (s *suite) srqShort(t *testing.T) {
	w := s.world(t)
	sw := w.srqWorld(t, 2, 16, 0)
	rb := sw.b[0].side.buf(64, accAll)
	require.NoError(t, sw.srq.PostRecv(recv(1, rb.sge(0, 4))))
	sb := sw.a[1].side.buf(64, accAll)
	require.NoError(t, sw.a[1].qp.PostSend(send(2, rdma.SendSignaled, sb.all())))
	checkWC(t, w.take1(sw.rcqs[1]), 1, rdma.WCLocLenErr, rdma.WCRecv, sw.b[1])
	checkWC(t, w.take1(sw.a[1].scq), 2, rdma.WCRemInvReqErr, rdma.WCSend, sw.a[1])
}

// With CapPostCheck, SRQ receives are checked against the SRQ's PD.
func (s *suite) srqPostChecks(t *testing.T) {
	w := s.world(t)
	a := w.open()
	needSRQ(t, a)
	w.need(rdma.CapPostCheck)
	srq, _ := a.newSRQ(8, 1, 0)
	good := a.buf(64, accAll)
	ro := a.buf(64, 0)
	pd2, err := a.dev.AllocPD()
	require.NoError(t, err)
	other := a.bufPD(pd2, 64, accAll)
	bad := good.sge(0, 8)
	bad.LKey ^= 0x7777_0000
	isErr(t, srq.PostRecv(recv(1, bad)), rdma.ErrPrivileges, "unknown key")
	isErr(t, srq.PostRecv(recv(1, ro.all())), rdma.ErrPrivileges, "region without local write")
	isErr(t, srq.PostRecv(recv(1, other.all())), rdma.ErrProtection, "region of another PD")
	isErr(t, srq.PostRecv(recv(1, good.sge(32, 64))), rdma.ErrInvalid, "segment past its region")
	require.NoError(t, srq.PostRecv(recv(1, good.all())))
}

// A QP on an SRQ that goes to Error raises AsyncQPLastWQE.
func (s *suite) srqLastWQE(t *testing.T) {
	w := s.world(t)
	sw := w.srqWorld(t, 1, 16, 0)
	a, b := sw.a[0], sw.b[0]
	require.NoError(t, a.qp.Disconnect(false))
	w.expectEvent(b, rdma.CMDisconnected)
	w.until("AsyncQPLastWQE", func() bool { return b.side.async.count(rdma.AsyncQPLastWQE, b.ctx) > 0 })
}
