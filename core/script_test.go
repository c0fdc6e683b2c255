package core

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Scripted fixtures: an IA on a scripted fabric (fake_test.go), where the
// test decides when and how each request completes (any status) and which
// connection events arrive, and when.

// fixture is an IA with a PZ, one EVD for DTOs and connection events of
// one EP, and the EP's queue pair.
type fixture struct {
	ia  *IA
	fab *fabric
	h   *countHandles
	pz  *PZ
	evd *EVD
	ep  *EP
	qp  *fakeQP
}

func newFixture(t *testing.T, attr *EPAttr) *fixture {
	t.Helper()
	return newFixtureOn(t, makeFabric(true), attr)
}

// newFixtureOn is newFixture over the scripted fabric fab.
func newFixtureOn(t *testing.T, fab *fabric, attr *EPAttr) *fixture {
	t.Helper()
	f := &fixture{}
	f.ia, f.fab, f.h = scriptIAOn(t, fab)
	var err error
	f.pz, err = f.ia.CreatePZ()
	require.NoError(t, err)
	f.evd, err = f.ia.CreateEVD(16, EVDDTO|EVDConnection, nil)
	require.NoError(t, err)
	f.ep, err = f.ia.CreateEP(EPConfig{PZ: f.pz, RecvEVD: f.evd, ReqEVD: f.evd, ConnEVD: f.evd, Attr: attr})
	require.NoError(t, err)
	f.qp = f.ep.qp.(*fakeQP)
	return f
}

// connect brings the fixture's EP to the connected state (active side).
func (f *fixture) connect(t *testing.T) {
	t.Helper()
	require.NoError(t, f.ep.Connect(netip.MustParseAddrPort("127.0.0.1:0"), 0xB0DE, time.Second, nil))
	f.qp.establish([]byte("hi"))
	var ev Event
	_, err := f.evd.Wait(waitFor, 1, &ev)
	require.NoError(t, err)
	require.Equal(t, EventConnEstablished, ev.Number)
}

func (f *fixture) close(t *testing.T) {
	t.Helper()
	require.NoError(t, f.ia.Close(false))
	require.Zero(t, f.h.count(), "handles left after an abrupt close")
}

var seg1 = []Segment{{LMRContext: 1, Addr: 4096, Length: 64}}
