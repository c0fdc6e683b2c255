package soft

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

func TestSmoke(t *testing.T) {
	for _, tr := range []string{"shm", "tcp", "auto"} {
		t.Run(tr, func(t *testing.T) { smoke(t, rdma.Params{"transport": tr}) })
	}
}

func smoke(t *testing.T, p rdma.Params) {
	a, b := newEnd(t, p), newEnd(t, p)
	rb, rmr := b.buf(t, 1<<20, allAccess)
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 5, SGL: []rdma.SGE{sge(rb, rmr)}}))
	ea, _ := connect(t, a, b, []byte("hello"), []byte("world"))
	require.Equal(t, []byte("world"), ea.PrivateData)

	sb, smr := a.buf(t, 1<<20, allAccess)
	copy(sb, "payload!")
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 1, Opcode: rdma.WRSend, Flags: rdma.SendSignaled,
		SGL: []rdma.SGE{{Addr: BufAddr(sb), Length: 8, LKey: smr.LKey()}}}))
	wc := pollN(t, a.scq, 1)
	require.Equal(t, rdma.WCSuccess, wc[0].Status)
	wc = pollN(t, b.rcq, 1)
	require.Equal(t, rdma.WCSuccess, wc[0].Status)
	require.Equal(t, uint64(5), wc[0].WRID)
	require.Equal(t, uint32(8), wc[0].ByteLen)
	require.Equal(t, "payload!", string(rb[:8]))

	// rendezvous
	for i := range sb {
		sb[i] = byte(i * 7)
	}
	require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 6, SGL: []rdma.SGE{sge(rb, rmr)}}))
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 2, Opcode: rdma.WRSend, Flags: rdma.SendSignaled,
		SGL: []rdma.SGE{sge(sb, smr)}}))
	wc = pollN(t, b.rcq, 1)
	require.Equal(t, rdma.WCSuccess, wc[0].Status)
	require.Equal(t, uint32(1<<20), wc[0].ByteLen)
	wc = pollN(t, a.scq, 1)
	require.Equal(t, rdma.WCSuccess, wc[0].Status)
	require.True(t, bytes.Equal(sb, rb))

	// RDMA write and read
	for i := range sb {
		sb[i] = byte(i * 3)
	}
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 3, Opcode: rdma.WRRDMAWrite, Flags: rdma.SendSignaled,
		SGL: []rdma.SGE{sge(sb, smr)}, RemoteAddr: BufAddr(rb), RKey: rmr.RKey()}))
	wc = pollN(t, a.scq, 1)
	require.Equal(t, rdma.WCSuccess, wc[0].Status)
	require.True(t, bytes.Equal(sb, rb))
	clear(sb)
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 4, Opcode: rdma.WRRDMARead, Flags: rdma.SendSignaled,
		SGL: []rdma.SGE{sge(sb, smr)}, RemoteAddr: BufAddr(rb), RKey: rmr.RKey()}))
	wc = pollN(t, a.scq, 1)
	require.Equal(t, rdma.WCSuccess, wc[0].Status)
	require.True(t, bytes.Equal(sb, rb))

	// bad key: access error, both broken
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{WRID: 9, Opcode: rdma.WRRDMAWrite, Flags: rdma.SendSignaled,
		SGL: []rdma.SGE{sge(sb[:8], smr)}, RemoteAddr: BufAddr(rb), RKey: rmr.RKey() + 1}))
	wc = pollN(t, a.scq, 1)
	require.Equal(t, rdma.WCRemAccessErr, wc[0].Status)
	require.Equal(t, rdma.CMBroken, a.event(t).Type)
	require.Equal(t, rdma.CMBroken, b.event(t).Type)
	select {
	case ev := <-b.asyn:
		require.Equal(t, rdma.AsyncQPAccessErr, ev.Type)
	default:
		t.Fatal("no async access error at the target")
	}
	require.Equal(t, rdma.QPSErr, a.qp.State())
}
