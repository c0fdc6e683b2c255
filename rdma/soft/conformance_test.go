package soft

import (
	"testing"

	"godat/rdma"
	"godat/rdma/rdmatest"
)

// The conformance suite over each wire: shared memory, TCP, and auto (two
// auto devices of one host connect through shared memory; auto against a
// TCP-only peer is TestAutoPicksWire in tcp_test.go).
var backends = []rdmatest.Backend{
	rdmatest.Registered("soft-shm", "soft", rdma.Params{"transport": "shm"}),
	rdmatest.Registered("soft-tcp", "soft", rdma.Params{"transport": "tcp"}),
	rdmatest.Registered("soft-auto", "soft", rdma.Params{"transport": "auto"}),
}

func TestMain(m *testing.M) {
	if runHelper() { // a helper process of xproc_test.go
		return
	}
	rdmatest.Main(m, backends...)
}

func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) { rdmatest.Run(t, b) })
	}
}

// BenchmarkConformance runs the suite's benchmarks (an empty Poll over 1
// and 1024 QPs) on each wire.
func BenchmarkConformance(b *testing.B) {
	for _, be := range backends {
		b.Run(be.Name, func(b *testing.B) { rdmatest.Bench(b, be) })
	}
}
