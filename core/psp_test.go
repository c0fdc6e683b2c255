package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A DAT_PSP_PROVIDER_FLAG PSP gives each request an EP with no PZ and no
// EVDs, the IA's default attributes, in the tentative state; accepted with
// no EP named once it has a PZ, it is the consumer's; rejected, it is
// freed.
func TestProviderPSP(t *testing.T) {
	f := newFixture(t, nil)
	defer f.close(t)
	crEVD, err := f.ia.CreateEVD(4, EVDCR, nil)
	require.NoError(t, err)
	const q = 0x13005
	psp, _, err := f.ia.CreatePSP(q, false, crEVD, PSPProvider)
	require.NoError(t, err)
	pp, err := psp.Query()
	require.NoError(t, err)
	assert.Equal(t, PSPProvider, pp.Flags)

	req := f.fab.request(t, q, []byte("pd"))
	ev := waitEvent(t, crEVD)
	require.Equal(t, EventConnectionRequest, ev.Number)
	cp, err := ev.CR.Query()
	require.NoError(t, err)
	ep := cp.EP
	require.NotNil(t, ep)
	p, err := ep.Query()
	require.NoError(t, err)
	assert.Equal(t, EPTentativeConnectionPending, p.State)
	assert.Nil(t, p.PZ)
	assert.Nil(t, p.RecvEVD)
	assert.Nil(t, p.ReqEVD)
	assert.Nil(t, p.ConnEVD)
	assert.Equal(t, f.ia.effective(f.ia.DefaultEPAttr(), false), p.Attr)
	assert.Same(t, f.ia.ownPD, ep.qp.(*fakeQP).attr.PD, "no PZ's protection domain")
	assert.Equal(t, ErrState(SubStateEPTentConnPending), ep.Free())

	assert.Equal(t, ErrHandle(SubHandleEP), ev.CR.Accept(nil, nil), "no PZ yet")
	assert.Equal(t, ErrHandle(SubHandleEP), ev.CR.Accept(f.ep, nil), "the request carries its EP")
	require.NoError(t, ep.Modify(ep.Attr(), EPHandles{SetPZ: true, PZ: f.pz, SetConnEVD: true, ConnEVD: f.evd,
		SetRecvEVD: true, RecvEVD: f.evd, SetReqEVD: true, ReqEVD: f.evd}))
	assert.Same(t, f.pz.pd, ep.qp.(*fakeQP).attr.PD)
	assert.Equal(t, ErrState(SubStatePZInUse), f.pz.Free())
	require.NoError(t, ev.CR.Accept(nil, nil))
	assert.Same(t, ep.qp, req.accepted)
	_, err = ev.CR.Query()
	assert.Equal(t, ErrHandle(SubHandleCR), err)

	req2 := f.fab.request(t, q, nil)
	ev = waitEvent(t, crEVD)
	cp, err = ev.CR.Query()
	require.NoError(t, err)
	ep2 := cp.EP
	require.NotNil(t, ep2)
	require.NotSame(t, ep, ep2)
	require.NoError(t, ev.CR.Reject())
	assert.Equal(t, 1, req2.rejects())
	_, err = ep2.Query()
	assert.Equal(t, ErrHandle(SubHandleEP), err, "the provider freed the rejected request's EP")
	require.NoError(t, psp.Free())
}
