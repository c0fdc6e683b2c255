package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A request the RSP cannot deliver (its CR EVD is full) leaves the reserved
// EP reserved; if dat_rsp_free runs while that request is on its way, the
// EP ends unconnected, as dat_rsp_free leaves a reserved EP, and not stuck
// in the passive-pending state.
func TestRSPUndeliveredRequestReleasesEP(t *testing.T) {
	ia, fab, _ := scriptIA(t)
	pz, err := ia.CreatePZ()
	require.NoError(t, err)
	evd, err := ia.CreateEVD(8, EVDDTO|EVDConnection, nil)
	require.NoError(t, err)
	cr, err := ia.CreateEVD(1, EVDCR|EVDSoftware, nil)
	require.NoError(t, err)
	ep, err := ia.CreateEP(EPConfig{PZ: pz, RecvEVD: evd, ReqEVD: evd, ConnEVD: evd})
	require.NoError(t, err)
	const qual = 0xB0DE
	rsp, err := ia.CreateRSP(qual, ep, cr)
	require.NoError(t, err)

	// Fill the CR EVD's one slot with a software event, so the backlog is full.
	require.NoError(t, cr.PostSE(1))
	fab.mu.Lock()
	l := fab.lis[qual]
	fab.mu.Unlock()
	r := fab.request(t, qual, nil)
	require.Eventually(t, func() bool { return r.rejects() == 1 }, waitFor, time.Millisecond)
	p, err := ep.Query()
	require.NoError(t, err)
	require.Equal(t, EPReserved, p.State)

	// The same, with the RSP freed while the refused request is answered.
	freed := make(chan error, 1)
	r = fab.deliver(t, &fakeReq{l: l, onReject: func() { freed <- rsp.Free() }})
	require.Eventually(t, func() bool { return r.rejects() == 1 }, waitFor, time.Millisecond)
	require.NoError(t, <-freed)
	p, err = ep.Query()
	require.NoError(t, err)
	require.Equal(t, EPUnconnected, p.State)
	require.NoError(t, ep.Free())
}
