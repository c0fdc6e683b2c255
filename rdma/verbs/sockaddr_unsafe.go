package verbs

/*
#include <sys/socket.h>
#include <netinet/in.h>
*/
import "C"

import (
	"encoding/binary"
	"net"
	"net/netip"
	"unsafe"
)

// The C views of Go values: the only unsafe code of the backend besides
// cgo_unsafe.go.

// sockaddr is ap as a struct sockaddr_in or sockaddr_in6 (IPv4-mapped IPv6
// addresses become IPv4: rdma_cm resolves RoCE v2 and iWARP by IPv4).
func sockaddr(ap netip.AddrPort) C.struct_sockaddr_storage {
	var sa C.struct_sockaddr_storage
	b := unsafe.Slice((*byte)(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))
	a := ap.Addr().Unmap()
	if a.Is4() {
		binary.NativeEndian.PutUint16(b[0:], C.AF_INET)
		binary.BigEndian.PutUint16(b[2:], ap.Port())
		a4 := a.As4()
		copy(b[4:8], a4[:])
		return sa
	}
	binary.NativeEndian.PutUint16(b[0:], C.AF_INET6)
	binary.BigEndian.PutUint16(b[2:], ap.Port())
	a16 := a.As16()
	copy(b[8:24], a16[:])
	if z := a.Zone(); z != "" {
		if ifi, err := net.InterfaceByName(z); err == nil {
			binary.NativeEndian.PutUint32(b[24:], uint32(ifi.Index))
		}
	}
	return sa
}

// addrPort reads a struct sockaddr_in or sockaddr_in6; invalid otherwise.
func addrPort(sa *C.struct_sockaddr_storage) netip.AddrPort {
	b := unsafe.Slice((*byte)(unsafe.Pointer(sa)), unsafe.Sizeof(*sa))
	port := binary.BigEndian.Uint16(b[2:])
	switch binary.NativeEndian.Uint16(b[0:]) {
	case C.AF_INET:
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), port)
	case C.AF_INET6:
		a := netip.AddrFrom16([16]byte(b[8:24]))
		if id := binary.NativeEndian.Uint32(b[24:]); id != 0 && a.IsLinkLocalUnicast() {
			if ifi, err := net.InterfaceByIndex(int(id)); err == nil {
				a = a.WithZone(ifi.Name)
			}
		}
		return netip.AddrPortFrom(a.Unmap(), port)
	}
	return netip.AddrPort{}
}

// saPtr is sa as the struct sockaddr * the rdma_cm calls take.
func saPtr(sa *C.struct_sockaddr_storage) *C.struct_sockaddr {
	return (*C.struct_sockaddr)(unsafe.Pointer(sa))
}
