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

// params are a device's parsed open parameters.
type params struct {
	tr      transport
	addr    netip.Addr
	timeout time.Duration
}

// parseParams reads transport=shm|tcp|auto, addr=<ip or interface> and
// timeout=<seconds>.
func parseParams(p rdma.Params) (params, error) {
	out := params{addr: netip.MustParseAddr("127.0.0.1"), timeout: defaultTCPTimeout}
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
	return netip.Addr{}, fmt.Errorf("soft: interface %q has no IP address: %w", s, rdma.ErrNoDevice)
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
		if p, ok := ia.(*net.IPNet); ok {
			if x, ok := netip.AddrFromSlice(p.IP); ok && x.Unmap() == a.WithZone("") {
				return true
			}
		}
	}
	return false
}
