package dat12

/*
#include <string.h>
#include <dat/udat.h>
*/
import "C"

import (
	"unsafe"

	"godat/core"
	"godat/export/cabi"
)

// LMRRegion reads the memory dat_lmr_create registers: its DAT_MEM_TYPE and
// the DAT_REGION_DESCRIPTION at region (two words: an address or LMR
// handle, then for shared memory a pointer to the 40-byte id).
func LMRRegion(memType uint32, region unsafe.Pointer) (core.LMRRegion, error) {
	words := (*[2]uint64)(region)
	switch memType {
	case C.DAT_MEM_TYPE_VIRTUAL:
		return core.LMRRegion{Type: core.MemVirtual, Addr: words[0]}, nil
	case C.DAT_MEM_TYPE_SHARED_VIRTUAL:
		if words[1] == 0 {
			return core.LMRRegion{}, ArgAt(3)
		}
		return core.LMRRegion{Type: core.MemSharedVirtual, Addr: words[0], Cookie: cookieAt(uintptr(words[1]))}, nil
	case C.DAT_MEM_TYPE_LMR:
		parent, err := cabi.Lookup[*core.LMR](uintptr(words[0]), core.TypeLMR, core.SubHandleLMR)
		if err != nil {
			return core.LMRRegion{}, err
		}
		return core.LMRRegion{Type: core.MemLMR, LMR: parent}, nil
	}
	return core.LMRRegion{}, core.ErrModelNotSupported
}

// PutLMRParam writes the DAT_LMR_PARAM of l at out.
func PutLMRParam(out unsafe.Pointer, l *core.LMR, i core.LMRInfo) {
	var v C.DAT_LMR_PARAM
	v.ia_handle = handle(l.IA())
	words := (*[2]uint64)(unsafe.Pointer(&v.region_desc))
	switch i.Region.Type {
	case core.MemVirtual:
		v.mem_type = C.DAT_MEM_TYPE_VIRTUAL
		words[0] = i.Region.Addr
	case core.MemSharedVirtual:
		v.mem_type = C.DAT_MEM_TYPE_SHARED_VIRTUAL
		words[0] = i.Region.Addr
	case core.MemLMR:
		v.mem_type = C.DAT_MEM_TYPE_LMR
		words[0] = uint64(core.Base(i.Region.LMR).Handle())
	}
	v.length = C.DAT_VLEN(i.Length)
	v.pz_handle = handle(i.PZ)
	v.mem_priv = memPrivToC(i.Priv)
	v.lmr_context = C.DAT_LMR_CONTEXT(i.LMRContext)
	v.rmr_context = C.DAT_RMR_CONTEXT(i.RMRContext)
	v.registered_size = C.DAT_VLEN(i.RegisteredSize)
	v.registered_address = C.DAT_VADDR(i.RegisteredAddr)
	cabi.PutStruct(out, &v)
}

// cookieAt reads the 40-byte shared memory id the consumer points at.
func cookieAt(p uintptr) (c [C.DAT_LMR_COOKIE_SIZE]byte) {
	C.memcpy(unsafe.Pointer(&c[0]), cabi.CPtr(p), C.DAT_LMR_COOKIE_SIZE)
	return c
}
