// Package rdmatest is the conformance suite of the transport contract in
// package rdma: every backend runs it from its own test file, so that the
// core can rely on what the contract's doc comments promise whatever the
// backend (the software provider over shared memory or TCP, libibverbs over
// Soft-RoCE or a real HCA).
//
// A backend's test file:
//
//	var backends = []rdmatest.Backend{rdmatest.Registered("soft-shm", "soft", rdma.Params{"transport": "shm"})}
//
//	func TestMain(m *testing.M) { rdmatest.Main(m, backends...) }
//
//	func TestConformance(t *testing.T) {
//		for _, b := range backends {
//			t.Run(b.Name, func(t *testing.T) { rdmatest.Run(t, b) })
//		}
//	}
//
// The suite keeps to what a backend inside a small VM can do: two devices
// of one process connect to each other, the only other processes are the
// peers of the cross-process tests (started through Main), every wait has
// a bound (30s, or GODAT_RDMATEST_BOUND), nothing asserts on time, and a
// test that needs an optional feature skips, naming the capability, when
// the device lacks it. Bench holds the suite's benchmarks (they assert
// nothing). KNOWN.md lists the open disagreements with backends.
package rdmatest

import (
	"fmt"
	"os"
	"testing"

	"godat/rdma"
)

// Backend is what the suite needs to know of a backend.
type Backend struct {
	// Name labels the backend in test names and, for Main, names it to the
	// peer process: it must be unique among the backends given to Main.
	Name string
	// Open opens a device whose asynchronous events go to async. Two
	// devices Open returns must be able to connect to each other, and a
	// device opened by the same Open in another process (a peer started by
	// Main) must be able to connect to them.
	Open func(async rdma.AsyncHandler) (rdma.Device, error)
	// Pinned says that registration pins the memory (verbs does): a region
	// unmapped after registration stays readable and writable by the
	// device, so the tests of work requests on unmapped regions are
	// skipped. The software backend pins nothing and must report such a
	// request as a local protection or access error.
	Pinned bool
	// Allocates says that posts and polls allocate (the suite's in-memory
	// reference backend, which appends to plain slices): the allocation
	// test then checks that it sees them, which shows it able to fail.
	Allocates bool
}

// Registered is the Backend that opens the backend registered in package
// rdma under backend, with params p.
func Registered(name, backend string, p rdma.Params) Backend {
	return Backend{Name: name, Open: func(async rdma.AsyncHandler) (rdma.Device, error) {
		return rdma.Open(backend, p, async)
	}}
}

// mainBackends are the backends Main was given: only those can start a
// peer process.
var mainBackends = map[string]Backend{}

// Main is a backend's TestMain: in a peer process started by the suite it
// plays the peer's scripted part and exits; otherwise it runs the tests.
// Backends not given to Main skip the tests that need a peer process.
func Main(m *testing.M, backends ...Backend) {
	if name := os.Getenv(envPeer); name != "" {
		for _, b := range backends {
			if b.Name == name {
				os.Exit(runPeer(b))
			}
		}
		fmt.Fprintf(os.Stderr, "rdmatest: peer: no backend %q given to rdmatest.Main\n", name)
		os.Exit(2)
	}
	for _, b := range backends {
		mainBackends[b.Name] = b
	}
	os.Exit(m.Run())
}

// suite is one run of the conformance tests over a backend.
type suite struct {
	b     Backend
	xproc bool // Main knows the backend: peers can be started
}

type test struct {
	name string
	run  func(s *suite, t *testing.T)
}

// groups lists the conformance tests by object family; each is an
// independent subtest (its own devices, connections and memory).
var groups = []struct {
	name  string
	tests []test
}{
	{"Device", deviceTests},
	{"Memory", memoryTests},
	{"CQ", cqTests},
	{"Channel", channelTests},
	{"QP", qpTests},
	{"State", stateTests},
	{"Data", dataTests},
	{"Order", orderTests},
	{"Errors", errorTests},
	{"SRQ", srqTests},
	{"CM", cmTests},
	{"Async", asyncTests},
	{"Optional", optionalTests},
	{"Peer", peerTests},
}

// Run runs every conformance test over b, as subtests named by family and
// test (e.g. Order/SharedRecvCQRounds).
func Run(t *testing.T, b Backend) {
	if b.Open == nil {
		t.Fatal("rdmatest: Backend.Open is nil")
	}
	_, xproc := mainBackends[b.Name]
	s := &suite{b: b, xproc: xproc}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) { tc.run(s, t) })
			}
		})
	}
}
