package soft

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

const tcpPeerEnv = "GODAT_TCP_TEST_PEER"

// TestTCPHelperPeer is the other process of the TCP kill tests. As "server"
// it echoes every message it receives; as "client" (GODAT_TCP_TEST_QUAL
// set) it connects and streams 256 KiB sends. It only runs re-executed.
func TestTCPHelperPeer(t *testing.T) {
	mode := os.Getenv(tcpPeerEnv)
	if mode == "" {
		t.Skip("helper process only")
	}
	e := tcpEnd(t, 3)
	const nb, sz = 4, 1 << 20
	var bufs [nb][]byte
	var mrs [nb]rdma.MR
	for i := range bufs {
		bufs[i], mrs[i] = e.buf(t, sz, allAccess)
		require.NoError(t, e.qp.PostRecv(&rdma.RecvWR{Cookie: uint64(i), SGL: []rdma.SGE{sge(bufs[i], mrs[i])}}))
	}
	if mode == "server" {
		reqs := make(chan rdma.ConnRequest, 1)
		l, err := e.dev.Listen(0, true, lh(func(r rdma.ConnRequest) { reqs <- r }))
		require.NoError(t, err)
		fmt.Printf("QUAL %d\n", l.Qual())
		req := <-reqs
		require.NoError(t, req.Accept(e.qp, nil))
	} else {
		q, err := strconv.ParseUint(os.Getenv("GODAT_TCP_TEST_QUAL"), 10, 64)
		require.NoError(t, err)
		require.NoError(t, e.qp.Connect(netip.AddrPortFrom(lo, 0), q, nil, testWait))
	}
	require.Equal(t, rdma.ConnEstablished, e.ev.wait(t, testWait).Kind)
	fmt.Println("CONNECTED")
	db := e.dev.Doorbell()
	out, omr := e.buf(t, 256<<10, allAccess)
	inflight := 0
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		seq := db.Seq()
		n := e.qp.Progress()
		for _, c := range e.rcq.take() {
			if c.Status != rdma.StatusSuccess {
				continue
			}
			i := c.Cookie
			if mode == "server" {
				require.NoError(t, e.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: i, Flags: rdma.SendSignaled,
					SGL: []rdma.SGE{{Addr: BufAddr(bufs[i]), Length: c.Length, LKey: mrs[i].LKey()}}}))
			} else {
				require.NoError(t, e.qp.PostRecv(&rdma.RecvWR{Cookie: i, SGL: []rdma.SGE{sge(bufs[i], mrs[i])}}))
			}
		}
		for _, c := range e.scq.take() {
			if mode == "server" {
				i := c.Cookie
				require.NoError(t, e.qp.PostRecv(&rdma.RecvWR{Cookie: i, SGL: []rdma.SGE{sge(bufs[i], mrs[i])}}))
			} else {
				inflight--
			}
		}
		for mode == "client" && inflight < 4 {
			require.NoError(t, e.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: 99, Flags: rdma.SendSignaled, SGL: []rdma.SGE{sge(out, omr)}}))
			inflight++
		}
		select {
		case ev := <-e.ev.ch:
			require.Equal(t, rdma.ConnDisconnected, ev.Kind)
			return
		default:
		}
		if n == 0 {
			db.Wait(seq, 100*time.Millisecond)
		}
	}
	t.Fatal("helper: timed out")
}

type helper struct {
	cmd  *exec.Cmd
	qual uint64
}

// startHelper runs TestTCPHelperPeer in mode; a server reports its
// qualifier, a client is given one.
func startHelper(t *testing.T, mode string, qual uint64) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTCPHelperPeer$", "-test.count=1")
	cmd.Env = append(os.Environ(), tcpPeerEnv+"="+mode, "GODAT_TCP_TEST_QUAL="+strconv.FormatUint(qual, 10))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	h := &helper{cmd: cmd}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if mode != "server" {
		return h
	}
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(testWait)
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "helper ended before listening")
			if q, found := strings.CutPrefix(l, "QUAL "); found {
				h.qual, err = strconv.ParseUint(q, 10, 64)
				require.NoError(t, err)
				return h
			}
		case <-deadline:
			t.Fatal("helper did not report its qualifier")
		}
	}
}

func (h *helper) kill(t *testing.T) {
	require.NoError(t, h.cmd.Process.Signal(syscall.SIGKILL))
	h.cmd.Wait()
}

// TestTCPServerKilled: the server process dies (SIGKILL) while we stream to
// it; we see a broken connection within a bound, our outstanding work is
// flushed, and the same QP reconnects to a restarted server.
func TestTCPServerKilled(t *testing.T) {
	a := tcpEnd(t, 1)
	rb, rmr := a.buf(t, 4<<20, allAccess)
	sb, smr := a.buf(t, 256<<10, allAccess)
	for round := 0; round < 2; round++ {
		h := startHelper(t, "server", 0)
		if round > 0 {
			require.NoError(t, a.qp.Reset())
		}
		for i := 0; i < 4; i++ {
			require.NoError(t, a.qp.PostRecv(&rdma.RecvWR{Cookie: uint64(i), SGL: []rdma.SGE{{Addr: BufAddr(rb) + uint64(i<<20), Length: 1 << 20, LKey: rmr.LKey()}}}))
		}
		require.NoError(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), h.qual, nil, testWait))
		require.Equal(t, rdma.ConnEstablished, a.ev.wait(t, testWait).Kind)
		echoes, sent := 0, 0
		deadline := time.Now().Add(20 * time.Second)
		for echoes < 20 {
			require.True(t, time.Now().Before(deadline), "echo stalled at %d", echoes)
			for sent-echoes < 4 {
				require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{sge(sb, smr)}}))
				sent++
			}
			a.qp.Progress()
			for _, c := range a.rcq.take() {
				require.Equal(t, rdma.StatusSuccess, c.Status)
				require.Equal(t, uint64(256<<10), c.Length)
				echoes++
				require.NoError(t, a.qp.PostRecv(&rdma.RecvWR{Cookie: c.Cookie, SGL: []rdma.SGE{{Addr: BufAddr(rb) + c.Cookie<<20, Length: 1 << 20, LKey: rmr.LKey()}}}))
			}
			time.Sleep(100 * time.Microsecond)
		}
		if round == 1 {
			break // the restarted server served us: done
		}
		// Mid-transfer: sends are outstanding.
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: 7, Flags: rdma.SendSignaled, SGL: []rdma.SGE{sge(sb, smr)}}))
		start := time.Now()
		h.kill(t)
		ev := a.ev.wait(t, testWait)
		require.Contains(t, []rdma.ConnEventKind{rdma.ConnBroken, rdma.ConnDisconnected}, ev.Kind)
		t.Logf("peer death seen after %v", time.Since(start))
		recvs := a.rcq.take()
		require.NotEmpty(t, recvs)
		require.Equal(t, rdma.StatusFlushed, recvs[len(recvs)-1].Status)
		require.ErrorIs(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend}), rdma.ErrState)
	}
	require.NoError(t, a.qp.Disconnect(true))
	require.Equal(t, rdma.ConnDisconnected, a.ev.wait(t, testWait).Kind)
}

// TestTCPClientKilled: the passive side sees a client killed mid-stream as
// a broken connection and accepts the next client on the same QP.
func TestTCPClientKilled(t *testing.T) {
	b := tcpEnd(t, 1)
	rb, rmr := b.buf(t, 4<<20, allAccess)
	reqs := make(chan rdma.ConnRequest, 1)
	l, err := b.dev.Listen(0, true, lh(func(r rdma.ConnRequest) { reqs <- r }))
	require.NoError(t, err)
	defer l.Close()
	for round := 0; round < 2; round++ {
		if round > 0 {
			require.NoError(t, b.qp.Reset())
		}
		for i := 0; i < 4; i++ {
			require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: uint64(i), SGL: []rdma.SGE{{Addr: BufAddr(rb) + uint64(i<<20), Length: 1 << 20, LKey: rmr.LKey()}}}))
		}
		h := startHelper(t, "client", l.Qual())
		var req rdma.ConnRequest
		select {
		case req = <-reqs:
		case <-time.After(testWait):
			t.Fatal("no request from the helper")
		}
		require.NoError(t, req.Accept(b.qp, nil))
		require.Equal(t, rdma.ConnEstablished, b.ev.wait(t, testWait).Kind)
		got := 0
		pollUntil(t, func() bool {
			for _, c := range b.rcq.take() {
				require.Equal(t, rdma.StatusSuccess, c.Status)
				got++
				require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{Cookie: c.Cookie, SGL: []rdma.SGE{{Addr: BufAddr(rb) + c.Cookie<<20, Length: 1 << 20, LKey: rmr.LKey()}}}))
			}
			return got >= 20
		}, b.qp)
		h.kill(t)
		ev := b.ev.wait(t, testWait)
		require.Equal(t, rdma.ConnBroken, ev.Kind)
		for _, c := range b.rcq.take() { // what arrived, then the flushed rest
			if c.Status != rdma.StatusSuccess {
				require.Equal(t, rdma.StatusFlushed, c.Status)
			}
		}
	}
}
