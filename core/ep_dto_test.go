package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"godat/rdma"
)

func dequeueDTO(t *testing.T, e *EVD) Event {
	t.Helper()
	var ev Event
	require.NoError(t, e.Dequeue(&ev))
	require.Equal(t, EventDTOCompletion, ev.Number)
	return ev
}

// waitEvent waits (bounded) for the next event: connection events come
// from the IA's CM goroutine, so they may not be queued yet.
func waitEvent(t *testing.T, e *EVD) Event {
	t.Helper()
	var ev Event
	_, err := e.Wait(waitFor, 1, &ev)
	require.NoError(t, err)
	return ev
}

func requireEmpty(t *testing.T, e *EVD) {
	t.Helper()
	var ev Event
	require.ErrorIs(t, e.Dequeue(&ev), ErrQueueEmpty, "unexpected event %+v", ev)
}

// A suppressed request makes no event when it succeeds and an event when
// it fails. It goes to the transport unsignalled (the verbs fast path: no
// completion on success), and core still matches later completions to
// their requests.
func TestSuppressedCompletion(t *testing.T) {
	f := newFixture(t, nil)
	defer f.close(t)
	f.connect(t)

	require.NoError(t, f.ep.PostRDMAWrite(seg1, 7, &RemoteSegment{RMRContext: 9, Addr: 1, Length: 64}, CompletionSuppress))
	require.NoError(t, f.ep.PostSend(seg1, 8, 0))
	require.False(t, f.qp.completeSend(t, rdma.WCSuccess), "a suppressed request goes unsignalled to the transport")
	require.True(t, f.qp.completeSend(t, rdma.WCSuccess))
	ev := dequeueDTO(t, f.evd)
	assert.Equal(t, uint64(8), ev.Cookie, "the suppressed write must not complete visibly")
	assert.Equal(t, uint64(64), ev.Length)
	assert.Same(t, f.ep, ev.EP)
	requireEmpty(t, f.evd)

	require.NoError(t, f.ep.PostSend(seg1, 9, CompletionSuppress))
	f.qp.completeSend(t, rdma.WCRemAccessErr)
	ev = dequeueDTO(t, f.evd)
	assert.Equal(t, uint64(9), ev.Cookie)
	assert.Equal(t, DTORemoteAccess, ev.Status, "a failure completes even when suppressed")
	st, err := f.ep.Status()
	require.NoError(t, err)
	assert.True(t, st.ReqIdle)
}

// A run of suppressed requests cannot fill the send queue with requests
// whose completion never comes: core signals one now and then, drops its
// success itself, and polls the request EVD's CQ when the queue looks full.
func TestSuppressedRunSignalledNowAndThen(t *testing.T) {
	f := newFixture(t, nil)
	defer f.close(t)
	f.connect(t)
	depth := len(f.ep.sq.slots)
	signalled := 0
	for i := 0; i < 4*depth; i++ {
		require.NoError(t, f.ep.PostSend(seg1, uint64(i), CompletionSuppress), "post %d", i)
		f.qp.mu.Lock()
		last := f.qp.sends[len(f.qp.sends)-1].Flags
		f.qp.mu.Unlock()
		if last&rdma.SendSignaled != 0 {
			signalled++
		}
		if f.qp.completeSend(t, rdma.WCSuccess) {
			// The transport's completion of a request core signalled for
			// itself is polled when the send queue looks full, not
			// delivered.
		}
	}
	assert.Greater(t, signalled, 0, "core must signal some suppressed requests")
	assert.Less(t, signalled, 4*depth/2, "but not most of them")
	requireEmpty(t, f.evd)
}

// Per-post DAT_COMPLETION_UNSIGNALLED_FLAG needs an EP configured for it;
// such a completion is queued but does not wake a waiter.
func TestUnsignalledCompletion(t *testing.T) {
	f := newFixture(t, nil)
	f.connect(t)
	err := f.ep.PostSend(seg1, 1, CompletionUnsignalled)
	assert.Equal(t, ErrArg(ArgCompletionFlags), err, "unsignalled send on an EP not configured for it")
	err = f.ep.PostRDMARead(seg1, 1, &RemoteSegment{}, CompletionUnsignalled)
	assert.Equal(t, ErrArg(ArgCompletionFlags), err)
	assert.Equal(t, ErrArg(ArgCompletionFlags), f.ep.PostRecv(seg1, 1, CompletionUnsignalled))
	attr := f.ia.DefaultEPAttr()
	f.close(t)

	attr.RequestCompletionFlags = CompletionUnsignalled
	attr.RecvCompletionFlags = CompletionUnsignalled
	f = newFixture(t, &attr)
	defer f.close(t)
	f.connect(t)
	require.NoError(t, f.ep.PostSend(seg1, 1, CompletionUnsignalled))
	f.qp.completeSend(t, rdma.WCSuccess)
	var ev Event
	n, err := f.evd.Wait(10*time.Millisecond, 1, &ev)
	assert.ErrorIs(t, err, ErrTimeout, "an unsignalled completion must not wake the waiter")
	assert.Equal(t, 1, n, "but it is queued")

	require.NoError(t, f.ep.PostRecv(seg1, 2, CompletionUnsignalled))
	f.qp.completeRecv(t, rdma.WCSuccess, 10, false)
	_, err = f.evd.Wait(0, 1, &ev)
	assert.ErrorIs(t, err, ErrTimeout)

	require.NoError(t, f.ep.PostSend(seg1, 3, 0))
	f.qp.completeSend(t, rdma.WCSuccess)
	n, err = f.evd.Wait(time.Second, 1, &ev)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), ev.Cookie, "the notification wakes the waiter, who takes the first event")
	assert.Equal(t, 2, n)

	// With consumer-controlled notification the threshold must be 1.
	_, err = f.evd.Wait(0, 2, &ev)
	assert.Equal(t, ErrState(SubStateEVDConfigNotify), err)
}

// A receive stream in solicited wait mode notifies only for solicited
// messages and for failures.
func TestSolicitedWait(t *testing.T) {
	ia, _, _ := scriptIA(t)
	attr := ia.DefaultEPAttr()
	require.NoError(t, ia.Close(true))
	attr.RecvCompletionFlags = CompletionSolicitedWait
	f := newFixture(t, &attr)
	defer f.close(t)
	f.connect(t)
	for i := uint64(1); i <= 3; i++ {
		require.NoError(t, f.ep.PostRecv(seg1, i, 0))
	}
	f.qp.completeRecv(t, rdma.WCSuccess, 5, false)
	var ev Event
	_, err := f.evd.Wait(0, 1, &ev)
	assert.ErrorIs(t, err, ErrTimeout, "an unsolicited message must not wake a solicited waiter")
	f.qp.completeRecv(t, rdma.WCSuccess, 5, true)
	n, err := f.evd.Wait(time.Second, 1, &ev)
	require.NoError(t, err)
	assert.Equal(t, uint64(1), ev.Cookie)
	assert.Equal(t, 1, n)
	require.NoError(t, f.evd.Dequeue(&ev))
	f.qp.completeRecv(t, rdma.WCLocLenErr, 0, false)
	_, err = f.evd.Wait(time.Second, 1, &ev)
	require.NoError(t, err, "a failed receive notifies")
	assert.Equal(t, DTOLocalLength, ev.Status)

	// The send side asks the transport for a solicited send.
	require.NoError(t, f.ep.PostSend(seg1, 4, CompletionSolicitedWait|CompletionBarrierFence))
	require.Len(t, f.qp.sends, 1)
	assert.Equal(t, rdma.SendSignaled|rdma.SendSolicited|rdma.SendFence, f.qp.sends[0].Flags)
}

// On a device whose RDMA reads scatter into fewer entries than its other
// requests (max_sge_rd below max_sge: siw has 1), an EP's max_rdma_read_iov
// defaults to that depth, dat_ep_query reports it when left 0, and a read
// beyond it fails at the post with the segment count, as writes and sends
// beyond theirs do.
func TestReadIOVFollowsDevice(t *testing.T) {
	fab := makeFabric(true)
	fab.sgeRd = 1
	f := newFixtureOn(t, fab, nil)
	defer f.close(t)
	f.connect(t)
	def := f.ia.DefaultEPAttr()
	assert.Equal(t, 1, def.MaxRDMAReadIOV)
	assert.Equal(t, def.MaxRequestIOV, def.MaxRDMAWriteIOV, "writes keep the request depth")
	require.Greater(t, def.MaxRequestIOV, 1)
	two := []Segment{seg1[0], seg1[0]}
	require.NoError(t, f.ep.PostRDMARead(seg1, 1, &RemoteSegment{Length: 64}, 0))
	assert.Equal(t, ErrArg(ArgSegmentCount), f.ep.PostRDMARead(two, 2, &RemoteSegment{Length: 128}, 0))
	require.NoError(t, f.ep.PostRDMAWrite(two, 3, &RemoteSegment{Length: 128}, 0))
	require.Len(t, f.qp.sends, 2, "the refused read never reached the transport")

	// Left 0, the read depth is the device's, not the request IOV's.
	attr := EPAttr{MaxRecvDTOs: 8, MaxRequestDTOs: 8, MaxRecvIOV: 2, MaxRequestIOV: 2}
	g := newFixtureOn(t, fab, &attr)
	defer g.close(t)
	g.connect(t)
	p, err := g.ep.Query()
	require.NoError(t, err)
	assert.Equal(t, 1, p.Attr.MaxRDMAReadIOV)
	assert.Equal(t, 2, p.Attr.MaxRDMAWriteIOV)
	assert.Equal(t, ErrArg(ArgSegmentCount), g.ep.PostRDMARead(two, 1, &RemoteSegment{Length: 128}, 0))
}

// dat_ep_get_status reports outstanding receives and requests honestly.
func TestStatusIdle(t *testing.T) {
	f := newFixture(t, nil)
	defer f.close(t)
	st, err := f.ep.Status()
	require.NoError(t, err)
	assert.Equal(t, EPStatus{State: EPUnconnected, RecvIdle: true, ReqIdle: true}, st)

	require.NoError(t, f.ep.PostRecv(seg1, 1, 0))
	st, _ = f.ep.Status()
	assert.False(t, st.RecvIdle, "a receive posted before the connection is outstanding")
	assert.True(t, st.ReqIdle)

	f.connect(t)
	require.NoError(t, f.ep.PostSend(seg1, 2, CompletionSuppress))
	st, _ = f.ep.Status()
	assert.Equal(t, EPStatus{State: EPConnected, RecvIdle: false, ReqIdle: false}, st)
	f.qp.completeSend(t, rdma.WCSuccess)
	st, _ = f.ep.Status()
	assert.True(t, st.ReqIdle, "a suppressed request is done once the transport completed it")
	f.qp.completeRecv(t, rdma.WCSuccess, 64, false)
	st, _ = f.ep.Status()
	assert.True(t, st.RecvIdle)
}

// Posts on a disconnected EP are flushed at once; so are posts that race
// with the end of the connection (the transport flushes them).
func TestPostsFlushedWhenDisconnected(t *testing.T) {
	f := newFixture(t, nil)
	defer f.close(t)
	f.connect(t)
	require.NoError(t, f.ep.PostRecv(seg1, 1, 0))
	require.NoError(t, f.ep.PostSend(seg1, 2, 0))

	// The connection ended in the transport; its event is not delivered yet.
	f.qp.endScript(rdma.CMBroken, false)
	assert.Equal(t, uint64(2), dequeueDTO(t, f.evd).Cookie)
	assert.Equal(t, uint64(1), dequeueDTO(t, f.evd).Cookie)
	require.NoError(t, f.ep.PostSend(seg1, 3, 0))
	ev := dequeueDTO(t, f.evd)
	assert.Equal(t, uint64(3), ev.Cookie)
	assert.Equal(t, DTOFlushed, ev.Status)
	st, _ := f.ep.Status()
	assert.True(t, st.ReqIdle)

	f.qp.event(rdma.CMBroken, nil)
	cev := waitEvent(t, f.evd)
	assert.Equal(t, EventConnBroken, cev.Number)
	assert.Same(t, f.ep, cev.EP)

	require.NoError(t, f.ep.PostRecv(seg1, 4, 0))
	ev = dequeueDTO(t, f.evd)
	assert.Equal(t, uint64(4), ev.Cookie)
	assert.Equal(t, DTOFlushed, ev.Status, "a receive posted on a disconnected EP is flushed at once")
	require.NoError(t, f.ep.PostRDMARead(seg1, 5, &RemoteSegment{}, CompletionSuppress))
	ev = dequeueDTO(t, f.evd)
	assert.Equal(t, DTOFlushed, ev.Status, "a flush is a failure, suppressed or not")
	requireEmpty(t, f.evd)

	require.NoError(t, f.ep.Reset())
	require.NoError(t, f.ep.PostRecv(seg1, 6, 0))
	requireEmpty(t, f.evd) // unconnected again: the receive waits
}

// The passive side's EP reports the full 64-bit qualifier it was reached on.
func TestPassiveLocalQualifier(t *testing.T) {
	f := newFixture(t, nil)
	defer f.close(t)
	cr, err := f.ia.CreateEVD(4, EVDCR, nil)
	require.NoError(t, err)
	const q = 0xAFFAB1E00000001
	_, _, err = f.ia.CreatePSP(q, false, cr, PSPConsumer)
	require.NoError(t, err)
	req := f.fab.request(t, q, []byte("pd"))
	ev := waitEvent(t, cr)
	require.Equal(t, EventConnectionRequest, ev.Number)
	p, err := ev.CR.Query()
	require.NoError(t, err)
	assert.Equal(t, []byte("pd"), p.PrivateData)
	require.NoError(t, ev.CR.Accept(f.ep, nil))
	require.Same(t, f.qp, req.accepted)
	f.qp.establish(nil)
	require.Equal(t, EventConnEstablished, waitEvent(t, f.evd).Number)
	ep, err := f.ep.Query()
	require.NoError(t, err)
	assert.Equal(t, EPConnected, ep.State)
	assert.Equal(t, uint64(q), ep.LocalQual)
}

// An EP whose attributes leave the sizes and RDMA IOVs 0 posts up to the
// IA's maxima and its request IOV depth, and dat_ep_query reports those
// effective values (issue 13).
func TestZeroedEPAttributes(t *testing.T) {
	attr := EPAttr{MaxRecvDTOs: 8, MaxRequestDTOs: 8, MaxRecvIOV: 2, MaxRequestIOV: 2}
	f := newFixture(t, &attr)
	defer f.close(t)
	f.connect(t)
	lim := f.ia.Attr()
	two := []Segment{seg1[0], seg1[0]}
	three := []Segment{seg1[0], seg1[0], seg1[0]}
	require.NoError(t, f.ep.PostSend(seg1, 1, 0), "max_message_size 0 is no limit")
	require.NoError(t, f.ep.PostRDMAWrite(two, 2, &RemoteSegment{Length: 128}, 0), "max_rdma_write_iov 0 is the request IOV")
	require.NoError(t, f.ep.PostRDMARead(two, 3, &RemoteSegment{Length: 128}, 0))
	assert.Equal(t, ErrArg(ArgSegmentCount), f.ep.PostRDMAWrite(three, 4, &RemoteSegment{Length: 192}, 0))
	assert.Equal(t, ErrArg(ArgSegmentCount), f.ep.PostSend(three, 5, 0))
	huge := []Segment{{LMRContext: 1, Addr: 4096, Length: lim.MaxMessageSize + 1}}
	assert.Equal(t, ErrLength, f.ep.PostSend(huge, 6, 0), "the IA's maximum still holds")

	p, err := f.ep.Query()
	require.NoError(t, err)
	assert.Equal(t, lim.MaxMessageSize, p.Attr.MaxMessageSize)
	assert.Equal(t, lim.MaxRDMASize, p.Attr.MaxRDMASize)
	assert.Equal(t, 2, p.Attr.MaxRDMAReadIOV)
	assert.Equal(t, 2, p.Attr.MaxRDMAWriteIOV)
	assert.Zero(t, p.Attr.MaxRDMAReadIn, "0: no interest in RDMA reads, as set")
	assert.Zero(t, p.Attr.MaxRDMAReadOut)
	assert.Equal(t, 8, p.Attr.MaxRecvDTOs)
	assert.Equal(t, uint64(0), f.ep.Attr().MaxMessageSize, "the attributes as set keep their zeros")
}
