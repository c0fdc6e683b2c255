package soft

import (
	"bufio"
	"bytes"
	"encoding/binary"
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

const peerEnv = "GODAT_SOFT_TEST_PEER"

// TestHelperPeer is the other process of the cross-process tests: an echo
// server exposing a 1 MiB RDMA target. It only runs when re-executed.
func TestHelperPeer(t *testing.T) {
	if os.Getenv(peerEnv) == "" {
		t.Skip("helper process only")
	}
	e := newEnd(t, 3)
	tgt, tmr := e.buf(t, 1<<20, allAccess)
	const nb = 4
	var bufs [nb][]byte
	var mrs [nb]rdma.MR
	for i := range bufs {
		bufs[i], mrs[i] = e.buf(t, 1<<20, allAccess)
		require.NoError(t, e.qp.PostRecv(&rdma.RecvWR{Cookie: uint64(i), SGL: []rdma.SGE{sge(bufs[i], mrs[i])}}))
	}
	reqs := make(chan rdma.ConnRequest, 1)
	l, err := e.dev.Listen(0, true, lh(func(r rdma.ConnRequest) { reqs <- r }))
	require.NoError(t, err)
	fmt.Printf("QUAL %d\n", l.Qual())
	var req rdma.ConnRequest
	select {
	case req = <-reqs:
	case <-time.After(10 * time.Second):
		t.Fatal("helper: no request")
	}
	priv := binary.LittleEndian.AppendUint64(nil, BufAddr(tgt))
	priv = binary.LittleEndian.AppendUint32(priv, tmr.RKey())
	require.NoError(t, req.Accept(e.qp, priv))
	require.Equal(t, rdma.ConnEstablished, e.ev.wait(t, testWait).Kind)
	db := e.dev.Doorbell()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		seq := db.Seq()
		n := e.qp.Progress()
		for _, c := range e.rcq.take() {
			if c.Status != rdma.StatusSuccess {
				continue
			}
			i := c.Cookie
			require.NoError(t, e.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, Cookie: i, Flags: rdma.SendSignaled,
				SGL: []rdma.SGE{{Addr: BufAddr(bufs[i]), Length: c.Length, LKey: mrs[i].LKey()}}}))
		}
		for _, c := range e.scq.take() {
			i := c.Cookie
			require.NoError(t, e.qp.PostRecv(&rdma.RecvWR{Cookie: i, SGL: []rdma.SGE{sge(bufs[i], mrs[i])}}))
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

type peerProc struct {
	cmd  *exec.Cmd
	qual uint64
}

func startPeer(t *testing.T) *peerProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPeer$", "-test.count=1")
	cmd.Env = append(os.Environ(), peerEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &peerProc{cmd: cmd}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "QUAL ") {
				lines <- sc.Text()
			}
		}
	}()
	select {
	case s := <-lines:
		p.qual, err = strconv.ParseUint(strings.TrimPrefix(s, "QUAL "), 10, 64)
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("helper did not start")
	}
	return p
}

func connectPeer(t *testing.T, a *end, p *peerProc) (uint64, uint32) {
	require.NoError(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), p.qual, []byte("hi"), testWait))
	ev := a.ev.wait(t, testWait)
	require.Equal(t, rdma.ConnEstablished, ev.Kind)
	require.Len(t, ev.PrivateData, 12)
	return binary.LittleEndian.Uint64(ev.PrivateData), binary.LittleEndian.Uint32(ev.PrivateData[8:])
}

func TestCrossProcess(t *testing.T) {
	p := startPeer(t)
	a := newEnd(t, 1)
	raddr, rkey := connectPeer(t, a, p)

	echo := func(n int, seed uint64) {
		sb, sm := a.buf(t, n, allAccess)
		rb, rm := a.buf(t, n, allAccess)
		fill(sb, seed)
		require.NoError(t, a.qp.PostRecv(&rdma.RecvWR{SGL: []rdma.SGE{sge(rb, rm)}}))
		require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpSend, SGL: []rdma.SGE{sge(sb, sm)}}))
		pollUntil(t, func() bool { return a.rcq.n() == 1 }, a.qp)
		c := a.rcq.take()[0]
		require.Equal(t, rdma.StatusSuccess, c.Status)
		require.Equal(t, uint64(n), c.Length)
		require.True(t, bytes.Equal(sb, rb), "echo %d", n)
	}
	for i := 0; i < 100; i++ { // ping-pong
		echo(8, uint64(i))
	}
	echo(64<<10, 1)
	echo(1<<20, 2)

	// RDMA write (two segments) into the peer, then read it back.
	s1, m1 := a.buf(t, 3000, allAccess)
	s2, m2 := a.buf(t, 5000, allAccess)
	fill(s1, 3)
	fill(s2, 4)
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpWrite, SGL: []rdma.SGE{sge(s1, m1), sge(s2, m2)},
		RemoteAddr: raddr + 100, RKey: rkey, Flags: rdma.SendSignaled}))
	d, dm := a.buf(t, 8000, allAccess)
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpRead, SGL: []rdma.SGE{sge(d, dm)},
		RemoteAddr: raddr + 100, RKey: rkey, Flags: rdma.SendSignaled}))
	// Completions are in order: they may wait for the acknowledgement of the
	// earlier large send, so poll rather than expect them at post time.
	pollUntil(t, func() bool { return a.scq.n() == 2 }, a.qp)
	cs := a.scq.take()
	require.Len(t, cs, 2)
	require.Equal(t, rdma.StatusSuccess, cs[0].Status)
	require.Equal(t, rdma.StatusSuccess, cs[1].Status)
	require.True(t, bytes.Equal(append(append([]byte{}, s1...), s2...), d))
	// out of bounds → remote access error
	require.NoError(t, a.qp.PostSend(&rdma.SendWR{Op: rdma.OpWrite, SGL: []rdma.SGE{sge(s1, m1)},
		RemoteAddr: raddr + 1<<20 - 10, RKey: rkey}))
	pollUntil(t, func() bool { return a.scq.n() == 1 }, a.qp)
	require.Equal(t, rdma.StatusRemoteAccess, a.scq.take()[0].Status)

	require.NoError(t, a.qp.Disconnect(true))
	require.Equal(t, rdma.ConnDisconnected, a.ev.wait(t, testWait).Kind)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "helper failed")
	case <-time.After(testWait):
		t.Fatal("helper did not exit")
	}
}

func TestCrossProcessPeerKilled(t *testing.T) {
	p := startPeer(t)
	a := newEnd(t, 1)
	connectPeer(t, a, p)
	rb, rm := a.buf(t, 64, allAccess)
	require.NoError(t, a.qp.PostRecv(&rdma.RecvWR{Cookie: 5, SGL: []rdma.SGE{sge(rb, rm)}}))
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	require.Equal(t, rdma.ConnBroken, a.ev.wait(t, time.Second).Kind)
	cs := a.rcq.take()
	require.Len(t, cs, 1)
	require.Equal(t, rdma.StatusFlushed, cs[0].Status)
	require.Equal(t, uint64(5), cs[0].Cookie)
}
