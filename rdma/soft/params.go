package soft

// Open parameters: the key=value pairs of a dat.conf entry's instance data.

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"godat/rdma"
)

// Transports of a device.
type transport uint8

const (
	trShm  transport = iota // processes on this host, through shared memory
	trTCP                   // TCP to every peer
	trAuto                  // shared memory to peers on this host, TCP otherwise
)

// defaultTCPTimeout bounds the detection of a silent TCP peer (keepalive and
// TCP_USER_TIMEOUT); the parameter timeout=<seconds> changes it.
const defaultTCPTimeout = 10 * time.Second

// loopback4 is the address of a shared-memory IA without addr=, and of a
// TCP one on a host without another IPv4 address.
var loopback4 = netip.MustParseAddr("127.0.0.1")

// params are a device's parsed open parameters.
type params struct {
	tr   transport
	addr netip.Addr // the IA address (Addr, dat_ia_query)
	// wild: a TCP-capable device without addr=. It listens on every IPv4
	// address of the host (0.0.0.0, and the shared-memory wildcard name,
	// shm_cm.go), connects from the address the kernel picks, and reports
	// the host's first address (hostAddr) as its own.
	wild    bool
	timeout time.Duration
}

// parseParams reads transport=shm|tcp|auto, addr=<ip or interface> and
// timeout=<seconds>.
func parseParams(p rdma.Params) (params, error) {
	out := params{addr: loopback4, timeout: defaultTCPTimeout}
	switch t := p["transport"]; t {
	case "", "shm":
		out.tr = trShm
	case "tcp":
		out.tr = trTCP
	case "auto":
		out.tr = trAuto
	default:
		return out, fmt.Errorf("soft: transport %q not supported: %w", t, rdma.ErrInvalid)
	}
	if s := p["addr"]; s != "" {
		a, err := resolveAddr(s)
		if err != nil {
			return out, err
		}
		out.addr = a
	} else if out.tr != trShm {
		out.wild, out.addr = true, hostAddr()
	}
	if s := p["timeout"]; s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 3600 {
			return out, fmt.Errorf("soft: timeout=%q: want seconds in 1..3600: %w", s, rdma.ErrInvalid)
		}
		out.timeout = time.Duration(n) * time.Second
	}
	return out, nil
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
		return netip.Addr{}, fmt.Errorf("soft: addr %q is neither an IP address nor an interface: %w", s, rdma.ErrNoDevice)
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return netip.Addr{}, fmt.Errorf("soft: interface %q: %v: %w", s, err, rdma.ErrNoDevice)
	}
	var v6, ll netip.Addr
	for _, a := range addrs {
		x, ok := ipOf(a)
		if !ok {
			continue
		}
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
	return netip.Addr{}, fmt.Errorf("soft: interface %q has no IP address: %w", s, rdma.ErrNoDevice)
}

// hostAddr is the address a device without addr= reports (as OFED's
// providers take the host's first configured address): the first IPv4
// address, not a loopback one, of an interface that is up, in interface
// order; a link-local (169.254/16) one only when there is no other;
// 127.0.0.1 when there is none (a host or namespace with only lo).
func hostAddr() netip.Addr {
	ifcs, err := net.Interfaces()
	if err != nil {
		return loopback4
	}
	var ll netip.Addr
	for _, ifc := range ifcs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			x, ok := ipOf(a)
			if !ok {
				continue
			}
			switch {
			case !x.Is4() || x.IsLoopback() || x.IsUnspecified():
			case x.IsLinkLocalUnicast():
				if !ll.IsValid() {
					ll = x
				}
			default:
				return x
			}
		}
	}
	if ll.IsValid() {
		return ll
	}
	return loopback4
}

// listenAddr is the address the device listens on: the IA address, or
// 0.0.0.0 for a wild device.
func (p *params) listenAddr() netip.Addr {
	if p.wild {
		return netip.IPv4Unspecified()
	}
	return p.addr
}

// localFor is the device's own address on a connection to (or from) a, as
// far as it is known before the socket says: the IA address, except that a
// wild device is reached at, and reaches, an address of this host as the
// kernel would pick it: a loopback peer from loopback (127.0.0.1 or ::1),
// a peer at a local address from that address.
func (p *params) localFor(a netip.Addr) netip.Addr {
	switch {
	case !p.wild || !a.IsValid():
		return p.addr
	case a.IsLoopback() && a.Is4():
		return loopback4
	case a.IsLoopback():
		return netip.IPv6Loopback()
	case isLocalAddr(a):
		return a.WithZone("")
	}
	return p.addr
}

// isLocalAddr reports whether a is an address of this host (in this
// network namespace).
func isLocalAddr(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, ia := range addrs {
		if x, ok := ipOf(ia); ok && x == a.WithZone("") {
			return true
		}
	}
	return false
}

// ipOf is an interface address's IP, IPv4-mapped addresses unmapped.
func ipOf(a net.Addr) (netip.Addr, bool) {
	p, ok := a.(*net.IPNet)
	if !ok {
		return netip.Addr{}, false
	}
	x, ok := netip.AddrFromSlice(p.IP)
	return x.Unmap(), ok
}
