package soft

// The TCP transport: processes on different hosts (or on one host, with
// transport=tcp) talk over one TCP connection per endpoint.
//
// Qualifiers and ports. A connection qualifier q is reached at TCP port
// tcpPort(q) of the IA address: the low 16 bits of q, moved up by 64512
// when they fall below 1024 (ports an ordinary user cannot bind). The
// connect header carries the whole 64-bit q, so one TCP listener serves
// every qualifier of an IA that maps to its port, and a request for a
// qualifier nobody listens on is refused (non-peer reject) even when the
// port is open. dat_psp_create_any binds a port the kernel picks and
// reports that port number as the qualifier, so it works across hosts. Two
// IAs on one host cannot listen on qualifiers that map to the same port
// (the second gets "qualifier in use").
//
// See tcp_conn.go for the wire format, tcp_qp.go for the completion rules
// and tcp_cm.go for connection management.

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"syscall"
	"time"

	"godat/rdma"
)

// Transport modes of a device.
const (
	modeShm = iota
	modeTCP
	modeAuto
)

// defaultTCPTimeout bounds the detection of a silent peer (keepalive and
// TCP_USER_TIMEOUT); the dat.conf parameter timeout=<seconds> changes it.
const defaultTCPTimeout = 10 * time.Second

// tcpPortOf maps a 64-bit qualifier to the TCP port that serves it.
func tcpPortOf(q uint64) uint16 {
	p := uint16(q)
	if p < 1024 {
		p += 65536 - 1024
	}
	return p
}

// tcpDevice is an IA that speaks TCP (transport=tcp), or TCP and shared
// memory (transport=auto). The embedded shared-memory device provides the
// memory registration table and the doorbell in both modes, and the
// shared-memory transport in auto mode.
type tcpDevice struct {
	*device
	mode    int
	timeout time.Duration

	tmu    sync.Mutex
	tqps   map[*tqp]struct{}
	ports  map[uint16]*tcpPort
	pend   map[*tconn]struct{} // incoming connections not yet bound to a QP
	closed bool
}

// resolveAddr parses an IA address: an IPv4 or IPv6 literal, or the name of
// an interface (its first IPv4 address, else its first global IPv6 address,
// else its first link-local IPv6 address with the interface as zone).
func resolveAddr(s string) (netip.Addr, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), nil
	}
	ifc, err := net.InterfaceByName(s)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("soft: addr %q is neither an IP address nor an interface: %w", s, rdma.ErrInvalid)
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("soft: interface %q: %v: %w", s, err, rdma.ErrInvalid)
	}
	var v6, ll netip.Addr
	for _, a := range addrs {
		p, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		x, ok := netip.AddrFromSlice(p.IP)
		if !ok {
			continue
		}
		x = x.Unmap()
		switch {
		case x.Is4():
			return x, nil
		case x.IsLinkLocalUnicast():
			if !ll.IsValid() {
				ll = x.WithZone(s)
			}
		case !v6.IsValid():
			v6 = x
		}
	}
	if v6.IsValid() {
		return v6, nil
	}
	if ll.IsValid() {
		return ll, nil
	}
	return netip.Addr{}, fmt.Errorf("soft: interface %q has no IP address: %w", s, rdma.ErrInvalid)
}

func parseTimeout(params map[string]string) (time.Duration, error) {
	s, ok := params["timeout"]
	if !ok || s == "" {
		return defaultTCPTimeout, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 3600 {
		return 0, fmt.Errorf("soft: timeout=%q: want seconds in 1..3600: %w", s, rdma.ErrInvalid)
	}
	return time.Duration(n) * time.Second, nil
}

func openTCP(addr netip.Addr, mode int, timeout time.Duration) (*tcpDevice, error) {
	d, err := openShm(addr)
	if err != nil {
		return nil, err
	}
	return &tcpDevice{device: d, mode: mode, timeout: timeout,
		tqps: map[*tqp]struct{}{}, ports: map[uint16]*tcpPort{}, pend: map[*tconn]struct{}{}}, nil
}

func (d *tcpDevice) Attr() rdma.DeviceAttr {
	a := d.device.Attr()
	a.Name = "soft-tcp"
	if d.mode == modeAuto {
		a.Name = "soft-auto"
	}
	return a
}

func (d *tcpDevice) CreateQP(cfg rdma.QPConfig) (rdma.QP, error) {
	if d.mode == modeAuto {
		return d.newAutoQP(cfg)
	}
	t, err := d.newTQP(cfg)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Close ends every connection and listener of the device.
func (d *tcpDevice) Close() error {
	d.tmu.Lock()
	if d.closed {
		d.tmu.Unlock()
		return rdma.ErrClosed
	}
	d.closed = true
	var ports []*tcpPort
	for _, p := range d.ports {
		ports = append(ports, p)
	}
	d.ports = map[uint16]*tcpPort{}
	var pend []*tconn
	for c := range d.pend {
		pend = append(pend, c)
	}
	var qps []*tqp
	for q := range d.tqps {
		qps = append(qps, q)
	}
	d.tmu.Unlock()
	for _, p := range ports {
		p.ln.Close()
	}
	for _, c := range pend {
		c.abort()
	}
	for _, q := range qps {
		_ = q.Destroy()
	}
	return d.device.Close()
}

// ---- listeners ----

// tcpPort is one TCP listening socket of a device and the qualifiers it
// serves.
type tcpPort struct {
	ln    *net.TCPListener
	port  uint16
	quals map[uint64]*tcpListener
}

// tcpListener is one bound qualifier.
type tcpListener struct {
	dev  *tcpDevice
	qual uint64
	port *tcpPort
	h    rdma.ListenHandler
	once sync.Once
}

func (l *tcpListener) Qual() uint64 { return l.qual }

func (l *tcpListener) Close() error {
	err := rdma.ErrClosed
	l.once.Do(func() {
		err = nil
		d := l.dev
		d.tmu.Lock()
		p := l.port
		delete(p.quals, l.qual)
		last := len(p.quals) == 0
		if last && d.ports[p.port] == p {
			delete(d.ports, p.port)
		}
		d.tmu.Unlock()
		if last {
			p.ln.Close()
		}
	})
	return err
}

func (d *tcpDevice) Listen(qual uint64, any bool, h rdma.ListenHandler) (rdma.Listener, error) {
	if h == nil {
		return nil, rdma.ErrInvalid
	}
	if d.mode == modeAuto {
		return d.listenAuto(qual, any, h)
	}
	return d.listenTCP(qual, any, h)
}

func (d *tcpDevice) listenTCP(qual uint64, any bool, h rdma.ListenHandler) (*tcpListener, error) {
	d.tmu.Lock()
	defer d.tmu.Unlock()
	if d.closed {
		return nil, rdma.ErrClosed
	}
	if !any {
		if p := d.ports[tcpPortOf(qual)]; p != nil {
			if p.quals[qual] != nil {
				return nil, rdma.ErrQualInUse
			}
			l := &tcpListener{dev: d, qual: qual, port: p, h: h}
			p.quals[qual] = l
			return l, nil
		}
	}
	var port uint16
	if !any {
		port = tcpPortOf(qual)
	}
	// Binding under tmu keeps two Listen calls of this device from racing
	// for one port; it is not a hot path.
	ln, err := net.ListenTCP("tcp", net.TCPAddrFromAddrPort(netip.AddrPortFrom(d.addr, port)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, rdma.ErrQualInUse
		}
		return nil, fmt.Errorf("soft: tcp listen: %v: %w", err, rdma.ErrNoResources)
	}
	port = uint16(ln.Addr().(*net.TCPAddr).Port)
	if any {
		qual = uint64(port)
	}
	p := &tcpPort{ln: ln, port: port, quals: map[uint64]*tcpListener{}}
	l := &tcpListener{dev: d, qual: qual, port: p, h: h}
	p.quals[qual] = l
	d.ports[port] = p
	go d.acceptLoop(p)
	return l, nil
}

func (d *tcpDevice) acceptLoop(p *tcpPort) {
	for {
		s, err := p.ln.AcceptTCP()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // e.g. EMFILE; bounded retry
			continue
		}
		go d.incoming(p, s)
	}
}

// lookupQual finds the listener of qual on port p.
func (d *tcpDevice) lookupQual(p *tcpPort, qual uint64) *tcpListener {
	d.tmu.Lock()
	defer d.tmu.Unlock()
	return p.quals[qual]
}

// track records an incoming connection until it is bound or ends; false
// means the device is closed.
func (d *tcpDevice) track(c *tconn, on bool) bool {
	d.tmu.Lock()
	defer d.tmu.Unlock()
	if on {
		if d.closed {
			return false
		}
		d.pend[c] = struct{}{}
	} else {
		delete(d.pend, c)
	}
	return true
}
