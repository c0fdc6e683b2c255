package dat12

/*
#include <dat/udat.h>
*/
import "C"

import (
	"unsafe"

	"godat/core"
	"godat/export/cabi"
)

// EPAttrFromC reads the DAT_EP_ATTR at p; ok is false when one of its
// completion flag words has a bit DAT 1.2 does not define. A service type
// or QoS core does not implement becomes core's "other", which core
// refuses.
func EPAttrFromC(p unsafe.Pointer) (a core.EPAttr, ok bool) {
	c := (*C.DAT_EP_ATTR)(p)
	a = core.EPAttr{
		ServiceType: serviceType(c.service_type), MaxMessageSize: uint64(c.max_message_size), MaxRDMASize: uint64(c.max_rdma_size),
		QoS:         qos(c.qos),
		MaxRecvDTOs: int(c.max_recv_dtos), MaxRequestDTOs: int(c.max_request_dtos),
		MaxRecvIOV: int(c.max_recv_iov), MaxRequestIOV: int(c.max_request_iov),
		MaxRDMAReadIn: int(c.max_rdma_read_in), MaxRDMAReadOut: int(c.max_rdma_read_out),
		SRQSoftHW: int(c.srq_soft_hw), MaxRDMAReadIOV: int(c.max_rdma_read_iov), MaxRDMAWriteIOV: int(c.max_rdma_write_iov),
	}
	var okRecv, okReq bool
	a.RecvCompletionFlags, okRecv = CompletionFlags(uint32(c.recv_completion_flags))
	a.RequestCompletionFlags, okReq = CompletionFlags(uint32(c.request_completion_flags))
	return a, okRecv && okReq
}

func serviceType(t C.DAT_SERVICE_TYPE) core.ServiceType {
	if t == C.DAT_SERVICE_TYPE_RC {
		return core.ServiceRC
	}
	return core.ServiceOther
}

func qos(q C.DAT_QOS) core.QoS {
	if q == C.DAT_QOS_BEST_EFFORT {
		return core.QoSBestEffort
	}
	return core.QoSOther
}

func epAttrToC(a core.EPAttr) C.DAT_EP_ATTR {
	var v C.DAT_EP_ATTR
	// Core keeps only the service and QoS it implements (it refuses
	// "other"), so these are the only values to give back.
	v.service_type = C.DAT_SERVICE_TYPE_RC
	v.max_message_size = C.DAT_VLEN(a.MaxMessageSize)
	v.max_rdma_size = C.DAT_VLEN(a.MaxRDMASize)
	v.qos = C.DAT_QOS_BEST_EFFORT
	v.recv_completion_flags = completionFlagsToC(a.RecvCompletionFlags)
	v.request_completion_flags = completionFlagsToC(a.RequestCompletionFlags)
	v.max_recv_dtos = C.DAT_COUNT(a.MaxRecvDTOs)
	v.max_request_dtos = C.DAT_COUNT(a.MaxRequestDTOs)
	v.max_recv_iov = C.DAT_COUNT(a.MaxRecvIOV)
	v.max_request_iov = C.DAT_COUNT(a.MaxRequestIOV)
	v.max_rdma_read_in = C.DAT_COUNT(a.MaxRDMAReadIn)
	v.max_rdma_read_out = C.DAT_COUNT(a.MaxRDMAReadOut)
	v.srq_soft_hw = C.DAT_COUNT(a.SRQSoftHW)
	v.max_rdma_read_iov = C.DAT_COUNT(a.MaxRDMAReadIOV)
	v.max_rdma_write_iov = C.DAT_COUNT(a.MaxRDMAWriteIOV)
	return v
}

var epStates = [...]C.DAT_EP_STATE{
	core.EPUnconnected: C.DAT_EP_STATE_UNCONNECTED, core.EPUnconfiguredUnconnected: C.DAT_EP_STATE_UNCONFIGURED_UNCONNECTED,
	core.EPReserved: C.DAT_EP_STATE_RESERVED, core.EPUnconfiguredReserved: C.DAT_EP_STATE_UNCONFIGURED_RESERVED,
	core.EPPassiveConnectionPending: C.DAT_EP_STATE_PASSIVE_CONNECTION_PENDING, core.EPUnconfiguredPassive: C.DAT_EP_STATE_UNCONFIGURED_PASSIVE,
	core.EPActiveConnectionPending: C.DAT_EP_STATE_ACTIVE_CONNECTION_PENDING, core.EPTentativeConnectionPending: C.DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING,
	core.EPUnconfiguredTentative: C.DAT_EP_STATE_UNCONFIGURED_TENTATIVE, core.EPConnected: C.DAT_EP_STATE_CONNECTED,
	core.EPDisconnectPending: C.DAT_EP_STATE_DISCONNECT_PENDING, core.EPDisconnected: C.DAT_EP_STATE_DISCONNECTED,
	core.EPCompletionPending: C.DAT_EP_STATE_COMPLETION_PENDING,
}

// EPState is the DAT_EP_STATE of a core state.
func EPState(s core.EPState) uint32 { return uint32(epStates[s]) }

// PutEPParam writes the DAT_EP_PARAM of ep at out; the addresses live in
// the EP's C memory, held while they are written. An EP freed meanwhile
// is an invalid handle, and out is left alone.
func PutEPParam(out unsafe.Pointer, ep *core.EP, p core.EPParams) error {
	m, ok := cabi.HoldCMem(ep)
	if !ok {
		return core.ErrHandle(core.SubHandleEP)
	}
	defer m.Drop()
	var v C.DAT_EP_PARAM
	v.ia_handle = handle(ep.IA())
	v.ep_state = epStates[p.State]
	v.local_ia_address_ptr = (*C.DAT_SOCK_ADDR)(cabi.PutSockaddr(unsafe.Add(m.Ptr(), cabi.CMemLocalAddr), p.LocalAddr))
	v.remote_ia_address_ptr = (*C.DAT_SOCK_ADDR)(cabi.PutSockaddr(unsafe.Add(m.Ptr(), cabi.CMemRemoteAddr), p.RemoteAddr))
	v.local_port_qual = C.DAT_PORT_QUAL(p.LocalQual)
	v.remote_port_qual = C.DAT_PORT_QUAL(p.RemoteQual)
	v.pz_handle = handle(p.PZ)
	v.recv_evd_handle = handle(p.RecvEVD)
	v.request_evd_handle = handle(p.ReqEVD)
	v.connect_evd_handle = handle(p.ConnEVD)
	v.srq_handle = handle(p.SRQ)
	v.ep_attr = epAttrToC(p.Attr)
	cabi.PutStruct(out, &v)
	return nil
}

// EPModifyFromC reads what dat_ep_modify changes: the fields mask selects
// from the DAT_EP_PARAM at in, merged into the current attributes cur, and
// the PZ and EVDs it names. The mask has been checked (only modifiable
// fields); a handle that is not a live object of its family fails with
// an invalid ep_param (argument 3), as does a completion flag word it
// selects with a bit DAT 1.2 does not define.
func EPModifyFromC(mask uint64, in unsafe.Pointer, cur core.EPAttr) (core.EPAttr, core.EPHandles, error) {
	p := (*C.DAT_EP_PARAM)(in)
	var hs core.EPHandles
	var err error
	if mask&C.DAT_EP_FIELD_PZ_HANDLE != 0 {
		hs.SetPZ = true
		if hs.PZ, err = cabi.Lookup[*core.PZ](cabi.HandleIn(&p.pz_handle), core.TypePZ, core.SubHandlePZ); err != nil {
			return cur, hs, ArgAt(3)
		}
	}
	for _, f := range []struct {
		bit uint64
		h   uintptr
		set *bool
		evd **core.EVD
	}{{C.DAT_EP_FIELD_RECV_EVD_HANDLE, cabi.HandleIn(&p.recv_evd_handle), &hs.SetRecvEVD, &hs.RecvEVD},
		{C.DAT_EP_FIELD_REQUEST_EVD_HANDLE, cabi.HandleIn(&p.request_evd_handle), &hs.SetReqEVD, &hs.ReqEVD},
		{C.DAT_EP_FIELD_CONNECT_EVD_HANDLE, cabi.HandleIn(&p.connect_evd_handle), &hs.SetConnEVD, &hs.ConnEVD}} {
		if mask&f.bit == 0 {
			continue
		}
		*f.set = true
		if *f.evd, err = cabi.LookupOptional[*core.EVD](f.h, core.TypeEVD, core.SubNone); err != nil {
			return cur, hs, ArgAt(3)
		}
	}
	n, _ := EPAttrFromC(unsafe.Pointer(&p.ep_attr))
	for _, f := range []struct {
		bit   uint64
		flags C.DAT_COMPLETION_FLAGS
	}{{C.DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS, p.ep_attr.recv_completion_flags},
		{C.DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS, p.ep_attr.request_completion_flags}} {
		if _, ok := CompletionFlags(uint32(f.flags)); mask&f.bit != 0 && !ok {
			return cur, hs, ArgAt(3)
		}
	}
	set := func(bit uint64, apply func()) {
		if mask&bit != 0 {
			apply()
		}
	}
	set(C.DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE, func() { cur.MaxMessageSize = n.MaxMessageSize })
	set(C.DAT_EP_FIELD_EP_ATTR_MAX_RDMA_SIZE, func() { cur.MaxRDMASize = n.MaxRDMASize })
	set(C.DAT_EP_FIELD_EP_ATTR_QOS, func() { cur.QoS = n.QoS })
	set(C.DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS, func() { cur.RecvCompletionFlags = n.RecvCompletionFlags })
	set(C.DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS, func() { cur.RequestCompletionFlags = n.RequestCompletionFlags })
	set(C.DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS, func() { cur.MaxRecvDTOs = n.MaxRecvDTOs })
	set(C.DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS, func() { cur.MaxRequestDTOs = n.MaxRequestDTOs })
	set(C.DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV, func() { cur.MaxRecvIOV = n.MaxRecvIOV })
	set(C.DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV, func() { cur.MaxRequestIOV = n.MaxRequestIOV })
	set(C.DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN, func() { cur.MaxRDMAReadIn = n.MaxRDMAReadIn })
	set(C.DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT, func() { cur.MaxRDMAReadOut = n.MaxRDMAReadOut })
	set(C.DAT_EP_FIELD_EP_ATTR_SRQ_SOFT_HW, func() { cur.SRQSoftHW = n.SRQSoftHW })
	set(C.DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IOV, func() { cur.MaxRDMAReadIOV = n.MaxRDMAReadIOV })
	set(C.DAT_EP_FIELD_EP_ATTR_MAX_RDMA_WRITE_IOV, func() { cur.MaxRDMAWriteIOV = n.MaxRDMAWriteIOV })
	set(C.DAT_EP_FIELD_EP_ATTR_SERVICE_TYPE, func() { cur.ServiceType = n.ServiceType })
	return cur, hs, nil
}

// CheckQoS accepts the QoS the provider supports (best effort, as its
// provider attributes say); another defined QoS is DAT_MODEL_NOT_SUPPORTED,
// undefined bits are an invalid argument at position arg.
func CheckQoS(qos uint32, arg int) error {
	if qos&^(C.DAT_QOS_BEST_EFFORT|C.DAT_QOS_HIGH_THROUGHPUT|C.DAT_QOS_LOW_LATENCY|C.DAT_QOS_ECONOMY|C.DAT_QOS_PREMIUM) != 0 {
		return ArgAt(arg)
	}
	if qos != C.DAT_QOS_BEST_EFFORT {
		return core.ErrModelNotSupported
	}
	return nil
}

// Watermark maps DAT_WATERMARK_INFINITE to core's value; any other negative
// count stays negative and is rejected by core.
func Watermark(v int32) int {
	if v == C.DAT_WATERMARK_INFINITE {
		return core.WatermarkInfinite
	}
	if v < 0 {
		return core.WatermarkInfinite - 1
	}
	return int(v)
}
