package soft

import (
	"bytes"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// usage is what a cycle must give back: mappings, descriptors, goroutines.
type usage struct{ maps, fds, goroutines int }

func measure(t *testing.T) usage {
	t.Helper()
	b, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	return usage{maps: bytes.Count(b, []byte{'\n'}), fds: len(fds), goroutines: runtime.NumGoroutine()}
}

// settled waits (bounded) until descriptors and goroutines are back to
// before (connections linger up to lingerTime) and mappings within slack
// (the Go runtime maps memory of its own).
func settled(t *testing.T, before usage, cycles int) {
	t.Helper()
	deadline := time.Now().Add(lingerTime + testWait)
	var now usage
	for {
		runtime.GC()
		now = measure(t)
		if now.fds <= before.fds && now.goroutines <= before.goroutines && now.maps <= before.maps+cycles/20 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %d cycles: %+v, before %+v", cycles, now, before)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Opening and closing a device (with channels, a CQ, a listener) leaves no
// mapping, descriptor or goroutine behind.
func TestOpenCloseLeavesNothing(t *testing.T) {
	for _, tr := range []string{"shm", "tcp", "auto"} {
		t.Run(tr, func(t *testing.T) {
			const cycles = 200
			cycle := func() {
				d, err := rdma.Open("soft", rdma.Params{"transport": tr}, nil)
				require.NoError(t, err)
				ch, _ := d.CreateCompChannel()
				ch.Fd() // the eventfd and its goroutine
				_, _ = d.CreateCQ(16, ch, 0)
				cm, _ := d.CreateCMChannel()
				cm.Fd()
				_, err = d.Listen(cm, 0, true, 4, 0)
				require.NoError(t, err)
				require.NoError(t, d.Close())
			}
			cycle() // first use: lazily made runtime state
			before := measure(t)
			for i := 0; i < cycles; i++ {
				cycle()
			}
			settled(t, before, cycles)
		})
	}
}

// Connecting and disconnecting over and over leaves descriptors,
// goroutines and mappings flat.
func TestConnectionChurn(t *testing.T) {
	for _, tr := range []string{"shm", "tcp"} {
		t.Run(tr, func(t *testing.T) {
			p := rdma.Params{"transport": tr}
			a, b := newEnd(t, p), newEnd(t, p)
			l, err := b.dev.Listen(b.cm, 0, true, 4, 5)
			require.NoError(t, err)
			defer l.Close()
			const cycles = 300
			cycle := func() {
				qa, qb := a.newQP(t, nil), b.newQP(t, nil)
				require.NoError(t, qa.Connect(netip.AddrPortFrom(lo, 0), l.ServiceID(), []byte("x"), testWait))
				ev := b.event(t)
				require.Equal(t, rdma.CMConnectRequest, ev.Type)
				require.NoError(t, ev.Request.Accept(qb, nil))
				require.Equal(t, rdma.CMEstablished, a.event(t).Type)
				require.Equal(t, rdma.CMEstablished, b.event(t).Type)
				require.NoError(t, qa.Disconnect(false))
				require.Equal(t, rdma.CMDisconnected, a.event(t).Type)
				require.Equal(t, rdma.CMDisconnected, b.event(t).Type)
				require.NoError(t, qa.Destroy())
				require.NoError(t, qb.Destroy())
			}
			cycle()
			before := measure(t)
			for i := 0; i < cycles; i++ {
				cycle()
			}
			settled(t, before, cycles)
		})
	}
}

// TestChurnRSS is issue 15's measurement: GODAT_SOFT_CHURN=<cycles>
// connect/disconnect cycles over TCP, with the resident set size before and
// after (the bound: under 20 MB of growth for 10^4 cycles). Off by default.
func TestChurnRSS(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("GODAT_SOFT_CHURN"))
	if n <= 0 {
		t.Skip("set GODAT_SOFT_CHURN=<cycles>")
	}
	for _, tr := range []string{"tcp", "shm"} {
		t.Run(tr, func(t *testing.T) {
			p := rdma.Params{"transport": tr}
			a, b := newEnd(t, p), newEnd(t, p)
			l, err := b.dev.Listen(b.cm, 0, true, 4, 5)
			require.NoError(t, err)
			defer l.Close()
			rss := func() int {
				runtime.GC()
				s, _ := os.ReadFile("/proc/self/status")
				for _, ln := range strings.Split(string(s), "\n") {
					if f := strings.Fields(ln); len(f) >= 2 && f[0] == "VmRSS:" {
						kb, _ := strconv.Atoi(f[1])
						return kb
					}
				}
				return 0
			}
			start, before := time.Now(), rss()
			for i := 0; i < n; i++ {
				qa, qb := a.newQP(t, nil), b.newQP(t, nil)
				require.NoError(t, qa.Connect(netip.AddrPortFrom(lo, 0), l.ServiceID(), nil, testWait))
				require.NoError(t, b.event(t).Request.Accept(qb, nil))
				require.Equal(t, rdma.CMEstablished, a.event(t).Type)
				require.Equal(t, rdma.CMEstablished, b.event(t).Type)
				require.NoError(t, qa.Disconnect(false))
				require.Equal(t, rdma.CMDisconnected, a.event(t).Type)
				require.Equal(t, rdma.CMDisconnected, b.event(t).Type)
				require.NoError(t, qa.Destroy())
				require.NoError(t, qb.Destroy())
			}
			after := rss()
			t.Logf("%s: %d cycles in %v, RSS %d KiB -> %d KiB (%+d KiB)", tr, n, time.Since(start).Round(time.Millisecond), before, after, after-before)
			require.Less(t, after-before, 20<<10, "RSS growth")
		})
	}
}
