package soft

import (
	"bytes"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"godat/rdma"
)

// sqEmpty reports whether every request of q has completed (its verdicts
// arrived).
func sqEmpty(q rdma.QP) bool {
	p := q.(*qp)
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sqHead == p.sqTail
}

// tcpPair is two TCP devices of this process with their QPs connected.
func tcpPair(t *testing.T) (a, b *end) {
	t.Helper()
	a = newEnd(t, rdma.Params{"transport": "tcp"})
	b = newEnd(t, rdma.Params{"transport": "tcp"})
	connect(t, a, b, nil, nil)
	return a, b
}

// waitFor polls cond (calling poll between looks, when not nil) until it
// holds, within testWait.
func waitFor(t *testing.T, what string, cond func() bool, poll func()) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, testWait)
		}
		if poll != nil {
			poll()
		}
		runtime.Gosched()
	}
}

// The verdict of an unsignalled send that nobody waits for rides on the
// receiver's next frame, but reaches the sender in bounded time however
// the receiver behaves: while it keeps polling (its Polls write it), and
// when it stops calling the library after its receive (the loop
// goroutine does). An RDMA write reaches a target that never polls, also
// right after it polled (the goroutine stood down meanwhile).
func TestTCPVerdictsAndPassiveTarget(t *testing.T) {
	a, b := tcpPair(t)
	sb, smr := a.buf(t, 8, allAccess)
	rb, rmr := b.buf(t, 64, allAccess)
	var wc [4]rdma.WC
	for _, keepPolling := range []bool{true, false} {
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 1, SGL: []rdma.SGE{sge(rb[:8], rmr)}}))
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{sge(sb, smr)}}))
		require.Equal(t, rdma.WCSuccess, pollN(t, b.rcq, 1)[0].Status)
		var poll func()
		if keepPolling {
			poll = func() { require.Zero(t, b.rcq.Poll(wc[:])) }
		}
		waitFor(t, "the verdict of an unsignalled send", func() bool { return sqEmpty(a.qp) }, poll)
	}
	copy(sb, "written!")
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 9, Opcode: rdma.WRRDMAWrite, Flags: rdma.SendSignaled,
		SGL: []rdma.SGE{sge(sb, smr)}, RemoteAddr: BufAddr(rb) + 32, RKey: rmr.RKey()}))
	got := pollN(t, a.scq, 1)[0]
	require.Equal(t, rdma.WCSuccess, got.Status)
	require.Equal(t, "written!", string(rb[32:40]))
}

// Large RDMA requests, which leave the posting thread, keep the order of
// the send queue: a 1 MiB write is in place when the SEND posted after it
// is received, and a 1 MiB read completes, with its data in place, before
// the SEND posted after it.
func TestLargeRDMAOrder(t *testing.T) {
	const n = 1 << 20
	for _, tr := range []string{"shm", "tcp"} {
		t.Run(tr, func(t *testing.T) {
			a := newEnd(t, rdma.Params{"transport": tr})
			b := newEnd(t, rdma.Params{"transport": tr})
			connect(t, a, b, nil, nil)
			src, smr := a.buf(t, n, allAccess)
			dst, dmr := b.buf(t, n, allAccess)
			msg, mmr := a.buf(t, 8, allAccess)
			rb, rmr := b.buf(t, 8, allAccess)
			for round := byte(1); round <= 3; round++ {
				for i := range src {
					src[i] = round + byte(i>>12)
				}
				require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 5, SGL: []rdma.SGE{sge(rb, rmr)}}))
				require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 1, Opcode: rdma.WRRDMAWrite,
					SGL: []rdma.SGE{sge(src, smr)}, RemoteAddr: BufAddr(dst), RKey: dmr.RKey()}))
				require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 2, Opcode: rdma.WRSend, Flags: rdma.SendSignaled,
					SGL: []rdma.SGE{sge(msg, mmr)}}))
				require.Equal(t, uint64(5), pollN(t, b.rcq, 1)[0].WRID)
				require.True(t, bytes.Equal(src, dst), "round %d: the write is not in place at the send", round)
				require.Equal(t, uint64(2), pollN(t, a.scq, 1)[0].WRID)

				for i := range dst {
					dst[i] = ^round + byte(i>>12)
				}
				require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 6, SGL: []rdma.SGE{sge(rb, rmr)}}))
				require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 3, Opcode: rdma.WRRDMARead, Flags: rdma.SendSignaled,
					SGL: []rdma.SGE{sge(src, smr)}, RemoteAddr: BufAddr(dst), RKey: dmr.RKey()}))
				require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 4, Opcode: rdma.WRSend, Flags: rdma.SendSignaled,
					SGL: []rdma.SGE{sge(msg, mmr)}}))
				// (The receiver places the SEND when it polls, on shared memory.)
				require.Equal(t, uint64(6), pollN(t, b.rcq, 1)[0].WRID)
				got := pollN(t, a.scq, 2)
				require.Equal(t, []uint64{3, 4}, []uint64{got[0].WRID, got[1].WRID})
				require.Equal(t, rdma.WCSuccess, got[0].Status)
				require.True(t, bytes.Equal(src, dst), "round %d: the read's data", round)
			}
		})
	}
}

// While a goroutine of ours moves a large TCP transfer (the writer with a
// full socket's queue at the sender, a helper placing the payload at the
// receiver), the device counts it, so that a consumer's empty Poll gives
// it the CPU; the counts go back to zero when the transfers end, or every
// empty Poll would keep yielding. The counts are sampled between Polls, so
// a poller starved of the CPU (a loaded machine) can miss a transfer's
// count: transfers go on until both were seen, up to twenty.
func TestTCPMoversCounted(t *testing.T) {
	const n = 8 << 20
	a, b := tcpPair(t)
	da, db := &a.dev.(*device).tcp, &b.dev.(*device).tcp
	src, smr := a.buf(t, n, allAccess)
	dst, dmr := b.buf(t, n, allAccess)
	for i := range src {
		src[i] = byte(i >> 10)
	}
	var sawA, sawB bool
	var wc [4]rdma.WC
	for round := 0; round < 20 && !(sawA && sawB); round++ {
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 7, SGL: []rdma.SGE{sge(dst, dmr)}}))
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 1, Opcode: rdma.WRSend, Flags: rdma.SendSignaled,
			SGL: []rdma.SGE{sge(src, smr)}}))
		// The sender is polled only once the message is in: a sender that
		// polls writes the transfer itself (TestTCPPollsCarryWrites).
		sent, recvd := 0, 0
		waitFor(t, "an 8 MiB send", func() bool { return sent == 1 && recvd == 1 }, func() {
			sawA = sawA || da.moving.Load() > 0
			sawB = sawB || db.moving.Load() > 0
			if recvd == 1 {
				sent += a.scq.Poll(wc[:])
			}
			recvd += b.rcq.Poll(wc[:])
		})
		require.True(t, bytes.Equal(src, dst))
		clear(dst)
	}
	require.True(t, sawA, "the sender's writer goroutine was never counted")
	require.True(t, sawB, "the receiver's helper was never counted")
	waitFor(t, "the counts back at zero", func() bool { return da.moving.Load() == 0 && db.moving.Load() == 0 }, nil)
}

// A sender that polls its device carries a large transfer on itself: the
// post writes nothing past postWriteMax, its Polls write the rest a chunk
// each, and no goroutine of ours moves it (the writer goroutine shared the
// consumer's CPU). The transfer still completes, in order with what
// follows, when the sender stops polling right after the post: the loop
// goroutine hands it to the writer goroutine. A post that finds the polls
// holding the right to write leaves its frame behind theirs.
//
// On a loaded machine the sender's CPU may be taken from it for longer
// than standDown (the goroutine then takes the write from the Polls), and
// the receiver's goroutines may place the send and return its verdict
// between two of the test's looks: the polled transfers go on until two
// had Polls write, up to ten, and a completion the sender's Polls find
// early is kept, not refused (both failed now and then beside two
// CPU-bound loops).
func TestTCPPollsCarryWrites(t *testing.T) {
	const n = 8 << 20
	a, b := tcpPair(t)
	la := loopOf(t, a)
	da := &a.dev.(*device).tcp
	src, smr := a.buf(t, n, allAccess)
	dst, dmr := b.buf(t, n, allAccess)
	msg, mmr := a.buf(t, 8, allAccess)
	rb, rmr := b.buf(t, 8, allAccess)
	var wc [4]rdma.WC
	paidNow := func() int { la.wpay.Lock(); defer la.wpay.Unlock(); return la.paid }
	// transfer makes one 8 MiB write and a signalled send behind it, and
	// says whether the sender's Polls and a writer goroutine wrote.
	transfer := func(round int, keepPolling bool) (pollsWrote, writerWrote bool) {
		for i := range src {
			src[i] = byte(round) + byte(i>>12)
		}
		require.Zero(t, a.scq.Poll(wc[:])) // the consumer polls the sender's device
		paid, runs := paidNow(), da.writerRuns.Load()
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 5, SGL: []rdma.SGE{sge(rb, rmr)}}))
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 1, Opcode: rdma.WRRDMAWrite,
			SGL: []rdma.SGE{sge(src, smr)}, RemoteAddr: BufAddr(dst), RKey: dmr.RKey()}))
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 2, Opcode: rdma.WRSend, Flags: rdma.SendSignaled,
			SGL: []rdma.SGE{sge(msg, mmr)}}))
		var sent []rdma.WC
		recvd := 0
		waitFor(t, "an 8 MiB write and a send behind it", func() bool { return recvd == 1 }, func() {
			if keepPolling {
				k := a.scq.Poll(wc[:])
				sent = append(sent, wc[:k]...)
			}
			recvd += b.rcq.Poll(wc[:])
		})
		require.True(t, bytes.Equal(src, dst), "round %d: the write is not in place at the send", round)
		if len(sent) == 0 {
			sent = pollN(t, a.scq, 1)
		}
		require.Len(t, sent, 1, "round %d", round)
		require.Equal(t, uint64(2), sent[0].WRID, "round %d", round)
		clear(dst)
		return paidNow() > paid, da.writerRuns.Load() > runs
	}
	round, polled := 0, 0
	for ; round < 10 && polled < 2; round++ {
		if wrote, _ := transfer(round, true); wrote {
			polled++
		}
	}
	require.Equal(t, 2, polled, "transfers whose Polls wrote, of %d", round)
	// A look at da.moving here missed the writer's turn now and then: the
	// socket buffers took the 8 MiB in a few ms while this goroutine
	// waited for a P. The writer's turns are counted instead.
	_, writerWrote := transfer(round, false)
	require.True(t, writerWrote, "nobody polled, and no writer goroutine wrote it")
}

// A payload of directMin up to wholeMax bytes is placed by the thread that
// serves the connection, with one read once the socket holds all of it
// (tcp_whole.go), whether a consumer polls or the loop goroutine serves a
// target that never calls in: sends, RDMA writes, and read responses at
// the initiator. One larger than wholeMax goes to the helper. The data is
// in place either way, and the socket's low-water mark is back at one
// byte (a frame's header must wake the loop).
func TestTCPWholePayloads(t *testing.T) {
	const n = 1 << 20
	a, b := tcpPair(t)
	loopOf(t, a)
	lb := loopOf(t, b)
	wa := a.qp.(*qp).c.w.(*tcpWire)
	wb := b.qp.(*qp).c.w.(*tcpWire)
	wholes := func(l *tcpLoop, w *tcpWire) int { l.turn.Lock(); defer l.turn.Unlock(); return w.wholes }
	lowat := func(w *tcpWire) int {
		v, err := unix.GetsockoptInt(w.sock.fd, unix.SOL_SOCKET, unix.SO_RCVLOWAT)
		require.NoError(t, err)
		return v
	}
	src, smr := a.buf(t, 2*wholeMax, allAccess)
	dst, dmr := b.buf(t, 2*wholeMax, allAccess)
	fill := func(round int) {
		for i := range src {
			src[i] = byte(round) + byte(i>>12)
		}
		clear(dst)
	}
	for round := 0; round < 8; round++ {
		fill(round)
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 5, SGL: []rdma.SGE{sge(dst[:n], dmr)}}))
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 1, Opcode: rdma.WRSend, Flags: rdma.SendSignaled,
			SGL: []rdma.SGE{sge(src[:n], smr)}}))
		require.Equal(t, rdma.WCSuccess, pollN(t, b.rcq, 1)[0].Status)
		require.Equal(t, rdma.WCSuccess, pollN(t, a.scq, 1)[0].Status)
		require.True(t, bytes.Equal(src[:n], dst[:n]), "round %d: the send", round)
	}
	require.NotZero(t, wholes(lb, wb), "no send placed whole by a polling receiver")

	// An RDMA write to a target that does not call in: its loop goroutine
	// serves it.
	before := wholes(lb, wb)
	for round := 0; round < 8; round++ {
		fill(round)
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 2, Opcode: rdma.WRRDMAWrite, Flags: rdma.SendSignaled,
			SGL: []rdma.SGE{sge(src[:n], smr)}, RemoteAddr: BufAddr(dst), RKey: dmr.RKey()}))
		require.Equal(t, rdma.WCSuccess, pollN(t, a.scq, 1)[0].Status)
		require.True(t, bytes.Equal(src[:n], dst[:n]), "round %d: the write", round)
	}
	require.Greater(t, wholes(lb, wb), before, "no write placed whole at a passive target")

	// Read responses, placed at the initiator.
	before = wholes(loopOf(t, a), wa)
	for round := 0; round < 8; round++ {
		fill(round)
		copy(dst[:n], src[:n])
		clear(src)
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 3, Opcode: rdma.WRRDMARead, Flags: rdma.SendSignaled,
			SGL: []rdma.SGE{sge(src[:n], smr)}, RemoteAddr: BufAddr(dst), RKey: dmr.RKey()}))
		require.Equal(t, rdma.WCSuccess, pollN(t, a.scq, 1)[0].Status)
		require.True(t, bytes.Equal(src[:n], dst[:n]), "round %d: the read", round)
	}
	require.Greater(t, wholes(loopOf(t, a), wa), before, "no read response placed whole")

	// Over wholeMax: the helper.
	before = wholes(lb, wb)
	fill(9)
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 6, SGL: []rdma.SGE{sge(dst, dmr)}}))
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 4, Opcode: rdma.WRSend, Flags: rdma.SendSignaled,
		SGL: []rdma.SGE{sge(src, smr)}}))
	require.Equal(t, uint64(2*wholeMax), uint64(pollN(t, b.rcq, 1)[0].ByteLen))
	require.Equal(t, rdma.WCSuccess, pollN(t, a.scq, 1)[0].Status)
	require.True(t, bytes.Equal(src, dst), "the send over wholeMax")
	require.Equal(t, before, wholes(lb, wb), "a payload over wholeMax placed whole")
	require.Equal(t, 1, lowat(wa))
	require.Equal(t, 1, lowat(wb))
}

// A socket that cannot hold a payload whole (its buffer fixed small, as
// SO_RCVBUF fixes it, which also caps the low-water mark) turns readable
// with less: the payload goes to the helper, and arrives all the same.
func TestTCPWholeFallsBackToTheHelper(t *testing.T) {
	const n = 1 << 20
	a, b := tcpPair(t)
	lb := loopOf(t, b)
	wb := b.qp.(*qp).c.w.(*tcpWire)
	require.NoError(t, unix.SetsockoptInt(wb.sock.fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 32<<10))
	src, smr := a.buf(t, n, allAccess)
	dst, dmr := b.buf(t, n, allAccess)
	for round := 0; round < 3; round++ {
		for i := range src {
			src[i] = byte(round) + byte(i>>12)
		}
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 5, SGL: []rdma.SGE{sge(dst, dmr)}}))
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 1, Opcode: rdma.WRSend, Flags: rdma.SendSignaled,
			SGL: []rdma.SGE{sge(src, smr)}}))
		require.Equal(t, rdma.WCSuccess, pollN(t, b.rcq, 1)[0].Status)
		require.Equal(t, rdma.WCSuccess, pollN(t, a.scq, 1)[0].Status)
		require.True(t, bytes.Equal(src, dst), "round %d", round)
	}
	lb.turn.Lock()
	wholes, capped := wb.wholes, wb.lowatCapped
	lb.turn.Unlock()
	require.Zero(t, wholes, "a payload placed whole in a socket that cannot hold it")
	require.NotZero(t, capped, "the kernel's cap on the mark not seen")
	v, err := unix.GetsockoptInt(wb.sock.fd, unix.SOL_SOCKET, unix.SO_RCVLOWAT)
	require.NoError(t, err)
	require.Equal(t, 1, v)
}

// A read response counts as answered at the responder before its bytes go
// out: the initiator may post its next read as soon as it has the
// response, and the responder, which refuses a peer over the
// reads-outstanding limit, must not find the answered one still counted
// (datbench bw_read over godat-tcp, 16 reads of 1 MiB in flight, broke its
// connection in most runs: the writer goroutine gave up the CPU between
// its sendmsg and the count). Reads one at a time: at every send of the
// responder none is outstanding any more.
func TestTCPReadAnsweredBeforeSent(t *testing.T) {
	a, b := tcpPair(t)
	bd := b.dev.(*device)
	var sends, counted atomic.Int32
	hook := func(w *tcpWire) {
		if w.d != bd || w.q == nil {
			return
		}
		q := w.q
		q.mu.Lock()
		if q.c != nil {
			sends.Add(1)
			if q.c.readsIn > 0 {
				counted.Add(1)
			}
		}
		q.mu.Unlock()
	}
	testHookSend.Store(&hook)
	defer testHookSend.Store(nil)
	for _, n := range []int{64 << 10, 1 << 20} {
		dst, dmr := a.buf(t, n, allAccess)
		src, smr := b.buf(t, n, allAccess)
		for i := 0; i < 20; i++ {
			require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: uint64(i), Opcode: rdma.WRRDMARead, Flags: rdma.SendSignaled,
				SGL: []rdma.SGE{sge(dst, dmr)}, RemoteAddr: BufAddr(src), RKey: smr.RKey()}))
			require.Equal(t, rdma.WCSuccess, pollN(t, a.scq, 1)[0].Status)
		}
	}
	require.NotZero(t, sends.Load(), "the responder's sends were not seen")
	require.Zero(t, counted.Load(), "sends of the responder with its read still counted as outstanding")
}

// loopOf returns the loop of e's device once e's connection is in it:
// each side hands its connection to the loop after the consumer saw it
// established.
func loopOf(t *testing.T, e *end) *tcpLoop {
	t.Helper()
	d := e.dev.(*device)
	waitFor(t, "the connection in its device's loop", func() bool {
		l := d.tcp.live.Load()
		return l != nil && l.nconns.Load() > 0
	}, nil)
	return d.tcp.live.Load()
}

// holdLoop holds the loop goroutine of l at the top of its round (the
// test hook) until the function it returns is called, which may be called
// more than once.
func holdLoop(t *testing.T, l *tcpLoop) (release func()) {
	t.Helper()
	hold, held := make(chan struct{}), make(chan struct{}, 1)
	hook := func(h *tcpLoop) {
		if h == l {
			select {
			case held <- struct{}{}:
			default:
			}
			<-hold
		}
	}
	testHookLoop.Store(&hook)
	released := false
	release = func() {
		if !released {
			released = true
			testHookLoop.Store(nil)
			close(hold)
		}
	}
	// A kick asks the goroutine for a fresh look, not for a new round: a
	// round already past the hook serves the kick's wake (which clears
	// it), drops its poke as stale and sleeps. So kick until it comes
	// round.
	l.kick()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.After(testWait); ; {
		select {
		case <-held:
			return release
		case <-tick.C:
			l.kick()
		case <-deadline:
			release()
			t.Fatal("the loop goroutine did not come round")
		}
	}
}

// A Wait on a device whose connections are all TCP serves them itself: a
// message sent while the receiver sleeps in Wait is read, completes on the
// armed CQ and ends the Wait, with the device's loop goroutine held. Before,
// only that goroutine served a sleeping consumer, and in a process whose
// runtime has one P it could not run while the waiter slept holding the P
// (dat_evd_wait ping-pongs over godat-tcp took 80 us one way, not 8).
func TestTCPWaitServesItself(t *testing.T) {
	a, b := tcpPair(t)
	bl := loopOf(t, b)
	release := holdLoop(t, bl)
	defer release()
	sb, smr := a.buf(t, 8, allAccess)
	rb, rmr := b.buf(t, 8, allAccess)
	var wc [4]rdma.WC
	for i := 0; i < 50; i++ {
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: uint64(i), SGL: []rdma.SGE{sge(rb, rmr)}}))
		seq := b.ch.Seq()
		require.NoError(t, b.rcq.Arm(false))
		sb[0] = byte(i)
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{sge(sb, smr)}}))
		require.False(t, b.ch.Wait(seq, 2*time.Second))
		require.NotEqual(t, seq, b.ch.Seq(), "round %d: the Wait ended without the receive's notification", i)
		require.Equal(t, 1, b.rcq.Poll(wc[:]), "round %d", i)
		require.Equal(t, rdma.WCSuccess, wc[0].Status)
		require.Equal(t, uint64(i), wc[0].WRID)
		require.Equal(t, byte(i), rb[0])
	}

	// With the goroutine free again, a Wait that times out (the goroutine
	// stands aside meanwhile) leaves the connections to it: an RDMA write
	// into b, which does not call the library any more, lands and has its
	// verdict.
	release()
	seq := b.ch.Seq()
	require.False(t, b.ch.Wait(seq, 20*time.Millisecond))
	copy(sb, "written!")
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 9, Opcode: rdma.WRRDMAWrite, Flags: rdma.SendSignaled,
		SGL: []rdma.SGE{sge(sb, smr)}, RemoteAddr: BufAddr(rb), RKey: rmr.RKey()}))
	got := pollN(t, a.scq, 1)[0]
	require.Equal(t, rdma.WCSuccess, got.Status)
	require.Equal(t, "written!", string(rb[:8]))
}

// A Wait that serves the TCP connections is woken by a completion another
// thread's Poll made for it: the Poll reads the message, the armed CQ
// notifies, and the sleeper looks at the bell word again, although that
// Poll (or the next) clears the loop's wake eventfd before the sleeper
// looks. Woken through that eventfd, the sleeper found nothing reported
// and slept on until its timeout in most rounds.
func TestTCPWaitWokenByOthersPoll(t *testing.T) {
	a, b := tcpPair(t)
	sb, smr := a.buf(t, 8, allAccess)
	rb, rmr := b.buf(t, 8, allAccess)
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() { // another thread of the process polls the device's other CQ
		defer close(polled)
		var wc [4]rdma.WC
		for {
			select {
			case <-stop:
				return
			default:
			}
			b.scq.Poll(wc[:])
		}
	}()
	defer func() {
		close(stop)
		<-polled
	}()
	var wc [4]rdma.WC
	for i := 0; i < 200; i++ {
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: uint64(i), SGL: []rdma.SGE{sge(rb, rmr)}}))
		seq := b.ch.Seq()
		require.NoError(t, b.rcq.Arm(false))
		woke := make(chan struct{})
		go func() {
			b.ch.Wait(seq, -1)
			close(woke)
		}()
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{sge(sb, smr)}}))
		select {
		case <-woke:
		case <-time.After(testWait):
			t.Fatalf("round %d: the Wait was not woken by its receive's notification", i)
		}
		require.Equal(t, 1, b.rcq.Poll(wc[:]), "round %d", i)
		require.Equal(t, uint64(i), wc[0].WRID)
	}
}

// After a Poll that served a message and drained the sockets, the next
// Poll makes no system call, however late it comes (it is usually the
// application's dequeue of its other EVD), and the one after it looks
// again. The loop goroutine is held, so that the consumer's Polls are the
// only ones to serve.
func TestTCPPollSkipsTheLookAfterADrainedFind(t *testing.T) {
	a, b := tcpPair(t)
	bl := loopOf(t, b)
	defer holdLoop(t, bl)()
	sb, smr := a.buf(t, 8, allAccess)
	rb, rmr := b.buf(t, 8, allAccess)
	looks := func() int {
		bl.turn.Lock()
		defer bl.turn.Unlock()
		return bl.looks
	}
	var wc [4]rdma.WC
	for round := 0; round < 3; round++ {
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 1, SGL: []rdma.SGE{sge(rb, rmr)}}))
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{sge(sb, smr)}}))
		require.Equal(t, rdma.WCSuccess, pollN(t, b.rcq, 1)[0].Status)
		n := looks()
		for start := time.Now(); time.Since(start) < 10*drainedGap; {
		}
		require.Zero(t, b.rcq.Poll(wc[:]))
		require.Equal(t, n, looks(), "round %d: the Poll after the find looked", round)
		require.Zero(t, b.rcq.Poll(wc[:]))
		require.Equal(t, n+1, looks(), "round %d: the next Poll did not look", round)
	}
}

// A Poll on a device with one TCP connection reads it without asking the
// epoll set (collect): 20 polled receives make no epoll_wait. The edges
// those reads leave in the set cost a waiter that sleeps afterwards at
// most one early end of its sleep, not a spin. With a second connection
// on the device, Polls ask the set again, and both connections deliver.
func TestTCPPollReadsALoneConnection(t *testing.T) {
	a, b := tcpPair(t)
	bl := loopOf(t, b)
	release := holdLoop(t, bl)
	defer release()
	counts := func() (asks, looks, awakes int) {
		bl.turn.Lock()
		defer bl.turn.Unlock()
		return bl.asks, bl.looks, bl.awakes
	}
	pingB := func(from *end, rounds int) {
		t.Helper()
		sb, smr := from.buf(t, 8, allAccess)
		rb, rmr := b.buf(t, 8, allAccess)
		for i := 0; i < rounds; i++ {
			require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: uint64(i), SGL: []rdma.SGE{sge(rb, rmr)}}))
			sb[0] = byte(i)
			require.NoError(t, from.qp.PostSend(&rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{sge(sb, smr)}}))
			wc := pollN(t, b.rcq, 1)[0]
			require.Equal(t, rdma.WCSuccess, wc.Status)
			require.Equal(t, byte(i), rb[0])
		}
	}
	asks0, looks0, _ := counts()
	pingB(a, 20)
	asks1, looks1, awakes1 := counts()
	require.Greater(t, looks1, looks0, "the Polls did not look")
	require.Equal(t, asks0, asks1, "Polls on a device with one connection asked the epoll set")

	// A Wait with nothing arriving: its sleep may end once early (the
	// loop's wake eventfd, which the Polls leave set), then it sleeps.
	require.NoError(t, b.rcq.Arm(false))
	seq := b.ch.Seq()
	require.False(t, b.ch.Wait(seq, 100*time.Millisecond))
	require.Equal(t, seq, b.ch.Seq(), "a notification with nothing sent")
	_, _, awakes2 := counts()
	require.LessOrEqual(t, awakes2-awakes1, 2, "the waiter's sleep kept ending")

	// A second connection on b's device: Polls ask the set.
	c := newEnd(t, rdma.Params{"transport": "tcp"})
	b2 := *b
	b2.qp = b.newQP(t, nil)
	connect(t, c, &b2, nil, nil)
	waitFor(t, "the second connection in the loop", func() bool { return bl.nconns.Load() == 2 }, nil)
	pingB(a, 5)
	asks3, _, _ := counts()
	require.Greater(t, asks3, asks1, "Polls on a device with two connections did not ask the epoll set")
	rb, rmr := b.buf(t, 8, allAccess)
	sc, scmr := c.buf(t, 8, allAccess)
	require.NoError(t, b2.qp.PostRecv(&rdma.RecvWR{WRID: 77, SGL: []rdma.SGE{sge(rb, rmr)}}))
	copy(sc, "second!")
	require.NoError(t, c.qp.PostSend(&rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{sge(sc, scmr)}}))
	wc := pollN(t, b.rcq, 1)[0]
	require.Equal(t, uint64(77), wc.WRID)
	require.Equal(t, "second!", string(rb[:7]))
}
