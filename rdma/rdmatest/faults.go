package rdmatest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

var errorTests = []test{
	{"RemoteAccess", (*suite).errRemoteAccess},
	{"RecvTooSmall", (*suite).errRecvTooSmall},
	{"RecvDeregistered", (*suite).errRecvDeregistered},
	{"LocalSegments", (*suite).errLocalSegments},
	{"UnmappedLocal", (*suite).errUnmappedLocal},
	{"UnmappedRemote", (*suite).errUnmappedRemote},
	{"QueueFull", (*suite).errQueueFull},
	{"PostArguments", (*suite).errPostArgs},
}

// remoteCase is an RDMA request the target must refuse.
type remoteCase struct {
	name string
	// wr builds the request from the target's regions (t) and a local
	// source or destination (src); it may change the target first.
	wr func(tg *targets, src *buf) *rdma.SendWR
}

// targets are the regions of the target side: each sits in the middle of
// a larger mapping, so that a stray access lands in mapped memory and
// shows as written bytes rather than as a fault.
type targets struct {
	rw, ro, wo, other, gone *buf
	maps                    [][]byte
	keys                    map[uint32]bool
}

const tpad = 4096

// newTargets registers the target regions of 8 KiB each on s.
func newTargets(s *side) *targets {
	tg := &targets{keys: map[uint32]bool{}}
	pd2, err := s.dev.AllocPD()
	require.NoError(s.w.t, err)
	reg := func(pd rdma.PD, acc rdma.Access) *buf {
		m := s.w.mem(3 * tpad)
		tg.maps = append(tg.maps, m)
		mr, err := pd.RegMR(addrOf(m)+tpad, tpad, acc)
		require.NoError(s.w.t, err)
		tg.keys[mr.RKey()] = true
		return &buf{b: m[tpad : 2*tpad], addr: addrOf(m) + tpad, mr: mr}
	}
	tg.rw = reg(s.pd, accAll)
	tg.ro = reg(s.pd, rdma.AccessRemoteRead)
	tg.wo = reg(s.pd, rdma.AccessLocalWrite|rdma.AccessRemoteWrite)
	tg.other = reg(pd2, accAll)
	tg.gone = reg(s.pd, accAll)
	require.NoError(s.w.t, tg.gone.mr.Dereg())
	return tg
}

// badKey is a key no region of tg has.
func (tg *targets) badKey() uint32 {
	k := tg.rw.mr.RKey() ^ 0x5a5a_a5a5
	for tg.keys[k] || k == 0 {
		k = k*2654435761 + 1
	}
	return k
}

var remoteCases = []remoteCase{
	{"WriteBadKey", func(tg *targets, src *buf) *rdma.SendWR {
		return write(1, 0, tg.rw.addr, tg.badKey(), src.sge(0, 64))
	}},
	{"WriteZeroKey", func(tg *targets, src *buf) *rdma.SendWR { return write(1, 0, tg.rw.addr, 0, src.sge(0, 64)) }},
	{"WritePastEnd", func(tg *targets, src *buf) *rdma.SendWR {
		return write(1, 0, tg.rw.addr+tpad-100, tg.rw.mr.RKey(), src.sge(0, 200))
	}},
	{"WriteBeforeStart", func(tg *targets, src *buf) *rdma.SendWR {
		return write(1, 0, tg.rw.addr-8, tg.rw.mr.RKey(), src.sge(0, 64))
	}},
	{"WriteWithoutRemoteWrite", func(tg *targets, src *buf) *rdma.SendWR {
		return write(1, 0, tg.ro.addr, tg.ro.mr.RKey(), src.sge(0, 64))
	}},
	{"WriteOtherPD", func(tg *targets, src *buf) *rdma.SendWR {
		return write(1, 0, tg.other.addr, tg.other.mr.RKey(), src.sge(0, 64))
	}},
	{"WriteDeregistered", func(tg *targets, src *buf) *rdma.SendWR {
		return write(1, 0, tg.gone.addr, tg.gone.mr.RKey(), src.sge(0, 64))
	}},
	{"ReadPastEnd", func(tg *targets, src *buf) *rdma.SendWR {
		return read(1, 0, tg.rw.addr+tpad-1, tg.rw.mr.RKey(), src.sge(0, 2))
	}},
	{"ReadWithoutRemoteRead", func(tg *targets, src *buf) *rdma.SendWR {
		return read(1, 0, tg.wo.addr, tg.wo.mr.RKey(), src.sge(0, 64))
	}},
	{"ReadOtherPD", func(tg *targets, src *buf) *rdma.SendWR {
		return read(1, 0, tg.other.addr, tg.other.mr.RKey(), src.sge(0, 64))
	}},
	{"ReadBadKey", func(tg *targets, src *buf) *rdma.SendWR {
		return read(1, 0, tg.rw.addr, tg.badKey(), src.sge(0, 64))
	}},
}

// An RDMA request the target refuses (key, range, right, PD, a region
// gone) completes with WCRemAccessErr at the initiator, whose QP goes to
// Error and flushes the next request; both sides get CMBroken; the target
// raises AsyncQPAccessErr for its QP; and not a byte was written.
func (s *suite) errRemoteAccess(t *testing.T) {
	for _, rc := range remoteCases {
		t.Run(rc.name, func(t *testing.T) {
			w := s.world(t)
			a, b := w.pair()
			tg := newTargets(b.side)
			src := a.side.buf(256, accAll)
			fill(src.b, 1) // non-zero, so that a stray write shows
			dst := a.side.buf(256, accAll)
			rb := b.side.buf(64, accAll)
			require.NoError(t, b.qp.PostRecv(recv(7, rb.all())))
			wr := rc.wr(tg, src)
			if wr.Opcode == rdma.WRRDMARead {
				wr.SGL[0].Addr, wr.SGL[0].LKey = dst.addr, dst.mr.LKey()
			}
			wr.WRID = 1 // unsignalled: an error completes anyway
			require.NoError(t, a.qp.PostSend(wr))
			require.NoError(t, a.qp.PostSend(send(2, rdma.SendSignaled, src.sge(0, 8))))
			checkWC(t, w.take1(a.scq), 1, rdma.WCRemAccessErr, wcOp(wr.Opcode), a)
			checkWC(t, w.take1(a.scq), 2, rdma.WCWRFlushErr, rdma.WCSend, a)
			w.expectEvent(a, rdma.CMBroken)
			w.expectEvent(b, rdma.CMBroken)
			state(t, a, rdma.QPSErr)
			state(t, b, rdma.QPSErr)
			checkWC(t, w.take1(b.rcq), 7, rdma.WCWRFlushErr, rdma.WCRecv, b)
			w.until("AsyncQPAccessErr at the target", func() bool {
				return b.side.async.count(rdma.AsyncQPAccessErr, b.ctx) > 0
			})
			for i, m := range tg.maps {
				zeros(t, m, "target mapping %d", i)
			}
			zeros(t, dst.b, "the local destination of a refused read")
			markers(t, w, a)
			require.Equal(t, 1, b.side.async.count(rdma.AsyncQPAccessErr, b.ctx), "AsyncQPAccessErr events: %v", b.side.async)
			require.Zero(t, a.side.async.count(rdma.AsyncQPAccessErr, a.ctx), "AsyncQPAccessErr at the initiator")
		})
	}
}

// A receive too small for the message: the receiver gets WCLocLenErr, the
// sender WCRemInvReqErr; for a small and a large message.
func (s *suite) errRecvTooSmall(t *testing.T) {
	for _, n := range []int{17, 1 << 20} {
		t.Run(map[int]string{17: "Small", 1 << 20: "Large"}[n], func(t *testing.T) {
			w := s.world(t)
			a, b := w.pair()
			if uint64(n) > a.side.attr.MaxMsgSize {
				t.Skipf("MaxMsgSize %d", a.side.attr.MaxMsgSize)
			}
			sb, rb := a.side.buf(n, accAll), b.side.buf(n, accAll)
			fill(sb.b, 3)
			require.NoError(t, b.qp.PostRecv(recv(1, rb.sge(0, n-1))))
			require.NoError(t, a.qp.PostSend(send(2, rdma.SendSignaled, sb.all())))
			checkWC(t, w.take1(b.rcq), 1, rdma.WCLocLenErr, rdma.WCRecv, b)
			checkWC(t, w.take1(a.scq), 2, rdma.WCRemInvReqErr, rdma.WCSend, a)
		})
	}
}

// A receive whose region is deregistered after it was posted: when a
// message comes, the receiver gets a local protection (or access) error and
// the sender WCRemOpErr.
func (s *suite) errRecvDeregistered(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	sb, rb := a.side.buf(64, accAll), b.side.buf(64, accAll)
	require.NoError(t, b.qp.PostRecv(recv(1, rb.all())))
	require.NoError(t, rb.mr.Dereg())
	fill(sb.b, 4)
	require.NoError(t, a.qp.PostSend(send(2, rdma.SendSignaled, sb.all())))
	wc := w.take1(b.rcq)
	require.Equal(t, uint64(1), wc.WRID)
	if wc.Status != rdma.WCLocProtErr && wc.Status != rdma.WCLocAccessErr {
		t.Fatalf("a receive into a deregistered region completed with %v, want a local protection or access error", wc.Status)
	}
	checkWC(t, w.take1(a.scq), 2, rdma.WCRemOpErr, rdma.WCSend, a)
	zeros(t, rb.b, "the deregistered receive buffer")
}

// localCase is a request with a bad local segment: a post-time error with
// CapPostCheck, a WCLocProtErr completion without.
type localCase struct {
	name string
	want error
	recv bool // a receive (else a send-queue request)
	// wr builds the request from the good source (src), a read-only
	// region (ro), one of another PD (other) and the peer's target (tgt).
	wr func(src, ro, other, tgt *buf) (*rdma.SendWR, *rdma.RecvWR)
}

var localCases = []localCase{
	{"SendBadKey", rdma.ErrPrivileges, false, func(src, ro, other, tgt *buf) (*rdma.SendWR, *rdma.RecvWR) {
		e := src.sge(0, 8)
		e.LKey ^= 0x7777_0000
		return send(1, 0, e), nil
	}},
	{"SendOtherPD", rdma.ErrProtection, false, func(src, ro, other, tgt *buf) (*rdma.SendWR, *rdma.RecvWR) {
		return send(1, 0, other.sge(0, 8)), nil
	}},
	{"SendPastRegion", rdma.ErrInvalid, false, func(src, ro, other, tgt *buf) (*rdma.SendWR, *rdma.RecvWR) {
		return send(1, 0, src.sge(len(src.b)-4, 8)), nil
	}},
	{"WriteBadKey", rdma.ErrPrivileges, false, func(src, ro, other, tgt *buf) (*rdma.SendWR, *rdma.RecvWR) {
		e := src.sge(0, 8)
		e.LKey ^= 0x7777_0000
		return write(1, 0, tgt.addr, tgt.mr.RKey(), e), nil
	}},
	{"ReadIntoReadOnly", rdma.ErrPrivileges, false, func(src, ro, other, tgt *buf) (*rdma.SendWR, *rdma.RecvWR) {
		return read(1, 0, tgt.addr, tgt.mr.RKey(), ro.sge(0, 8)), nil
	}},
	{"RecvBadKey", rdma.ErrPrivileges, true, func(src, ro, other, tgt *buf) (*rdma.SendWR, *rdma.RecvWR) {
		e := src.sge(0, 64)
		e.LKey ^= 0x7777_0000
		return nil, recv(1, e)
	}},
	{"RecvReadOnly", rdma.ErrPrivileges, true, func(src, ro, other, tgt *buf) (*rdma.SendWR, *rdma.RecvWR) {
		return nil, recv(1, ro.sge(0, 64))
	}},
	{"RecvOtherPD", rdma.ErrProtection, true, func(src, ro, other, tgt *buf) (*rdma.SendWR, *rdma.RecvWR) {
		return nil, recv(1, other.sge(0, 64))
	}},
	{"RecvPastRegion", rdma.ErrInvalid, true, func(src, ro, other, tgt *buf) (*rdma.SendWR, *rdma.RecvWR) {
		return nil, recv(1, src.sge(len(src.b)-32, 64))
	}},
}

// Bad local segments: with CapPostCheck the post fails (ErrPrivileges,
// ErrProtection, ErrInvalid), nothing completes and the QP keeps working;
// without it the request completes with WCLocProtErr. Nothing reaches the
// peer either way.
func (s *suite) errLocalSegments(t *testing.T) {
	for _, lc := range localCases {
		t.Run(lc.name, func(t *testing.T) {
			w := s.world(t)
			a, b := w.pair()
			check := a.side.attr.Caps&rdma.CapPostCheck != 0
			src := a.side.buf(4096, accAll)
			fill(src.b, 2)
			ro := a.side.buf(4096, 0)
			pd2, err := a.side.dev.AllocPD()
			require.NoError(t, err)
			other := a.side.bufPD(pd2, 4096, accAll)
			tgt := b.side.buf(64, accAll)
			rb := b.side.buf(64, accAll)
			sw, rw := lc.wr(src, ro, other, tgt)
			if check {
				if lc.recv {
					isErr(t, a.qp.PostRecv(rw), lc.want, "PostRecv")
				} else {
					isErr(t, a.qp.PostSend(sw), lc.want, "PostSend")
				}
				// The QP still works and nothing completed for the refused post.
				require.NoError(t, b.qp.PostRecv(recv(5, rb.all())))
				require.NoError(t, a.qp.PostSend(send(5, rdma.SendSignaled, src.sge(0, 8))))
				checkWC(t, w.take1(a.scq), 5, rdma.WCSuccess, rdma.WCSend, a)
				checkWC(t, w.take1(b.rcq), 5, rdma.WCSuccess, rdma.WCRecv, b)
				require.NoError(t, a.qp.PostRecv(recv(6, src.sge(0, 64))))
				require.NoError(t, b.qp.PostSend(send(6, rdma.SendSignaled, rb.sge(0, 8))))
				checkWC(t, w.take1(a.rcq), 6, rdma.WCSuccess, rdma.WCRecv, a)
				state(t, a, rdma.QPSRTS)
			} else if lc.recv {
				require.NoError(t, a.qp.PostRecv(rw))
				// 64 bytes: the whole receive is used, past its region too.
				require.NoError(t, b.qp.PostSend(send(3, rdma.SendSignaled, rb.sge(0, 64))))
				checkWC(t, w.take1(a.rcq), 1, rdma.WCLocProtErr, rdma.WCRecv, a)
			} else {
				// A receive waits at the peer, so that no backend needs to
				// see one before it reads the local segments.
				require.NoError(t, b.qp.PostRecv(recv(5, rb.all())))
				require.NoError(t, a.qp.PostSend(sw))
				checkWC(t, w.take1(a.scq), 1, rdma.WCLocProtErr, wcOp(sw.Opcode), a)
			}
			zeros(t, tgt.b, "the peer's RDMA target")
			zeros(t, ro.b, "the read-only region")
		})
	}
}

// unmappedCase is a request whose local memory was unmapped after it was
// registered.
type unmappedCase struct {
	name string
	wr   func(gone, tgt *buf) *rdma.SendWR
}

// A registered local region unmapped before a send, an RDMA write (its
// source) or an RDMA read (its target) gives an error completion, never a
// dead process.
func (s *suite) errUnmappedLocal(t *testing.T) {
	if s.b.Pinned {
		t.Skip("the backend pins registered memory (Backend.Pinned)")
	}
	for _, uc := range []unmappedCase{
		{"Send", func(gone, tgt *buf) *rdma.SendWR { return send(1, rdma.SendSignaled, gone.all()) }},
		{"RDMAWrite", func(gone, tgt *buf) *rdma.SendWR {
			return write(1, rdma.SendSignaled, tgt.addr, tgt.mr.RKey(), gone.all())
		}},
		{"RDMARead", func(gone, tgt *buf) *rdma.SendWR {
			return read(1, rdma.SendSignaled, tgt.addr, tgt.mr.RKey(), gone.all())
		}},
	} {
		t.Run(uc.name, func(t *testing.T) {
			w := s.world(t)
			a, b := w.pair()
			gone := a.side.buf(64<<10, accAll)
			tgt := b.side.buf(64<<10, accAll)
			rb := b.side.buf(64<<10, accAll)
			require.NoError(t, b.qp.PostRecv(recv(9, rb.all())))
			w.unmap(gone.b)
			require.NoError(t, a.qp.PostSend(uc.wr(gone, tgt)))
			wc := w.take1(a.scq)
			require.Equal(t, uint64(1), wc.WRID)
			if wc.Status != rdma.WCLocProtErr && wc.Status != rdma.WCLocAccessErr {
				t.Fatalf("a request on unmapped local memory completed with %v, want a local protection or access error", wc.Status)
			}
			zeros(t, tgt.b, "the peer's RDMA target")
		})
	}
}

// A receive whose memory was unmapped after it was posted: the receiver
// gets a local protection (or access) error, the sender WCRemOpErr. An
// RDMA write to a target region unmapped at the target: WCRemAccessErr.
func (s *suite) errUnmappedRemote(t *testing.T) {
	if s.b.Pinned {
		t.Skip("the backend pins registered memory (Backend.Pinned)")
	}
	t.Run("Receive", func(t *testing.T) {
		w := s.world(t)
		a, b := w.pair()
		sb, rb := a.side.buf(64<<10, accAll), b.side.buf(64<<10, accAll)
		require.NoError(t, b.qp.PostRecv(recv(1, rb.all())))
		w.unmap(rb.b)
		require.NoError(t, a.qp.PostSend(send(2, rdma.SendSignaled, sb.all())))
		wc := w.take1(b.rcq)
		require.Equal(t, uint64(1), wc.WRID)
		if wc.Status != rdma.WCLocProtErr && wc.Status != rdma.WCLocAccessErr {
			t.Fatalf("a receive into unmapped memory completed with %v, want a local protection or access error", wc.Status)
		}
		checkWC(t, w.take1(a.scq), 2, rdma.WCRemOpErr, rdma.WCSend, a)
	})
	t.Run("RDMAWriteTarget", func(t *testing.T) {
		w := s.world(t)
		a, b := w.pair()
		sb, tgt := a.side.buf(64<<10, accAll), b.side.buf(64<<10, accAll)
		w.unmap(tgt.b)
		require.NoError(t, a.qp.PostSend(write(1, rdma.SendSignaled, tgt.addr, tgt.mr.RKey(), sb.all())))
		checkWC(t, w.take1(a.scq), 1, rdma.WCRemAccessErr, rdma.WCRDMAWrite, a)
	})
}

// A send queue holding MaxSendWR requests, and a receive queue holding
// MaxRecvWR, refuse more with ErrQueueFull until requests complete.
func (s *suite) errQueueFull(t *testing.T) {
	w := s.world(t)
	a0, b0 := w.open(), w.open()
	cp := rdma.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}
	a, b := a0.newQP(qpOpts{cap: cp}), b0.newQP(qpOpts{cap: rdma.QPCap{MaxSendWR: 64, MaxRecvWR: 64, MaxSendSGE: 1, MaxRecvSGE: 1}})
	nr := a.qp.Cap().MaxRecvWR
	ab := a0.buf(8*(nr+1), accAll)
	for i := range nr {
		require.NoError(t, a.qp.PostRecv(recv(uint64(i), ab.sge(i*8, 8))))
	}
	isErr(t, a.qp.PostRecv(recv(99, ab.sge(0, 8))), rdma.ErrQueueFull, "receive %d of a queue of %d", nr+1, nr)
	w.connect(a, b)
	ns := a.qp.Cap().MaxSendWR
	require.Less(t, ns, b.qp.Cap().MaxRecvWR, "the peer must be able to take every send")
	sb := a0.buf(8*ns, accAll)
	for i := range ns { // the peer has no receive: they stay outstanding
		require.NoError(t, a.qp.PostSend(send(uint64(i), rdma.SendSignaled, sb.sge(i*8, 8))))
	}
	isErr(t, a.qp.PostSend(send(99, rdma.SendSignaled, sb.sge(0, 8))), rdma.ErrQueueFull, "send %d of a queue of %d", ns+1, ns)
	rb := b0.buf(8*ns, accAll)
	for i := range ns {
		require.NoError(t, b.qp.PostRecv(recv(uint64(i), rb.sge(i*8, 8))))
	}
	for i, wc := range w.take(a.scq, ns) {
		checkWC(t, wc, uint64(i), rdma.WCSuccess, rdma.WCSend, a)
	}
	require.NoError(t, a.qp.PostSend(send(100, rdma.SendSignaled, sb.sge(0, 8))), "a send once the queue drained")
	require.NoError(t, b.qp.PostSend(send(101, rdma.SendSignaled, rb.sge(0, 8))))
	checkWC(t, w.take1(a.rcq), 0, rdma.WCSuccess, rdma.WCRecv, a)
	require.NoError(t, a.qp.PostRecv(recv(102, ab.sge(8*nr, 8))), "a receive once one completed")
}

// Malformed requests are ErrInvalid: too many entries, an unknown opcode.
func (s *suite) errPostArgs(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	c := a.qp.Cap()
	sb := a.side.buf(4096, accAll)
	many := func(k int) []rdma.SGE {
		out := make([]rdma.SGE, k)
		for i := range out {
			out[i] = sb.sge(i, 1)
		}
		return out
	}
	isErr(t, a.qp.PostSend(send(1, rdma.SendSignaled, many(c.MaxSendSGE+1)...)), rdma.ErrInvalid, "a send of MaxSendSGE+1 entries")
	isErr(t, a.qp.PostRecv(&rdma.RecvWR{WRID: 2, SGL: many(c.MaxRecvSGE + 1)}), rdma.ErrInvalid, "a receive of MaxRecvSGE+1 entries")
	isErr(t, a.qp.PostSend(&rdma.SendWR{WRID: 3, Opcode: 200, SGL: many(1)}), rdma.ErrInvalid, "an unknown opcode")
	rb := b.side.buf(4096, accAll)
	require.NoError(t, b.qp.PostRecv(recv(4, rb.all())))
	require.NoError(t, a.qp.PostSend(send(4, rdma.SendSignaled, many(c.MaxSendSGE)...)), "a send of MaxSendSGE entries")
	checkWC(t, w.take1(a.scq), 4, rdma.WCSuccess, rdma.WCSend, a)
	checkWC(t, w.take1(b.rcq), 4, rdma.WCSuccess, rdma.WCRecv, b)
}
