package main

/*
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include "godat.h"
*/
import "C"

import (
	"encoding/binary"
	"net/netip"
	"unsafe"

	"godat/core"
)

// Layout of the C memory block an IA, EP or CR owns: socket addresses the
// consumer gets pointers to, and the private data of connection events.
const (
	cmemLocalAddr  = 0
	cmemRemoteAddr = 32
	cmemPrivate    = 64
	cmemPrivateMax = 256
	objMemSize     = cmemPrivate + cmemPrivateMax
)

// putSockaddr writes a as a sockaddr_in (IPv4) or sockaddr_in6 at p.
func putSockaddr(p unsafe.Pointer, a netip.AddrPort) *C.DAT_SOCK_ADDR {
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
	return (*C.DAT_SOCK_ADDR)(p)
}

// getSockaddr reads a consumer's DAT_IA_ADDRESS_PTR.
func getSockaddr(sa *C.DAT_SOCK_ADDR) (netip.AddrPort, bool) {
	if sa == nil {
		return netip.AddrPort{}, false
	}
	switch sa.sa_family {
	case C.AF_INET:
		b := unsafe.Slice((*byte)(unsafe.Pointer(sa)), 8)
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:])), true
	case C.AF_INET6:
		b := unsafe.Slice((*byte)(unsafe.Pointer(sa)), 24)
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])).Unmap(), binary.BigEndian.Uint16(b[2:])), true
	}
	return netip.AddrPort{}, false
}

// goBytes copies n bytes of C memory (nil for n <= 0 or a NULL pointer).
func goBytes(p unsafe.Pointer, n C.DAT_COUNT) []byte {
	if p == nil || n <= 0 {
		return nil
	}
	return C.GoBytes(p, C.int(n))
}

// putString writes s NUL-terminated into a fixed C char array of size n.
func putString(dst *C.char, n int, s string) {
	b := unsafe.Slice((*byte)(unsafe.Pointer(dst)), n)
	clear(b)
	copy(b[:n-1], s)
}

// datBool is b as a DAT_BOOLEAN.
func datBool(b bool) C.DAT_BOOLEAN {
	if b {
		return C.DAT_TRUE
	}
	return C.DAT_FALSE
}

// evdFlagBits pairs the DAT 1.2 EVD flag bits with core's.
var evdFlagBits = [...]struct {
	c C.DAT_EVD_FLAGS
	g core.EVDFlags
}{
	{C.DAT_EVD_SOFTWARE_FLAG, core.EVDSoftware}, {C.DAT_EVD_CR_FLAG, core.EVDCR}, {C.DAT_EVD_DTO_FLAG, core.EVDDTO},
	{C.DAT_EVD_CONNECTION_FLAG, core.EVDConnection}, {C.DAT_EVD_RMR_BIND_FLAG, core.EVDRMRBind},
	{C.DAT_EVD_ASYNC_FLAG, core.EVDAsync},
}

// evdFlagsFromC converts DAT EVD flags; ok is false for a bit DAT 1.2 does
// not define.
func evdFlagsFromC(f C.DAT_EVD_FLAGS) (core.EVDFlags, bool) {
	var g core.EVDFlags
	for _, b := range evdFlagBits {
		if f&b.c != 0 {
			g |= b.g
			f &^= b.c
		}
	}
	return g, f == 0
}

// evdFlagsToC is the inverse of evdFlagsFromC.
func evdFlagsToC(g core.EVDFlags) C.DAT_EVD_FLAGS {
	var f C.DAT_EVD_FLAGS
	for _, b := range evdFlagBits {
		if g&b.g != 0 {
			f |= b.c
		}
	}
	return f
}
