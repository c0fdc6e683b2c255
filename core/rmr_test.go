package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// RMR binds follow the request completion rules: unsignalled only on an EP
// configured for it, suppressed successes make no event, and a bind on a
// disconnected EP is flushed without binding anything. A remote-write
// window registers with local write too (the transport's verbs rule).
func TestRMRBindCompletions(t *testing.T) {
	f := newFixture(t, nil)
	defer f.close(t)
	l, info, err := f.ia.CreateLMR(LMRRegion{Type: MemVirtual, Addr: 1 << 20}, 1<<16, f.pz, PrivAll)
	require.NoError(t, err)
	r, err := f.pz.CreateRMR()
	require.NoError(t, err)
	win := Segment{LMRContext: info.LMRContext, Addr: 1<<20 + 4096, Length: 4096}

	_, err = r.Bind(win, PrivRemoteWrite, f.ep, 1, 0)
	assert.Equal(t, ErrState(SubStateEPUnconnected), err)
	f.connect(t)
	_, err = r.Bind(win, PrivRemoteWrite, f.ep, 1, CompletionUnsignalled)
	assert.Equal(t, ErrArg(ArgCompletionFlags), err)

	ctx, err := r.Bind(win, PrivRemoteWrite, f.ep, 2, 0)
	require.NoError(t, err, "remote write only")
	assert.NotZero(t, ctx)
	var ev Event
	require.NoError(t, f.evd.Dequeue(&ev))
	assert.Equal(t, EventRMRBindCompletion, ev.Number)
	assert.Equal(t, uint64(2), ev.Cookie)
	assert.Same(t, r, ev.RMR)

	_, err = r.Bind(win, PrivRemoteRead, f.ep, 3, CompletionSuppress)
	require.NoError(t, err)
	requireEmpty(t, f.evd)

	f.qp.endScript(rdma.CMDisconnected, true)
	ev = waitEvent(t, f.evd)
	require.Equal(t, EventConnDisconnected, ev.Number)
	before, err := r.Query()
	require.NoError(t, err)
	other := Segment{LMRContext: info.LMRContext, Addr: 1 << 20, Length: 64}
	_, err = r.Bind(other, PrivRemoteRead, f.ep, 4, CompletionSuppress)
	require.NoError(t, err)
	require.NoError(t, f.evd.Dequeue(&ev))
	assert.Equal(t, DTOFlushed, ev.Status, "a flushed bind completes even when suppressed")
	after, err := r.Query()
	require.NoError(t, err)
	assert.Equal(t, before, after, "a flushed bind binds nothing")
	require.NoError(t, r.Free())
	require.NoError(t, l.Free())
}
