package main

/*
#include <string.h>
#include "godat.h"
*/
import "C"

import (
	"net/netip"
	"path/filepath"
	"strings"
	"unsafe"

	"godat/core"
	"godat/rdma"
)

// builtinLibs are the library names in dat.conf that mean "this library".
var builtinLibs = map[string]bool{"libdat.so.1": true, "libdat.so": true, "libdat.so.1.2.0": true, "godat": true}

// backendOf picks the transport backend a dat.conf entry names: the
// software provider for transport=shm, tcp and auto (and by default), the
// verbs backend for transport=verbs. Backends register themselves
// (backends.go imports them); an entry naming one that is not built in
// opens nothing.
func backendOf(e core.RegistryEntry) (string, rdma.Params, error) {
	if !builtinLibs[filepath.Base(e.LibPath)] {
		core.Logf(core.LevelWarn, "dat_ia_openv: %s: provider library %q is not built in (external providers are not supported)", e.IAName, e.LibPath)
		return "", nil, core.ErrNameNotRegistered
	}
	params, err := core.ParseIAParams(e.IAParams)
	if err != nil {
		core.Logf(core.LevelWarn, "dat_ia_openv: %s (%s:%d): bad provider parameters: %v", e.IAName, e.File, e.Line, err)
		return "", nil, core.ErrNameNotRegistered
	}
	if params["transport"] == "verbs" {
		return "verbs", params, nil
	}
	return "soft", params, nil
}

//export go_dat_ia_openv
func go_dat_ia_openv(name *C.char, qlen C.DAT_COUNT, asyncEVD *C.DAT_EVD_HANDLE, iaOut *C.DAT_IA_HANDLE,
	major, minor C.DAT_UINT32, threadSafe C.DAT_BOOLEAN) (ret C.DAT_RETURN) {
	defer doneName(&ret, "dat_ia_openv", name)
	testPanic("dat_ia_openv")
	switch {
	case name == nil:
		return datReturn(core.ErrArg(1))
	case C.strnlen(name, C.DAT_NAME_MAX_LENGTH) >= C.DAT_NAME_MAX_LENGTH:
		return datReturn(core.ErrArg(1))
	case asyncEVD == nil:
		return datReturn(core.ErrArg(3))
	case iaOut == nil:
		return datReturn(core.ErrArg(4))
	case threadSafe != C.DAT_TRUE && threadSafe != C.DAT_FALSE:
		return datReturn(core.ErrArg(7))
	}
	var given *core.EVD
	given0 := handleIn(asyncEVD)
	noAsync := given0 == 1 // DAT_EVD_ASYNC_EXISTS
	if given0 != 0 && !noAsync {
		evd, err := lookup[*core.EVD](given0, core.TypeEVD, core.SubHandleEVDAsync)
		if err != nil {
			return datReturn(err)
		}
		given = evd
	} else if qlen <= 0 && !noAsync {
		return datReturn(core.ErrArg(2))
	}
	reg, err := core.LoadRegistry(core.RegistryPaths(sysconfdir))
	if err != nil {
		return datReturn(err)
	}
	// dat_ia_open(3DAT): a RO_AWARE_ prefix only says the program copes
	// with relaxed ordering; it is removed before the name is looked up.
	iaName, _ := strings.CutPrefix(C.GoString(name), "RO_AWARE_")
	entry, err := reg.Lookup(iaName, int(major), int(minor))
	if err != nil {
		return datReturn(err)
	}
	backend, params, err := backendOf(entry)
	if err != nil {
		return datReturn(err)
	}
	ia, err := core.OpenIA(core.IAConfig{Name: entry.IAName, Backend: backend, Params: params, AsyncQLen: int(qlen),
		AsyncEVD: given, NoAsync: noAsync, Handles: handles, Agent: callAgent})
	if err != nil {
		return datReturn(err)
	}
	// datinfo reports the transport and the entry in use from this line.
	core.Logf(core.LevelDebug, "dat_ia_openv: %s (%s:%d): opened %s, address %s",
		entry.IAName, entry.File, entry.Line, ia.Device().Query().Name, ia.Device().Addr())
	*iaOut = handleOf(ia)
	handleOut(asyncEVD, asyncHandle(ia))
	return C.DAT_SUCCESS
}

// asyncHandle is the IA's async EVD, or DAT_EVD_OUT_OF_SCOPE for an IA
// opened with DAT_EVD_ASYNC_EXISTS (its async EVD is elsewhere).
func asyncHandle(ia *core.IA) C.godat_handle {
	if e := ia.AsyncEVD(); e != nil {
		return C.godat_handle(core.Base(e).Handle())
	}
	return 2 // DAT_EVD_OUT_OF_SCOPE
}

//export go_dat_ia_close
func go_dat_ia_close(h C.godat_handle, flags C.DAT_CLOSE_FLAGS) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ia_close", h)
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(err)
	}
	if flags != C.DAT_CLOSE_ABRUPT_FLAG && flags != C.DAT_CLOSE_GRACEFUL_FLAG {
		return datReturn(core.ErrArg(2))
	}
	return datReturn(ia.Close(flags == C.DAT_CLOSE_GRACEFUL_FLAG))
}

//export go_dats_get_ia_handle
func go_dats_get_ia_handle(h C.godat_handle, out *C.DAT_IA_HANDLE) (ret C.DAT_RETURN) {
	defer done(&ret, "dats_get_ia_handle", h)
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(err)
	}
	if out == nil {
		return datReturn(core.ErrArg(2))
	}
	*out = handleOf(ia)
	return C.DAT_SUCCESS
}

//export go_dat_ia_query
func go_dat_ia_query(h C.godat_handle, asyncEVD *C.DAT_EVD_HANDLE, iaMask C.DAT_IA_ATTR_MASK, iaAttr *C.DAT_IA_ATTR,
	provMask C.DAT_PROVIDER_ATTR_MASK, provAttr *C.DAT_PROVIDER_ATTR) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ia_query", h)
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(err)
	}
	switch {
	case iaMask&^C.DAT_IA_ALL != 0:
		return datReturn(core.ErrArg(3))
	case iaMask != 0 && iaAttr == nil:
		return datReturn(core.ErrArg(4))
	case provMask&^C.DAT_PROVIDER_FIELD_ALL != 0:
		return datReturn(core.ErrArg(5))
	case provMask != 0 && provAttr == nil:
		return datReturn(core.ErrArg(6))
	}
	if asyncEVD != nil {
		handleOut(asyncEVD, asyncHandle(ia))
	}
	if iaAttr != nil {
		fillIAAttr(iaAttr, ia)
	}
	if provAttr != nil {
		fillProviderAttr(provAttr, ia)
	}
	return C.DAT_SUCCESS
}

func fillIAAttr(out *C.DAT_IA_ATTR, ia *core.IA) {
	a := ia.Attr()
	var v C.DAT_IA_ATTR
	putString(&v.adapter_name[0], len(v.adapter_name), a.AdapterName)
	putString(&v.vendor_name[0], len(v.vendor_name), a.VendorName)
	v.hardware_version_major, v.firmware_version_major = 1, 1
	if m := cmemOf(ia); m != nil {
		v.ia_address_ptr = putSockaddr(unsafe.Add(m, cmemLocalAddr), netip.AddrPortFrom(a.Address, 0))
	}
	v.max_eps = C.DAT_COUNT(a.MaxEPs)
	v.max_dto_per_ep = C.DAT_COUNT(a.MaxDTOPerEP)
	v.max_rdma_read_per_ep_in = C.DAT_COUNT(a.MaxRDMAReadPerEPIn)
	v.max_rdma_read_per_ep_out = C.DAT_COUNT(a.MaxRDMAReadPerEPOut)
	v.max_evds = C.DAT_COUNT(a.MaxEVDs)
	v.max_evd_qlen = C.DAT_COUNT(a.MaxEVDQLen)
	v.max_iov_segments_per_dto = C.DAT_COUNT(a.MaxIOVSegments)
	v.max_lmrs = C.DAT_COUNT(a.MaxLMRs)
	v.max_lmr_block_size = C.DAT_VLEN(a.MaxLMRBlockSize)
	v.max_lmr_virtual_address = C.DAT_VADDR(a.MaxLMRVirtualAddress)
	v.max_pzs = C.DAT_COUNT(a.MaxPZs)
	v.max_message_size = C.DAT_VLEN(a.MaxMessageSize)
	v.max_rdma_size = C.DAT_VLEN(a.MaxRDMASize)
	v.max_rmrs = C.DAT_COUNT(a.MaxRMRs)
	v.max_rmr_target_address = C.DAT_VADDR(a.MaxRMRTargetAddress)
	v.max_srqs = C.DAT_COUNT(a.MaxSRQs)
	v.max_ep_per_srq = C.DAT_COUNT(a.MaxEPPerSRQ)
	v.max_recv_per_srq = C.DAT_COUNT(a.MaxRecvPerSRQ)
	v.max_iov_segments_per_rdma_read = C.DAT_COUNT(a.MaxIOVSegments)
	v.max_iov_segments_per_rdma_write = C.DAT_COUNT(a.MaxIOVSegments)
	v.max_rdma_read_in = C.DAT_COUNT(a.MaxRDMAReadPerEPIn * a.MaxEPs)
	v.max_rdma_read_out = C.DAT_COUNT(a.MaxRDMAReadPerEPOut * a.MaxEPs)
	v.max_rdma_read_per_ep_in_guaranteed = C.DAT_TRUE
	v.max_rdma_read_per_ep_out_guaranteed = C.DAT_TRUE
	*out = v
}

func fillProviderAttr(out *C.DAT_PROVIDER_ATTR, ia *core.IA) {
	a := ia.Attr()
	var v C.DAT_PROVIDER_ATTR
	putString(&v.provider_name[0], len(v.provider_name), "godat")
	v.provider_version_major, v.provider_version_minor = 1, 0
	v.dapl_version_major, v.dapl_version_minor = 1, 2
	v.lmr_mem_types_supported = C.DAT_MEM_TYPE_VIRTUAL | C.DAT_MEM_TYPE_LMR | C.DAT_MEM_TYPE_SHARED_VIRTUAL
	v.iov_ownership_on_return = C.DAT_IOV_CONSUMER
	v.dat_qos_supported = C.DAT_QOS_BEST_EFFORT
	v.completion_flags_supported = C.DAT_COMPLETION_SUPPRESS_FLAG | C.DAT_COMPLETION_SOLICITED_WAIT_FLAG |
		C.DAT_COMPLETION_UNSIGNALLED_FLAG | C.DAT_COMPLETION_BARRIER_FENCE_FLAG | C.DAT_COMPLETION_EVD_THRESHOLD_FLAG
	v.is_thread_safe = C.DAT_TRUE
	v.max_private_data_size = C.DAT_COUNT(a.MaxPrivateData)
	v.supports_multipath = C.DAT_FALSE
	// A PSP creates EPs when made with DAT_PSP_PROVIDER_FLAG.
	v.ep_creator = C.DAT_PSP_CREATES_EP_IFASKED
	v.pz_support = C.DAT_PZ_UNIQUE
	v.optimal_buffer_alignment = C.DAT_OPTIMAL_ALIGNMENT
	// Any EVD may take any mix of streams (dat_ia_query(3DAT): "The
	// Provider should support merging of all event stream types").
	for i := range v.evd_stream_merging_supported {
		for j := range v.evd_stream_merging_supported[i] {
			v.evd_stream_merging_supported[i][j] = C.DAT_TRUE
		}
	}
	// SRQs with low and high watermarks, exact available/outstanding counts
	// and dat_ep_recv_query counts; an SRQ's buffers are checked against its
	// own PZ, so its EPs may use other PZs. DAT 1.2 defines no values for
	// the DAT_COUNT fields: 1 (DAT_TRUE) means supported.
	v.srq_supported = C.DAT_TRUE
	v.srq_watermarks_supported = C.DAT_TRUE
	v.srq_ep_pz_difference_supported = C.DAT_TRUE
	v.srq_info_supported = C.DAT_TRUE
	v.ep_recv_info_supported = C.DAT_TRUE
	v.lmr_sync_req = C.DAT_FALSE
	v.dto_async_return_guaranteed = C.DAT_FALSE
	v.rdma_write_for_rdma_read_req = C.DAT_FALSE
	*out = v
}
