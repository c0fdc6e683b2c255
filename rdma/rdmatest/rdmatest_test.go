package rdmatest

import "testing"

// The suite runs over the reference backend in two variants: every
// optional feature, and none (the skips and the no-capability branches).
var memBackends = []Backend{memBackend(memFull), memBackend(memMin)}

func TestMain(m *testing.M) { Main(m) }

func TestConformance(t *testing.T) {
	for _, b := range memBackends {
		t.Run(b.Name, func(t *testing.T) { Run(t, b) })
	}
}

func BenchmarkConformance(b *testing.B) {
	for _, be := range memBackends {
		b.Run(be.Name, func(b *testing.B) { Bench(b, be) })
	}
}
