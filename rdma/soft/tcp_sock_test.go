package soft

import (
	"bufio"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// epollSetsHolding counts the epoll sets of this process that have
// descriptor fd in their interest list (/proc/self/fdinfo's tfd lines).
func epollSetsHolding(t *testing.T, fd int) int {
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		if l, _ := os.Readlink("/proc/self/fd/" + e.Name()); l != "anon_inode:[eventpoll]" {
			continue
		}
		f, err := os.Open("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue // closed meanwhile
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fs := strings.Fields(sc.Text())
			if len(fs) >= 2 && fs[0] == "tfd:" {
				if v, _ := strconv.Atoi(fs[1]); v == fd {
					n++
				}
			}
		}
		f.Close()
	}
	return n
}

// tcpFd is the socket descriptor of e's QP's connection.
func tcpFd(t *testing.T, e *end) int {
	q := e.qp.(*qp)
	q.mu.Lock()
	defer q.mu.Unlock()
	w, ok := q.c.w.(*tcpWire)
	require.True(t, ok, "a TCP connection")
	return w.sock.fd
}

// An established connection's socket is in exactly one epoll set, its
// device's receive loop's, while the consumer polls: not in the runtime's
// poller (whose thread every arrival would wake), not in the socket-wait
// set once its handshake's waits are over. Every set a socket is in costs
// every arrival a callback.
func TestTCPSocketInOneEpollSet(t *testing.T) {
	a, b := newEnd(t, rdma.Params{"transport": "tcp"}), newEnd(t, rdma.Params{"transport": "tcp"})
	connect(t, a, b, nil, nil)
	for tag := uint64(1); tag <= 20; tag++ {
		sendTag(t, a, b, tag)
		sendTag(t, b, a, tag)
	}
	for _, e := range []*end{a, b} {
		require.Equal(t, 1, epollSetsHolding(t, tcpFd(t, e)))
	}
}

// capIovs keeps the first max bytes: whole iovecs before the one that
// crosses max, that one cut, none after.
func TestCapIovs(t *testing.T) {
	v := []iov{{Base: 0x1000, Len: 100}, {Base: 0x2000, Len: 300}, {Base: 0x3000, Len: 50}}
	w := append([]iov(nil), v...)
	require.Equal(t, 2, capIovs(w, 250))
	require.Equal(t, []iov{{Base: 0x1000, Len: 100}, {Base: 0x2000, Len: 150}}, w[:2])
	w = append(w[:0], v...)
	require.Equal(t, 1, capIovs(w, 100))
	require.Equal(t, 100, w[0].Len)
	w = append(w[:0], v...)
	require.Equal(t, 3, capIovs(w, 1000))
	require.Equal(t, v, w)
}

// A consumer's Poll can wake a goroutine waiting for its socket without the
// runtime's poller (pump): with one P, held by the polling consumer, the
// poller would hear of the readiness only when the runtime next looks,
// every 10 ms or so. With GOMAXPROCS 1 and no yield between the arrival and
// the pump, the waiter's token can only come from the pump.
func TestSockWaitsPump(t *testing.T) {
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer ln.Close()
	peer, err := net.DialTCP("tcp4", nil, ln.Addr().(*net.TCPAddr))
	require.NoError(t, err)
	defer peer.Close()
	c, err := ln.AcceptTCP()
	require.NoError(t, err)
	s, err := detachTCP(c)
	require.NoError(t, err)
	defer s.Close()

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	runtime.Gosched() // the socket-wait goroutine, if any, back asleep
	require.NoError(t, waits.arm(s, waitIn))
	_, err = peer.Write([]byte("x"))
	require.NoError(t, err)
	waits.pump()
	select {
	case <-s.ready[waitIn]:
	default:
		t.Fatal("the pump did not wake the socket's reader")
	}
}
