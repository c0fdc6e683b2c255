package core

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func relayOf(from, to *IA) *relay {
	relays.Lock()
	defer relays.Unlock()
	return relays.m[relayKey{from, to}]
}

// waitRung waits (bounded) until d's count differs from seq.
func waitRung(t *testing.T, d *scriptDoorbell, seq uint32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for d.Seq() == seq {
		require.True(t, time.Now().Before(deadline), "the other IA's doorbell was never rung")
		time.Sleep(time.Millisecond)
	}
}

// An EP of one IA reporting to EVDs of another: created and modified with
// them, the EVDs are in use, the EP's IA's doorbell is relayed to theirs
// while the EP feeds them, and the relay stops with the EP or with either
// IA.
func TestEVDsOfAnotherIA(t *testing.T) {
	a, adev, _ := scriptIA(t)
	b, bdev, _ := scriptIA(t)
	pz, err := a.CreatePZ()
	require.NoError(t, err)
	dto, err := b.CreateEVD(8, EVDDTO, nil)
	require.NoError(t, err)
	conn, err := b.CreateEVD(8, EVDConnection, nil)
	require.NoError(t, err)
	cr, err := b.CreateEVD(8, EVDCR, nil)
	require.NoError(t, err)

	_, err = a.CreateEP(EPConfig{PZ: pz, RecvEVD: conn})
	assert.Equal(t, ErrHandle(SubHandleEVDRecv), err, "the kind of EVD still matters")
	assert.Nil(t, relayOf(a, b))
	ep, err := a.CreateEP(EPConfig{PZ: pz, RecvEVD: dto, ReqEVD: dto, ConnEVD: conn})
	require.NoError(t, err)
	assert.Equal(t, ErrState(SubStateEVDInUse), dto.Free())
	assert.Equal(t, ErrState(SubStateEVDInUse), conn.Free())
	r := relayOf(a, b)
	require.NotNil(t, r)
	assert.Equal(t, 2, r.refs, "receive and request streams feed the EVD")
	seq := bdev.db.Seq()
	adev.db.Ring()
	waitRung(t, &bdev.db, seq)

	psp, _, err := a.CreatePSP(7, false, cr, PSPConsumer)
	require.NoError(t, err, "a PSP reports to a request EVD of another IA")
	assert.Equal(t, ErrState(SubStateEVDInUse), cr.Free())
	require.NoError(t, psp.Free())
	require.NoError(t, cr.Free())

	// dat_ep_modify moves the streams to this IA's EVD and back.
	own, err := a.CreateEVD(8, EVDDTO, nil)
	require.NoError(t, err)
	require.NoError(t, ep.Modify(ep.Attr(), EPHandles{SetRecvEVD: true, RecvEVD: own, SetReqEVD: true, ReqEVD: own}))
	assert.Nil(t, relayOf(a, b), "no stream feeds b any more")
	require.NoError(t, dto.Free())
	dto, err = b.CreateEVD(8, EVDDTO, nil)
	require.NoError(t, err)
	require.NoError(t, ep.Modify(ep.Attr(), EPHandles{SetRecvEVD: true, RecvEVD: dto}))
	require.NotNil(t, relayOf(a, b))
	assert.Equal(t, 1, relayOf(a, b).refs)

	require.NoError(t, ep.Free())
	assert.Nil(t, relayOf(a, b))
	require.NoError(t, dto.Free())
	require.NoError(t, conn.Free())

	// Closing the EVDs' IA under a live EP stops the relay; the EP goes
	// on, and goes away cleanly with its own IA.
	dto, err = b.CreateEVD(8, EVDDTO, nil)
	require.NoError(t, err)
	_, err = a.CreateEP(EPConfig{PZ: pz, RecvEVD: dto, ReqEVD: dto})
	require.NoError(t, err)
	r = relayOf(a, b)
	require.NotNil(t, r)
	require.NoError(t, b.Close(false))
	assert.Nil(t, relayOf(a, b))
	select {
	case <-r.done:
	default:
		t.Fatal("the relay still runs after its IA closed")
	}
	_, err = a.CreateEP(EPConfig{PZ: pz, RecvEVD: dto})
	assert.Equal(t, ErrHandle(SubHandleEVDRecv), err, "an EVD of a closed IA")
	require.NoError(t, a.Close(false))
}
