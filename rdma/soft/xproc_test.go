package soft

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// Tests with a second process: a peer running as another user. The test
// binary re-executes itself with helperEnv set (TestMain runs the helper).

const helperEnv = "GODAT_SOFT_HELPER"

// runHelper plays the helper's part when this process is one; it reports
// whether it was (and then exits).
func runHelper() bool {
	args := strings.Fields(os.Getenv(helperEnv))
	if len(args) == 0 {
		return false
	}
	if args[0] == "disc-exit" {
		discExit(args[1:])
	}
	if strings.HasPrefix(args[0], "attack-") || args[0] == "bystander" {
		runAttack(args) // hostile_test.go
	}
	d, err := rdma.Open("soft", rdma.Params{"transport": "shm"}, nil)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	pd, _ := d.AllocPD()
	cm, _ := d.CreateCMChannel()
	cq, _ := d.CreateCQ(16, nil, 0)
	q, err := d.CreateQP(rdma.QPInitAttr{PD: pd, SendCQ: cq, RecvCQ: cq, CM: cm})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	var ev rdma.CMEvent
	switch args[0] {
	case "connect": // connect <service id>: print the outcome
		svc, _ := strconv.ParseUint(args[1], 10, 64)
		if err := q.Connect(netip.AddrPortFrom(lo, 0), svc, nil, 5*time.Second); err != nil {
			fmt.Println("error", err)
			break
		}
		if cm.Get(&ev, 10*time.Second) == nil {
			fmt.Println("event", ev.Type)
		} else {
			fmt.Println("no event")
		}
	case "listen": // listen: print the id, then every event for a while
		l, err := d.Listen(cm, 0, true, 4, 0)
		if err != nil {
			fmt.Println("error", err)
			break
		}
		fmt.Println("listening", l.ServiceID())
		for cm.Get(&ev, 3*time.Second) == nil {
			fmt.Println("event", ev.Type)
		}
		fmt.Println("done")
	}
	d.Close()
	os.Exit(0)
	return true
}

// discExit is the helper "disc-exit <service id> <n>": it connects n QPs
// over TCP to the service, disconnects them all gracefully, closes the
// device and exits at once, as a program does that ends with dat_ia_close.
// It prints "established" once all are and disconnects when a line comes
// on its standard input; errors print as "error ...".
func discExit(args []string) {
	fail := func(err error) {
		fmt.Println("error", err)
		os.Exit(1)
	}
	svc, _ := strconv.ParseUint(args[0], 10, 64)
	n, _ := strconv.Atoi(args[1])
	d, err := rdma.Open("soft", rdma.Params{"transport": "tcp"}, nil)
	if err != nil {
		fail(err)
	}
	pd, _ := d.AllocPD()
	cm, _ := d.CreateCMChannel()
	cq, _ := d.CreateCQ(16, nil, 0)
	qps := make([]rdma.QP, n)
	for i := range qps {
		if qps[i], err = d.CreateQP(rdma.QPInitAttr{PD: pd, SendCQ: cq, RecvCQ: cq, CM: cm}); err != nil {
			fail(err)
		}
		if err := qps[i].Connect(netip.AddrPortFrom(lo, 0), svc, nil, testWait); err != nil {
			fail(err)
		}
	}
	var ev rdma.CMEvent
	for range qps {
		if err := cm.Get(&ev, testWait); err != nil {
			fail(err)
		}
		if ev.Type != rdma.CMEstablished {
			fail(fmt.Errorf("event %v", ev.Type))
		}
	}
	fmt.Println("established")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	for _, q := range qps {
		if err := q.Disconnect(true); err != nil {
			fail(err)
		}
	}
	d.Close()
	os.Exit(0)
}

// helper starts this test binary as a helper process of the same user;
// in is its standard input.
func helper(t *testing.T, args string) (in io.Writer, out *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+args)
	w, err := cmd.StdinPipe()
	require.NoError(t, err)
	r, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return w, bufio.NewReader(r)
}

// A program that disconnects gracefully, closes the device and exits at
// once ends its connections in order for the peer: Close returns only
// once the DISC frames of the connections it saw shut down are written
// (the writer goroutines that send them die with the process). Else the
// peer saw the socket close without DISC, CMBroken for CMDisconnected
// (test_dat_srq_scale failed so now and then over TCP).
func TestTCPDisconnectThenExit(t *testing.T) {
	const n = 64
	b := newEnd(t, rdma.Params{"transport": "tcp"})
	l, err := b.dev.Listen(b.cm, 0, true, n, 5)
	require.NoError(t, err)
	defer l.Close()
	in, out := helper(t, fmt.Sprint("disc-exit ", l.ServiceID(), " ", n))
	qps := []rdma.QP{b.qp}
	for len(qps) < n {
		qps = append(qps, b.newQP(t, nil))
	}
	for accepted, up := 0, 0; up < n; {
		switch ev := b.event(t); ev.Type {
		case rdma.CMConnectRequest:
			require.NoError(t, ev.Request.Accept(qps[accepted], nil))
			accepted++
		case rdma.CMEstablished:
			up++
		default:
			t.Fatalf("event %v while connecting", ev.Type)
		}
	}
	require.Equal(t, "established", line(t, out))
	_, err = io.WriteString(in, "go\n")
	require.NoError(t, err)
	broken := 0
	for i := 0; i < n; i++ {
		ev := b.event(t)
		if ev.Type != rdma.CMDisconnected {
			require.Equal(t, rdma.CMBroken, ev.Type)
			broken++
		}
	}
	require.Zero(t, broken, "connections the exiting peer had disconnected broke instead")
}

// helperAs starts this test binary as a helper running as uid/gid 65534.
func helperAs(t *testing.T, args string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("running a peer as another user needs root")
	}
	dir, err := os.MkdirTemp("", "godat-helper")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755)) // the other user must reach the binary
	bin := filepath.Join(dir, "helper")
	src, err := os.Open(os.Args[0])
	require.NoError(t, err)
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	src.Close()
	require.NoError(t, dst.Close())
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), helperEnv+"="+args)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, bufio.NewReader(out)
}

// line reads the helper's next line (bounded by its own timeouts).
func line(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	s, err := r.ReadString('\n')
	require.NoError(t, err, "the helper ended early")
	return strings.TrimSpace(s)
}

// A device of another user cannot connect to a shared-memory listener:
// the connection is refused and no request reaches the consumer. (An
// honest device already refuses a listener of another uid before sending
// its request; TestHostileShmOtherUser sends one anyway, to test the
// listener's own SO_PEERCRED check.)
func TestShmRefusesOtherUser(t *testing.T) {
	b := newEnd(t, rdma.Params{"transport": "shm"})
	l, err := b.dev.Listen(b.cm, 0, true, 4, 5)
	require.NoError(t, err)
	defer l.Close()
	_, out := helperAs(t, fmt.Sprint("connect ", l.ServiceID()))
	require.Equal(t, "event "+rdma.CMRefused.String(), line(t, out))
	var ev rdma.CMEvent
	require.ErrorIs(t, b.cm.Get(&ev, 50*time.Millisecond), rdma.ErrTimeout, "a request from another user reached the consumer")
}

// An active side connects only to a listener of its own uid: another
// user may bind the abstract name first.
func TestShmRefusesOtherUsersListener(t *testing.T) {
	_, out := helperAs(t, "listen")
	f := strings.Fields(line(t, out))
	require.Equal(t, "listening", f[0])
	svc, err := strconv.ParseUint(f[1], 10, 64)
	require.NoError(t, err)
	a := newEnd(t, rdma.Params{"transport": "shm"})
	require.NoError(t, a.qp.Connect(netip.AddrPortFrom(lo, 0), svc, nil, testWait))
	require.Equal(t, rdma.CMRefused, a.event(t).Type)
	require.Equal(t, "done", line(t, out), "the other user's listener saw a request")
}
