package soft

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"godat/rdma"
)

// Registration checks that the range is mapped (ErrFault otherwise),
// without touching its pages.
func TestRegMRUnmapped(t *testing.T) {
	e := newEnd(t, rdma.Params{"transport": "shm"})
	// Below mmap_min_addr nothing is ever mapped (a hole made with munmap
	// could be filled by the Go runtime at once).
	_, err := e.pd.RegMR(0x1000, 4096, rdma.AccessLocalWrite)
	require.ErrorIs(t, err, rdma.ErrFault)
	b := mapBuf(t, 4096)
	_, err = e.pd.RegMR(BufAddr(b), 4096, rdma.AccessLocalWrite)
	require.NoError(t, err, "a mapped page")
	_, err = e.pd.RegMR(0x8000, 1<<20, rdma.AccessLocalWrite)
	require.ErrorIs(t, err, rdma.ErrFault, "a range partly unmapped")
}

// BenchmarkRegMR1GiB: registering (and deregistering) a mapped, untouched
// 1 GiB region; the mapping check walks mappings, not pages.
func BenchmarkRegMR1GiB(b *testing.B) {
	d, err := rdma.Open("soft", rdma.Params{"transport": "shm"}, nil)
	require.NoError(b, err)
	defer d.Close()
	pd, _ := d.AllocPD()
	m, err := unix.Mmap(-1, 0, 1<<30, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE|unix.MAP_NORESERVE)
	require.NoError(b, err)
	defer unix.Munmap(m)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		mr, err := pd.RegMR(BufAddr(m), 1<<30, rdma.AccessLocalWrite|rdma.AccessRemoteWrite)
		if err != nil {
			b.Fatal(err)
		}
		_ = mr.Dereg()
	}
}
