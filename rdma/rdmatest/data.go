package rdmatest

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

var dataTests = []test{
	{"SendRecvSizes", (*suite).dataSizes},
	{"MaxSGE", (*suite).dataMaxSGE},
	{"Inline", (*suite).dataInline},
	{"RDMAWrite", (*suite).dataWrite},
	{"RDMARead", (*suite).dataRead},
	{"ManyReads", (*suite).dataManyReads},
	{"WriteVisibleAtSendCompletion", (*suite).dataWriteThenSend},
	{"Solicited", (*suite).dataSolicited},
	{"Unsignalled", (*suite).dataUnsignalled},
	{"SignalledAccessAfterUnsignalled", (*suite).dataAccessAfterUnsignalled},
	{"SigAll", (*suite).dataSigAll},
	{"FenceAfterRead", (*suite).dataFence},
	{"SendsWaitForReceives", (*suite).dataSendsWait},
	{"PingPong", (*suite).dataPingPong},
	{"ConcurrentPosters", (*suite).dataConcurrent},
	{"PostPollAllocs", (*suite).dataAllocs},
}

const canary = 0xa5

// msgSizes are the message sizes the data tests use: the edges, the
// backend's inline (eager) threshold, and large ones, within MaxMsgSize.
func msgSizes(at rdma.DeviceAttr) []int {
	var out []int
	for _, n := range []int{0, 1, at.MaxInline - 1, at.MaxInline, at.MaxInline + 1, 4093, 64 << 10, 1 << 20, 4 << 20} {
		if n >= 0 && uint64(n) <= at.MaxMsgSize && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// split cuts n bytes at off into up to two entries (one when the device has
// a single SGE or n is too small).
func split(b *buf, off, n, cut, maxSGE int) []rdma.SGE {
	if n == 0 {
		return nil
	}
	if maxSGE < 2 || cut <= 0 || cut >= n {
		return []rdma.SGE{b.sge(off, n)}
	}
	return []rdma.SGE{b.sge(off, cut), b.sge(off+cut, n-cut)}
}

// Sends of every size arrive byte for byte, gathered from two entries and
// scattered into two others, with the right ByteLen; the rest of the
// receive buffer is untouched.
func (s *suite) dataSizes(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	at := a.side.attr
	for i, n := range msgSizes(at) {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w.t = t
			seed := uint64(100 + i)
			sb := a.side.buf(n, accAll)
			fill(sb.b, seed)
			const pad = 100
			rb := b.side.buf(n+pad, accAll)
			for j := range rb.b {
				rb.b[j] = canary
			}
			require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: seed, SGL: split(rb, 0, n+pad, (n+pad)/3, at.MaxSGE)}))
			require.NoError(t, a.qp.PostSend(send(seed, rdma.SendSignaled, split(sb, 0, n, n/2+1, at.MaxSGE)...)))
			wc := w.take1(b.rcq)
			checkWC(t, wc, seed, rdma.WCSuccess, rdma.WCRecv, b)
			require.Equal(t, uint32(n), wc.ByteLen, "ByteLen")
			if at.Caps&rdma.CapSolicitedFlag != 0 {
				require.Zero(t, wc.Flags&rdma.WCSolicited, "a send without SendSolicited arrived solicited")
			}
			checkWC(t, w.take1(a.scq), seed, rdma.WCSuccess, rdma.WCSend, a)
			sameBytes(t, sb.b, rb.b[:n], "message of %d bytes", n)
			for j, v := range rb.b[n:] {
				require.Equal(t, byte(canary), v, "receive buffer byte %d past the message", n+j)
			}
		})
	}
}

// A message gathered from MaxSGE entries of odd sizes and scattered into
// MaxSGE others arrives intact.
func (s *suite) dataMaxSGE(t *testing.T) {
	w := s.world(t)
	a0, b0 := w.open(), w.open()
	k := min(a0.attr.MaxSGE, b0.attr.MaxSGE, 32)
	cp := rdma.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: k, MaxRecvSGE: k}
	a, b := a0.newQP(qpOpts{cap: cp}), b0.newQP(qpOpts{cap: cp})
	w.connect(a, b)
	var ssg, rsg []rdma.SGE
	sb, rb := a0.buf(k*1000, accAll), b0.buf(k*1000, accAll)
	fill(sb.b, 9)
	total := 0
	for i := range k {
		ssg = append(ssg, sb.sge(i*1000, 1+i*37%999)) // gaps between entries
		total += 1 + i*37%999
	}
	left := total
	for i := range k {
		n := max(1, total/k+i%3)
		if i == k-1 {
			n = left
		}
		rsg = append(rsg, rb.sge(i*1000+7, n))
		left -= n
	}
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 1, SGL: rsg}))
	require.NoError(t, a.qp.PostSend(send(1, rdma.SendSignaled, ssg...)))
	wc := w.take1(b.rcq)
	checkWC(t, wc, 1, rdma.WCSuccess, rdma.WCRecv, b)
	require.Equal(t, uint32(total), wc.ByteLen)
	checkWC(t, w.take1(a.scq), 1, rdma.WCSuccess, rdma.WCSend, a)
	var want, got []byte
	for _, e := range ssg {
		want = append(want, sb.b[e.Addr-sb.addr:][:e.Length]...)
	}
	for _, e := range rsg {
		got = append(got, rb.b[e.Addr-rb.addr:][:e.Length]...)
	}
	sameBytes(t, want, got, "a message of %d entries", k)
}

// An inline send copies at post time: its buffer needs no registration and
// may be reused at once. Inline data above the QP's MaxInlineData is
// ErrInvalid.
func (s *suite) dataInline(t *testing.T) {
	w := s.world(t)
	a0, b0 := w.open(), w.open()
	if a0.attr.MaxInline == 0 {
		t.Skip("the device has no inline sends (MaxInline 0)")
	}
	n := a0.attr.MaxInline
	cp := a0.defaultCap()
	cp.MaxInlineData = n
	a, b := a0.newQP(qpOpts{cap: cp}), b0.newQP(qpOpts{})
	w.connect(a, b)
	granted := a.qp.Cap().MaxInlineData
	require.GreaterOrEqual(t, granted, n)
	src := w.mem(granted + 1) // not registered
	fill(src, 3)
	want := slices.Clone(src[:n])
	rb := b0.buf(granted+1, accAll)
	require.NoError(t, b.qp.PostRecv(recv(1, rb.all())))
	require.NoError(t, a.qp.PostSend(send(1, rdma.SendSignaled|rdma.SendInline,
		rdma.SGE{Addr: addrOf(src), Length: uint32(n)})))
	fill(src, 4) // reused at once
	wc := w.take1(b.rcq)
	checkWC(t, wc, 1, rdma.WCSuccess, rdma.WCRecv, b)
	require.Equal(t, uint32(n), wc.ByteLen)
	sameBytes(t, want, rb.b[:n], "inline message")
	checkWC(t, w.take1(a.scq), 1, rdma.WCSuccess, rdma.WCSend, a)
	isErr(t, a.qp.PostSend(send(2, rdma.SendSignaled|rdma.SendInline,
		rdma.SGE{Addr: addrOf(src), Length: uint32(granted + 1)})), rdma.ErrInvalid, "inline data above MaxInlineData")
}

// rdmaSizes are the RDMA transfer sizes, within MaxMsgSize.
func rdmaSizes(at rdma.DeviceAttr) []int {
	var out []int
	for _, n := range []int{1, 4099, 64 << 10, 1 << 20, 4 << 20} {
		if uint64(n) <= at.MaxMsgSize {
			out = append(out, n)
		}
	}
	return out
}

// RDMA writes gathered from two entries land byte for byte at the remote
// offset, nothing around them is touched, and no receive is consumed.
func (s *suite) dataWrite(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	at := a.side.attr
	rb := b.side.buf(16, accAll)
	require.NoError(t, b.qp.PostRecv(recv(99, rb.all())))
	const pad = 64
	for i, n := range rdmaSizes(at) {
		sb := a.side.buf(n, accAll)
		fill(sb.b, uint64(i))
		tgt := b.side.buf(n+2*pad, accAll)
		for j := range tgt.b {
			tgt.b[j] = canary
		}
		id := uint64(i)
		require.NoError(t, a.qp.PostSend(write(id, rdma.SendSignaled, tgt.addr+pad, tgt.mr.RKey(), split(sb, 0, n, n/3, at.MaxSGE)...)))
		checkWC(t, w.take1(a.scq), id, rdma.WCSuccess, rdma.WCRDMAWrite, a)
		sameBytes(t, sb.b, tgt.b[pad:pad+n], "RDMA write of %d bytes", n)
		for j := range pad {
			require.Equal(t, byte(canary), tgt.b[j], "byte %d before the written range", j)
			require.Equal(t, byte(canary), tgt.b[pad+n+j], "byte %d after the written range", j)
		}
	}
	// The writes consumed no receive: a send still finds receive 99.
	exchangeInto(t, w, a, b, 99, rb)
}

// exchangeInto sends 16 bytes from a and expects them in b's receive id.
func exchangeInto(t *testing.T, w *world, a, b *conn, id uint64, rb *buf) {
	t.Helper()
	sb := a.side.buf(16, accAll)
	fill(sb.b, id)
	require.NoError(t, a.qp.PostSend(send(id, rdma.SendSignaled, sb.all())))
	checkWC(t, w.take1(b.rcq), id, rdma.WCSuccess, rdma.WCRecv, b)
	checkWC(t, w.take1(a.scq), id, rdma.WCSuccess, rdma.WCSend, a)
	sameBytes(t, sb.b, rb.b[:16], "message %d", id)
}

// RDMA reads scatter the remote range into two local entries byte for byte
// (one where the device's reads scatter into one, MaxSGERd), touching
// nothing around them; a read into more entries than MaxSGERd fails at the
// post.
func (s *suite) dataRead(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	at := a.side.attr
	const pad = 64
	rd := at.ReadSGE()
	if rd < at.MaxSGE && rd < a.qp.Cap().MaxSendSGE {
		src := b.side.buf(64*(rd+1), rdma.AccessRemoteRead)
		db := a.side.buf(64*(rd+1), accAll)
		sgl := make([]rdma.SGE, rd+1)
		for i := range sgl {
			sgl[i] = db.sge(64*i, 64)
		}
		require.ErrorIs(t, a.qp.PostSend(read(99, rdma.SendSignaled, src.addr, src.mr.RKey(), sgl...)), rdma.ErrInvalid,
			"a read into %d entries, MaxSGERd %d", rd+1, rd)
	}
	for i, n := range rdmaSizes(at) {
		src := b.side.buf(n+2*pad, rdma.AccessRemoteRead)
		fill(src.b, uint64(50+i))
		db := a.side.buf(n+2*pad, accAll)
		for j := range db.b {
			db.b[j] = canary
		}
		id := uint64(i)
		require.NoError(t, a.qp.PostSend(read(id, rdma.SendSignaled, src.addr+pad, src.mr.RKey(), split(db, pad, n, n/2, rd)...)))
		checkWC(t, w.take1(a.scq), id, rdma.WCSuccess, rdma.WCRDMARead, a)
		sameBytes(t, src.b[pad:pad+n], db.b[pad:pad+n], "RDMA read of %d bytes", n)
		for j := range pad {
			require.Equal(t, byte(canary), db.b[j], "byte %d before the read range", j)
			require.Equal(t, byte(canary), db.b[pad+n+j], "byte %d after the read range", j)
		}
	}
}

// More RDMA reads than the initiator depth (MaxQPInitRdAtom) posted at
// once all complete, in order, with their data.
func (s *suite) dataManyReads(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	n := min(3*a.side.attr.MaxQPInitRdAtom, a.qp.Cap().MaxSendWR, 96)
	const size = 4096
	src := b.side.buf(n*size, rdma.AccessRemoteRead)
	fill(src.b, 77)
	dst := a.side.buf(n*size, accAll)
	for i := range n {
		require.NoError(t, a.qp.PostSend(read(uint64(i), rdma.SendSignaled, src.addr+uint64(i*size), src.mr.RKey(), dst.sge(i*size, size))))
	}
	for i, wc := range w.take(a.scq, n) {
		checkWC(t, wc, uint64(i), rdma.WCSuccess, rdma.WCRDMARead, a)
	}
	sameBytes(t, src.b, dst.b, "%d RDMA reads", n)
}

// An RDMA write followed by a send on the same QP: when the send's receive
// completion is polled, the write's data is in place.
func (s *suite) dataWriteThenSend(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	n := int(min(uint64(4<<20), a.side.attr.MaxMsgSize))
	sb := a.side.buf(n, accAll)
	tgt := b.side.buf(n, accAll)
	msg, rb := a.side.buf(8, accAll), b.side.buf(8, accAll)
	b.rcq.manual = true
	for round := range 3 {
		fill(sb.b, uint64(round))
		require.NoError(t, b.qp.PostRecv(recv(uint64(round), rb.all())))
		require.NoError(t, a.qp.PostSend(write(1, 0, tgt.addr, tgt.mr.RKey(), sb.all())))
		require.NoError(t, a.qp.PostSend(send(2, rdma.SendSignaled, msg.all())))
		// Poll the receive CQ alone and check the target the moment the
		// completion comes out of it.
		var wc [1]rdma.WC
		w.until("the send's receive completion", func() bool { return b.rcq.cq.Poll(wc[:]) == 1 })
		sameBytes(t, sb.b, tgt.b, "RDMA write target when the following send's receive completed (round %d)", round)
		checkWC(t, wc[0], uint64(round), rdma.WCSuccess, rdma.WCRecv, b)
		checkWC(t, w.take1(a.scq), 2, rdma.WCSuccess, rdma.WCSend, a)
	}
}

// SendSolicited shows as WCSolicited on the receive completion.
func (s *suite) dataSolicited(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	w.need(rdma.CapSolicitedFlag)
	sb, rb := a.side.buf(8, accAll), b.side.buf(16, accAll)
	for i, fl := range []rdma.SendFlags{rdma.SendSolicited, 0, rdma.SendSolicited | rdma.SendSignaled} {
		require.NoError(t, b.qp.PostRecv(recv(uint64(i), rb.all())))
		require.NoError(t, a.qp.PostSend(send(uint64(i), fl, sb.all())))
		wc := w.take1(b.rcq)
		checkWC(t, wc, uint64(i), rdma.WCSuccess, rdma.WCRecv, b)
		require.Equal(t, fl&rdma.SendSolicited != 0, wc.Flags&rdma.WCSolicited != 0, "WCSolicited of message %d", i)
	}
}

// Unsignalled requests that succeed produce no completion; a signalled one
// after them completes (implying they did); an unsignalled one that fails
// produces an error completion.
func (s *suite) dataUnsignalled(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	sb, rb := a.side.buf(4*64, accAll), b.side.buf(5*64, accAll)
	tgt := b.side.buf(64, accAll)
	for i := range 4 {
		fill(sb.b[i*64:(i+1)*64], uint64(i))
		require.NoError(t, b.qp.PostRecv(recv(uint64(i), rb.sge(i*64, 64))))
	}
	require.NoError(t, a.qp.PostSend(send(0, 0, sb.sge(0, 64))))
	require.NoError(t, a.qp.PostSend(write(1, 0, tgt.addr, tgt.mr.RKey(), sb.sge(64, 64))))
	require.NoError(t, a.qp.PostSend(send(2, 0, sb.sge(128, 64))))
	require.NoError(t, a.qp.PostSend(send(3, rdma.SendSignaled, sb.sge(192, 64))))
	checkWC(t, w.take1(a.scq), 3, rdma.WCSuccess, rdma.WCSend, a)
	sameBytes(t, sb.b[64:128], tgt.b, "unsignalled RDMA write")
	for _, i := range []int{0, 1, 2} {
		seg := i
		if i > 0 {
			seg = i + 1
		}
		wc := w.take1(b.rcq)
		checkWC(t, wc, uint64(i), rdma.WCSuccess, rdma.WCRecv, b)
		sameBytes(t, sb.b[seg*64:(seg+1)*64], rb.b[i*64:(i+1)*64], "message %d", i)
	}
	require.NoError(t, a.qp.PostSend(send(4, rdma.SendSignaled, sb.sge(0, 8))))
	checkWC(t, w.take1(a.scq), 4, rdma.WCSuccess, rdma.WCSend, a) // nothing in between
	checkWC(t, w.take1(b.rcq), 3, rdma.WCSuccess, rdma.WCRecv, b)

	// An unsignalled send into a receive too small fails with a completion.
	require.NoError(t, b.qp.PostRecv(recv(5, rb.sge(4*64, 16))))
	require.NoError(t, a.qp.PostSend(send(5, 0, sb.sge(0, 64))))
	checkWC(t, w.take1(a.scq), 5, rdma.WCRemInvReqErr, rdma.WCSend, a)
	checkWC(t, w.take1(b.rcq), 5, rdma.WCLocLenErr, rdma.WCRecv, b)
}

// A signalled RDMA write, then a signalled read, after unsignalled sends
// that the peer has taken complete with nothing else posted: the sender
// learns of the sends' success without a request of its own to carry the
// news (a one-sided access sends the peer nothing), to a sender that only
// polls, as a program that streams suppressed sends and then RDMA writes
// needs (datbench lat_poll, then bw_write, once waited 20 s for it on
// shared memory).
func (s *suite) dataAccessAfterUnsignalled(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	sb, rb := a.side.buf(3*64, accAll), b.side.buf(3*64, accAll)
	tgt := b.side.buf(64, accAll)
	local := a.side.buf(64, accAll)
	for i := range 3 {
		fill(sb.b[i*64:(i+1)*64], uint64(i))
		require.NoError(t, b.qp.PostRecv(recv(uint64(i), rb.sge(i*64, 64))))
	}
	for i := range 3 {
		require.NoError(t, a.qp.PostSend(send(uint64(i), 0, sb.sge(i*64, 64))))
	}
	for i := range 3 {
		checkWC(t, w.take1(b.rcq), uint64(i), rdma.WCSuccess, rdma.WCRecv, b)
	}
	require.NoError(t, a.qp.PostSend(write(10, rdma.SendSignaled, tgt.addr, tgt.mr.RKey(), sb.sge(0, 64))))
	checkWC(t, w.take1Polled(a.scq), 10, rdma.WCSuccess, rdma.WCRDMAWrite, a)
	sameBytes(t, sb.b[:64], tgt.b, "RDMA write after unsignalled sends")
	require.NoError(t, b.qp.PostRecv(recv(11, rb.sge(0, 64))))
	require.NoError(t, a.qp.PostSend(send(11, 0, sb.sge(64, 64))))
	checkWC(t, w.take1(b.rcq), 11, rdma.WCSuccess, rdma.WCRecv, b)
	require.NoError(t, a.qp.PostSend(read(12, rdma.SendSignaled, tgt.addr, tgt.mr.RKey(), local.all())))
	checkWC(t, w.take1Polled(a.scq), 12, rdma.WCSuccess, rdma.WCRDMARead, a)
	sameBytes(t, tgt.b, local.b, "RDMA read after an unsignalled send")
}

// A QP created with SigAll signals every request.
func (s *suite) dataSigAll(t *testing.T) {
	w := s.world(t)
	a0, b0 := w.open(), w.open()
	a, b := a0.newQP(qpOpts{sigAll: true}), b0.newQP(qpOpts{})
	w.connect(a, b)
	sb, rb := a0.buf(64, accAll), b0.buf(64, accAll)
	tgt := b0.buf(64, accAll)
	require.NoError(t, b.qp.PostRecv(recv(1, rb.all())))
	require.NoError(t, a.qp.PostSend(send(1, 0, sb.all())))
	require.NoError(t, a.qp.PostSend(write(2, 0, tgt.addr, tgt.mr.RKey(), sb.all())))
	checkWC(t, w.take1(a.scq), 1, rdma.WCSuccess, rdma.WCSend, a)
	checkWC(t, w.take1(a.scq), 2, rdma.WCSuccess, rdma.WCRDMAWrite, a)
	checkWC(t, w.take1(b.rcq), 1, rdma.WCSuccess, rdma.WCRecv, b)
}

// A request with SendFence starts only after the RDMA reads before it have
// completed: a send and a write of the buffer a read fills carry the data
// read, not what was there before.
func (s *suite) dataFence(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	n := int(min(uint64(256<<10), a.side.attr.MaxMsgSize))
	src := b.side.buf(n, rdma.AccessRemoteRead)
	dst := b.side.buf(n, accAll)
	rb := b.side.buf(n, accAll)
	local := a.side.buf(n, accAll)
	for round := range 4 {
		fill(src.b, uint64(round+1))
		fill(local.b, 1000+uint64(round)) // stale contents the fence must not let out
		require.NoError(t, b.qp.PostRecv(recv(uint64(round), rb.all())))
		require.NoError(t, a.qp.PostSend(read(1, 0, src.addr, src.mr.RKey(), local.all())))
		require.NoError(t, a.qp.PostSend(send(2, rdma.SendFence, local.all())))
		require.NoError(t, a.qp.PostSend(write(3, rdma.SendFence|rdma.SendSignaled, dst.addr, dst.mr.RKey(), local.all())))
		checkWC(t, w.take1(a.scq), 3, rdma.WCSuccess, rdma.WCRDMAWrite, a)
		checkWC(t, w.take1(b.rcq), uint64(round), rdma.WCSuccess, rdma.WCRecv, b)
		sameBytes(t, src.b, rb.b, "fenced send after a read (round %d)", round)
		sameBytes(t, src.b, dst.b, "fenced write after a read (round %d)", round)
	}
}

// Sends posted before the peer posts receives wait for them: nothing is
// lost and the order is kept, for signalled and unsignalled sends alike.
func (s *suite) dataSendsWait(t *testing.T) {
	w := s.world(t)
	a0, b0 := w.open(), w.open()
	n := min(200, a0.attr.MaxQPWR, b0.attr.MaxQPWR)
	cp := rdma.QPCap{MaxSendWR: n, MaxRecvWR: n, MaxSendSGE: 1, MaxRecvSGE: 1}
	a, b := a0.newQP(qpOpts{cap: cp}), b0.newQP(qpOpts{cap: cp})
	w.connect(a, b)
	sb, rb := a0.buf(n*8, accAll), b0.buf(n*8, accAll)
	fill(sb.b, 8)
	var signalled []uint64
	for i := range n {
		fl := rdma.SendFlags(0)
		if i%2 == 0 || i == n-1 {
			fl = rdma.SendSignaled
			signalled = append(signalled, uint64(i))
		}
		require.NoError(t, a.qp.PostSend(send(uint64(i), fl, sb.sge(i*8, 8))))
	}
	post := func(from, to int) {
		for i := from; i < to; i++ {
			require.NoError(t, b.qp.PostRecv(recv(uint64(i), rb.sge(i*8, 8))))
		}
	}
	post(0, n/4)
	for i, wc := range w.take(b.rcq, n/4) {
		checkWC(t, wc, uint64(i), rdma.WCSuccess, rdma.WCRecv, b)
	}
	post(n/4, n)
	for i, wc := range w.take(b.rcq, n-n/4) {
		checkWC(t, wc, uint64(n/4+i), rdma.WCSuccess, rdma.WCRecv, b)
	}
	sameBytes(t, sb.b, rb.b, "%d messages", n)
	for i, wc := range w.take(a.scq, len(signalled)) {
		checkWC(t, wc, signalled[i], rdma.WCSuccess, rdma.WCSend, a)
	}
}

// A hundred round trips, each side answering the other's message.
func (s *suite) dataPingPong(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	ab, bb := a.side.buf(8, accAll), b.side.buf(8, accAll)
	for i := range 100 {
		require.NoError(t, b.qp.PostRecv(recv(uint64(i), bb.all())))
		binary.LittleEndian.PutUint64(ab.b, uint64(2*i))
		require.NoError(t, a.qp.PostSend(send(uint64(i), 0, ab.all())))
		checkWC(t, w.take1(b.rcq), uint64(i), rdma.WCSuccess, rdma.WCRecv, b)
		require.Equal(t, uint64(2*i), binary.LittleEndian.Uint64(bb.b))
		require.NoError(t, a.qp.PostRecv(recv(uint64(i), ab.all())))
		binary.LittleEndian.PutUint64(bb.b, uint64(2*i+1))
		require.NoError(t, b.qp.PostSend(send(uint64(i), 0, bb.all())))
		checkWC(t, w.take1(a.rcq), uint64(i), rdma.WCSuccess, rdma.WCRecv, a)
		require.Equal(t, uint64(2*i+1), binary.LittleEndian.Uint64(ab.b))
	}
}

// Goroutines post on their own QPs at once while the test polls the CQs
// they share: every message arrives, each QP's in order.
func (s *suite) dataConcurrent(t *testing.T) {
	w := s.world(t)
	const n, per = 4, 200
	as, bs := w.open(), w.open()
	if as.attr.MaxQPWR < per || bs.attr.MaxCQE < n*per {
		t.Skipf("the device's queues cannot hold %d requests", per)
	}
	scq, rcq := as.newCQ(n*per), bs.newCQ(n*per)
	cp := rdma.QPCap{MaxSendWR: per, MaxRecvWR: per, MaxSendSGE: 1, MaxRecvSGE: 1}
	var a, b []*conn
	byNum := map[uint32]int{}
	for i := range n {
		a = append(a, as.newQP(qpOpts{scq: scq, cap: cp}))
		b = append(b, bs.newQP(qpOpts{rcq: rcq, cap: cp}))
		w.connect(a[i], b[i])
		byNum[b[i].qp.Num()] = i
	}
	sb, rb := as.buf(n*per*8, accAll), bs.buf(n*per*8, accAll)
	for i := range n {
		for k := range per {
			binary.LittleEndian.PutUint64(sb.b[(i*per+k)*8:], uint64(i<<32|k))
			require.NoError(t, b[i].qp.PostRecv(recv(uint64(k), rb.sge((i*per+k)*8, 8))))
		}
	}
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for k := range per {
				fl := rdma.SendFlags(0)
				if k%10 == 9 {
					fl = rdma.SendSignaled
				}
				if err := a[i].qp.PostSend(send(uint64(k), fl, sb.sge((i*per+k)*8, 8))); err != nil {
					errs <- fmt.Errorf("QP %d, send %d: %w", i, k, err)
					return
				}
			}
		})
	}
	wcs := w.take(rcq, n*per)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	next := make([]int, n)
	for _, wc := range wcs {
		i := byNum[wc.QPNum]
		checkWC(t, wc, uint64(next[i]), rdma.WCSuccess, rdma.WCRecv, b[i])
		next[i]++
	}
	sameBytes(t, sb.b, rb.b, "messages of %d concurrent posters", n)
	w.take(scq, n*per/10)
}

// Posting and polling allocate nothing, as on verbs where a post is a few
// stores into a queue and a poll a few loads: sends of 8 bytes and of a
// page with their receives, an RDMA write and an RDMA read of a page, each
// signalled, and an empty Poll. (An allocation per request is
// garbage-collector work that a streaming application pays for in
// pauses.)
func (s *suite) dataAllocs(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	for _, c := range []*cqLog{a.scq, a.rcq, b.scq, b.rcq} {
		c.manual = true
	}
	const page = 4096
	sb, rb, tgt := a.side.buf(page, accAll), b.side.buf(2*page, accAll), b.side.buf(page, accAll)
	rwrs := []*rdma.RecvWR{recv(1, rb.sge(0, 8)), recv(2, rb.sge(page, page))}
	wrs := []*rdma.SendWR{
		send(3, rdma.SendSignaled, sb.sge(0, 8)),
		send(4, rdma.SendSignaled, sb.all()),
		write(5, rdma.SendSignaled, tgt.addr, tgt.mr.RKey(), sb.all()),
		read(6, rdma.SendSignaled, tgt.addr, tgt.mr.RKey(), sb.all()),
	}
	var wc [8]rdma.WC
	var failed error
	round := func() {
		if failed != nil {
			return
		}
		for _, wr := range rwrs {
			if failed = b.qp.PostRecv(wr); failed != nil {
				return
			}
		}
		for _, wr := range wrs {
			if failed = a.qp.PostSend(wr); failed != nil {
				return
			}
		}
		deadline := time.Now().Add(bound)
		for done, got := 0, 0; done < len(wrs) || got < len(rwrs); {
			n := a.scq.cq.Poll(wc[:])
			m := b.rcq.cq.Poll(wc[n:])
			for _, c := range wc[:n+m] {
				if c.Status != rdma.WCSuccess {
					failed = fmt.Errorf("completion %d: %v", c.WRID, c.Status)
					return
				}
			}
			done, got = done+n, got+m
			if time.Now().After(deadline) {
				failed = fmt.Errorf("%d of %d send completions and %d of %d receives within %v", done, len(wrs), got, len(rwrs), bound)
				return
			}
		}
	}
	round() // the first may set up what later rounds reuse
	require.NoError(t, failed)
	allocs := testing.AllocsPerRun(100, round)
	require.NoError(t, failed)
	if s.b.Allocates {
		require.NotZero(t, allocs, "allocations per round of a backend that allocates")
		return
	}
	require.Zero(t, allocs, "allocations per round of six posts and their completions")
	require.Zero(t, testing.AllocsPerRun(1000, func() { a.scq.cq.Poll(wc[:]) }), "allocations per empty Poll")
}
