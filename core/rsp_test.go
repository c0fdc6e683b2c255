package core

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A request the RSP cannot deliver (its CR EVD is full) leaves the reserved
// EP reserved; if dat_rsp_free runs while that request is on its way, the
// EP ends unconnected, as dat_rsp_free leaves a reserved EP, and not stuck
// in the passive-pending state.
func TestRSPUndeliveredRequestReleasesEP(t *testing.T) {
	ia, dev, _ := scriptIA(t)
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
	r := dev.request(t, qual, nil)
	require.Equal(t, 1, r.rejects())
	p, err := ep.Query()
	require.NoError(t, err)
	require.Equal(t, EPReserved, p.State)

	// The same, with the RSP freed while the refused request is answered.
	dev.deliver(t, &scriptReq{qual: qual, onReject: func() { require.NoError(t, rsp.Free()) }})
	p, err = ep.Query()
	require.NoError(t, err)
	require.Equal(t, EPUnconnected, p.State)
	require.NoError(t, ep.Free())
}
