package verbs

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// The watch of an empty CQ is a probe the export layer calls from C: it
// says empty while nothing came, and once a completion came it says no
// and loses nothing (the next Poll returns it). A destroyed CQ's probe
// says no.
func TestQuietProbe(t *testing.T) {
	a, b, _, _ := pair(t)
	var wc [4]rdma.WC
	require.Zero(t, b.cq.Poll(wc[:]))
	qc, ok := b.cq.(rdma.QuietCQ)
	require.True(t, ok, "a verbs CQ has a watch")
	ep, ok := qc.QuietEpoch()
	require.True(t, ok)
	w, ok := qc.Quiet(ep)
	require.True(t, ok)
	require.NotZero(t, w.Probe)
	require.NotZero(t, w.Budget)
	for i := 0; i < 100; i++ {
		require.True(t, probeQuiet(w), "an empty CQ's probe said no")
	}

	sb, smr := a.mem(4096)
	copy(sb, "probed")
	a.send(sb, smr, 6, 1)
	deadline := time.Now().Add(bound)
	for probeQuiet(w) {
		require.True(t, time.Now().Before(deadline), "the probe never saw the receive")
	}
	require.False(t, probeQuiet(w), "the probe said empty with a completion stashed")
	require.Equal(t, 1, b.cq.Poll(wc[:]), "the completion the probe saw")
	require.Equal(t, uint64(77), wc[0].WRID)
	require.Equal(t, rdma.WCRecv, wc[0].Opcode)
	require.Equal(t, uint32(6), wc[0].ByteLen)
	require.Zero(t, b.cq.Poll(wc[:]))
	require.True(t, probeQuiet(w))

	c, err := b.dev.CreateCQ(8, nil, 0)
	require.NoError(t, err)
	cw, ok := c.(rdma.QuietCQ).Quiet(0)
	require.True(t, ok)
	require.True(t, probeQuiet(cw))
	require.NoError(t, c.Destroy())
	require.False(t, probeQuiet(cw), "a destroyed CQ's probe said empty")
	_, ok = c.(rdma.QuietCQ).Quiet(0)
	require.False(t, ok, "a destroyed CQ gave a watch")
}

// A watch outlives its CQ: once the CQ is destroyed and its C struct has
// gone back to the pool, the watch's word has moved, and its probe says no
// even when a new CQ lives in that struct, while probes of stale watches
// run all along.
func TestQuietProbeStale(t *testing.T) {
	s := newSide(t, nil, 1)
	// A probe says no while another holds the CQ's lock (here: a stale
	// watch's probe, looking at the struct a new CQ now has), so a new
	// CQ's probe must say yes soon, not at once.
	quietOf := func(c rdma.CQ) rdma.QuietWatch {
		w, ok := c.(rdma.QuietCQ).Quiet(0)
		require.True(t, ok)
		deadline := time.Now().Add(bound)
		for !probeQuiet(w) {
			require.True(t, time.Now().Before(deadline), "a new CQ's probe said no")
		}
		return w
	}
	const n = 8
	var stale []rdma.QuietWatch
	for i := 0; i < n; i++ {
		c, err := s.dev.CreateCQ(8, nil, 0)
		require.NoError(t, err)
		stale = append(stale, quietOf(c))
		require.NoError(t, c.Destroy())
	}

	var stop atomic.Bool
	var said atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			if probeQuiet(stale[i%n]) {
				said.Add(1)
			}
		}
	}()
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()

	deadline := time.Now().Add(bound)
	for moved := 0; moved < n; {
		runtime.GC()
		moved = 0
		for _, w := range stale {
			if quietWord(w) != w.EpochVal {
				moved++
			}
		}
		require.True(t, time.Now().Before(deadline), "%d of %d freed CQs' words moved", moved, n)
		time.Sleep(time.Millisecond)
	}

	// New CQs take structs from the pool, the last freed first; other
	// tests' freed CQs may be there too, so CQs are made (and kept) until
	// one has taken a stale watch's struct.
	var live []rdma.CQ
	defer func() {
		for _, c := range live {
			_ = c.Destroy()
		}
	}()
	reused := false
	for i := 0; i < 4096 && !reused; i++ {
		c, err := s.dev.CreateCQ(8, nil, 0)
		require.NoError(t, err)
		live = append(live, c)
		w := quietOf(c)
		for _, o := range stale {
			reused = reused || o.ProbeArg == w.ProbeArg
		}
	}
	require.True(t, reused, "no new CQ took a freed struct")
	// Churn: CQs made and destroyed while the stale probes go on.
	for i := 0; i < 200; i++ {
		c, err := s.dev.CreateCQ(8, nil, 0)
		require.NoError(t, err)
		quietOf(c)
		require.NoError(t, c.Destroy())
		if i%50 == 0 {
			runtime.GC()
		}
	}
	stop.Store(true)
	wg.Wait()
	require.Zero(t, said.Load(), "a stale watch's probe said empty")
	for _, w := range stale {
		require.False(t, probeQuiet(w))
	}
}
