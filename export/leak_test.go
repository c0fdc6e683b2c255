//go:build cgotest

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// usage is what an IA's life must give back: mapping lines of
// /proc/self/maps, open descriptors, goroutines; with the mapped and
// resident sizes for the record.
type usage struct {
	maps, fds, goroutines int
	vmKiB, rssKiB         int
}

func measure(t *testing.T) usage {
	t.Helper()
	b, err := os.ReadFile("/proc/self/maps")
	require.NoError(t, err)
	fds, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	u := usage{maps: bytes.Count(b, []byte{'\n'}), fds: len(fds), goroutines: runtime.NumGoroutine()}
	s, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for _, ln := range strings.Split(string(s), "\n") {
		f := strings.Fields(ln)
		if len(f) >= 2 && f[0] == "VmSize:" {
			u.vmKiB, _ = strconv.Atoi(f[1])
		}
		if len(f) >= 2 && f[0] == "VmRSS:" {
			u.rssKiB, _ = strconv.Atoi(f[1])
		}
	}
	return u
}

// mapSlack is how many mapping lines the Go runtime may add of its own
// over a run (heap arenas, stacks); a leak of one mapping per cycle
// exceeds it within the first few dozen of the cycles run.
const mapSlack = 32

// Opening and closing an IA (with a PZ, EVDs, an EP and a listening PSP)
// over and over leaves mappings, descriptors and goroutines flat: every
// dat_ia_close gives back what its dat_ia_open took (issue 15: each cycle
// left the doorbell's 4 KiB mapping behind, until vm.max_map_count).
// GODAT_IA_CYCLES sets the number of cycles per IA (10^5 for the issue's
// measurement; make check runs 2000).
func TestIAOpenCloseLeavesNothing(t *testing.T) {
	cycles := 2000
	if n, err := strconv.Atoi(os.Getenv("GODAT_IA_CYCLES")); err == nil && n > 0 {
		cycles = n
	}
	conf, err := filepath.Abs("../dat.conf")
	require.NoError(t, err)
	t.Setenv("DAT_OVERRIDE", conf)
	for _, name := range []string{"godat-shm", "godat-tcp", "godat"} {
		t.Run(name, func(t *testing.T) {
			cycle := func() {
				ret, step := iaCycle(name)
				require.Zero(t, ret, "step %d: 0x%08x", step, ret)
			}
			before, now, took := runCycles(t, cycles, cycle)
			t.Logf("%s: %d cycles in %v; maps %d -> %d, fds %d -> %d, goroutines %d -> %d, VmSize %d -> %d KiB, VmRSS %d -> %d KiB",
				name, cycles, took.Round(time.Millisecond), before.maps, now.maps, before.fds, now.fds,
				before.goroutines, now.goroutines, before.vmKiB, now.vmKiB, before.rssKiB, now.rssKiB)
			require.LessOrEqual(t, now.fds, before.fds, "descriptors")
			require.LessOrEqual(t, now.goroutines, before.goroutines, "goroutines")
			require.LessOrEqual(t, now.maps, before.maps+mapSlack, "mappings")
		})
	}
}

// Connecting and disconnecting over and over (two EPs of one IA through
// its PSP, over 127.0.0.1) leaves descriptors, goroutines and mappings
// flat, and the resident set within 20 MB of where it began (issue 15:
// 10^4 TCP cycles grew it from 9 MB to 254 MB). 10^4 cycles per IA, the
// issue's count (about 10 s each on a 2-CPU machine); GODAT_CONN_CYCLES
// sets another.
func TestConnectionChurnLeavesNothing(t *testing.T) {
	cycles := 10000
	if n, err := strconv.Atoi(os.Getenv("GODAT_CONN_CYCLES")); err == nil && n > 0 {
		cycles = n
	}
	conf, err := filepath.Abs("../dat.conf")
	require.NoError(t, err)
	t.Setenv("DAT_OVERRIDE", conf)
	for _, name := range []string{"godat-tcp", "godat-shm"} {
		t.Run(name, func(t *testing.T) {
			ch, r := openChurn(name)
			require.Zero(t, r, "dat_ia_open: 0x%08x", r)
			defer func() { require.Zero(t, ch.close()) }()
			cycle := func() {
				ret, step := ch.cycle()
				require.Zero(t, ret, "step %d: 0x%08x", step, ret)
			}
			before, now, took := runCycles(t, cycles, cycle)
			t.Logf("%s: %d connect/disconnect cycles in %v; VmRSS %d -> %d KiB (%+d KiB), maps %d -> %d, fds %d -> %d, goroutines %d -> %d",
				name, cycles, took.Round(time.Millisecond), before.rssKiB, now.rssKiB, now.rssKiB-before.rssKiB,
				before.maps, now.maps, before.fds, now.fds, before.goroutines, now.goroutines)
			require.LessOrEqual(t, now.fds, before.fds, "descriptors")
			require.LessOrEqual(t, now.goroutines, before.goroutines, "goroutines")
			require.LessOrEqual(t, now.maps, before.maps+mapSlack, "mappings")
			require.Less(t, now.rssKiB-before.rssKiB, 20<<10, "resident set growth")
		})
	}
}

// runCycles runs cycle once to warm up, measures, runs it cycles times,
// then measures again once what closes asynchronously (TCP lingering,
// goroutines on their way out) has gone, waiting at most 10 s for it.
func runCycles(t *testing.T, cycles int, cycle func()) (before, now usage, took time.Duration) {
	t.Helper()
	cycle() // first use: lazily made runtime and library state
	runtime.GC()
	before = measure(t)
	start := time.Now()
	for i := 0; i < cycles; i++ {
		cycle()
	}
	took = time.Since(start)
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		now = measure(t)
		if now.fds <= before.fds && now.goroutines <= before.goroutines && now.maps <= before.maps+mapSlack ||
			time.Now().After(deadline) {
			return before, now, took
		}
		time.Sleep(20 * time.Millisecond)
	}
}
