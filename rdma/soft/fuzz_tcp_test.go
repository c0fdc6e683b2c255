package soft

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// streamVictim is a TCP device that accepts every connection on one
// listener with a fresh QP (receives posted, so SENDs are placed), and
// destroys the QP when its connection ends.
type streamVictim struct {
	dev   rdma.Device
	pd    rdma.PD
	cm    rdma.CMChannel
	cq    rdma.CQ
	buf   []byte
	mr    rdma.MR
	to    string
	svc   uint64
	ended chan rdma.CMEventType

	mu   sync.Mutex
	qps  map[uint64]rdma.QP
	next uint64
}

func newStreamVictim(t testing.TB) *streamVictim {
	v := &streamVictim{ended: make(chan rdma.CMEventType, 16), qps: map[uint64]rdma.QP{}}
	v.dev = openDev(t, rdma.Params{"transport": "tcp"}, nil)
	var err error
	v.pd, err = v.dev.AllocPD()
	require.NoError(t, err)
	v.cm, err = v.dev.CreateCMChannel()
	require.NoError(t, err)
	v.cq, err = v.dev.CreateCQ(4096, nil, 0)
	require.NoError(t, err)
	v.buf = mapBuf(t, 4*4096)
	v.mr, err = v.pd.RegMR(BufAddr(v.buf), uint64(len(v.buf)), allAccess)
	require.NoError(t, err)
	l, err := v.dev.Listen(v.cm, 0, true, 64, 0)
	require.NoError(t, err)
	v.svc = l.ServiceID()
	v.to = netip.AddrPortFrom(lo, tcpPortOf(v.svc)).String()
	go v.serve()
	return v
}

// serve answers the victim's CM events until the device closes.
func (v *streamVictim) serve() {
	var ev rdma.CMEvent
	for {
		if err := v.cm.Get(&ev, time.Hour); err != nil {
			if errors.Is(err, rdma.ErrTimeout) {
				continue
			}
			return
		}
		switch ev.Type {
		case rdma.CMConnectRequest:
			v.mu.Lock()
			v.next++
			ctx := v.next
			v.mu.Unlock()
			q, err := v.dev.CreateQP(rdma.QPInitAttr{PD: v.pd, SendCQ: v.cq, RecvCQ: v.cq, CM: v.cm, Context: ctx,
				Cap: rdma.QPCap{MaxSendWR: 16, MaxRecvWR: 16, MaxSendSGE: 2, MaxRecvSGE: 2}})
			if err != nil {
				_ = ev.Request.Reject(rdma.RejectConsumer, nil)
				v.ended <- 0
				continue
			}
			for i := 0; i < 4; i++ {
				_ = q.PostRecv(&rdma.RecvWR{WRID: uint64(i), SGL: []rdma.SGE{{Addr: BufAddr(v.buf[i*4096:]), Length: 4096, LKey: v.mr.LKey()}}})
			}
			v.mu.Lock()
			v.qps[ctx] = q
			v.mu.Unlock()
			_ = ev.Request.Accept(q, nil)
		case rdma.CMEstablished:
		default: // the connection ended
			v.mu.Lock()
			q := v.qps[ev.Context]
			delete(v.qps, ev.Context)
			v.mu.Unlock()
			if q != nil {
				_ = q.Destroy()
			}
			v.ended <- ev.Type
		}
	}
}

// streamSeeds are frame sequences an honest peer could send after the
// handshake, and a few it could not.
func streamSeeds() [][]byte {
	fr := func(f frame, payload int) []byte {
		b := make([]byte, frameHdr+payload)
		f.put(b)
		for i := range b[frameHdr:] {
			b[frameHdr+i] = byte(i)
		}
		return b
	}
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	return [][]byte{
		{},
		fr(frame{typ: msgSend, flags: flAckReq, grant: 4, len: 8}, 8),
		cat(fr(frame{typ: msgSend, flags: flAckReq | flNotify, stamp: 1, len: 100}, 100), fr(frame{typ: msgSend, flags: flAckReq, stamp: 2, len: 5000}, 5000)),
		fr(frame{typ: msgWrite, aux: 0x1234, len: 16, addr: 0x10000}, 16),
		fr(frame{typ: msgReadReq, aux: 0x1234, len: 64, addr: 0x10000}, 0),
		cat(fr(frame{typ: msgAck, ack: 3}, 0), fr(frame{typ: msgNeed, aux: 2}, 0), fr(frame{typ: msgDisc}, 0)),
		fr(frame{typ: msgNak, aux: uint32(rdma.WCRemAccessErr), addr: 1}, 0),
		fr(frame{typ: msgReadResp, len: 32}, 32),
		fr(frame{typ: msgReadDone, aux: uint32(rdma.WCSuccess)}, 0),
		fr(frame{typ: msgSend, flags: flAckReq, len: maxMsgSize}, 100),
		[]byte("GET / HTTP/1.0\r\n\r\n"),
	}
}

// FuzzTCPStream: whatever a connected peer sends after the handshake, the
// victim's receive loop neither panics nor keeps the connection once the
// peer has ended its side: the QP's connection ends with a CM event.
func FuzzTCPStream(f *testing.F) {
	for _, s := range streamSeeds() {
		f.Add(s)
	}
	v := newStreamVictim(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := net.Dial("tcp", v.to)
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.SetDeadline(time.Now().Add(testWait)))
		var b [frameHdr]byte
		(&frame{typ: frReq, flags: tcpVersion, aux: tcpMagic, addr: v.svc, grant: 4}).put(b[:])
		_, err = c.Write(b[:])
		require.NoError(t, err)
		_, err = io.ReadFull(c, b[:])
		require.NoError(t, err)
		var acc frame
		acc.get(b[:])
		require.Equal(t, uint8(frAcc), acc.typ)
		_, err = io.CopyN(io.Discard, c, int64(acc.len))
		require.NoError(t, err)
		(&frame{typ: frRtu, grant: 4}).put(b[:])
		_, err = c.Write(append(b[:], in...))
		if err == nil {
			require.NoError(t, c.(*net.TCPConn).CloseWrite())
		}
		_, err = io.Copy(io.Discard, c)
		require.False(t, isTimeout(err), "the victim kept a connection the peer ended")
		select {
		case ev := <-v.ended:
			require.NotZero(t, ev)
		case <-time.After(testWait):
			t.Fatal("the victim's QP did not end")
		}
		var wc [16]rdma.WC
		for v.cq.Poll(wc[:]) > 0 {
		}
	})
}
