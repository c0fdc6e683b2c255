package verbs

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"godat/rdma"
)

// knownParams are the open parameters this backend reads (verbs.go).
var knownParams = map[string]bool{"transport": true, "addr": true, "netdev": true, "dev": true, "port": true}

// probe asks rdma_cm which device and port own addr, and whether the
// port is active.
func probe(addr netip.Addr) (dev string, port int, active bool, err error) {
	sa := sockaddr(netip.AddrPortFrom(addr, 0))
	var name [64]C.char
	var p, act C.int
	if r := C.gd_probe(saPtr(&sa), &name[0], C.int(len(name)), &p, &act); r != 0 {
		return "", 0, false, wrap("rdma_bind_addr "+addr.String(), errnoOf(r, nil))
	}
	return C.GoString(&name[0]), int(p), act != 0, nil
}

// hostAddrs lists the addresses of the interfaces that are up, not
// loopback (rdma_cm binds loopback to any device): IPv4 first, then global
// IPv6, then link-local IPv6 with its zone.
func hostAddrs() []netip.Addr {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, ifi := range ifs {
		if ifi.Flags&net.FlagUp == 0 || ifi.Flags&net.FlagLoopback != 0 {
			continue
		}
		out = append(out, ifaceAddrs(&ifi)...)
	}
	rank := func(a netip.Addr) int {
		switch {
		case a.Is4():
			return 0
		case !a.IsLinkLocalUnicast():
			return 1
		}
		return 2
	}
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out
}

func ifaceAddrs(ifi *net.Interface) []netip.Addr {
	addrs, err := ifi.Addrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(ipn.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		if ip.IsLinkLocalUnicast() && ip.Is6() {
			ip = ip.WithZone(ifi.Name)
		}
		out = append(out, ip)
	}
	return out
}

// pickAddr chooses the IA address from the open parameters (verbs.go).
func pickAddr(p rdma.Params) (netip.Addr, error) {
	for k := range p {
		if !knownParams[k] {
			return netip.Addr{}, fmt.Errorf("verbs: unknown parameter %q (known: addr, netdev, dev, port): %w", k, rdma.ErrNoDevice)
		}
	}
	switch {
	case p["addr"] != "":
		a, err := netip.ParseAddr(p["addr"])
		if err != nil {
			return netip.Addr{}, fmt.Errorf("verbs: addr=%q: %v: %w", p["addr"], err, rdma.ErrNoDevice)
		}
		if _, _, _, err := probe(a); err != nil {
			return netip.Addr{}, fmt.Errorf("verbs: no RDMA device has address %s: %w", a, err)
		}
		return a.Unmap(), nil
	case p["netdev"] != "":
		ifi, err := net.InterfaceByName(p["netdev"])
		if err != nil {
			return netip.Addr{}, fmt.Errorf("verbs: netdev=%s: %v: %w", p["netdev"], err, rdma.ErrNoDevice)
		}
		var last error
		for _, a := range ifaceAddrs(ifi) {
			if _, _, _, err := probe(a); err == nil {
				return a, nil
			} else {
				last = err
			}
		}
		if last == nil {
			return netip.Addr{}, fmt.Errorf("verbs: netdev=%s has no IP address: %w", p["netdev"], rdma.ErrNoDevice)
		}
		return netip.Addr{}, fmt.Errorf("verbs: no RDMA device behind netdev=%s: %w", p["netdev"], last)
	}
	want, port := p["dev"], 0
	if s := p["port"]; s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 255 {
			return netip.Addr{}, fmt.Errorf("verbs: port=%q: not a port number: %w", s, rdma.ErrNoDevice)
		}
		port = n
	}
	if want != "" && port == 0 {
		port = 1
	}
	seen := map[string]bool{}
	for _, a := range hostAddrs() {
		dev, n, active, err := probe(a)
		if err != nil {
			continue
		}
		seen[fmt.Sprintf("%s port %d (%s)", dev, n, a)] = true
		// Without a device named, only an active port will do (the
		// first device that can talk now).
		if (want == "" && active) || (want != "" && dev == want && (port == 0 || n == port)) {
			return a, nil
		}
	}
	if want == "" {
		return netip.Addr{}, fmt.Errorf("verbs: no RDMA device with an active port is reachable through an IP address of this host (is an RDMA driver loaded and its interface up? devices with addresses: %s): %w", list(seen), rdma.ErrNoDevice)
	}
	return netip.Addr{}, fmt.Errorf("verbs: device %s port %d has no IP address on an interface that is up (devices with addresses: %s): %w",
		want, port, list(seen), rdma.ErrNoDevice)
}

func list(seen map[string]bool) string {
	if len(seen) == 0 {
		return "none"
	}
	s := make([]string, 0, len(seen))
	for k := range seen {
		s = append(s, k)
	}
	sort.Strings(s)
	return strings.Join(s, "; ")
}
