package dat12

/*
#include <dat/udat.h>
*/
import "C"

import (
	"net/netip"
	"unsafe"

	"godat/core"
	"godat/export/cabi"
)

// PutIAAttr writes the DAT_IA_ATTR of ia at out; its address lives in the
// IA's C memory, held while it is written. An IA closed meanwhile is an
// invalid handle, and out is left alone.
func PutIAAttr(out unsafe.Pointer, ia *core.IA) error {
	m, ok := cabi.HoldCMem(ia)
	if !ok {
		return core.ErrHandle(core.SubHandleIA)
	}
	defer m.Drop()
	a := ia.Attr()
	var v C.DAT_IA_ATTR
	cabi.PutString(unsafe.Pointer(&v.adapter_name[0]), len(v.adapter_name), a.AdapterName)
	cabi.PutString(unsafe.Pointer(&v.vendor_name[0]), len(v.vendor_name), a.VendorName)
	v.hardware_version_major, v.firmware_version_major = 1, 1
	v.ia_address_ptr = (*C.DAT_SOCK_ADDR)(PutIAAddress(m, ia))
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
	cabi.PutStruct(out, &v)
	return nil
}

// PutIAAddress writes the address of ia into its held C memory m and
// returns where it is (dat_ia_query's ia_address_ptr, a connection
// request's local_ia_address_ptr).
func PutIAAddress(m cabi.CMem, ia *core.IA) unsafe.Pointer {
	return cabi.PutSockaddr(unsafe.Add(m.Ptr(), cabi.CMemLocalAddr), netip.AddrPortFrom(ia.Attr().Address, 0))
}

// PutProviderAttr writes the DAT_PROVIDER_ATTR of ia at out.
func PutProviderAttr(out unsafe.Pointer, ia *core.IA) {
	a := ia.Attr()
	var v C.DAT_PROVIDER_ATTR
	cabi.PutString(unsafe.Pointer(&v.provider_name[0]), len(v.provider_name), "godat")
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
	// and dat_ep_recv_query counts; where the device checks an SRQ's
	// buffers against the SRQ's own PZ (the software provider), its EPs may
	// use other PZs. DAT 1.2 defines no values for the DAT_COUNT fields: 1
	// (DAT_TRUE) means supported.
	v.srq_supported = C.DAT_TRUE
	v.srq_watermarks_supported = C.DAT_TRUE
	v.srq_ep_pz_difference_supported = C.DAT_FALSE
	if a.SRQPDDifference {
		v.srq_ep_pz_difference_supported = C.DAT_TRUE
	}
	v.srq_info_supported = C.DAT_TRUE
	v.ep_recv_info_supported = C.DAT_TRUE
	v.lmr_sync_req = C.DAT_FALSE
	v.dto_async_return_guaranteed = C.DAT_FALSE
	v.rdma_write_for_rdma_read_req = C.DAT_FALSE
	cabi.PutStruct(out, &v)
}

// PutProviderInfo writes the DAT_PROVIDER_INFO of a dat.conf entry at out.
func PutProviderInfo(out unsafe.Pointer, e core.RegistryEntry) {
	var i C.DAT_PROVIDER_INFO
	cabi.PutString(unsafe.Pointer(&i.ia_name[0]), len(i.ia_name), e.IAName)
	i.dapl_version_major = C.DAT_UINT32(e.APIMajor)
	i.dapl_version_minor = C.DAT_UINT32(e.APIMinor)
	i.is_thread_safe = datBool(e.ThreadSafe)
	*(*C.DAT_PROVIDER_INFO)(out) = i
}
