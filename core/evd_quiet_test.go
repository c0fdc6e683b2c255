package core

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// The fake CQ's watch: its epoch, while it holds nothing.
func (q *fakeCQ) QuietEpoch() (uint64, bool) { return q.epoch.Load(), true }

func (q *fakeCQ) Quiet(epoch uint64) (rdma.QuietWatch, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.epoch.Load() != epoch || len(q.wcs) != 0 {
		return rdma.QuietWatch{}, false
	}
	return rdma.QuietWatch{EpochVal: epoch, Budget: 1}, true
}

// fakeSink records publications; answers is what the C check would say.
// It counts the bumps that came before their change was visible to a
// dequeue's publish condition (unseen), which must be none.
type fakeSink struct {
	evd    *EVD
	gen    atomic.Uint64
	pub    atomic.Pointer[quietPub]
	unseen atomic.Int32
}

type quietPub struct {
	gen uint64
	w   rdma.QuietWatch
}

func (s *fakeSink) Gen() uint64 { return s.gen.Load() }
func (s *fakeSink) Bump() {
	e := s.evd
	if e.queued.Load() == 0 && !e.blocked.Load() && e.ndeferred.Load() == 0 && e.more.Load() == nil {
		s.unseen.Add(1)
	}
	s.gen.Add(1)
}
func (s *fakeSink) Publish(gen uint64, w rdma.QuietWatch) {
	s.pub.Store(&quietPub{gen: gen, w: w})
}

func (s *fakeSink) answers(q *fakeCQ) bool {
	p := s.pub.Load()
	return p != nil && p.gen == s.gen.Load() && p.w.EpochVal == q.epoch.Load()
}

// quietHandles gives every object a sink.
type quietHandles struct {
	countHandles
	sinks map[Obj]*fakeSink
}

func (h *quietHandles) QuietSink(o Obj) QuietSink {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := &fakeSink{evd: o.(*EVD)}
	h.sinks[o] = s
	return s
}

// quietEVD creates an EVD with flags on an IA whose handles give sinks.
func quietEVD(t *testing.T, flags EVDFlags) (*EVD, *fakeSink) {
	t.Helper()
	h := &quietHandles{sinks: map[Obj]*fakeSink{}}
	cfg := makeFabric(true).config("quiet")
	cfg.AsyncQLen, cfg.Handles = 8, h
	ia, err := OpenIA(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ia.Close(true) })
	evd, err := ia.CreateEVD(16, flags, nil)
	require.NoError(t, err)
	s := h.sinks[evd]
	require.NotNil(t, s, "the EVD got no sink")
	return evd, s
}

// An EVD without a CQ publishes a watch of nothing: its ring alone, which
// every event bumps.
func TestQuietEVDWithoutACQ(t *testing.T) {
	evd, s := quietEVD(t, EVDSoftware)
	answers := func() bool { p := s.pub.Load(); return p != nil && p.gen == s.gen.Load() }
	var ev Event
	require.Equal(t, ErrQueueEmpty, evd.Dequeue(&ev))
	require.True(t, answers())
	require.Zero(t, s.pub.Load().w.Epoch, "a watch of words")
	require.NoError(t, evd.PostSE(3))
	require.False(t, answers())
	require.NoError(t, evd.Dequeue(&ev))
}

// A dequeue that finds the EVD empty publishes it; an event in the ring,
// a completion in the CQ, a waiter and the EVD's end each end the
// publication, and the dequeue after it finds what came.
func TestQuietEVDPublishesAnEmptyDequeue(t *testing.T) {
	evd, s := quietEVD(t, EVDDTO|EVDSoftware)
	q := evd.cq.(*fakeCQ)
	var ev Event
	require.Equal(t, ErrQueueEmpty, evd.Dequeue(&ev))
	require.True(t, s.answers(q), "an empty dequeue published nothing")

	require.NoError(t, evd.PostSE(42))
	require.False(t, s.answers(q), "the publication holds with an event in the ring")
	require.NoError(t, evd.Dequeue(&ev))
	require.Equal(t, uint64(42), ev.Pointer)
	require.False(t, s.answers(q), "a dequeue that found an event published")

	require.Equal(t, ErrQueueEmpty, evd.Dequeue(&ev))
	require.True(t, s.answers(q))
	q.push(rdma.WC{WRID: 1})
	require.False(t, s.answers(q), "the publication holds with a completion in the CQ")
	q.mu.Lock()
	q.wcs = nil // a completion of no EP: taken back, the test's own
	q.mu.Unlock()

	require.Equal(t, ErrQueueEmpty, evd.Dequeue(&ev))
	require.True(t, s.answers(q))
	done := make(chan error, 1)
	go func() {
		_, err := evd.Wait(time.Second, 1, &ev)
		done <- err
	}()
	require.Eventually(t, func() bool { return !s.answers(q) }, waitFor, time.Millisecond, "a waiter left the publication")
	require.ErrorIs(t, evd.Dequeue(&ev), ErrState(SubStateEVDWaiter))
	require.NoError(t, evd.PostSE(7))
	require.NoError(t, <-done)

	require.Equal(t, ErrQueueEmpty, evd.Dequeue(&ev))
	require.True(t, s.answers(q))
	require.NoError(t, evd.Free())
	require.False(t, s.answers(q), "a freed EVD's publication holds")
	require.Zero(t, s.unseen.Load(), "a bump came before its change was visible")
}

// A poller that takes the sink's answer whenever it holds, as the C fast
// path does, misses none of the events another thread posts meanwhile:
// every bump comes after its change is visible to the dequeue that
// publishes (bounded: each event within the test's wait).
func TestQuietPollerMissesNoEvent(t *testing.T) {
	for _, flags := range []EVDFlags{EVDSoftware, EVDDTO | EVDSoftware} {
		evd, s := quietEVD(t, flags)
		answers := func() bool { p := s.pub.Load(); return p != nil && p.gen == s.gen.Load() }
		const n = 2000
		go func() {
			for i := 0; i < n; i++ {
				for evd.PostSE(uint64(i)) == ErrQueueFull {
					time.Sleep(time.Microsecond)
				}
			}
		}()
		var ev Event
		deadline := time.Now().Add(waitFor)
		for got := 0; got < n; {
			require.True(t, time.Now().Before(deadline), "%d of %d events in %v", got, n, waitFor)
			if answers() {
				continue // the fast path's "empty"
			}
			if err := evd.Dequeue(&ev); err == nil {
				require.Equal(t, uint64(got), ev.Pointer)
				got++
			} else {
				require.Equal(t, ErrQueueEmpty, err)
			}
		}
		require.Zero(t, s.unseen.Load(), "a bump came before its change was visible")
	}
}
