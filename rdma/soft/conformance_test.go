package soft

import (
	"testing"

	"godat/rdma"
	"godat/rdma/rdmatest"
)

// The conformance suite over each wire: shared memory, TCP, and auto (two
// auto devices of one host connect through shared memory; auto against a
// TCP-only peer is in auto_test.go).
var backends = []rdmatest.Backend{
	rdmatest.Registered("soft-shm", "soft", rdma.Params{"transport": "shm"}),
	rdmatest.Registered("soft-tcp", "soft", rdma.Params{"transport": "tcp"}),
	rdmatest.Registered("soft-auto", "soft", rdma.Params{"transport": "auto"}),
}

func TestMain(m *testing.M) { rdmatest.Main(m, backends...) }

func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) { rdmatest.Run(t, b) })
	}
}
