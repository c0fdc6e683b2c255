package soft

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// limitCount counts low-watermark notifications.
type limitCount struct{ n atomic.Int32 }

func (l *limitCount) SRQLimit(rdma.SRQ) { l.n.Add(1) }

// srqEnd is an end whose QP takes its receives from s (on the same device
// as base, so base's buffers and doorbell are shared).
func srqEnd(t *testing.T, base *end, s rdma.SRQ, pd uint32) *end {
	t.Helper()
	e := &end{dev: base.dev, scq: &sink{}, rcq: &sink{}, ev: newEvents(), pd: pd}
	var err error
	e.qp, err = base.dev.CreateQP(rdma.QPConfig{PD: pd, SendCQ: e.scq, RecvCQ: e.rcq, Conn: e.ev, SRQ: s,
		MaxSend: 512, MaxSendSGE: 4})
	require.NoError(t, err)
	return e
}

func newSRQ(t *testing.T, e *end, pd uint32, n int, l rdma.LimitHandler) rdma.SRQ {
	t.Helper()
	s, err := e.dev.CreateSRQ(rdma.SRQConfig{PD: pd, MaxWR: n, MaxSGE: 4, Limit: l})
	require.NoError(t, err)
	return s
}

// postN posts n receives of size bytes each to s, cookies base..base+n-1.
func postN(t *testing.T, e *end, s rdma.SRQ, n, size int, base uint64) [][]byte {
	t.Helper()
	var bufs [][]byte
	for i := 0; i < n; i++ {
		b, mr := e.buf(t, size, allAccess)
		bufs = append(bufs, b)
		require.NoError(t, s.PostRecv(&rdma.RecvWR{Cookie: base + uint64(i), SGL: []rdma.SGE{sge(b, mr)}}))
	}
	return bufs
}

// sendTagged sends n messages of size bytes from a, each starting with
// (tag, seq), signaled.
func sendTagged(t *testing.T, a *end, tag uint32, n, size int) {
	t.Helper()
	for i := 0; i < n; i++ {
		b, mr := a.buf(t, size, allAccess)
		fill(b, uint64(tag)<<32|uint64(i))
		binary.LittleEndian.PutUint32(b[0:], tag)
		binary.LittleEndian.PutUint32(b[4:], uint32(i))
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: uint64(i), SGL: []rdma.SGE{sge(b, mr)},
			Flags: rdma.SendSignaled}))
	}
}

// Three connections share one SRQ: buffers go to whichever connection has
// a message, each connection's messages complete in its send order, and
// the payload lands in the buffer whose cookie the completion carries.
func TestSRQSharedByConnections(t *testing.T) {
	srv := newEnd(t, 2)
	s := newSRQ(t, srv, 2, 64, nil)
	var clients, servers []*end
	for i := 0; i < 3; i++ {
		c := newEnd(t, 1)
		se := srqEnd(t, srv, s, 2)
		connect(t, c, se, nil, nil)
		clients, servers = append(clients, c), append(servers, se)
	}
	const per = 10
	for _, n := range []int{64, inlineMax + 100} { // inline and rendezvous
		bufs := postN(t, srv, s, 3*per, n, 1000)
		for i, c := range clients {
			sendTagged(t, c, uint32(i), per, n)
		}
		var qps []rdma.QP
		for i := range clients {
			qps = append(qps, clients[i].qp, servers[i].qp)
		}
		pollUntil(t, func() bool {
			return servers[0].rcq.n()+servers[1].rcq.n()+servers[2].rcq.n() == 3*per
		}, qps...)
		seen := map[uint64]bool{}
		for i, se := range servers {
			cs := se.rcq.take()
			require.Len(t, cs, per, "connection %d", i)
			for seq, c := range cs {
				require.Equal(t, rdma.StatusSuccess, c.Status)
				require.Equal(t, uint64(n), c.Length)
				require.Equal(t, se.qp, c.QP)
				require.False(t, seen[c.Cookie], "buffer used twice")
				seen[c.Cookie] = true
				b := bufs[c.Cookie-1000]
				require.Equal(t, uint32(i), binary.LittleEndian.Uint32(b[0:]), "tag")
				require.Equal(t, uint32(seq), binary.LittleEndian.Uint32(b[4:]), "per-connection order")
			}
		}
		require.Equal(t, 0, s.Available())
		pollUntil(t, func() bool {
			return clients[0].scq.n()+clients[1].scq.n()+clients[2].scq.n() == 3*per
		}, qps...)
		for _, c := range clients {
			for _, sc := range c.scq.take() {
				require.Equal(t, rdma.StatusSuccess, sc.Status)
			}
		}
	}
}

// An empty SRQ behaves as an empty receive queue: messages wait in the
// inbound ring; the sender's inline sends complete until the ring is full,
// then wait, with no error and no timeout; posting drains them in order.
func TestSRQEmptyHoldsSender(t *testing.T) {
	srv := newEnd(t, 2)
	s := newSRQ(t, srv, 2, 128, nil)
	se := srqEnd(t, srv, s, 2)
	c := newEnd(t, 1)
	connect(t, c, se, nil, nil)
	const total = dataSlots + 6
	sendTagged(t, c, 7, total, 32)
	deadline := time.Now().Add(200 * time.Millisecond)
	for time.Now().Before(deadline) {
		c.qp.Progress()
		se.qp.Progress()
		time.Sleep(time.Millisecond)
	}
	require.Equal(t, 0, se.rcq.n())
	sent := c.scq.take()
	require.Len(t, sent, dataSlots, "sends beyond the ring wait")
	for _, sc := range sent {
		require.Equal(t, rdma.StatusSuccess, sc.Status)
	}
	// The starved take armed a wake-up: the post rings the doorbell.
	seq := srv.dev.Doorbell().Seq()
	bufs := postN(t, srv, s, total, 32, 0)
	require.NotEqual(t, seq, srv.dev.Doorbell().Seq())
	pollUntil(t, func() bool { return se.rcq.n() == total && c.scq.n() == total-dataSlots }, c.qp, se.qp)
	for i, rc := range se.rcq.take() {
		require.Equal(t, rdma.StatusSuccess, rc.Status)
		require.Equal(t, uint32(i), binary.LittleEndian.Uint32(bufs[rc.Cookie][4:]))
	}
}

func TestSRQLimit(t *testing.T) {
	srv := newEnd(t, 2)
	var l limitCount
	s := newSRQ(t, srv, 2, 8, &l)
	postN(t, srv, s, 3, 16, 0)
	var sgl [maxSGE]rdma.SGE
	s.ArmLimit(2)
	require.Equal(t, int32(0), l.n.Load(), "3 posted: not below 2")
	_, _, ok := s.Take(sgl[:])
	require.True(t, ok)
	require.Equal(t, int32(0), l.n.Load(), "2: not below 2")
	_, _, ok = s.Take(sgl[:])
	require.True(t, ok)
	require.Equal(t, int32(1), l.n.Load(), "1: below")
	_, _, ok = s.Take(sgl[:])
	require.True(t, ok)
	require.Equal(t, int32(1), l.n.Load(), "once per arming")
	s.ArmLimit(1)
	require.Equal(t, int32(2), l.n.Load(), "already below: at once")
	s.ArmLimit(0)
	_, _, ok = s.Take(sgl[:])
	require.False(t, ok)
	require.Equal(t, int32(2), l.n.Load())
}

func TestSRQResizeKeepsReceives(t *testing.T) {
	srv := newEnd(t, 2)
	s := newSRQ(t, srv, 2, 8, nil)
	postN(t, srv, s, 5, 16, 10)
	var sgl [maxSGE]rdma.SGE
	c, n, ok := s.Take(sgl[:])
	require.True(t, ok)
	require.Equal(t, uint64(10), c)
	require.Equal(t, 1, n)
	require.ErrorIs(t, s.Resize(3), rdma.ErrState)
	require.NoError(t, s.Resize(4)) // shrinks the ring: 4 posted move over
	require.Equal(t, 4, s.Available())
	b, mr := srv.buf(t, 16, allAccess)
	require.ErrorIs(t, s.PostRecv(&rdma.RecvWR{SGL: []rdma.SGE{sge(b, mr)}}), rdma.ErrQueueFull)
	require.NoError(t, s.Resize(100))
	postN(t, srv, s, 50, 16, 100)
	want := []uint64{11, 12, 13, 14}
	for i := 0; i < 50; i++ {
		want = append(want, uint64(100+i))
	}
	for _, w := range want {
		c, _, ok := s.Take(sgl[:])
		require.True(t, ok)
		require.Equal(t, w, c)
	}
	_, _, ok = s.Take(sgl[:])
	require.False(t, ok)
}

func TestSRQPostChecks(t *testing.T) {
	srv := newEnd(t, 2)
	s := newSRQ(t, srv, 2, 2, nil)
	b, mr := srv.buf(t, 64, allAccess)
	other := &end{dev: srv.dev, pd: 3}
	ob, omr := other.buf(t, 64, allAccess)
	rb, rmr := srv.buf(t, 64, rdma.AccessLocalRead)
	post := func(g ...rdma.SGE) error { return s.PostRecv(&rdma.RecvWR{SGL: g}) }
	require.ErrorIs(t, post(sge(ob, omr)), rdma.ErrProtection)
	require.ErrorIs(t, post(sge(rb, rmr)), rdma.ErrPrivileges)
	require.ErrorIs(t, post(rdma.SGE{Addr: BufAddr(b), Length: 8, LKey: 0x7777}), rdma.ErrPrivileges)
	require.ErrorIs(t, post(rdma.SGE{Addr: BufAddr(b) + 60, Length: 8, LKey: mr.LKey()}), rdma.ErrInvalid)
	g := sge(b, mr)
	require.ErrorIs(t, post(g, g, g, g, g), rdma.ErrInvalid)
	require.NoError(t, post())
	require.NoError(t, post(g))
	require.ErrorIs(t, post(g), rdma.ErrQueueFull)
	require.Equal(t, 2, s.Available())
	require.NoError(t, s.Destroy())
	require.ErrorIs(t, post(), rdma.ErrClosed)
	require.ErrorIs(t, s.Destroy(), rdma.ErrClosed)
}

// The SRQ's buffers are checked against the SRQ's PD, not the QP's.
func TestSRQOtherPD(t *testing.T) {
	srv := newEnd(t, 2)
	s := newSRQ(t, srv, 5, 4, nil)
	se := srqEnd(t, srv, s, 2)
	c := newEnd(t, 1)
	connect(t, c, se, nil, nil)
	in := &end{dev: srv.dev, pd: 5}
	postN(t, in, s, 1, 64, 0)
	sendTagged(t, c, 1, 1, 64)
	pollUntil(t, func() bool { return se.rcq.n() == 1 }, c.qp, se.qp)
	require.Equal(t, rdma.StatusSuccess, se.rcq.take()[0].Status)
	require.ErrorIs(t, se.qp.PostRecv(&rdma.RecvWR{}), rdma.ErrState, "receives go to the SRQ")
}

// A receive too small for its message completes with a length error and
// is consumed, like one of the QP's own.
func TestSRQShortBuffer(t *testing.T) {
	srv := newEnd(t, 2)
	s := newSRQ(t, srv, 2, 4, nil)
	se := srqEnd(t, srv, s, 2)
	c := newEnd(t, 1)
	connect(t, c, se, nil, nil)
	postN(t, srv, s, 1, 16, 0)
	big := postN(t, srv, s, 1, 128, 1)
	sendTagged(t, c, 3, 2, 64)
	pollUntil(t, func() bool { return se.rcq.n() == 2 }, c.qp, se.qp)
	cs := se.rcq.take()
	require.Equal(t, rdma.StatusLocalLength, cs[0].Status)
	require.Equal(t, rdma.StatusSuccess, cs[1].Status)
	require.Equal(t, uint32(1), binary.LittleEndian.Uint32(big[0][4:]))
}

// Posts from one goroutine while two connections progress from others.
func TestSRQConcurrent(t *testing.T) {
	srv := newEnd(t, 2)
	s := newSRQ(t, srv, 2, 256, nil)
	var ses, cs []*end
	for i := 0; i < 2; i++ {
		c := newEnd(t, 1)
		se := srqEnd(t, srv, s, 2)
		connect(t, c, se, nil, nil)
		ses, cs = append(ses, se), append(cs, c)
	}
	const per = 200
	for i, c := range cs {
		sendTagged(t, c, uint32(i), per, 24)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range ses {
		wg.Add(1)
		go func(c, se *end) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c.qp.Progress()
				se.qp.Progress()
			}
		}(cs[i], ses[i])
	}
	b, mr := srv.buf(t, 64*(2*per), allAccess)
	for i := 0; i < 2*per; i++ {
		for {
			err := s.PostRecv(&rdma.RecvWR{Cookie: uint64(i), SGL: []rdma.SGE{{Addr: BufAddr(b) + uint64(64*i), Length: 64, LKey: mr.LKey()}}})
			if err == nil {
				break
			}
			require.ErrorIs(t, err, rdma.ErrQueueFull)
			time.Sleep(time.Millisecond)
		}
	}
	deadline := time.Now().Add(testWait)
	for ses[0].rcq.n()+ses[1].rcq.n() < 2*per && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	for i, se := range ses {
		got := se.rcq.take()
		require.Len(t, got, per)
		for seq, c := range got {
			m := b[64*c.Cookie : 64*c.Cookie+24]
			require.Equal(t, uint32(i), binary.LittleEndian.Uint32(m[0:]))
			require.Equal(t, uint32(seq), binary.LittleEndian.Uint32(m[4:]))
		}
	}
}
