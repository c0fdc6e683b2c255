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

// Over TCP a large RDMA read's request goes out with the next Poll, not in
// the post: nothing of it is queued on the wire when the post returns, the
// next Poll sends it, and the read and the send queued behind it complete
// in order with the data in place. Without a Poll the watcher sends it.
func TestTCPLargeReadIssuedByPoll(t *testing.T) {
	for _, polled := range []bool{true, false} {
		func() {
			defer func(d time.Duration) { deferredIssueFallback = d }(deferredIssueFallback)
			if polled {
				deferredIssueFallback = time.Hour // only a Poll issues
			}
			a := newEnd(t, rdma.Params{"transport": "tcp"})
			b := newEnd(t, rdma.Params{"transport": "tcp"})
			connect(t, a, b, nil, nil)
			const n = 1 << 20
			dst, dmr := a.buf(t, n, allAccess)
			src, smr := b.buf(t, n, allAccess)
			for i := range src {
				src[i] = byte(i*5 + 3)
			}
			msg, mmr := a.buf(t, 8, allAccess)
			in, imr := b.buf(t, 8, allAccess)
			require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 7, SGL: []rdma.SGE{sge(in, imr)}}))
			require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 1, Opcode: rdma.WRRDMARead, Flags: rdma.SendSignaled,
				SGL: []rdma.SGE{sge(dst, dmr)}, RemoteAddr: BufAddr(src), RKey: smr.RKey()}))
			require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 2, Opcode: rdma.WRSend, Flags: rdma.SendSignaled,
				SGL: []rdma.SGE{sge(msg, mmr)}}))
			if polled {
				p := a.qp.(*qp)
				p.mu.Lock()
				issued := p.c.rdTail
				p.mu.Unlock()
				require.Zero(t, issued, "the post issued the read")
			}
			var got []uint64
			var poll func()
			if polled {
				poll = func() {
					var wc [4]rdma.WC
					for _, w := range wc[:a.scq.Poll(wc[:])] {
						require.Equal(t, rdma.WCSuccess, w.Status)
						got = append(got, w.WRID)
					}
				}
			} else {
				waitFor(t, "the watcher's read, the initiator not polling", func() bool { return sqEmpty(a.qp) }, nil)
				for _, w := range pollN(t, a.scq, 2) {
					require.Equal(t, rdma.WCSuccess, w.Status)
					got = append(got, w.WRID)
				}
			}
			waitFor(t, "the read and the send", func() bool { return len(got) == 2 }, poll)
			require.Equal(t, []uint64{1, 2}, got)
			require.True(t, bytes.Equal(src, dst), "the read's data in place")
			require.Equal(t, uint64(7), pollN(t, b.rcq, 1)[0].WRID)
		}()
	}
}
