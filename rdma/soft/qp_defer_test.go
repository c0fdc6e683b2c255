package soft

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// deferredPair connects two shared-memory ends with a 1 MiB source at a
// and a 1 MiB target at b, the source filled with a pattern.
func deferredPair(t *testing.T) (a, b *end, sb, rb []byte, smr, rmr rdma.MR) {
	a = newEnd(t, rdma.Params{"transport": "shm"})
	b = newEnd(t, rdma.Params{"transport": "shm"})
	connect(t, a, b, nil, nil)
	const n = 1 << 20
	sb, smr = a.buf(t, n, allAccess)
	rb, rmr = b.buf(t, n, allAccess)
	for i := range sb {
		sb[i] = byte(i*7 + 1)
	}
	return
}

func bigWrite(sb, rb []byte, smr, rmr rdma.MR) *rdma.SendWR {
	return &rdma.SendWR{WRID: 1, Opcode: rdma.WRRDMAWrite, Flags: rdma.SendSignaled,
		SGL: []rdma.SGE{sge(sb, smr)}, RemoteAddr: BufAddr(rb), RKey: rmr.RKey()}
}

// A large one-sided access leaves the post: the post returns with the
// target untouched, and the initiator's next Poll performs it and the
// send queued behind it, completing both in that Poll; the target sees
// the send only after the write's data.
func TestLargeAccessIssuedByPoll(t *testing.T) {
	defer func(d time.Duration) { deferredIssueFallback = d }(deferredIssueFallback)
	deferredIssueFallback = time.Hour // the watcher sleeps: only a Poll issues
	a, b, sb, rb, smr, rmr := deferredPair(t)
	msg, mmr := a.buf(t, 8, allAccess)
	in, imr := b.buf(t, 8, allAccess)
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 7, SGL: []rdma.SGE{sge(in, imr)}}))

	require.NoError(t, a.qp.PostSend(bigWrite(sb, rb, smr, rmr)))
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 2, Opcode: rdma.WRSend, Flags: rdma.SendSignaled,
		SGL: []rdma.SGE{sge(msg, mmr)}}))
	require.Zero(t, rb[0]|rb[len(rb)-1], "the post performed the access")
	pollNone(t, b.rcq, 50*time.Millisecond) // the send waits behind the write

	var wc [4]rdma.WC
	k := a.scq.Poll(wc[:])
	require.GreaterOrEqual(t, k, 1, "the Poll that performs the access completes it")
	require.Equal(t, uint64(1), wc[0].WRID)
	require.Equal(t, rdma.WCSuccess, wc[0].Status)
	require.True(t, bytes.Equal(sb, rb), "the write's data at the target")
	r := pollN(t, b.rcq, 1)
	require.Equal(t, rdma.WCSuccess, r[0].Status)
	if k == 1 {
		require.Equal(t, uint64(2), pollN(t, a.scq, 1)[0].WRID)
	}
}

// A consumer that posts a large access and then never calls the device
// again still sees it happen: the device's watcher issues it.
func TestLargeAccessWithoutPoll(t *testing.T) {
	a, b, sb, rb, smr, rmr := deferredPair(t)
	require.NoError(t, a.qp.PostSend(bigWrite(sb, rb, smr, rmr)))
	waitFor(t, "the write's data at the target, the initiator not polling", func() bool {
		return bytes.Equal(sb, rb)
	}, nil)
	require.Equal(t, rdma.WCSuccess, pollN(t, a.scq, 1)[0].Status)
	_ = b
}
