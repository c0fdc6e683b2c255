package core

import (
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var netipLoopback = netip.MustParseAddrPort("127.0.0.1:0")

const waitFor = 5 * time.Second

var sides int // names each side's device

type side struct {
	ia                      *IA
	async, dto, conn, crEVD *EVD
	pz                      *PZ
	lmr                     *LMR
	ctx                     uint32
}

func newSide(t *testing.T, f *fabric) *side {
	t.Helper()
	sides++
	ia, err := OpenIA(f.config("side" + strconv.Itoa(sides)))
	require.NoError(t, err)
	t.Cleanup(func() { ia.Close(false) })
	s := &side{ia: ia, async: ia.AsyncEVD()}
	s.dto, err = ia.CreateEVD(256, EVDDTO, nil)
	require.NoError(t, err)
	s.conn, err = ia.CreateEVD(16, EVDConnection, nil)
	require.NoError(t, err)
	s.crEVD, err = ia.CreateEVD(16, EVDCR, nil)
	require.NoError(t, err)
	s.pz, err = ia.CreatePZ()
	require.NoError(t, err)
	var info LMRInfo
	s.lmr, info, err = ia.CreateLMR(LMRRegion{Type: MemVirtual, Addr: 0x100000}, 1<<20, s.pz, PrivAll)
	require.NoError(t, err)
	s.ctx = info.LMRContext
	return s
}

// seg is a 64-byte buffer i of the side's LMR.
func (s *side) seg(i int) []Segment {
	return []Segment{{LMRContext: s.ctx, Addr: 0x100000 + uint64(i)*64, Length: 64}}
}

func (s *side) srq(t *testing.T, n, lw int) *SRQ {
	t.Helper()
	q, err := s.ia.CreateSRQ(s.pz, SRQAttr{MaxRecvDTOs: n, MaxRecvIOV: 2, LowWatermark: lw})
	require.NoError(t, err)
	return q
}

func (s *side) ep(t *testing.T, srq *SRQ, recv *EVD) *EP {
	t.Helper()
	ep, err := s.ia.CreateEP(EPConfig{PZ: s.pz, RecvEVD: recv, ReqEVD: s.dto, ConnEVD: s.conn, SRQ: srq})
	require.NoError(t, err)
	return ep
}

func next(t *testing.T, e *EVD) Event {
	t.Helper()
	var ev Event
	_, err := e.Wait(waitFor, 1, &ev)
	require.NoError(t, err, "no event within %v", waitFor)
	return ev
}

func none(t *testing.T, e *EVD) {
	t.Helper()
	var ev Event
	require.ErrorIs(t, e.Dequeue(&ev), ErrQueueEmpty, "unexpected event %+v", ev)
}

// connect connects cep (client side c) to sep (server side s).
func connect(t *testing.T, c *side, cep *EP, s *side, sep *EP) {
	t.Helper()
	psp, qual, err := s.ia.CreatePSP(0, true, s.crEVD, PSPConsumer)
	require.NoError(t, err)
	defer psp.Free()
	require.NoError(t, cep.Connect(netipLoopback, qual, waitFor, nil))
	ev := next(t, s.crEVD)
	require.Equal(t, EventConnectionRequest, ev.Number)
	require.NoError(t, ev.CR.Accept(sep, nil))
	require.Equal(t, EventConnEstablished, next(t, s.conn).Number)
	require.Equal(t, EventConnEstablished, next(t, c.conn).Number)
}

// send posts n sends of lengths first, first+1, ... on ep.
func send(t *testing.T, s *side, ep *EP, n int, first int) {
	t.Helper()
	for i := 0; i < n; i++ {
		segs := []Segment{{LMRContext: s.ctx, Addr: 0x100000, Length: uint64(first + i)}}
		require.NoError(t, ep.PostSend(segs, uint64(i), CompletionSuppress))
	}
}

func query(t *testing.T, q *SRQ) SRQParams {
	t.Helper()
	p, err := q.Query()
	require.NoError(t, err)
	return p
}

type pair struct {
	c, s   *side
	cep    *EP
	srq    *SRQ
	sep    *EP
	client *EP
}

// srqPair is a server EP on an SRQ of n entries, connected to a client.
func srqPair(t *testing.T, n int) *pair {
	f := newFabric()
	p := &pair{c: newSide(t, f), s: newSide(t, f)}
	p.srq = p.s.srq(t, n, 0)
	p.sep = p.s.ep(t, p.srq, p.s.dto)
	p.cep = p.c.ep(t, nil, p.c.dto)
	connect(t, p.c, p.cep, p.s, p.sep)
	return p
}

// The seed page's example, literally: an SRQ of 10 entries with one EP and
// 3 receives; a send arrives; its completion is dequeued.
func TestSRQQueryExample(t *testing.T) {
	p := srqPair(t, 10)
	for i := 0; i < 3; i++ {
		require.NoError(t, p.srq.PostRecv(p.s.seg(i), uint64(i)))
	}
	q := query(t, p.srq)
	require.Equal(t, SRQParams{PZ: p.s.pz, MaxRecvDTOs: 10, MaxRecvIOV: 2, Available: 3, Outstanding: 3}, q)

	send(t, p.c, p.cep, 1, 8)
	// The arrival shows without touching the receive EVD: Query progresses.
	q = query(t, p.srq)
	require.Equal(t, 2, q.Available)
	require.Equal(t, 3, q.Outstanding)
	require.Equal(t, 10, q.MaxRecvDTOs)
	require.Equal(t, 1, p.sep.Held())

	ev := next(t, p.s.dto)
	require.Equal(t, EventDTOCompletion, ev.Number)
	require.Equal(t, DTOSuccess, ev.Status)
	require.Equal(t, uint64(0), ev.Cookie)
	require.Equal(t, uint64(8), ev.Length)
	q = query(t, p.srq)
	require.Equal(t, 2, q.Available)
	require.Equal(t, 2, q.Outstanding)
	require.Equal(t, 0, p.sep.Held())
}

func asyncIs(t *testing.T, s *side, target Obj, reason AsyncReason) {
	t.Helper()
	ev := next(t, s.async)
	require.Equal(t, EventAsyncEPBroken, ev.Number)
	require.Equal(t, target, ev.Target)
	require.Equal(t, reason, ev.Reason)
}

func TestSRQLowWatermark(t *testing.T) {
	p := srqPair(t, 10)
	for i := 0; i < 3; i++ {
		require.NoError(t, p.srq.PostRecv(p.s.seg(i), uint64(i)))
	}
	require.Equal(t, ErrArg(ArgLowWatermark), p.srq.SetLowWatermark(11))
	require.Equal(t, ErrArg(ArgLowWatermark), p.srq.SetLowWatermark(-1))
	require.NoError(t, p.srq.SetLowWatermark(2)) // 3 buffers: not below 2
	none(t, p.s.async)
	send(t, p.c, p.cep, 1, 1) // 2 left: still not below
	query(t, p.srq)
	none(t, p.s.async)
	send(t, p.c, p.cep, 1, 1) // 1 left: below, first time
	require.Equal(t, 1, query(t, p.srq).Available)
	asyncIs(t, p.s, p.srq, ReasonSRQLowWatermark)
	send(t, p.c, p.cep, 1, 1) // 0 left: once per setting
	require.Equal(t, 0, query(t, p.srq).Available)
	none(t, p.s.async)
	// A new setting re-arms; already below, so the event comes from the call.
	require.NoError(t, p.srq.SetLowWatermark(1))
	asyncIs(t, p.s, p.srq, ReasonSRQLowWatermark)
	// The value reported is the one set; DAT_SRQ_LW_DEFAULT disarms.
	require.Equal(t, 1, query(t, p.srq).LowWatermark)
	require.NoError(t, p.srq.SetLowWatermark(0))
	none(t, p.s.async)
}

func TestSRQCreateLowWatermark(t *testing.T) {
	s := newSide(t, newFabric())
	s.srq(t, 4, 0)
	none(t, s.async)
	q := s.srq(t, 4, 2) // armed and empty: the event is immediate
	asyncIs(t, s, q, ReasonSRQLowWatermark)
	for _, a := range []SRQAttr{{0, 1, 0}, {-1, 1, 0}, {1025, 1, 0}, {4, -1, 0}, {4, 9, 0}, {4, 1, 5}, {4, 1, -1}} {
		_, err := s.ia.CreateSRQ(s.pz, a)
		require.Equal(t, ErrArg(ArgSRQAttr), err, "%+v", a)
	}
}

func TestSRQResize(t *testing.T) {
	p := srqPair(t, 10)
	for i := 0; i < 4; i++ {
		require.NoError(t, p.srq.PostRecv(p.s.seg(i), uint64(i)))
	}
	send(t, p.c, p.cep, 2, 1)
	q := query(t, p.srq) // 2 on the SRQ, 2 completed and not reaped
	require.Equal(t, 2, q.Available)
	require.Equal(t, 4, q.Outstanding)
	require.Equal(t, ErrState(SubNone), p.srq.Resize(3))
	require.Equal(t, 10, query(t, p.srq).MaxRecvDTOs, "a failed resize changes nothing")
	require.NoError(t, p.srq.SetLowWatermark(1))
	require.NoError(t, p.srq.Resize(4))
	require.Equal(t, 4, query(t, p.srq).MaxRecvDTOs)
	require.Equal(t, E(KindInsufficientResources, SubResourceSRQ), p.srq.PostRecv(p.s.seg(9), 9))
	next(t, p.s.dto) // reap one: room for one more
	require.NoError(t, p.srq.PostRecv(p.s.seg(9), 9))
	require.NoError(t, p.srq.SetLowWatermark(4))
	require.Equal(t, ErrState(SubNone), p.srq.Resize(3), "below the low watermark")
	require.Equal(t, ErrArg(ArgQLen), p.srq.Resize(0))
	require.Equal(t, ErrArg(ArgQLen), p.srq.Resize(1025))
	require.NoError(t, p.srq.Resize(20))
	// No buffer was lost: every posted one completes.
	send(t, p.c, p.cep, 3, 1)
	seen := map[uint64]bool{}
	for i := 0; i < 4; i++ {
		ev := next(t, p.s.dto)
		require.Equal(t, DTOSuccess, ev.Status)
		seen[ev.Cookie] = true
	}
	require.Equal(t, map[uint64]bool{1: true, 2: true, 3: true, 9: true}, seen)
	require.Equal(t, 0, query(t, p.srq).Outstanding)
}

func TestSRQPostRecvErrors(t *testing.T) {
	s := newSide(t, newFabric())
	q := s.srq(t, 2, 0)
	other, err := s.ia.CreatePZ()
	require.NoError(t, err)
	_, oinfo, err := s.ia.CreateLMR(LMRRegion{Type: MemVirtual, Addr: 0x900000}, 4096, other, PrivAll)
	require.NoError(t, err)
	_, rinfo, err := s.ia.CreateLMR(LMRRegion{Type: MemVirtual, Addr: 0xa00000}, 4096, s.pz, PrivLocalRead)
	require.NoError(t, err)
	require.Equal(t, E(KindPrivilegesViolation, SubPrivilegesWrite),
		q.PostRecv([]Segment{{LMRContext: 0xdead, Addr: 0x100000, Length: 8}}, 0))
	require.Equal(t, E(KindPrivilegesViolation, SubPrivilegesWrite),
		q.PostRecv([]Segment{{LMRContext: rinfo.LMRContext, Addr: 0xa00000, Length: 8}}, 0))
	require.Equal(t, E(KindProtectionViolation, SubProtectionWrite),
		q.PostRecv([]Segment{{LMRContext: oinfo.LMRContext, Addr: 0x900000, Length: 8}}, 0))
	require.Equal(t, ErrArg(ArgLocalIOV), q.PostRecv([]Segment{{LMRContext: s.ctx, Addr: 0x100000 + 1<<20 - 4, Length: 8}}, 0))
	require.Equal(t, ErrArg(ArgSegmentCount), q.PostRecv(append(s.seg(0), s.seg(1)[0], s.seg(2)[0]), 0))
	require.NoError(t, q.PostRecv(nil, 1), "a zero-size receive")
	require.NoError(t, q.PostRecv(s.seg(0), 2))
	require.Equal(t, E(KindInsufficientResources, SubResourceSRQ), q.PostRecv(s.seg(1), 3))
	require.Equal(t, 2, query(t, q).Outstanding, "failed posts are not counted")
}

func TestSRQFreeInUse(t *testing.T) {
	s := newSide(t, newFabric())
	q := s.srq(t, 4, 0)
	ep := s.ep(t, q, s.dto)
	require.Equal(t, ErrState(SubStateSRQInUse), q.Free())
	require.NoError(t, ep.Free())
	require.NoError(t, q.Free())
	require.Equal(t, ErrHandle(SubHandleSRQ), q.Free())
	require.Equal(t, ErrHandle(SubHandleSRQ), q.PostRecv(nil, 0))
	require.Equal(t, ErrHandle(SubHandleSRQ), q.SetLowWatermark(0))
	require.Equal(t, ErrHandle(SubHandleSRQ), q.Resize(4))
	_, err := q.Query()
	require.Equal(t, ErrHandle(SubHandleSRQ), err)
	_, err = s.ia.CreateEP(EPConfig{PZ: s.pz, RecvEVD: s.dto, ReqEVD: s.dto, ConnEVD: s.conn, SRQ: q})
	require.Equal(t, ErrHandle(SubHandleSRQ), err)
	// An SRQ of another IA is not a handle this IA knows.
	o := newSide(t, newFabric())
	oq := o.srq(t, 4, 0)
	_, err = s.ia.CreateEP(EPConfig{PZ: s.pz, RecvEVD: s.dto, ReqEVD: s.dto, ConnEVD: s.conn, SRQ: oq})
	require.Equal(t, ErrHandle(SubHandleSRQ), err)
}

func TestSRQEmptyIsLikeEmptyRQ(t *testing.T) {
	p := srqPair(t, 4)
	send(t, p.c, p.cep, 2, 5)
	query(t, p.srq)
	none(t, p.s.dto) // nothing to receive into: the messages wait
	require.NoError(t, p.srq.PostRecv(p.s.seg(0), 7))
	ev := next(t, p.s.dto)
	require.Equal(t, uint64(7), ev.Cookie)
	require.Equal(t, uint64(5), ev.Length)
	none(t, p.s.dto)
	require.NoError(t, p.srq.PostRecv(p.s.seg(1), 8))
	ev = next(t, p.s.dto)
	require.Equal(t, uint64(8), ev.Cookie)
	require.Equal(t, uint64(6), ev.Length)
}

// Completions of one connection follow its sends; connections interleave.
func TestSRQOrderPerConnection(t *testing.T) {
	f := newFabric()
	c, s := newSide(t, f), newSide(t, f)
	q := s.srq(t, 64, 0)
	var ceps, seps [3]*EP
	for i := range ceps {
		ceps[i], seps[i] = c.ep(t, nil, c.dto), s.ep(t, q, s.dto)
		connect(t, c, ceps[i], s, seps[i])
	}
	for i := 0; i < 40; i++ {
		require.NoError(t, q.PostRecv(s.seg(i), uint64(i)))
	}
	for round := 0; round < 10; round++ {
		for i := range ceps {
			send(t, c, ceps[i], 1, 1+round)
		}
	}
	last := map[*EP]uint64{}
	for i := 0; i < 30; i++ {
		ev := next(t, s.dto)
		require.Greater(t, ev.Length, last[ev.EP], "per-connection order")
		last[ev.EP] = ev.Length
	}
	require.Len(t, last, 3)
}

func TestEPSoftWatermark(t *testing.T) {
	p := srqPair(t, 10)
	for i := 0; i < 6; i++ {
		require.NoError(t, p.srq.PostRecv(p.s.seg(i), uint64(i)))
	}
	require.Equal(t, WatermarkInfinite, p.sep.Attr().SRQSoftHW, "DAT_WATERMARK_INFINITE is the default")
	require.NoError(t, p.sep.SetWatermark(1, WatermarkInfinite))
	send(t, p.c, p.cep, 1, 1)
	query(t, p.srq)
	none(t, p.s.async) // holds 1: not above 1
	send(t, p.c, p.cep, 1, 1)
	query(t, p.srq)
	asyncIs(t, p.s, p.sep, ReasonSRQSoftHighWatermark)
	send(t, p.c, p.cep, 1, 1)
	query(t, p.srq)
	none(t, p.s.async) // once per setting
	require.Equal(t, 3, p.sep.Held())
	require.NoError(t, p.sep.SetWatermark(2, WatermarkInfinite)) // already above: now
	asyncIs(t, p.s, p.sep, ReasonSRQSoftHighWatermark)
	require.Equal(t, 2, p.sep.Attr().SRQSoftHW)
	for i := 0; i < 3; i++ {
		next(t, p.s.dto)
	}
	require.Equal(t, 0, p.sep.Held(), "reaped completions leave the EP")
	require.NoError(t, p.sep.SetWatermark(0, WatermarkInfinite))
	none(t, p.s.async)
	require.Equal(t, ErrArg(ArgSoftWatermark), p.sep.SetWatermark(-2, 0))
	require.Equal(t, ErrArg(ArgHardWatermark), p.sep.SetWatermark(0, -5))
}

func TestEPHardWatermark(t *testing.T) {
	p := srqPair(t, 10)
	for i := 0; i < 6; i++ {
		require.NoError(t, p.srq.PostRecv(p.s.seg(i), uint64(i)))
	}
	require.NoError(t, p.sep.SetWatermark(WatermarkInfinite, 2))
	send(t, p.c, p.cep, 2, 1)
	query(t, p.srq)
	none(t, p.s.conn)
	send(t, p.c, p.cep, 1, 1)
	query(t, p.srq)
	ev := next(t, p.s.conn)
	require.Equal(t, EventConnBroken, ev.Number)
	require.Equal(t, p.sep, ev.EP)
	st, err := p.sep.Status()
	require.NoError(t, err)
	require.Equal(t, EPDisconnected, st.State)
	none(t, p.s.async) // the hard watermark is not an async event
}

func TestEPHardWatermarkDuringCall(t *testing.T) {
	p := srqPair(t, 10)
	for i := 0; i < 3; i++ {
		require.NoError(t, p.srq.PostRecv(p.s.seg(i), uint64(i)))
	}
	send(t, p.c, p.cep, 2, 1)
	query(t, p.srq)
	require.NoError(t, p.sep.SetWatermark(WatermarkInfinite, 1))
	require.Equal(t, EventConnBroken, next(t, p.s.conn).Number)
}

func TestEPWatermarkEveryState(t *testing.T) {
	f := newFabric()
	c, s := newSide(t, f), newSide(t, f)
	q := s.srq(t, 4, 0)
	sep := s.ep(t, q, s.dto)
	cep := c.ep(t, nil, c.dto)
	require.NoError(t, sep.SetWatermark(3, 3)) // unconnected
	connect(t, c, cep, s, sep)
	require.NoError(t, sep.SetWatermark(2, 2)) // connected
	require.NoError(t, cep.Disconnect(false))
	require.Equal(t, EventConnDisconnected, next(t, s.conn).Number)
	require.NoError(t, sep.SetWatermark(WatermarkInfinite, WatermarkInfinite)) // disconnected
	require.NoError(t, sep.Reset())
	require.NoError(t, sep.SetWatermark(1, 1))
	require.NoError(t, sep.Free())
	require.Equal(t, ErrHandle(SubHandleEP), sep.SetWatermark(1, 1))
}

// Watermarks apply to an EP's own receive queue too ("takes a buffer from
// the SRQ or EP RQ"): buffers count once a message consumed them.
func TestEPWatermarkOwnQueue(t *testing.T) {
	f := newFabric()
	c, s := newSide(t, f), newSide(t, f)
	sep, cep := s.ep(t, nil, s.dto), c.ep(t, nil, c.dto)
	connect(t, c, cep, s, sep)
	for i := 0; i < 4; i++ {
		require.NoError(t, sep.PostRecv(s.seg(i), uint64(i), 0))
	}
	require.NoError(t, sep.SetWatermark(1, WatermarkInfinite))
	none(t, s.async) // posted, not consumed
	n, span, err := sep.RecvQuery()
	require.NoError(t, err)
	require.Equal(t, [2]int{4, 4}, [2]int{n, span})
	send(t, c, cep, 2, 1)
	n, span, err = sep.RecvQuery()
	require.NoError(t, err)
	require.Equal(t, [2]int{2, 2}, [2]int{n, span})
	asyncIs(t, s, sep, ReasonSRQSoftHighWatermark)
}

func TestEPRecvQuerySRQ(t *testing.T) {
	p := srqPair(t, 4)
	require.NoError(t, p.srq.PostRecv(p.s.seg(0), 0))
	send(t, p.c, p.cep, 1, 1)
	n, span, err := p.sep.RecvQuery()
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 0}, [2]int{n, span})
	require.Equal(t, 1, p.sep.Held())
}

// A receive EVD of DAT_HANDLE_NULL reaps nothing: SRQ buffers come back as
// soon as they complete.
func TestSRQNoRecvEVD(t *testing.T) {
	f := newFabric()
	c, s := newSide(t, f), newSide(t, f)
	q := s.srq(t, 4, 0)
	sep, cep := s.ep(t, q, nil), c.ep(t, nil, c.dto)
	connect(t, c, cep, s, sep)
	require.NoError(t, q.PostRecv(s.seg(0), 0))
	send(t, c, cep, 1, 1)
	p := query(t, q)
	require.Equal(t, 0, p.Available)
	require.Equal(t, 0, p.Outstanding)
}

// Completions dropped with their EVD give their buffers back.
func TestSRQEVDFreeReleases(t *testing.T) {
	p := srqPair(t, 4)
	evd, err := p.s.ia.CreateEVD(16, EVDDTO, nil)
	require.NoError(t, err)
	ep2 := p.s.ep(t, p.srq, evd)
	cep2 := p.c.ep(t, nil, p.c.dto)
	connect(t, p.c, cep2, p.s, ep2)
	require.NoError(t, p.srq.PostRecv(p.s.seg(0), 0))
	send(t, p.c, cep2, 1, 1)
	require.Equal(t, 1, query(t, p.srq).Outstanding)
	require.NoError(t, ep2.Free())
	require.Equal(t, 1, query(t, p.srq).Outstanding, "not reaped yet")
	require.NoError(t, evd.Free())
	require.Equal(t, 0, query(t, p.srq).Outstanding)
}

func TestSRQDifferentPZ(t *testing.T) {
	f := newFabric()
	c, s := newSide(t, f), newSide(t, f)
	q := s.srq(t, 4, 0)
	pz2, err := s.ia.CreatePZ()
	require.NoError(t, err)
	sep, err := s.ia.CreateEP(EPConfig{PZ: pz2, RecvEVD: s.dto, ReqEVD: s.dto, ConnEVD: s.conn, SRQ: q})
	require.NoError(t, err)
	cep := c.ep(t, nil, c.dto)
	connect(t, c, cep, s, sep)
	require.NoError(t, q.PostRecv(s.seg(0), 3))
	send(t, c, cep, 1, 1)
	ev := next(t, s.dto)
	require.Equal(t, DTOSuccess, ev.Status)
	require.Equal(t, uint64(3), ev.Cookie)
	require.Equal(t, ErrState(SubStatePZInUse), pz2.Free())
	// A device without CapSRQPDDifference (verbs): such an EP is refused,
	// one of the SRQ's PZ is not.
	s.ia.attr.SRQPDDifference = false
	_, err = s.ia.CreateEP(EPConfig{PZ: pz2, RecvEVD: s.dto, ReqEVD: s.dto, ConnEVD: s.conn, SRQ: q})
	require.Equal(t, ErrArg(ArgPZ), err)
	_, err = s.ia.CreateEP(EPConfig{PZ: s.pz, RecvEVD: s.dto, ReqEVD: s.dto, ConnEVD: s.conn, SRQ: q})
	require.NoError(t, err)
}

func TestSRQEPAttrSoftHW(t *testing.T) {
	s := newSide(t, newFabric())
	q := s.srq(t, 4, 0)
	a := s.ia.DefaultEPAttr()
	a.SRQSoftHW = -3
	_, err := s.ia.CreateEP(EPConfig{PZ: s.pz, RecvEVD: s.dto, ReqEVD: s.dto, ConnEVD: s.conn, SRQ: q, Attr: &a})
	require.Equal(t, ErrArg(ArgEPAttr), err)
	a.SRQSoftHW = 5
	ep, err := s.ia.CreateEP(EPConfig{PZ: s.pz, RecvEVD: s.dto, ReqEVD: s.dto, ConnEVD: s.conn, SRQ: q, Attr: &a})
	require.NoError(t, err)
	require.Equal(t, 5, ep.Attr().SRQSoftHW)
	require.Equal(t, int32(5), ep.softArm.Load())
	// An EP of its own receive queue posts receives; an SRQ EP does not.
	require.Equal(t, ErrState(SubNone), ep.PostRecv(s.seg(0), 0, 0))
}

// dat_ep_modify of srq_soft_hw is a new setting of the soft watermark.
func TestSRQEPModifySoftHW(t *testing.T) {
	f := newFabric()
	c, s := newSide(t, f), newSide(t, f)
	q := s.srq(t, 4, 0)
	sep, cep := s.ep(t, q, s.dto), c.ep(t, nil, c.dto)
	a := sep.Attr()
	a.SRQSoftHW = -4
	require.Equal(t, ErrArg(ArgEPAttr), sep.Modify(a, EPHandles{}))
	a.SRQSoftHW = 0
	require.NoError(t, sep.Modify(a, EPHandles{}))
	require.Equal(t, 0, sep.Attr().SRQSoftHW)
	connect(t, c, cep, s, sep)
	require.NoError(t, q.PostRecv(s.seg(0), 0))
	send(t, c, cep, 1, 1)
	query(t, q)
	asyncIs(t, s, sep, ReasonSRQSoftHighWatermark)
}
