package core

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

const testBound = 10 * time.Second // a hang is a failure, not a stuck test

// condChan is a completion channel with no spinning: waits sleep on a
// condition variable until the count moves, so core's own ordering is what
// is tested.
type condChan struct {
	mu  sync.Mutex
	c   *sync.Cond
	seq uint32
}

func newCondChan() *condChan {
	d := &condChan{}
	d.c = sync.NewCond(&d.mu)
	return d
}

func (d *condChan) Fd() int        { return -1 }
func (d *condChan) Destroy() error { return nil }

func (d *condChan) Seq() uint32 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.seq
}

func (d *condChan) Wake() {
	d.mu.Lock()
	d.seq++
	d.mu.Unlock()
	d.c.Broadcast()
}

func (d *condChan) Wait(seq uint32, dur time.Duration) bool {
	if dur > 0 {
		t := time.AfterFunc(dur, d.Wake) // a bounded wait ends by a wake
		defer t.Stop()
	}
	d.mu.Lock()
	for d.seq == seq && dur != 0 {
		d.c.Wait()
	}
	d.mu.Unlock()
	return false
}

type nopHandles struct{}

func (nopHandles) Bind(Obj) error { return nil }
func (nopHandles) Release(Obj)    {}

// arrivals is a CQ the test feeds: an arrival posts a receive of a bare EP
// and marks its completion arrived, then wakes the channel if the CQ is
// armed, as a backend does. late injects an arrival right after a Poll
// found nothing, as if another thread's arrival just missed the look.
type arrivals struct {
	rdma.CQDefaults
	ch      *condChan
	ep      *EP
	mu      sync.Mutex
	wcs     []rdma.WC
	armed   bool
	pending atomic.Int32
	late    atomic.Int32
}

func (a *arrivals) Poll(wc []rdma.WC) int {
	a.mu.Lock()
	n := copy(wc, a.wcs)
	a.wcs = a.wcs[n:]
	a.pending.Add(-int32(n))
	a.mu.Unlock()
	if n == 0 && a.late.Load() > 0 {
		a.late.Add(-1)
		a.arrive()
	}
	return n
}

func (a *arrivals) Arm(bool) error {
	a.mu.Lock()
	a.armed = true
	a.mu.Unlock()
	return nil
}

func (a *arrivals) Destroy() error { return nil }

func (a *arrivals) arrive() {
	q := &a.ep.rq
	a.mu.Lock()
	seq := q.tail.Load()
	q.slots[seq&q.mask] = reqSlot{cookie: 7}
	q.tail.Store(seq + 1)
	a.wcs = append(a.wcs, rdma.WC{WRID: wrid(wrRecv, a.ep.id, seq), Opcode: rdma.WCRecv})
	a.pending.Add(1)
	wake := a.armed
	a.armed = false
	a.mu.Unlock()
	if wake {
		a.ch.Wake()
	}
}

// quiet puts n completions that make no event in the CQ: successful
// sends the consumer suppressed, which core signalled anyway to get their
// slots back (completionForced). Like arrivals before the wait began, they
// wake nobody.
func (a *arrivals) quiet(n int) {
	q := &a.ep.sq
	if q.slots == nil {
		q.init(1 << 20)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := 0; i < n; i++ {
		seq := q.tail.Load()
		q.slots[seq&q.mask] = reqSlot{flags: CompletionSuppress | completionForced, op: rdma.WRSend}
		q.tail.Store(seq + 1)
		a.wcs = append(a.wcs, rdma.WC{WRID: wrid(wrSend, a.ep.id, seq), Opcode: rdma.WCSend})
		a.pending.Add(1)
	}
}

// noSpin makes the test's waits sleep at once, as on a single CPU or with
// the spin slots taken: what a wait sees is then its looks around the arm.
func noSpin(t *testing.T) {
	old := spinLimit.Load()
	spinLimit.Store(0)
	t.Cleanup(func() { spinLimit.Store(old) })
}

// testEVD is an EVD on a bare IA whose channel is a condChan and whose CQ
// is fed by the returned arrivals.
func testEVD(t *testing.T, flags EVDFlags) (*EVD, *arrivals) {
	t.Helper()
	ch := newCondChan()
	ia := &IA{comp: ch, evds: map[*EVD]struct{}{}, handles: nopHandles{}, dev: &device{}}
	ia.attr.MaxEVDQLen = 1 << 20
	e := &EVD{ia: ia, flags: flags, ring: make([]Event, evdInitRing), qlen: 1 << 16, enabled: true, waitable: true}
	e.kind = TypeEVD
	ep := &EP{ia: ia}
	ep.rq.init(1 << 20)
	ep.softArm.Store(wmOff)
	ep.hardWM.Store(wmOff)
	id, ok := epIDs.add(ep)
	require.True(t, ok)
	ep.id = id
	t.Cleanup(func() { epIDs.remove(id) })
	src := &arrivals{ch: ch, ep: ep}
	if flags&EVDDTO != 0 {
		e.cq = src
	}
	return e, src
}

func queuedEvents(e *EVD) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.count
}

// jitter spends a varied amount of time so that producers hit every window
// of the waiter: before it reads the count, while it checks, while asleep.
func jitter() {
	switch rand.IntN(6) {
	case 0, 1:
	case 2, 3:
		runtime.Gosched()
	case 4:
		for n := rand.IntN(3000); n > 0; n-- {
			_ = n * n
		}
	case 5:
		time.Sleep(time.Duration(rand.IntN(50)) * time.Microsecond)
	}
}

// Every software event and every transport arrival posted while a thread
// waits wakes it: dat_evd_wait never sleeps through an event.
func TestEVDWaitNoLostWakeup(t *testing.T) {
	for _, viaTransport := range []bool{false, true} {
		name := map[bool]string{false: "software events", true: "transport arrivals"}[viaTransport]
		t.Run(name, func(t *testing.T) {
			e, src := testEVD(t, EVDSoftware|EVDDTO)
			const rounds = 2000
			errs := make(chan error, 1)
			go func() {
				var ev Event
				for i := 0; i < rounds; i++ {
					if _, err := e.Wait(-1, 1, &ev); err != nil {
						errs <- err
						return
					}
				}
				errs <- nil
			}()
			for i := 0; i < rounds; i++ {
				jitter()
				if viaTransport {
					src.arrive()
				} else {
					require.NoError(t, e.PostSE(uint64(i)))
				}
				// One event at a time, so that each round is a fresh wait.
				for queuedEvents(e) != 0 || src.pending.Load() != 0 {
					runtime.Gosched()
				}
			}
			select {
			case err := <-errs:
				require.NoError(t, err, "a wait missed its event")
			case <-time.After(2 * testBound):
				t.Fatal("waiter hung")
			}
		})
	}
}

// Work that arrives just after the waiter's poll looked, but before it
// sleeps, still wakes it: the waiter reads the channel count before it
// polls and arms the CQ, so the arrival's notification moves the count it
// sleeps on (or the poll after the arm sees it).
func TestEVDWaitArrivalDuringProgress(t *testing.T) {
	e, src := testEVD(t, EVDDTO)
	src.late.Store(1)
	got := make(chan Event, 1)
	go func() {
		var ev Event
		if _, err := e.Wait(-1, 1, &ev); err == nil {
			got <- ev
		}
	}()
	select {
	case ev := <-got:
		require.Equal(t, EventDTOCompletion, ev.Number)
	case <-time.After(testBound):
		t.Fatal("the arrival between poll and sleep was missed: the waiter sleeps on")
	}
}

// A receive that completed before the wait began, behind more than a poll
// batch of completions that make no event (suppressed sends core
// signalled), is found by the wait: no notification will come for it,
// since it came before the arm, so the looks around the arm must get past
// the quiet completions. (test_dat_srq_scale hung so over TCP: the
// signalled completions of a burst of suppressed SENDs came ahead of the
// peer's messages, and both sides slept with messages in their CQs.)
func TestEVDWaitBehindQuietCompletions(t *testing.T) {
	noSpin(t)
	for _, quiet := range []int{evdPollBatch, 3*evdPollBatch + 5} {
		e, src := testEVD(t, EVDDTO)
		src.quiet(quiet)
		src.arrive()
		var ev Event
		_, err := e.Wait(time.Second, 1, &ev)
		require.NoError(t, err, "%d quiet completions hid the receive from the wait", quiet)
		require.Equal(t, EventDTOCompletion, ev.Number)
		require.Equal(t, uint64(7), ev.Cookie)
		require.Zero(t, src.pending.Load())
	}
}

// The same for the dequeue: an EVD whose CQ holds an event behind a poll
// batch of quiet completions is not empty.
func TestEVDDequeueBehindQuietCompletions(t *testing.T) {
	e, src := testEVD(t, EVDDTO)
	src.quiet(3*evdPollBatch + 5)
	src.arrive()
	var ev Event
	require.NoError(t, e.Dequeue(&ev), "quiet completions hid the receive from the dequeue")
	require.Equal(t, uint64(7), ev.Cookie)
	require.Equal(t, ErrQueueEmpty, e.Dequeue(&ev))
}

// An event pushed while another thread polls the CQ enters the ring behind
// the completions that thread polled (dat_ep_disconnect(3DAT): "all
// successful Completion events of in-progress DTOs precede the Disconnect
// Completion event" on one EVD). The test plays the poller: it holds
// pollMu with two receives polled, not in the ring yet, when the event is
// pushed. Before, the event went into the ring at once, ahead of them (a
// graceful disconnect's DISCONNECTED ahead of its sends' completions, when
// the consumer's own poll completed the last send; seen once under ASan).
func TestEVDPushBehindPolledCompletions(t *testing.T) {
	e, src := testEVD(t, EVDSoftware|EVDDTO)
	src.arrive()
	src.arrive()
	e.pollMu.Lock()
	n := e.pollLocked()
	require.Equal(t, 2, n)
	require.NoError(t, e.PostSE(42))
	require.Zero(t, queuedEvents(e), "the event went into the ring while its predecessors were being polled")
	e.enqueueLocked(e.convertLocked(n))
	e.pollUnlock()
	var ev Event
	for i := 0; i < 2; i++ {
		require.NoError(t, e.Dequeue(&ev))
		require.Equal(t, EventDTOCompletion, ev.Number, "event %d", i)
		require.Equal(t, uint64(7), ev.Cookie)
	}
	require.NoError(t, e.Dequeue(&ev))
	require.Equal(t, EventSoftware, ev.Number)
	require.Equal(t, uint64(42), ev.Pointer)
	require.Equal(t, ErrQueueEmpty, e.Dequeue(&ev))
}

// Events pushed while other threads poll are never left behind: each
// producer's event follows its own completion, and every one of them is
// dequeued, whichever thread let pollMu go last.
func TestEVDPushWhilePolling(t *testing.T) {
	e, src := testEVD(t, EVDSoftware|EVDDTO)
	const rounds = 2000
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			src.arrive()
			jitter()
			require.NoError(t, e.PostSE(uint64(i)))
		}
	}()
	// A second poller holds pollMu at times, as another consumer thread
	// would; it takes no event (it pumps into the ring).
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			e.pump(1)
			jitter()
		}
	}()
	dtos, ses := 0, 0
	var hist []string
	deadline := time.Now().Add(testBound)
	var ev Event
	for ses < rounds {
		err := e.Dequeue(&ev)
		if err == ErrQueueEmpty {
			require.True(t, time.Now().Before(deadline), "%d of %d events, %d completions", ses, rounds, dtos)
			continue
		}
		require.NoError(t, err)
		hist = append(hist, fmt.Sprintf("%d:%d", ev.Number, ev.Pointer))
		switch ev.Number {
		case EventDTOCompletion:
			dtos++
		case EventSoftware:
			require.Equal(t, uint64(ses), ev.Pointer)
			ses++
			require.GreaterOrEqual(t, dtos, ses, "software event %d ahead of the completion before it: %v", ses-1, hist[max(0, len(hist)-12):])
		}
	}
	close(stop)
	wg.Wait()
	require.Equal(t, rounds, dtos+drain(t, e))
}

// drain dequeues what is left and returns how many completions it held.
func drain(t *testing.T, e *EVD) int {
	n := 0
	var ev Event
	for e.Dequeue(&ev) == nil {
		require.Equal(t, EventDTOCompletion, ev.Number)
		n++
	}
	return n
}

// The dequeue fast path (no lock when empty) still reports every state:
// events, DAT_QUEUE_EMPTY, a waiter's exclusive hold, a freed EVD.
func TestEVDDequeueStates(t *testing.T) {
	e, src := testEVD(t, EVDSoftware|EVDDTO)
	var ev Event
	require.Equal(t, ErrQueueEmpty, e.Dequeue(&ev))

	require.NoError(t, e.PostSE(42))
	require.NoError(t, e.Dequeue(&ev))
	require.Equal(t, EventSoftware, ev.Number)
	require.Equal(t, uint64(42), ev.Pointer)
	require.Equal(t, ErrQueueEmpty, e.Dequeue(&ev))

	src.arrive() // in the CQ, not yet polled: dequeue polls it
	require.NoError(t, e.Dequeue(&ev))
	require.Equal(t, EventDTOCompletion, ev.Number)
	require.Equal(t, uint64(7), ev.Cookie)

	waited := make(chan error, 1)
	go func() {
		var w Event
		_, err := e.Wait(testBound, 1, &w)
		waited <- err
	}()
	deadline := time.Now().Add(testBound)
	for !e.blocked.Load() {
		require.True(t, time.Now().Before(deadline), "the waiter never started")
		runtime.Gosched()
	}
	require.Equal(t, ErrState(SubStateEVDWaiter), e.Dequeue(&ev), "a waiter holds the EVD")
	require.NoError(t, e.PostSE(1))
	require.NoError(t, <-waited)
	require.Equal(t, ErrQueueEmpty, e.Dequeue(&ev), "the waiter released the EVD")

	require.NoError(t, e.PostSE(2))
	e.ia.mu.Lock()
	e.destroyLocked()
	e.ia.mu.Unlock()
	require.Equal(t, ErrHandle(SubNone), e.Dequeue(&ev))
}

// Producers on many threads, one consumer polling with Dequeue: nothing is
// lost or duplicated, and an EVD holding events never reports empty once
// the producers are done.
func TestEVDDequeueConcurrent(t *testing.T) {
	e, src := testEVD(t, EVDSoftware|EVDDTO)
	const producers, each = 4, 2000
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if i%2 == 0 {
					src.arrive()
				} else {
					require.NoError(t, e.PostSE(1))
				}
				if i%64 == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	got := 0
	var ev Event
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	deadline := time.Now().Add(testBound)
	for producing := true; producing || got < producers*each; {
		select {
		case <-done:
			producing = false
		default:
		}
		switch err := e.Dequeue(&ev); err {
		case nil:
			got++
		case ErrQueueEmpty:
			if !producing {
				require.Zero(t, src.pending.Load()+int32(e.queued.Load()), "empty reported with events queued")
			}
			require.True(t, time.Now().Before(deadline), "only %d of %d events", got, producers*each)
			runtime.Gosched()
		default:
			t.Fatal(err)
		}
	}
	require.Equal(t, producers*each, got)
	require.Equal(t, ErrQueueEmpty, e.Dequeue(&ev))
}
