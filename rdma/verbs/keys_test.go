package verbs

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// The post-time checks need no device: they read the backend's own record
// of the registrations. The conformance suite checks them through real
// posts in the VM (Faults/BadLocalSegments, SRQ/PostChecks).
func TestKeyTableCheck(t *testing.T) {
	var tab keyTable
	var c keyCache
	p1, p2 := &pd{}, &pd{}
	tab.add(7, keyRegion{pd: p1, access: rdma.AccessLocalWrite, addr: 0x1000, len: 0x100})
	tab.add(9, keyRegion{pd: p1, addr: 0x2000, len: 0x100})
	tab.add(11, keyRegion{pd: p2, access: rdma.AccessLocalWrite, addr: 0x3000, len: 0x100})
	seg := func(key uint32, addr uint64, n uint32) []rdma.SGE {
		return []rdma.SGE{{Addr: addr, Length: n, LKey: key}}
	}
	for _, tc := range []struct {
		name string
		sgl  []rdma.SGE
		need rdma.Access
		want error
	}{
		{"whole region", seg(7, 0x1000, 0x100), rdma.AccessLocalWrite, nil},
		{"read needs no right", seg(9, 0x2010, 8), 0, nil},
		{"unknown key", seg(8, 0x1000, 8), 0, rdma.ErrPrivileges},
		{"no local write", seg(9, 0x2000, 8), rdma.AccessLocalWrite, rdma.ErrPrivileges},
		{"another PD", seg(11, 0x3000, 8), 0, rdma.ErrProtection},
		{"past the end", seg(7, 0x10f9, 8), 0, rdma.ErrInvalid},
		{"before the start", seg(7, 0xfff, 8), 0, rdma.ErrInvalid},
		{"wrapping", seg(7, ^uint64(0)-3, 8), 0, rdma.ErrInvalid},
		{"empty segment unchecked", seg(8, 0, 0), rdma.AccessLocalWrite, nil},
		{"second segment bad", append(seg(7, 0x1000, 8), seg(11, 0x3000, 8)...), 0, rdma.ErrProtection},
	} {
		// Twice: the second time through the cache the first one filled.
		for round := 0; round < 2; round++ {
			err := tab.check(&c, p1, tc.sgl, tc.need)
			if tc.want == nil {
				require.NoError(t, err, "%s (round %d)", tc.name, round)
			} else {
				require.ErrorIs(t, err, tc.want, "%s (round %d)", tc.name, round)
			}
		}
	}
}

// A cached region stops counting once it is deregistered, and a new
// registration under the same key (a device may reuse lkeys) is looked up
// afresh.
func TestKeyTableCacheInvalidated(t *testing.T) {
	var tab keyTable
	var c keyCache
	p := &pd{}
	s := []rdma.SGE{{Addr: 0x1000, Length: 8, LKey: 5}}
	tab.add(5, keyRegion{pd: p, access: rdma.AccessLocalWrite, addr: 0x1000, len: 0x100})
	require.NoError(t, tab.check(&c, p, s, rdma.AccessLocalWrite))
	tab.remove(5)
	require.ErrorIs(t, tab.check(&c, p, s, 0), rdma.ErrPrivileges)
	tab.add(5, keyRegion{pd: p, addr: 0x1000, len: 0x100})
	require.ErrorIs(t, tab.check(&c, p, s, rdma.AccessLocalWrite), rdma.ErrPrivileges, "the new region has no local write")
	require.NoError(t, tab.check(&c, p, s, 0))
}

// Posts to one queue from several goroutines share its cache (one takes
// it, the others look in the table) while another region comes and goes:
// each post gets its own segment's verdict (run with -race).
func TestKeyTableConcurrentPosts(t *testing.T) {
	var tab keyTable
	var c keyCache
	p := &pd{}
	for k := uint32(1); k <= 4; k++ {
		tab.add(k, keyRegion{pd: p, access: rdma.AccessLocalWrite, addr: uint64(k) << 20, len: 4096})
	}
	stop := make(chan struct{})
	churned := make(chan struct{})
	go func() {
		defer close(churned)
		for {
			select {
			case <-stop:
				return
			default:
			}
			tab.add(5, keyRegion{pd: p, addr: 5 << 20, len: 4096})
			tab.remove(5)
		}
	}()
	var posters sync.WaitGroup
	errs := make(chan error, 4)
	for g := uint32(1); g <= 4; g++ {
		posters.Add(1)
		go func() {
			defer posters.Done()
			good := []rdma.SGE{{Addr: uint64(g) << 20, Length: 64, LKey: g}}
			bad := []rdma.SGE{{Addr: uint64(g)<<20 + 4090, Length: 64, LKey: g}}
			for i := 0; i < 20000; i++ {
				if err := tab.check(&c, p, good, rdma.AccessLocalWrite); err != nil {
					errs <- err
					return
				}
				if err := tab.check(&c, p, bad, rdma.AccessLocalWrite); err != rdma.ErrInvalid {
					errs <- err
					return
				}
			}
		}()
	}
	posters.Wait()
	close(stop)
	<-churned
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}
