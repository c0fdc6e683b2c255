package soft

import (
	"encoding/binary"
	"math/rand/v2"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"godat/rdma"
)

// shmPair connects two shared-memory ends and gives b a few receives.
func shmPair(t *testing.T) (a, b *end) {
	a, b = newEnd(t, rdma.Params{"transport": "shm"}), newEnd(t, rdma.Params{"transport": "shm"})
	connect(t, a, b, nil, nil)
	return a, b
}

// sendTo sends an 8-byte tag from a to b and checks it arrives.
func sendTag(t *testing.T, a, b *end, tag uint64) {
	t.Helper()
	rb, rmr := b.buf(t, 8, allAccess)
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: tag, SGL: []rdma.SGE{sge(rb, rmr)}}))
	sb, smr := a.buf(t, 8, allAccess)
	binary.LittleEndian.PutUint64(sb, tag)
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: tag, Opcode: rdma.WRSend, SGL: []rdma.SGE{sge(sb, smr)}}))
	wc := pollN(t, b.rcq, 1)[0]
	require.Equal(t, rdma.WCSuccess, wc.Status)
	require.Equal(t, tag, wc.WRID)
	require.Equal(t, tag, binary.LittleEndian.Uint64(rb))
}

func devOf(e *end) *device { return e.dev.(*device) }

// Garbage in the inbound queue (a peer may write anything there: hints,
// the tail) is taken and dropped; the connections go on.
func TestInboundGarbage(t *testing.T) {
	a, b := shmPair(t)
	d := devOf(b)
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 20; round++ {
		head := d.in.head.Load()
		for i := uint64(0); i < 64; i++ {
			d.bell.st64(inSlotOff(head+i), r.Uint64()|1<<63)
		}
		d.bell.st64(bellOffTail, r.Uint64())
		var wc [4]rdma.WC
		for i := 0; i < 100; i++ {
			b.rcq.Poll(wc[:])
		}
		// A tail moved a lap away stalls the peers' hints until the
		// rescan of a sleeping waiter repairs it; what was sent arrives.
		d.in.lastScan.Store(0)
		b.ch.Wait(b.ch.Seq(), time.Millisecond)
		sendTag(t, a, b, uint64(round))
	}
}

// A hint erased by a hostile peer does not lose its message: the periodic
// rescan of a sleeping waiter finds it in its ring and steps over the hole,
// and later messages flow again. (The connection is made cold first: the
// Poll of the CQ its last receive completed into looks at its ring
// directly, and its sender appends no hint while it is watched; the last
// round checks that.)
func TestInboundErasedHint(t *testing.T) {
	a, b := shmPair(t)
	d := devOf(b)
	rcq := b.rcq.(*cq)
	rb, rmr := b.buf(t, 16, allAccess)
	sb, smr := a.buf(t, 8, allAccess)
	send := func() {
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{sge(sb, smr)}}))
	}
	for round := 0; round < 4; round++ {
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 1, SGL: []rdma.SGE{sge(rb, rmr)}}))
		head := d.in.head.Load()
		if round == 3 {
			require.NotNil(t, rcq.hot.Load(), "the connection is not hot")
			send()
			require.False(t, hintAt(d.bell.ld64(inSlotOff(head)), head), "a hint for a watched ring")
			wc := pollN(t, b.rcq, 1)[0] // the hot connection's ring, looked at directly
			require.Equal(t, rdma.WCSuccess, wc.Status)
			break
		}
		d.in.mu.Lock()
		if w := rcq.hot.Load(); w != nil {
			w.makeHot(nil)
		}
		d.in.mu.Unlock()
		send()
		require.True(t, hintAt(d.bell.ld64(inSlotOff(head)), head), "no hint queued")
		d.bell.st64(inSlotOff(head), 0) // erased
		pollNone(t, b.rcq, 20*time.Millisecond)
		d.in.lastScan.Store(0)
		b.ch.Wait(b.ch.Seq(), 10*time.Millisecond)
		wc := pollN(t, b.rcq, 1)[0]
		require.Equal(t, rdma.WCSuccess, wc.Status)
		sendTag(t, a, b, uint64(round)) // the queue flows again
	}
}

// A full inbound queue loses hints; the overflow flag makes the next drain
// rescan, and every message arrives.
func TestInboundOverflow(t *testing.T) {
	a, b := shmPair(t)
	d := devOf(b)
	// Fill the queue with hints for a QP slot nobody has: the peer's
	// posts find it full and raise the overflow flag.
	for i := uint64(0); i < inSlots; i++ {
		bellRef{d.bell}.post(hintFor(maxQPs-1, 0))
	}
	const n = 16
	rb, rmr := b.buf(t, 8*n, allAccess)
	sb, smr := a.buf(t, 8*n, allAccess)
	for i := 0; i < n; i++ {
		require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: uint64(i), SGL: []rdma.SGE{{Addr: BufAddr(rb) + uint64(8*i), Length: 8, LKey: rmr.LKey()}}}))
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Opcode: rdma.WRSend, SGL: []rdma.SGE{{Addr: BufAddr(sb) + uint64(8*i), Length: 8, LKey: smr.LKey()}}}))
	}
	require.NotZero(t, d.bell.ld32(bellOffOverflow), "no overflow")
	for i, wc := range pollN(t, b.rcq, n) {
		require.Equal(t, uint64(i), wc.WRID)
		require.Equal(t, rdma.WCSuccess, wc.Status)
	}
}

// A peer that corrupts its own ring breaks only its own connection: the
// other connection of the device goes on.
func TestRingCorruptionBreaksOnlyThatConnection(t *testing.T) {
	a, b := shmPair(t)
	c := newEnd(t, rdma.Params{"transport": "shm"})
	b2 := b.newQP(t, nil)
	l, err := b.dev.Listen(b.cm, 0, true, 4, 5)
	require.NoError(t, err)
	require.NoError(t, c.qp.Connect(netip.AddrPortFrom(lo, 0), l.ServiceID(), nil, testWait))
	ev := b.event(t)
	require.NoError(t, ev.Request.Accept(b2, nil))
	require.Equal(t, rdma.CMEstablished, c.event(t).Type)
	require.Equal(t, rdma.CMEstablished, b.event(t).Type)

	// a publishes a slot with a length its type may not have.
	w := a.qp.(*qp).shmw.Load()
	rb, rmr := b.buf(t, 8, allAccess)
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{SGL: []rdma.SGE{sge(rb, rmr)}}))
	a.qp.(*qp).mu.Lock()
	off := w.tx.slot(w.tx.head)
	h := hdr{typ: msgSend, flags: flAckReq, len: eagerMax + 1} // too long for a slot, no descriptor
	putDataSlot(w.mem, off, &h, 0, 0)
	pos := w.tx.head
	w.tx.publish(false)
	w.notifyPeer(pos, false)
	a.qp.(*qp).mu.Unlock()
	var wc [4]rdma.WC
	deadline := time.Now().Add(testWait)
	for b.qp.State() != rdma.QPSErr {
		b.rcq.Poll(wc[:])
		require.True(t, time.Now().Before(deadline), "the corrupt connection did not end")
	}
	require.Equal(t, rdma.CMBroken, b.event(t).Type)
	require.Equal(t, rdma.CMBroken, a.event(t).Type)
	require.Equal(t, rdma.QPSRTS, b2.State())
	cq := &end{dev: b.dev, pd: b.pd, qp: b2, rcq: b.rcq}
	for k := 0; k < 4; k++ { // drain the flushed receive first
		if b.rcq.Poll(wc[:1]) == 0 {
			break
		}
	}
	sendTag(t, c, cq, 77)
}

// A peer whose memfd is not sealed against shrinking is refused before
// anything of it is mapped: no request reaches the consumer.
func TestUnsealedPeerRefused(t *testing.T) {
	b := newEnd(t, rdma.Params{"transport": "shm"})
	l, err := b.dev.Listen(b.cm, 0, true, 4, 5)
	require.NoError(t, err)
	defer l.Close()
	// A connection segment without seals, and our (sealed) bell and table.
	fd, err := unix.MemfdCreate("evil", unix.MFD_CLOEXEC)
	require.NoError(t, err)
	defer unix.Close(fd)
	require.NoError(t, unix.Ftruncate(fd, connSegSize))
	d := devOf(b)
	keys, err := d.keysReadOnly()
	require.NoError(t, err)
	s, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: sockName(lo, l.ServiceID()), Net: "unixpacket"})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, writeCM(s, &cmMsg{typ: cmReq, addr: lo, svc: l.ServiceID()}, fd, d.bellFd, keys))
	_ = s.SetReadDeadline(time.Now().Add(testWait))
	_, _, err = readCM(s)
	require.Error(t, err, "the listener answered an unsealed peer")
	var ev rdma.CMEvent
	require.ErrorIs(t, b.cm.Get(&ev, 50*time.Millisecond), rdma.ErrTimeout, "a request reached the consumer")
}

// mapPeer refuses unsealed, short and non-memfd descriptors.
func TestMapPeerChecks(t *testing.T) {
	fd, err := unix.MemfdCreate("t", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	require.NoError(t, err)
	defer unix.Close(fd)
	require.NoError(t, unix.Ftruncate(fd, 8192))
	_, err = mapPeer(fd, 4096, true)
	require.ErrorIs(t, err, errUnsealed)
	_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK)
	require.NoError(t, err)
	_, err = mapPeer(fd, 16384, true)
	require.Error(t, err, "a segment shorter than asked")
	m, err := mapPeer(fd, 8192, true)
	require.NoError(t, err)
	m.unmap()
	p, q, err := os_pipe()
	require.NoError(t, err)
	defer unix.Close(p)
	defer unix.Close(q)
	_, err = mapPeer(p, 1, false)
	require.Error(t, err, "a pipe")
}

func os_pipe() (int, int, error) {
	var fds [2]int
	err := unix.Pipe2(fds[:], unix.O_CLOEXEC)
	return fds[0], fds[1], err
}

// The registration table handed to peers is read-only: it cannot be
// mapped writable, truncated or sealed through that descriptor.
func TestKeysReadOnlyForPeers(t *testing.T) {
	b := newEnd(t, rdma.Params{"transport": "shm"})
	fd, err := devOf(b).keysReadOnly()
	require.NoError(t, err)
	_, err = unix.Mmap(fd, 0, keySegSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.Error(t, err, "mapped writable")
	require.Error(t, unix.Ftruncate(fd, 0), "truncated")
	_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_WRITE)
	require.Error(t, err, "sealed")
	m, err := mapPeer(fd, keySegSize, false)
	require.NoError(t, err)
	m.unmap()
}

// Two devices of one process: a program that waits on the sender's channel
// for a send's completion, without polling the receiver's CQ, still gets
// it (the wait drains every device of the process).
func TestInProcessSendCompletesWhileWaiting(t *testing.T) {
	a, b := shmPair(t)
	rb, rmr := b.buf(t, 8, allAccess)
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 9, SGL: []rdma.SGE{sge(rb, rmr)}}))
	sb, smr := a.buf(t, 8, allAccess)
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 1, Opcode: rdma.WRSend, Flags: rdma.SendSignaled, SGL: []rdma.SGE{sge(sb, smr)}}))
	var wc [1]rdma.WC
	deadline := time.Now().Add(testWait)
	for {
		seq := a.ch.Seq()
		if a.scq.Poll(wc[:]) == 1 {
			break
		}
		require.NoError(t, a.scq.Arm(false))
		if a.scq.Poll(wc[:]) == 1 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the send did not complete")
		a.ch.Wait(seq, time.Until(deadline))
	}
	require.Equal(t, rdma.WCSuccess, wc[0].Status)
	require.Equal(t, uint64(9), pollN(t, b.rcq, 1)[0].WRID)
}
