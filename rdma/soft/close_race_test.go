package soft

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// A CQ polled by other goroutines while its device closes: Close unmaps
// the bell that every Poll reads (and a drain writes), so it must wait
// for the Polls under way. Before it did, a Poll that had seen the CQ
// alive could read the unmapped bell (a fault that kills the process) or
// write through it into whatever was mapped there next.
func TestPollWhileDeviceCloses(t *testing.T) {
	const rounds = 300
	for r := 0; r < rounds; r++ {
		d, err := rdma.Open("soft", rdma.Params{"transport": "shm"}, nil)
		require.NoError(t, err)
		q, err := d.CreateCQ(16, nil, 0)
		require.NoError(t, err)
		var stop atomic.Bool
		var wg sync.WaitGroup
		var started sync.WaitGroup
		for g := 0; g < 3; g++ {
			wg.Add(1)
			started.Add(1)
			go func() {
				defer wg.Done()
				var wc [4]rdma.WC
				started.Done()
				for !stop.Load() {
					q.Poll(wc[:])
				}
			}()
		}
		started.Wait()
		require.NoError(t, d.Close())
		stop.Store(true)
		wg.Wait()
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
		var stop atomic.Bool
		var wg sync.WaitGroup
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var wc [4]rdma.WC
				for !stop.Load() {
					q.Poll(wc[:])
				}
			}()
		}
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
		stop.Store(true)
		wg.Wait()
		require.Equal(t, uint32(bellMagic), dev.bell.ld32(bellOffMagic))
		require.Zero(t, dev.in.head.Load())
		require.Zero(t, dev.bell.ld64(bellOffHead))
		require.NoError(t, d2.Close())
	}
}
