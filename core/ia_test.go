package core

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// An abrupt close refuses the connection requests nobody answered, so the
// active side learns it at once instead of waiting out its timeout.
func TestAbruptCloseRejectsPendingRequests(t *testing.T) {
	ia, fab, h := scriptIA(t)
	dev := ia.dev.dev.(*fakeDev)
	cr, err := ia.CreateEVD(4, EVDCR, nil)
	require.NoError(t, err)
	_, q, err := ia.CreatePSP(0, true, cr, PSPConsumer)
	require.NoError(t, err)
	pending := fab.request(t, q, nil)
	answered := fab.request(t, q, nil)
	waitEvent(t, cr)
	ev := waitEvent(t, cr)
	require.NoError(t, ev.CR.Reject())
	assert.Equal(t, 1, answered.rejects()+pending.rejects())

	require.ErrorIs(t, ia.Close(true), ErrState(SubStateIAInUse), "graceful close with objects")
	require.NoError(t, ia.Close(false))
	assert.Equal(t, 1, pending.rejects()+answered.rejects()-1, "the pending request is refused by the abrupt close")
	assert.Equal(t, 1, answered.rejects(), "an answered request is not answered twice")
	assert.Equal(t, 1, pending.rejects())
	assert.Zero(t, h.count())
	dev.mu.Lock()
	defer dev.mu.Unlock()
	assert.True(t, dev.closed, "the last IA on a device closes it")
}

// A request that reaches a freed PSP (the transport's listener races with
// the free) is refused, not left pending.
func TestRequestOnFreedPSPRefused(t *testing.T) {
	ia, fab, _ := scriptIA(t)
	defer ia.Close(false)
	cr, err := ia.CreateEVD(4, EVDCR, nil)
	require.NoError(t, err)
	p, q, err := ia.CreatePSP(0, true, cr, PSPConsumer)
	require.NoError(t, err)
	fab.mu.Lock()
	l := fab.lis[q]
	fab.mu.Unlock()
	require.NoError(t, p.Free())
	req := fab.deliver(t, &fakeReq{l: l})
	require.Eventually(t, func() bool { return req.rejects() == 1 }, waitFor, time.Millisecond)
	assert.Equal(t, rdma.RejectRefused, req.reason, "refused as if nobody listened")
	var ev Event
	assert.ErrorIs(t, cr.Dequeue(&ev), ErrQueueEmpty)
}

// An EVD overflow raised from a transport callback must not need ia.mu:
// an abrupt close holds it while it destroys transport objects, which wait
// for the transport's locks that the callback holds.
func TestOverflowDoesNotTakeIALock(t *testing.T) {
	f := newFixture(t, nil)
	defer f.close(t)
	small, err := f.ia.CreateEVD(1, EVDDTO, nil)
	require.NoError(t, err)
	f.ia.mu.Lock()
	done := make(chan struct{})
	go func() {
		small.push(&Event{Number: EventDTOCompletion, notify: true})
		small.push(&Event{Number: EventDTOCompletion, notify: true})
		close(done)
	}()
	blocked := false
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		blocked = true
	}
	f.ia.mu.Unlock()
	<-done
	require.False(t, blocked, "an overflowing push blocked on ia.mu")
	var ev Event
	require.NoError(t, f.ia.AsyncEVD().Dequeue(&ev))
	assert.Equal(t, EventAsyncEVDOverflow, ev.Number)
	assert.Same(t, small, ev.Target)
	// Completions are never dropped: both are there.
	require.NoError(t, small.Dequeue(&ev))
	require.NoError(t, small.Dequeue(&ev))
}

// EVD waits: timeouts 0 and finite expire on an empty EVD, and dequeue
// reports an empty queue.
func TestEVDTimeouts(t *testing.T) {
	ia, _, _ := scriptIA(t)
	defer ia.Close(false)
	e, err := ia.CreateEVD(4, EVDSoftware, nil)
	require.NoError(t, err)
	var ev Event
	n, err := e.Wait(0, 1, &ev)
	assert.ErrorIs(t, err, ErrTimeout)
	assert.Zero(t, n)
	start := time.Now()
	_, err = e.Wait(20*time.Millisecond, 1, &ev)
	assert.ErrorIs(t, err, ErrTimeout)
	assert.GreaterOrEqual(t, time.Since(start), 20*time.Millisecond)
	assert.ErrorIs(t, e.Dequeue(&ev), ErrQueueEmpty)
	_, err = e.Wait(0, 5, &ev)
	assert.Equal(t, ErrArg(ArgThreshold), err, "threshold above the queue length")
}

// A completion naming no outstanding request of the EP (a transport that
// broke the rules, or one of a freed EP) makes no event and disturbs
// nothing; the real completion still comes through.
func TestCompletionOfUnknownRequestDropped(t *testing.T) {
	f := newFixture(t, nil)
	defer f.close(t)
	f.connect(t)
	require.NoError(t, f.ep.PostSend(seg1, 1, 0))
	cq := f.qp.cq(true)
	cq.push(rdma.WC{WRID: wrid(wrSend, f.ep.id, 77), Opcode: rdma.WCSend})
	cq.push(rdma.WC{WRID: wrid(wrSend, f.ep.id+1<<idIndexBits, 0), Opcode: rdma.WCSend})
	requireEmpty(t, f.evd)
	require.True(t, f.qp.completeSend(t, rdma.WCSuccess))
	assert.Equal(t, uint64(1), dequeueDTO(t, f.evd).Cookie)
}

// The proxy agent calls that destroying objects owes ("unblocked with the
// NULL handle") are made before dat_ia_close or dat_evd_free returns, so
// the consumer may release the agent's instance data afterwards.
func TestAgentsUnblockedBeforeReturn(t *testing.T) {
	var calls atomic.Int32
	agent := func([2]uint64, *EVD) { calls.Add(1) }
	open := func() *IA {
		cfg := makeFabric(true).config("s")
		cfg.Agent = agent
		ia, err := OpenIA(cfg)
		require.NoError(t, err)
		return ia
	}

	ia := open()
	_, err := ia.CreateCNO([2]uint64{1, 2})
	require.NoError(t, err)
	c2, err := ia.CreateCNO([2]uint64{3, 4})
	require.NoError(t, err)
	_, err = ia.CreateEVD(4, EVDSoftware, c2)
	require.NoError(t, err)
	require.NoError(t, ia.Close(false))
	assert.Equal(t, int32(2), calls.Load(), "both agents ran before the close returned")

	calls.Store(0)
	ia = open()
	defer ia.Close(false)
	c, err := ia.CreateCNO([2]uint64{5, 6})
	require.NoError(t, err)
	e, err := ia.CreateEVD(4, EVDSoftware, c)
	require.NoError(t, err)
	require.NoError(t, e.Free())
	assert.Equal(t, int32(1), calls.Load(), "the last EVD's free unblocked the agent before it returned")
}

// A dat.conf entry with transport=verbs-or-auto: the first backend has no
// device here, so the fallback opens, and the log says why; without a
// fallback the same open fails as DAT_PROVIDER_NOT_FOUND.
func TestOpenIAFallback(t *testing.T) {
	buf := captureLog(t, LevelInfo)
	f := newFabric()
	cfg := f.config("a")
	cfg.Name, cfg.Origin = "alias", "dat.conf:7"
	cfg.Backend, cfg.Params = "fake", rdma.Params{"fabric": "none"}
	_, err := OpenIA(cfg)
	require.ErrorIs(t, err, ErrNameNotRegistered)

	cfg.Fallback, cfg.FallbackParams = "fake", f.config("a").Params
	ia, err := OpenIA(cfg)
	require.NoError(t, err)
	require.Equal(t, "fake", ia.Backend())
	require.Contains(t, buf.String(), "dat_ia_openv: alias (dat.conf:7): rdma: no such device; using the fake backend")
	require.NoError(t, ia.Close(false))

	// A backend that is not built in (rdma.ErrNoBackend) falls back too.
	cfg.Backend = "nosuch"
	ia, err = OpenIA(cfg)
	require.NoError(t, err)
	require.Equal(t, "fake", ia.Backend())
	require.NoError(t, ia.Close(false))
}
