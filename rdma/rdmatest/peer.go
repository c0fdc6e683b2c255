package rdmatest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"godat/rdma"
)

// The peer process is the test binary itself, started again with envPeer
// naming the backend (Main then plays the peer) and envRole its part:
//
//	listen                  listen on a picked id, print "listening ADDR ID",
//	                        accept the first request with private data naming
//	                        a target region (address u64, rkey u32, length
//	                        u32, little endian)
//	connect ADDR ID         connect to ID at ADDR
//
// then print "established" and serve (poll its CQ, drain its CM channel)
// until its standard input closes or 3*bound pass. The parent kills it
// with SIGKILL where a test wants a peer to die.
const (
	envPeer    = "GODAT_RDMATEST_PEER"
	envRole    = "GODAT_RDMATEST_PEER_ROLE"
	peerPrefix = "rdmatest-peer "
)

func runPeer(b Backend) int {
	if err := peer(b, os.Getenv(envRole), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "rdmatest peer:", err)
		return 1
	}
	return 0
}

// peer plays the peer process's part.
func peer(b Backend, role string, out io.Writer) error {
	dev, err := b.Open(func(rdma.AsyncEvent) {})
	if err != nil {
		return err
	}
	defer dev.Close()
	at := dev.Query()
	pd, err := dev.AllocPD()
	if err != nil {
		return err
	}
	ch, err := dev.CreateCompChannel()
	if err != nil {
		return err
	}
	cm, err := dev.CreateCMChannel()
	if err != nil {
		return err
	}
	cq, err := dev.CreateCQ(min(256, at.MaxCQE), ch, 1)
	if err != nil {
		return err
	}
	qp, err := dev.CreateQP(rdma.QPInitAttr{PD: pd, SendCQ: cq, RecvCQ: cq, CM: cm, Context: 2,
		Cap: rdma.QPCap{MaxSendWR: min(16, at.MaxQPWR), MaxRecvWR: min(16, at.MaxQPWR), MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		return err
	}
	size := int(min(4<<20, at.MaxMsgSize))
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return err
	}
	mr, err := pd.RegMR(addrOf(mem), uint64(size), accAll)
	if err != nil {
		return err
	}
	var ev rdma.CMEvent
	f := strings.Fields(role)
	switch {
	case len(f) == 1 && f[0] == "listen":
		l, err := dev.Listen(cm, 0, true, 4, 3)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%slistening %s %d\n", peerPrefix, dev.Addr(), l.ServiceID())
		if err := cm.Get(&ev, bound); err != nil {
			return fmt.Errorf("waiting for a request: %w", err)
		}
		if ev.Type != rdma.CMConnectRequest {
			return fmt.Errorf("got %v, want a connect request", ev.Type)
		}
		priv := binary.LittleEndian.AppendUint64(nil, addrOf(mem))
		priv = binary.LittleEndian.AppendUint32(priv, mr.RKey())
		priv = binary.LittleEndian.AppendUint32(priv, uint32(size))
		if err := ev.Request.Accept(qp, priv); err != nil {
			return err
		}
	case len(f) == 3 && f[0] == "connect":
		addr, err := netip.ParseAddr(f[1])
		if err != nil {
			return err
		}
		id, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			return err
		}
		if err := qp.Connect(netip.AddrPortFrom(addr, 0), id, nil, bound); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown role %q", role)
	}
	if err := cm.Get(&ev, bound); err != nil {
		return fmt.Errorf("waiting to be established: %w", err)
	}
	if ev.Type != rdma.CMEstablished {
		return fmt.Errorf("got %v, want established", ev.Type)
	}
	fmt.Fprintf(out, "%sestablished\n", peerPrefix)

	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	var wc [16]rdma.WC
	for deadline := time.Now().Add(3 * bound); time.Now().Before(deadline); {
		select {
		case <-done:
			return nil
		default:
		}
		seq := ch.Seq()
		if cq.Poll(wc[:]) > 0 {
			continue
		}
		_ = cq.Arm(false)
		if cq.Poll(wc[:]) > 0 {
			continue
		}
		for cm.Get(&ev, 0) == nil {
		}
		ch.Wait(seq, 10*time.Millisecond)
	}
	return errors.New("not told to end")
}

// peerProc is a running peer process.
type peerProc struct {
	cmd    *exec.Cmd
	lines  chan string
	exited chan struct{}
}

// startPeer starts a peer process playing role.
func (s *suite) startPeer(t *testing.T, role string) *peerProc {
	t.Helper()
	if !s.xproc {
		t.Skipf("backend %s was not given to rdmatest.Main: no peer process", s.b.Name)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envPeer+"="+s.b.Name, envRole+"="+role)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &peerProc{cmd: cmd, lines: make(chan string, 16), exited: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), peerPrefix); ok {
				p.lines <- line
			}
		}
		_ = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// expect waits for the peer's next line, which must start with word, and
// returns its other fields.
func (p *peerProc) expect(t *testing.T, word string) []string {
	t.Helper()
	select {
	case line := <-p.lines:
		f := strings.Fields(line)
		require.Equal(t, word, f[0], "peer said %q", line)
		return f[1:]
	case <-p.exited:
		t.Fatalf("the peer process exited before saying %q", word)
	case <-time.After(bound):
		t.Fatalf("the peer process did not say %q within %v", word, bound)
	}
	return nil
}

// kill kills the peer with SIGKILL and waits for it to be gone.
func (p *peerProc) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	select {
	case <-p.exited:
	case <-time.After(bound):
		t.Fatal("the killed peer process did not exit")
	}
}

var peerTests = []test{
	{"DataAcrossProcesses", (*suite).peerData},
	{"KilledWhileConnected", (*suite).peerKilledIdle},
	{"KilledDuringTransfer", (*suite).peerKilledBusy},
	{"KilledPassiveSurvivor", (*suite).peerKilledPassive},
}

// connectPeer starts a listening peer and connects a QP of a new device to
// it; it returns the QP and the accept's private data.
func (s *suite) connectPeer(t *testing.T, w *world) (*peerProc, *conn, []byte) {
	t.Helper()
	p := s.startPeer(t, "listen")
	f := p.expect(t, "listening")
	require.Len(t, f, 2)
	addr, err := netip.ParseAddr(f[0])
	require.NoError(t, err)
	id, err := strconv.ParseUint(f[1], 10, 64)
	require.NoError(t, err)
	a := w.open().newQP(qpOpts{})
	require.NoError(t, a.qp.Connect(netip.AddrPortFrom(addr, 0), id, nil, bound))
	ev := w.expectEvent(a, rdma.CMEstablished)
	p.expect(t, "established")
	return p, a, ev.PrivateData
}

// brokenFlushed checks the survivor's side after its peer died: CMBroken,
// Error, its receives ids flushed in order.
func brokenFlushed(t *testing.T, w *world, a *conn, ids ...uint64) {
	t.Helper()
	w.expectEvent(a, rdma.CMBroken)
	state(t, a, rdma.QPSErr)
	flushedAll(t, w.take(a.rcq, len(ids)), ids, func(int) rdma.WCOpcode { return rdma.WCRecv }, a)
	markers(t, w, a)
}

// RDMA writes and reads reach the memory of a peer in another process.
func (s *suite) peerData(t *testing.T) {
	w := s.world(t)
	_, a, priv := s.connectPeer(t, w)
	require.Len(t, priv, 16, "the peer's private data")
	raddr, rkey := binary.LittleEndian.Uint64(priv), binary.LittleEndian.Uint32(priv[8:])
	n := int(binary.LittleEndian.Uint32(priv[12:]))
	src, dst := a.side.buf(n, accAll), a.side.buf(n, accAll)
	for i, size := range []int{8, 4099, n} {
		fill(src.b[:size], uint64(i))
		require.NoError(t, a.qp.PostSend(write(1, rdma.SendSignaled, raddr, rkey, src.sge(0, size))))
		checkWC(t, w.take1(a.scq), 1, rdma.WCSuccess, rdma.WCRDMAWrite, a)
		require.NoError(t, a.qp.PostSend(read(2, rdma.SendSignaled, raddr, rkey, dst.sge(0, size))))
		checkWC(t, w.take1(a.scq), 2, rdma.WCSuccess, rdma.WCRDMARead, a)
		sameBytes(t, src.b[:size], dst.b[:size], "%d bytes written to and read back from the peer process", size)
	}
	require.NoError(t, a.qp.Disconnect(false))
	w.expectEvent(a, rdma.CMDisconnected)
}

// The peer process dies while connected and idle: the survivor gets
// CMBroken and its receives flushed.
func (s *suite) peerKilledIdle(t *testing.T) {
	w := s.world(t)
	p, a, _ := s.connectPeer(t, w)
	rb := a.side.buf(128, accAll)
	require.NoError(t, a.qp.PostRecv(recv(1, rb.sge(0, 64))))
	require.NoError(t, a.qp.PostRecv(recv(2, rb.sge(64, 64))))
	p.kill(t)
	brokenFlushed(t, w, a, 1, 2)
}

// The peer process dies with RDMA writes and sends outstanding: every
// request completes once, in post order, successes first; after the first
// failure everything is flushed; the sends (the peer never posted a
// receive) all fail.
func (s *suite) peerKilledBusy(t *testing.T) {
	w := s.world(t)
	p, a, priv := s.connectPeer(t, w)
	require.Len(t, priv, 16, "the peer's private data")
	raddr, rkey := binary.LittleEndian.Uint64(priv), binary.LittleEndian.Uint32(priv[8:])
	n := int(binary.LittleEndian.Uint32(priv[12:]))
	src := a.side.buf(n, accAll)
	fill(src.b, 1)
	rb := a.side.buf(128, accAll)
	require.NoError(t, a.qp.PostRecv(recv(7, rb.sge(0, 64))))
	require.NoError(t, a.qp.PostRecv(recv(8, rb.sge(64, 64))))
	var ids []uint64
	for i := range 4 {
		require.NoError(t, a.qp.PostSend(write(uint64(i), rdma.SendSignaled, raddr, rkey, src.all())))
		ids = append(ids, uint64(i))
	}
	for i := 4; i < 7; i++ {
		require.NoError(t, a.qp.PostSend(send(uint64(i), rdma.SendSignaled, src.sge(0, min(n, 64<<10)))))
		ids = append(ids, uint64(i))
	}
	p.kill(t)
	wcs := w.take(a.scq, len(ids))
	failed := -1
	for k, wc := range wcs {
		require.Equal(t, ids[k], wc.WRID, "completion %d", k)
		require.Equal(t, a.qp.Num(), wc.QPNum)
		switch {
		case failed >= 0:
			require.Equal(t, rdma.WCWRFlushErr.String(), wc.Status.String(), "request %d after request %d failed", k, failed)
		case wc.Status != rdma.WCSuccess:
			failed = k
		}
	}
	require.True(t, failed >= 0 && failed <= 4, "the sends to a peer without receives did not fail (first failure: %d)", failed)
	brokenFlushed(t, w, a, 7, 8)
}

// The peer process that connected to us dies: the passive survivor gets
// CMBroken and its receives flushed.
func (s *suite) peerKilledPassive(t *testing.T) {
	w := s.world(t)
	bs := w.open()
	b := bs.newQP(qpOpts{})
	l := bs.listen(0, true, 4)
	p := s.startPeer(t, fmt.Sprintf("connect %s %d", bs.dev.Addr(), l.l.ServiceID()))
	require.NoError(t, w.request(l).Accept(b.qp, nil))
	w.expectEvent(b, rdma.CMEstablished)
	p.expect(t, "established")
	rb := bs.buf(64, accAll)
	require.NoError(t, b.qp.PostRecv(recv(3, rb.all())))
	p.kill(t)
	brokenFlushed(t, w, b, 3)
}
