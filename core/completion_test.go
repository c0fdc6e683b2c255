package core

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// An EVD delivers DTO completions in its CQ's order, whatever the number of
// EPs completing into it and however they are taken (the dequeue fast path,
// batches through the ring, waits with a threshold).
func TestEVDKeepsCQOrder(t *testing.T) {
	ia, _, _ := scriptIA(t)
	defer ia.Close(false)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	evd, err := ia.CreateEVD(4096, EVDDTO, nil)
	require.NoError(t, err)
	conn, err := ia.CreateEVD(64, EVDConnection, nil)
	require.NoError(t, err)
	const eps, rounds = 16, 40
	var qps []*fakeQP
	var all []*EP
	for i := 0; i < eps; i++ {
		ep, err := ia.CreateEP(EPConfig{PZ: pz, RecvEVD: evd, ReqEVD: evd, ConnEVD: conn})
		require.NoError(t, err)
		for r := 0; r < rounds; r++ {
			require.NoError(t, ep.PostRecv(seg1, uint64(i<<16|r), 0))
		}
		require.NoError(t, ep.Connect(netip127, 1, time.Second, nil))
		qp := ep.qp.(*fakeQP)
		qp.establish(nil)
		qps = append(qps, qp)
		all = append(all, ep)
	}
	for range all {
		require.Equal(t, EventConnEstablished, waitEvent(t, conn).Number)
	}
	// Round r completes on every EP, in a random EP order per round; the
	// EVD must hand them out in exactly that order.
	var want []uint64
	for r := 0; r < rounds; r++ {
		for _, i := range rand.Perm(eps) {
			qps[i].completeRecv(t, rdma.WCSuccess, 8, false)
			want = append(want, uint64(i<<16|r))
		}
	}
	var got []uint64
	var ev Event
	for len(got) < len(want) {
		var err error
		switch len(got) % 3 {
		case 0:
			err = evd.Dequeue(&ev)
		case 1:
			_, err = evd.Wait(waitFor, 1, &ev)
		case 2:
			_, err = evd.Wait(waitFor, min(3, len(want)-len(got)), &ev)
		}
		require.NoError(t, err, "after %d events", len(got))
		got = append(got, ev.Cookie)
	}
	require.Equal(t, want, got)
	requireEmpty(t, evd)
}

var netip127 = netipLoopback

// A CNO over two DTO EVDs fed by two producers, waited on in a loop the way
// programs do (wake, dequeue from the EVD returned, wait again): every
// notification is seen and no wait reaches its timeout, however the
// events and the waits interleave.
func TestCNONeverLosesNotification(t *testing.T) {
	f := newFabric()
	c, s := newSide(t, f), newSide(t, f)
	cno, err := s.ia.CreateCNO([2]uint64{})
	require.NoError(t, err)
	var evds [2]*EVD
	var seps, ceps [2]*EP
	for i := range evds {
		evds[i], err = s.ia.CreateEVD(4096, EVDDTO, cno)
		require.NoError(t, err)
		seps[i] = s.ep(t, nil, evds[i])
		ceps[i] = c.ep(t, nil, c.dto)
		connect(t, c, ceps[i], s, seps[i])
	}
	const cycles = 20000
	// Receives are replenished by the consumer as it reaps.
	for i := range seps {
		for k := 0; k < 256; k++ {
			require.NoError(t, seps[i].PostRecv(s.seg(0), 0, 0))
		}
	}
	var wg sync.WaitGroup
	credits := [2]chan struct{}{make(chan struct{}, 256), make(chan struct{}, 256)}
	for i := range ceps {
		for k := 0; k < 256; k++ {
			credits[i] <- struct{}{}
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for k := 0; k < cycles/2; k++ {
				<-credits[i]
				if err := ceps[i].PostSend(c.seg(0), 0, CompletionSuppress); err != nil {
					t.Errorf("producer %d: %v", i, err)
					return
				}
				if k%7 == 0 {
					time.Sleep(time.Duration(rand.IntN(20)) * time.Microsecond)
				}
			}
		}(i)
	}
	got := 0
	for got < cycles {
		e, err := cno.Wait(10 * time.Second)
		require.NoError(t, err, "a CNO wait timed out with %d of %d events taken", got, cycles)
		require.NotNil(t, e)
		var ev Event
		// Take one event per wake-up (the hardest pattern for a CNO
		// that triggers once per EVD): the rest must wake the next wait.
		if e.Dequeue(&ev) == nil {
			i := 0
			if e == evds[1] {
				i = 1
			}
			require.NoError(t, seps[i].PostRecv(s.seg(0), 0, 0))
			credits[i] <- struct{}{}
			got++
		}
	}
	wg.Wait()
}

// An EP may complete into EVDs of another IA of the process opened on the
// same device (reference providers accept any EVD of the process, and
// programs that open several IAs rely on it); an EVD of another device is
// refused.
func TestEVDOfAnotherIA(t *testing.T) {
	f := newFabric()
	c := newSide(t, f)
	cfg := f.config("shared")
	ia1, err := OpenIA(cfg)
	require.NoError(t, err)
	defer ia1.Close(false)
	ia2, err := OpenIA(f.config("shared"))
	require.NoError(t, err)
	defer ia2.Close(false)
	require.Same(t, ia1.dev, ia2.dev, "IAs of one entry share the device")

	pz, err := ia1.CreatePZ()
	require.NoError(t, err)
	dto2, err := ia2.CreateEVD(64, EVDDTO, nil)
	require.NoError(t, err)
	conn2, err := ia2.CreateEVD(64, EVDConnection, nil)
	require.NoError(t, err)
	cr1, err := ia1.CreateEVD(8, EVDCR, nil)
	require.NoError(t, err)
	ep, err := ia1.CreateEP(EPConfig{PZ: pz, RecvEVD: dto2, ReqEVD: dto2, ConnEVD: conn2})
	require.NoError(t, err)
	_, info, err := ia1.CreateLMR(LMRRegion{Type: MemVirtual, Addr: 0x100000}, 4096, pz, PrivAll)
	require.NoError(t, err)
	require.NoError(t, ep.PostRecv([]Segment{{LMRContext: info.LMRContext, Addr: 0x100000, Length: 64}}, 5, 0))

	psp, q, err := ia1.CreatePSP(0, true, cr1, PSPConsumer)
	require.NoError(t, err)
	defer psp.Free()
	cep := c.ep(t, nil, c.dto)
	require.NoError(t, cep.Connect(netipLoopback, q, waitFor, nil))
	ev := next(t, cr1)
	require.NoError(t, ev.CR.Accept(ep, nil))
	require.Equal(t, EventConnEstablished, next(t, conn2).Number, "the connection event goes to IA2's EVD")
	require.Equal(t, EventConnEstablished, next(t, c.conn).Number)
	send(t, c, cep, 1, 8)
	ev = next(t, dto2)
	require.Equal(t, EventDTOCompletion, ev.Number)
	assert.Same(t, ep, ev.EP)
	assert.Equal(t, uint64(5), ev.Cookie)

	// An EVD of an IA on another device works too, when the backend lets
	// a CQ of one device notify another device's channel (the software
	// provider does; verbs devices cannot share CQs).
	other, err := OpenIA(f.config("other"))
	require.NoError(t, err)
	defer other.Close(false)
	dtoOther, err := other.CreateEVD(8, EVDDTO, nil)
	require.NoError(t, err)
	ep2, err := ia1.CreateEP(EPConfig{PZ: pz, RecvEVD: dtoOther, ReqEVD: dtoOther, ConnEVD: conn2})
	require.NoError(t, err)
	require.NoError(t, ep2.PostRecv([]Segment{{LMRContext: info.LMRContext, Addr: 0x100000, Length: 64}}, 6, 0))
	cep2 := c.ep(t, nil, c.dto)
	require.NoError(t, cep2.Connect(netipLoopback, q, waitFor, nil))
	ev = next(t, cr1)
	require.NoError(t, ev.CR.Accept(ep2, nil))
	require.Equal(t, EventConnEstablished, next(t, conn2).Number)
	require.Equal(t, EventConnEstablished, next(t, c.conn).Number)
	waited := make(chan Event, 1)
	go func() {
		var w Event
		if _, err := dtoOther.Wait(waitFor, 1, &w); err == nil {
			waited <- w
		}
		close(waited)
	}()
	time.Sleep(10 * time.Millisecond) // let the waiter sleep first
	send(t, c, cep2, 1, 8)
	w, ok := <-waited
	require.True(t, ok, "the waiter on the other device's EVD was not woken")
	assert.Same(t, ep2, w.EP)
	assert.Equal(t, uint64(6), w.Cookie)
}

// An empty dequeue costs the same whatever the number of EPs on the EVD.
func BenchmarkEmptyDequeue(b *testing.B) {
	for _, n := range []int{1, 64, 1024} {
		b.Run(fmt.Sprint(n, "eps"), func(b *testing.B) {
			f := newFabric()
			ia, err := OpenIA(f.config("bench"))
			require.NoError(b, err)
			defer ia.Close(false)
			pz, _ := ia.CreatePZ()
			evd, _ := ia.CreateEVD(4096, EVDDTO, nil)
			for i := 0; i < n; i++ {
				_, err := ia.CreateEP(EPConfig{PZ: pz, RecvEVD: evd, ReqEVD: evd})
				require.NoError(b, err)
			}
			var ev Event
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if evd.Dequeue(&ev) != ErrQueueEmpty {
					b.Fatal("not empty")
				}
			}
		})
	}
}
