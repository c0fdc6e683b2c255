package verbs

import (
	"errors"
	"testing"

	"godat/rdma"
	"godat/rdma/rdmatest"
)

// backend is the verbs backend for the conformance suite: registration
// pins memory (the device keeps access to a region the process unmapped).
var backend = rdmatest.Backend{
	Name:   "verbs",
	Open:   func(async rdma.AsyncHandler) (rdma.Device, error) { return rdma.Open("verbs", params(), async) },
	Pinned: true,
}

func TestMain(m *testing.M) { rdmatest.Main(m, backend) }

// TestConformance runs the rdmatest suite over the device; without one it
// skips, saying why (make check-verbs runs it in a VM with Soft-RoCE).
func TestConformance(t *testing.T) {
	d, err := backend.Open(nil)
	if errors.Is(err, rdma.ErrNoDevice) {
		t.Skipf("no RDMA device: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	_ = d.Close()
	rdmatest.Run(t, backend)
}
