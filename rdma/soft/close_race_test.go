package soft

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// pollers starts n goroutines polling q; stop ends them and waits.
func pollers(q rdma.CQ, n int) (stop func()) {
	var done atomic.Bool
	var wg, started sync.WaitGroup
	for g := 0; g < n; g++ {
		wg.Add(1)
		started.Add(1)
		go func() {
			defer wg.Done()
			var wc [4]rdma.WC
			started.Done()
			for !done.Load() {
				q.Poll(wc[:])
			}
		}()
	}
	started.Wait()
	return func() {
		done.Store(true)
		wg.Wait()
	}
}

// A CQ polled by other goroutines while its device closes: a Poll that has
// seen the CQ alive reads the bell (and a drain writes it) after Close.
// The bell's range stays mapped (retireBell), and a drain checks under
// inbound.mu that the device is open: no such Poll faults, nor writes into
// whatever is mapped there next (TestPollAcrossBellReuse).
func TestPollWhileDeviceCloses(t *testing.T) {
	const rounds = 300
	for r := 0; r < rounds; r++ {
		d, err := rdma.Open("soft", rdma.Params{"transport": "shm"}, nil)
		require.NoError(t, err)
		q, err := d.CreateCQ(16, nil, 0)
		require.NoError(t, err)
		stop := pollers(q, 3)
		require.NoError(t, d.Close())
		stop()
	}
}

// A CQ polled while it is destroyed and its device closed, by pollers that
// go on polling while the next device opens: a bell's range is reused by
// the next device (retireBell), so a late Poll reads zeros or that
// device's queue and must write neither (the new device keeps its magic,
// its queue and head).
func TestPollAcrossBellReuse(t *testing.T) {
	const rounds = 100
	for r := 0; r < rounds; r++ {
		d, err := rdma.Open("soft", rdma.Params{"transport": "shm"}, nil)
		require.NoError(t, err)
		q, err := d.CreateCQ(16, nil, 0)
		require.NoError(t, err)
		stop := pollers(q, 2)
		require.NoError(t, q.Destroy())
		require.NoError(t, d.Close())
		d2, err := rdma.Open("soft", rdma.Params{"transport": "shm"}, nil)
		require.NoError(t, err)
		dev := d2.(*device)
		q2, err := d2.CreateCQ(16, nil, 0)
		require.NoError(t, err)
		var wc [4]rdma.WC
		for i := 0; i < 100; i++ {
			require.Zero(t, q2.Poll(wc[:]))
		}
		stop()
		require.Equal(t, uint32(bellMagic), dev.bell.ld32(bellOffMagic))
		require.Zero(t, dev.in.head.Load())
		require.Zero(t, dev.bell.ld64(bellOffHead))
		require.NoError(t, d2.Close())
	}
}
