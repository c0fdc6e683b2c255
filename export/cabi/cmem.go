package cabi

/*
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
*/
import "C"

import (
	"encoding/binary"
	"net/netip"
	"unsafe"
)

// Layout of the C memory block an IA, EP or CR owns (CMemOf): socket
// addresses the consumer gets pointers to, and the private data of
// connection events. Both live as long as the object, so the pointers the
// consumer holds stay valid until it frees the object.
const (
	CMemLocalAddr  = 0
	CMemRemoteAddr = 32
	CMemPrivate    = 64
	CMemPrivateMax = 256
	CMemSize       = CMemPrivate + CMemPrivateMax
)

// PutSockaddr writes a as a sockaddr_in (IPv4) or sockaddr_in6 into the 32
// bytes at p and returns p.
func PutSockaddr(p unsafe.Pointer, a netip.AddrPort) unsafe.Pointer {
	b := unsafe.Slice((*byte)(p), 32)
	clear(b)
	ip := a.Addr()
	if ip.Is4() || ip.Is4In6() || !ip.IsValid() {
		*(*C.sa_family_t)(p) = C.AF_INET
		binary.BigEndian.PutUint16(b[2:], a.Port())
		if ip.IsValid() {
			v4 := ip.Unmap().As4()
			copy(b[4:8], v4[:])
		}
	} else {
		*(*C.sa_family_t)(p) = C.AF_INET6
		binary.BigEndian.PutUint16(b[2:], a.Port())
		v6 := ip.As16()
		copy(b[8:24], v6[:])
	}
	return p
}

// Sockaddr reads a consumer's socket address (IPv4 or IPv6); ok is false
// for NULL and for other families.
func Sockaddr(p unsafe.Pointer) (a netip.AddrPort, ok bool) {
	if p == nil {
		return netip.AddrPort{}, false
	}
	switch *(*C.sa_family_t)(p) {
	case C.AF_INET:
		b := unsafe.Slice((*byte)(p), 8)
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:])), true
	case C.AF_INET6:
		b := unsafe.Slice((*byte)(p), 24)
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])).Unmap(), binary.BigEndian.Uint16(b[2:])), true
	}
	return netip.AddrPort{}, false
}

// GoBytes copies n bytes of C memory (nil for n <= 0 or a NULL pointer).
func GoBytes(p unsafe.Pointer, n int) []byte {
	if p == nil || n <= 0 {
		return nil
	}
	return C.GoBytes(p, C.int(n))
}

// PutString writes s NUL-terminated into a fixed C char array of n bytes at
// dst, truncating it to n-1 bytes.
func PutString(dst unsafe.Pointer, n int, s string) {
	b := unsafe.Slice((*byte)(dst), n)
	clear(b)
	copy(b[:n-1], s)
}

// PutPrivate copies private data into an object's block (CMemOf) and
// returns where it is and how much was kept (at most CMemPrivateMax bytes).
func PutPrivate(cmem unsafe.Pointer, data []byte) (unsafe.Pointer, int) {
	p := unsafe.Add(cmem, CMemPrivate)
	n := min(len(data), CMemPrivateMax)
	copy(unsafe.Slice((*byte)(p), n), data)
	return p, n
}

// CString reads a NUL-terminated C string of at most max bytes.
func CString(p unsafe.Pointer, max int) string {
	s, _ := CStringMax(p, max)
	return s
}

// CStringMax reads a C string of at most max bytes: terminated says a NUL
// came within them. It reads byte by byte in Go, so that a bad pointer
// faults into the calling entry point's guard (Call.Enter) as
// DAT_INTERNAL_ERROR, where strnlen would kill the program in C; and never
// past the NUL (a vectorised search may read ahead into an unmapped page).
func CStringMax(p unsafe.Pointer, max int) (s string, terminated bool) {
	if p == nil {
		return "", false
	}
	n := 0
	for ; n < max; n++ {
		if *(*byte)(unsafe.Add(p, n)) == 0 {
			terminated = true
			break
		}
	}
	return string(unsafe.Slice((*byte)(p), n)), terminated
}
