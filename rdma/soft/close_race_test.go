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
