package soft

// The device's side of the TCP wire: listening ports and the service ids
// they serve.
//
// Service ids and ports. Service id s is reached at TCP port tcpPortOf(s)
// of the IA address (of every IPv4 address of the host for a device
// without addr=, params.wild): the low 16 bits of s, moved up by 64512
// when they fall below 1024 (ports an ordinary user cannot bind). The
// connect request carries the whole 64-bit id, so one TCP listener serves
// every id of a device that maps to its port, and a request for an id
// nobody listens on is refused even when the port is open. A Listen with
// any draws a random id (whose port then must be free). Two devices on one
// host cannot listen on ids that map to the same port (the second gets
// ErrServiceInUse).

import (
	"errors"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"godat/rdma"

	"golang.org/x/sys/unix"
)

// tcpPortOf maps a service id to the TCP port that serves it.
func tcpPortOf(s uint64) uint16 {
	p := uint16(s)
	if p < 1024 {
		p += 65536 - 1024
	}
	return p
}

type tcpDev struct {
	mu     sync.Mutex // below listener and qp locks: ports and pending connections
	ports  map[uint16]*tcpPort
	pend   map[*tcpWire]struct{} // incoming connections not yet bound to a QP
	closed bool
	loop   *tcpLoop                // the receive loop, started with the first connection
	live   atomic.Pointer[tcpLoop] // loop, for Poll without t.mu
	token  uint32                  // names this device to peers (tcp_order.go)
	orders map[orderKey]*tcpOrder
	// ending holds the connections shut down in order whose last frame
	// (DISC) is not written yet: close waits for them.
	ending map[*tcpWire]struct{}
	// moving counts the connections whose data a goroutine of ours moves
	// now (a helper placing a large payload, the writer goroutine holding
	// a full socket's queue). With the process pinned to one CPU, a
	// consumer busy-polling that CPU would leave those threads only the
	// scheduler's fair share: a Poll that finds nothing while some move
	// gives the CPU up (yieldToMovers).
	moving  atomic.Int32
	yielded atomic.Int64 // monoNow of the last yield
	// writerRuns counts the writer goroutines' turns at a queue: a test
	// knows from it that one wrote, where a look at moving may fall
	// before or after the turn.
	writerRuns atomic.Uint64
}

const yieldGap = 10 * time.Microsecond

// yieldToWaker gives the CPU up once, as a mover starts (the writer
// goroutine when a post hands it the rest of a transfer, a helper reading
// a large payload into place). Its thread was woken from the application's
// thread, inside a post or a Poll, and a woken thread preempts its waker:
// the call then lasted the mover's time slice. apppat's 4 MiB RDMA write
// post over godat-tcp (p99 of 200) took 0.5-2.5 ms in 31 of 152 runs, at
// most 147 us in 18 runs with the yield. Making the movers' threads
// SCHED_BATCH, which preempts nobody, did as well for the posts, but a
// thread switched for each move and back cost a fifth of the 1 MiB stream
// waited for with dat_evd_wait (the goroutine locked to it wakes through
// a second thread), and one left switched would slow the receive loop
// serving a passive target when the runtime later runs it there.
func yieldToWaker() { schedYield() }

// schedYield is sched_yield(2): it returns at once when nothing else is
// runnable on this CPU.
func schedYield() { _, _, _ = unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }

// setMoving records that a goroutine of ours starts (on) or stops moving
// the data of a connection; f is the connection's flag for that goroutine,
// so that a start or stop said twice counts once.
func (t *tcpDev) setMoving(f *atomic.Bool, on bool) {
	if !f.CompareAndSwap(!on, on) {
		return
	}
	if on {
		t.moving.Add(1)
	} else {
		t.moving.Add(-1)
	}
}

// yieldToMovers gives up the CPU when goroutines of ours move data: the
// consumer's empty Poll would otherwise spin on the CPU that they need to
// run (apppat and tcp_bench pin each process to one). sched_yield returns
// at once when nothing else is runnable there.
func (t *tcpDev) yieldToMovers() {
	if t.moving.Load() == 0 {
		return
	}
	now := monoNow()
	if last := t.yielded.Load(); now-last < int64(yieldGap) || !t.yielded.CompareAndSwap(last, now) {
		return
	}
	if runtime.GOMAXPROCS(0) > 1 {
		schedYield()
		return
	}
	// One P, which this consumer holds for all but the moments between
	// its calls: the goroutines get it only if it is given up here, and a
	// goroutine waiting for its socket is runnable only once somebody
	// polled the socket waits.
	waits.pump()
	runtime.Gosched()
}

// tcpPort is one listening socket and the service ids it serves.
type tcpPort struct {
	ln   *net.TCPListener
	port uint16
	svcs map[uint64]*listener
}

// tcpListen is a listener's TCP binding.
type tcpListen struct {
	port *tcpPort
}

func (t *tcpDev) init() {
	t.ports = map[uint16]*tcpPort{}
	t.pend = map[*tcpWire]struct{}{}
	t.orders = map[orderKey]*tcpOrder{}
	t.ending = map[*tcpWire]struct{}{}
	t.token = randKey()
}

// close stops every port and drops the connections not yet bound. Then it
// waits, at most lingerTime, until the connections shut down in order
// (the device's Close ends its QPs' so) have written their last frames:
// the writer goroutines that write them die with the process, and a
// program that closes the IA and exits would otherwise leave its peers a
// socket closed without DISC, their connections broken rather than
// disconnected.
func (t *tcpDev) close() {
	t.mu.Lock()
	t.closed = true
	ports := make([]*tcpPort, 0, len(t.ports))
	for _, p := range t.ports {
		ports = append(ports, p)
	}
	clear(t.ports)
	pend := make([]*tcpWire, 0, len(t.pend))
	for w := range t.pend {
		pend = append(pend, w)
	}
	loop := t.loop
	ending := make([]*tcpWire, 0, len(t.ending))
	for w := range t.ending {
		ending = append(ending, w)
	}
	t.mu.Unlock()
	for _, p := range ports {
		p.ln.Close()
	}
	for _, w := range pend {
		w.abort()
	}
	if loop != nil {
		loop.stop()
	}
	if len(ending) > 0 {
		bound := time.NewTimer(lingerTime)
		defer bound.Stop()
		for _, w := range ending {
			select {
			case <-w.lastOut:
			case <-bound.C:
				return // the linger timers abort them
			}
		}
	}
}

// addEnding records that w's shutdown queued its last frame (unless the
// socket is closed already).
func (t *tcpDev) addEnding(w *tcpWire) {
	t.mu.Lock()
	defer t.mu.Unlock()
	select {
	case <-w.lastOut:
	default:
		t.ending[w] = struct{}{}
	}
}

// track records an incoming connection until it is bound or ends; false
// when the device is closed.
func (t *tcpDev) track(w *tcpWire, on bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !on {
		delete(t.pend, w)
		return true
	}
	if t.closed {
		return false
	}
	t.pend[w] = struct{}{}
	return true
}

// listenTCP serves l's service id on its port.
func (l *listener) listenTCP() error {
	d := l.dev
	t := &d.tcp
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return rdma.ErrClosed
	}
	port := tcpPortOf(l.svc)
	if p := t.ports[port]; p != nil {
		if p.svcs[l.svc] != nil {
			return rdma.ErrServiceInUse
		}
		p.svcs[l.svc] = l
		l.tcp.port = p
		return nil
	}
	// Binding under t.mu keeps two Listen calls of this device from
	// racing for one port; it is not a hot path.
	// A wild device listens on 0.0.0.0 as tcp4: IPv4 only, not the
	// dual-stack socket "tcp" would make of it.
	network := "tcp"
	if d.wild {
		network = "tcp4"
	}
	ln, err := net.ListenTCP(network, net.TCPAddrFromAddrPort(netip.AddrPortFrom(d.listenAddr(), port)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return rdma.ErrServiceInUse
		}
		return rdma.ErrNoResources
	}
	p := &tcpPort{ln: ln, port: port, svcs: map[uint64]*listener{l.svc: l}}
	t.ports[port] = p
	l.tcp.port = p
	go d.acceptTCP(p)
	return nil
}

// closeTCP stops serving l's id; the port closes with its last id.
func (l *listener) closeTCP() {
	p := l.tcp.port
	if p == nil {
		return
	}
	t := &l.dev.tcp
	t.mu.Lock()
	if p.svcs[l.svc] == l {
		delete(p.svcs, l.svc)
	}
	last := len(p.svcs) == 0
	if last && t.ports[p.port] == p {
		delete(t.ports, p.port)
	}
	t.mu.Unlock()
	if last {
		p.ln.Close()
	}
}

func (d *device) acceptTCP(p *tcpPort) {
	for {
		s, err := p.ln.AcceptTCP()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // e.g. EMFILE; bounded retry
			continue
		}
		go d.incomingTCP(p, s)
	}
}

// lookupSvc finds the listener of service id svc on port p.
func (t *tcpDev) lookupSvc(p *tcpPort, svc uint64) *listener {
	t.mu.Lock()
	defer t.mu.Unlock()
	return p.svcs[svc]
}
