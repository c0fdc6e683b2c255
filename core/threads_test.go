package core

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// Every call from many goroutines on one IA: objects created, used,
// queried and freed concurrently, posts and completions racing on shared
// EPs, and finally an abrupt close while calls are still being made. Run
// with -race; a failure is a data race, a deadlock (the test times out), a
// panic or an unexpected error.
func TestManyThreadsOneIA(t *testing.T) {
	f := newFixture(t, nil)
	f.connect(t)
	ia := f.ia
	const workers, rounds = 8, 60

	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds*8)
	report := func(err error) {
		if err != nil {
			errs <- err
		}
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				pz, err := ia.CreatePZ()
				if err != nil {
					report(err)
					return
				}
				cno, err := ia.CreateCNO([2]uint64{})
				report(err)
				evd, err := ia.CreateEVD(8, EVDDTO|EVDConnection, cno)
				report(err)
				cr, err := ia.CreateEVD(8, EVDCR, nil)
				report(err)
				ep, err := ia.CreateEP(EPConfig{PZ: pz, RecvEVD: evd, ReqEVD: evd, ConnEVD: evd})
				report(err)
				l, _, err := ia.CreateLMR(LMRRegion{Type: MemVirtual, Addr: 4096}, 4096, pz, PrivAll)
				report(err)
				rmr, err := pz.CreateRMR()
				report(err)
				psp, _, err := ia.CreatePSP(0, true, cr, PSPConsumer)
				report(err)
				rsp, err := ia.CreateRSP(uint64(1<<50+w<<20+r), ep, cr)
				report(err)
				report(ep.PostRecv(seg1, uint64(r), 0))
				_, err = ep.Query()
				report(err)
				_, err = ep.Status()
				report(err)
				_, err = l.Query()
				report(err)
				_, err = evd.Query()
				report(err)
				_ = ia.Attr()
				report(ia.SyncRDMA([]Segment{{LMRContext: l.mr.LKey(), Addr: 4096, Length: 8}}))
				assert.ErrorIs(t, pz.Free(), ErrState(SubStatePZInUse))
				report(rsp.Free())
				report(psp.Free())
				report(rmr.Free())
				report(l.Free())
				report(ep.Free())
				report(evd.Free())
				report(cr.Free())
				report(cno.Free())
				report(pz.Free())
			}
		}(w)
	}

	// Posters share one connected EP while the "transport" completes
	// from another goroutine, and a waiter takes the events.
	stop := make(chan struct{})
	var side sync.WaitGroup
	for p := 0; p < 3; p++ {
		side.Add(1)
		go func(p int) {
			defer side.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				flags := CompletionFlags(0)
				if i%2 == 0 {
					flags = CompletionSuppress
				}
				err := f.ep.PostSend(seg1, uint64(p<<32|i), flags)
				if err != nil && AsError(err).Kind != KindInsufficientResources { // a full queue is fine
					report(err)
					return
				}
				_, _ = f.ep.Status()
			}
		}(p)
	}
	side.Add(1)
	go func() {
		defer side.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			f.qp.mu.Lock()
			n := len(f.qp.sends)
			f.qp.mu.Unlock()
			if n == 0 {
				time.Sleep(10 * time.Microsecond)
				continue
			}
			f.qp.completeSend(t, rdma.WCSuccess)
		}
	}()
	side.Add(1)
	go func() {
		defer side.Done()
		var ev Event
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = f.evd.Wait(time.Millisecond, 1, &ev)
		}
	}()

	wg.Wait()
	close(stop)
	side.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// An abrupt close while other goroutines keep calling: every call
	// either works or fails cleanly, and then fails with a handle error.
	var late sync.WaitGroup
	for g := 0; g < 4; g++ {
		late.Add(1)
		go func() {
			defer late.Done()
			for i := 0; i < 200; i++ {
				if pz, err := ia.CreatePZ(); err == nil {
					_ = pz.Free()
				}
				_ = f.ep.PostSend(seg1, 1, 0)
				_ = f.ep.PostRecv(seg1, 1, 0)
				_, _ = f.ep.Query()
				var ev Event
				_ = f.evd.Dequeue(&ev)
			}
		}()
	}
	require.NoError(t, ia.Close(false))
	late.Wait()
	_, err := ia.CreatePZ()
	assert.Equal(t, ErrHandle(SubHandleIA), err)
	assert.Equal(t, ErrHandle(SubHandleEP), f.ep.PostSend(seg1, 1, 0))
	assert.Zero(t, f.h.count())
}

// Connection events and posts race: an EP that the transport disconnects
// while a consumer posts never loses a request (each completes exactly
// once, flushed or not) and ends disconnected.
func TestPostsRaceWithDisconnect(t *testing.T) {
	for round := 0; round < 20; round++ {
		f := newFixture(t, nil)
		f.connect(t)
		const posts = 60 // within the EP's request queue (64)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; i < posts; i++ {
				require.NoError(t, f.ep.PostSend(seg1, uint64(i), 0))
			}
		}()
		time.Sleep(time.Duration(round) * 10 * time.Microsecond)
		f.qp.endScript(rdma.CMBroken, true)
		<-done
		// The connection event comes from the CM goroutine: take events
		// until it came, then what is left.
		seen := map[uint64]int{}
		var ev Event
		ended := false
		for deadline := time.Now().Add(waitFor); !ended && time.Now().Before(deadline); {
			if _, err := f.evd.Wait(time.Millisecond, 1, &ev); err != nil {
				continue
			}
			switch ev.Number {
			case EventDTOCompletion:
				seen[ev.Cookie]++
			case EventConnBroken:
				ended = true
			}
		}
		require.True(t, ended, "round %d: no BROKEN event", round)
		for f.evd.Dequeue(&ev) == nil {
			if ev.Number == EventDTOCompletion {
				seen[ev.Cookie]++
			}
		}
		require.Len(t, seen, posts, "round %d", round)
		for c, n := range seen {
			require.Equal(t, 1, n, "cookie %d completed %d times", c, n)
		}
		st, err := f.ep.Status()
		require.NoError(t, err)
		assert.Equal(t, EPStatus{State: EPDisconnected, RecvIdle: true, ReqIdle: true}, st)
		f.close(t)
	}
}
