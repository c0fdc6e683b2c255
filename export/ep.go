package main

/*
#include "godat.h"
*/
import "C"

import (
	"unsafe"

	"godat/core"
)

func epAttrFromC(a *C.DAT_EP_ATTR) core.EPAttr {
	return core.EPAttr{
		ServiceType: uint32(a.service_type), MaxMessageSize: uint64(a.max_message_size), MaxRDMASize: uint64(a.max_rdma_size),
		QoS: uint32(a.qos), RecvCompletionFlags: core.CompletionFlags(a.recv_completion_flags),
		RequestCompletionFlags: core.CompletionFlags(a.request_completion_flags),
		MaxRecvDTOs:            int(a.max_recv_dtos), MaxRequestDTOs: int(a.max_request_dtos),
		MaxRecvIOV: int(a.max_recv_iov), MaxRequestIOV: int(a.max_request_iov),
		MaxRDMAReadIn: int(a.max_rdma_read_in), MaxRDMAReadOut: int(a.max_rdma_read_out),
		SRQSoftHW: int(a.srq_soft_hw), MaxRDMAReadIOV: int(a.max_rdma_read_iov), MaxRDMAWriteIOV: int(a.max_rdma_write_iov),
	}
}

func epAttrToC(a core.EPAttr) C.DAT_EP_ATTR {
	var v C.DAT_EP_ATTR
	v.service_type = C.DAT_SERVICE_TYPE(a.ServiceType)
	v.max_message_size = C.DAT_VLEN(a.MaxMessageSize)
	v.max_rdma_size = C.DAT_VLEN(a.MaxRDMASize)
	v.qos = C.DAT_QOS(a.QoS)
	v.recv_completion_flags = C.DAT_COMPLETION_FLAGS(a.RecvCompletionFlags)
	v.request_completion_flags = C.DAT_COMPLETION_FLAGS(a.RequestCompletionFlags)
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

func epOf(h C.godat_handle) (*core.EP, error) {
	return lookup[*core.EP](h, core.TypeEP, core.SubHandleEP)
}

func createEP(h C.godat_handle, pzh C.godat_handle, recv, req, conn C.godat_handle, srqh C.godat_handle,
	attr *C.DAT_EP_ATTR, out *C.DAT_EP_HANDLE, outArg int) C.DAT_RETURN {
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(err)
	}
	cfg := core.EPConfig{}
	if cfg.PZ, err = lookup[*core.PZ](pzh, core.TypePZ, core.SubHandlePZ); err != nil {
		return datReturn(err)
	}
	if cfg.RecvEVD, err = lookupOptional[*core.EVD](recv, core.TypeEVD, core.SubHandleEVDRecv); err != nil {
		return datReturn(err)
	}
	if cfg.ReqEVD, err = lookupOptional[*core.EVD](req, core.TypeEVD, core.SubHandleEVDRequest); err != nil {
		return datReturn(err)
	}
	if cfg.ConnEVD, err = lookupOptional[*core.EVD](conn, core.TypeEVD, core.SubHandleEVDConn); err != nil {
		return datReturn(err)
	}
	if srqh != 0 {
		if cfg.SRQ, err = lookup[*core.SRQ](srqh, core.TypeSRQ, core.SubHandleSRQ); err != nil {
			return datReturn(err)
		}
	}
	if out == nil {
		return datReturn(core.ErrArg(outArg))
	}
	if attr == nil && srqh != 0 {
		// dat_ep_create_with_srq: "Consumer can not specify NULL for
		// ep_attributes".
		return datReturn(core.ErrArg(7))
	}
	if attr != nil {
		a := epAttrFromC(attr)
		cfg.Attr = &a
	}
	ep, err := ia.CreateEP(cfg)
	if err != nil {
		return datReturn(err)
	}
	*out = handleOf(ep)
	return C.DAT_SUCCESS
}

//export go_dat_ep_create
func go_dat_ep_create(h C.godat_handle, pz C.godat_handle, recv, req, conn C.godat_handle, attr *C.DAT_EP_ATTR, out *C.DAT_EP_HANDLE) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ep_create", h)
	return createEP(h, pz, recv, req, conn, 0, attr, out, 7)
}

//export go_dat_ep_create_with_srq
func go_dat_ep_create_with_srq(h C.godat_handle, pz C.godat_handle, recv, req, conn C.godat_handle, srq C.godat_handle,
	attr *C.DAT_EP_ATTR, out *C.DAT_EP_HANDLE) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ep_create_with_srq", h)
	if srq == 0 {
		return datReturn(core.ErrHandle(core.SubHandleSRQ))
	}
	return createEP(h, pz, recv, req, conn, srq, attr, out, 8)
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

//export go_dat_ep_query
func go_dat_ep_query(h C.godat_handle, mask C.DAT_EP_PARAM_MASK, out *C.DAT_EP_PARAM) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ep_query", h)
	ep, err := epOf(h)
	if err != nil {
		return datReturn(err)
	}
	if mask&^C.DAT_EP_FIELD_ALL != 0 {
		return datReturn(core.ErrArg(2))
	}
	if out == nil {
		return datReturn(core.ErrArg(3))
	}
	p, err := ep.Query()
	if err != nil {
		return datReturn(err)
	}
	var v C.DAT_EP_PARAM
	v.ia_handle = handleOf(ep.IA())
	v.ep_state = epStates[p.State]
	if m := cmemOf(ep); m != nil {
		v.local_ia_address_ptr = putSockaddr(unsafe.Add(m, cmemLocalAddr), p.LocalAddr)
		v.remote_ia_address_ptr = putSockaddr(unsafe.Add(m, cmemRemoteAddr), p.RemoteAddr)
	}
	v.local_port_qual = C.DAT_PORT_QUAL(p.LocalQual)
	v.remote_port_qual = C.DAT_PORT_QUAL(p.RemoteQual)
	v.pz_handle = handleOf(p.PZ)
	v.recv_evd_handle = handleOf(p.RecvEVD)
	v.request_evd_handle = handleOf(p.ReqEVD)
	v.connect_evd_handle = handleOf(p.ConnEVD)
	v.srq_handle = handleOf(p.SRQ)
	v.ep_attr = epAttrToC(p.Attr)
	*out = v
	return C.DAT_SUCCESS
}

//export go_dat_ep_modify
func go_dat_ep_modify(h C.godat_handle, mask C.DAT_EP_PARAM_MASK, in *C.DAT_EP_PARAM) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ep_modify", h)
	ep, err := epOf(h)
	if err != nil {
		return datReturn(err)
	}
	if mask&^C.DAT_EP_FIELD_ALL != 0 {
		return datReturn(core.ErrArg(2))
	}
	if in == nil {
		return datReturn(core.ErrArg(3))
	}
	// The IA, the state, addresses, port qualifiers ("Cannot be
	// modified") and the SRQ are fixed.
	const fixed = C.DAT_EP_FIELD_IA_HANDLE | C.DAT_EP_FIELD_EP_STATE | C.DAT_EP_FIELD_LOCAL_IA_ADDRESS_PTR |
		C.DAT_EP_FIELD_LOCAL_PORT_QUAL | C.DAT_EP_FIELD_REMOTE_IA_ADDRESS_PTR | C.DAT_EP_FIELD_REMOTE_PORT_QUAL |
		C.DAT_EP_FIELD_SRQ_HANDLE
	if mask&fixed != 0 {
		return datReturn(core.ErrArg(2))
	}
	var hs core.EPHandles
	if mask&C.DAT_EP_FIELD_PZ_HANDLE != 0 {
		hs.SetPZ = true
		if hs.PZ, err = lookup[*core.PZ](handleIn(&in.pz_handle), core.TypePZ, core.SubHandlePZ); err != nil {
			return datReturn(core.ErrArg(3))
		}
	}
	for _, f := range []struct {
		bit C.DAT_EP_PARAM_MASK
		h   C.godat_handle
		set *bool
		evd **core.EVD
	}{{C.DAT_EP_FIELD_RECV_EVD_HANDLE, handleIn(&in.recv_evd_handle), &hs.SetRecvEVD, &hs.RecvEVD},
		{C.DAT_EP_FIELD_REQUEST_EVD_HANDLE, handleIn(&in.request_evd_handle), &hs.SetReqEVD, &hs.ReqEVD},
		{C.DAT_EP_FIELD_CONNECT_EVD_HANDLE, handleIn(&in.connect_evd_handle), &hs.SetConnEVD, &hs.ConnEVD}} {
		if mask&f.bit == 0 {
			continue
		}
		*f.set = true
		if *f.evd, err = lookupOptional[*core.EVD](f.h, core.TypeEVD, core.SubNone); err != nil {
			return datReturn(core.ErrArg(3))
		}
	}
	cur := ep.Attr()
	n := epAttrFromC(&in.ep_attr)
	set := func(bit C.DAT_EP_PARAM_MASK, apply func()) {
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
	return datReturn(ep.Modify(cur, hs))
}

// checkQoS accepts the QoS the provider supports (best effort, as its
// provider attributes say); another defined QoS is DAT_MODEL_NOT_SUPPORTED,
// undefined bits are an invalid argument at position arg.
func checkQoS(qos C.DAT_QOS, arg int) error {
	if qos&^(C.DAT_QOS_BEST_EFFORT|C.DAT_QOS_HIGH_THROUGHPUT|C.DAT_QOS_LOW_LATENCY|C.DAT_QOS_ECONOMY|C.DAT_QOS_PREMIUM) != 0 {
		return core.ErrArg(arg)
	}
	if qos != C.DAT_QOS_BEST_EFFORT {
		return core.ErrModelNotSupported
	}
	return nil
}

//export go_dat_ep_connect
func go_dat_ep_connect(h C.godat_handle, addr *C.DAT_SOCK_ADDR, qual C.DAT_CONN_QUAL, timeout C.DAT_TIMEOUT,
	psize C.DAT_COUNT, pdata C.DAT_PVOID, qos C.DAT_QOS, flags C.DAT_CONNECT_FLAGS) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ep_connect", h)
	ep, err := epOf(h)
	if err != nil {
		return datReturn(err)
	}
	a, ok := getSockaddr(addr)
	if !ok {
		if addr == nil {
			return datReturn(core.ErrArg(2))
		}
		return datReturn(core.ErrAddressUnsupported)
	}
	if timeout == 0 {
		return datReturn(core.ErrArg(4))
	}
	if psize < 0 || psize > 0 && pdata == nil {
		return datReturn(core.ErrArg(5))
	}
	if err := checkQoS(qos, 7); err != nil {
		return datReturn(err)
	}
	if flags&^C.DAT_CONNECT_MULTIPATH_FLAG != 0 {
		return datReturn(core.ErrArg(8))
	}
	if flags&C.DAT_CONNECT_MULTIPATH_FLAG != 0 {
		return datReturn(core.ErrModelNotSupported)
	}
	return datReturn(ep.Connect(a, uint64(qual), timeoutOf(timeout), goBytes(unsafe.Pointer(pdata), psize)))
}

//export go_dat_ep_dup_connect
func go_dat_ep_dup_connect(h C.godat_handle, dup C.godat_handle, timeout C.DAT_TIMEOUT, psize C.DAT_COUNT, pdata C.DAT_PVOID, qos C.DAT_QOS) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ep_dup_connect", h)
	ep, err := epOf(h)
	if err != nil {
		return datReturn(err)
	}
	other, err := epOf(dup)
	if err != nil {
		return datReturn(err)
	}
	if timeout == 0 {
		return datReturn(core.ErrArg(3))
	}
	if psize < 0 || psize > 0 && pdata == nil {
		return datReturn(core.ErrArg(4))
	}
	if err := checkQoS(qos, 6); err != nil {
		return datReturn(err)
	}
	return datReturn(ep.DupConnect(other, timeoutOf(timeout), goBytes(unsafe.Pointer(pdata), psize)))
}

//export go_dat_ep_disconnect
func go_dat_ep_disconnect(h C.godat_handle, flags C.DAT_CLOSE_FLAGS) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ep_disconnect", h)
	ep, err := epOf(h)
	if err != nil {
		return datReturn(err)
	}
	if flags != C.DAT_CLOSE_ABRUPT_FLAG && flags != C.DAT_CLOSE_GRACEFUL_FLAG {
		return datReturn(core.ErrArg(2))
	}
	return datReturn(ep.Disconnect(flags == C.DAT_CLOSE_GRACEFUL_FLAG))
}

// postArgs checks what the four post calls share, in the order their
// pages list the arguments: the EP handle, then the local IOV.
func postArgs(h C.godat_handle, iov *C.DAT_LMR_TRIPLET, n C.DAT_COUNT) (*core.EP, []core.Segment, error) {
	ep, err := epOf(h)
	if err != nil {
		return nil, nil, err
	}
	segs, err := iovOf(iov, n)
	if err != nil {
		return nil, nil, err
	}
	return ep, segs, nil
}

//export go_dat_ep_post_send
func go_dat_ep_post_send(h C.godat_handle, n C.DAT_COUNT, iov *C.DAT_LMR_TRIPLET, cookie C.DAT_UINT64, flags C.DAT_COMPLETION_FLAGS) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ep_post_send", h)
	ep, segs, err := postArgs(h, iov, n)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(ep.PostSend(segs, uint64(cookie), core.CompletionFlags(flags)))
}

//export go_dat_ep_post_recv
func go_dat_ep_post_recv(h C.godat_handle, n C.DAT_COUNT, iov *C.DAT_LMR_TRIPLET, cookie C.DAT_UINT64, flags C.DAT_COMPLETION_FLAGS) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ep_post_recv", h)
	ep, segs, err := postArgs(h, iov, n)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(ep.PostRecv(segs, uint64(cookie), core.CompletionFlags(flags)))
}

func remoteOf(r *C.DAT_RMR_TRIPLET) *core.RemoteSegment {
	return (*core.RemoteSegment)(unsafe.Pointer(r))
}

//export go_dat_ep_post_rdma_read
func go_dat_ep_post_rdma_read(h C.godat_handle, n C.DAT_COUNT, iov *C.DAT_LMR_TRIPLET, cookie C.DAT_UINT64, remote *C.DAT_RMR_TRIPLET, flags C.DAT_COMPLETION_FLAGS) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ep_post_rdma_read", h)
	ep, segs, err := postArgs(h, iov, n)
	if err != nil {
		return datReturn(err)
	}
	if remote == nil {
		return datReturn(core.ErrArg(5))
	}
	return datReturn(ep.PostRDMARead(segs, uint64(cookie), remoteOf(remote), core.CompletionFlags(flags)))
}

//export go_dat_ep_post_rdma_write
func go_dat_ep_post_rdma_write(h C.godat_handle, n C.DAT_COUNT, iov *C.DAT_LMR_TRIPLET, cookie C.DAT_UINT64, remote *C.DAT_RMR_TRIPLET, flags C.DAT_COMPLETION_FLAGS) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ep_post_rdma_write", h)
	ep, segs, err := postArgs(h, iov, n)
	if err != nil {
		return datReturn(err)
	}
	if remote == nil {
		return datReturn(core.ErrArg(5))
	}
	return datReturn(ep.PostRDMAWrite(segs, uint64(cookie), remoteOf(remote), core.CompletionFlags(flags)))
}

//export go_dat_ep_get_status
func go_dat_ep_get_status(h C.godat_handle, state *C.DAT_EP_STATE, recvIdle, reqIdle *C.DAT_BOOLEAN) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ep_get_status", h)
	ep, err := epOf(h)
	if err != nil {
		return datReturn(err)
	}
	s, err := ep.Status()
	if err != nil {
		return datReturn(err)
	}
	if state != nil {
		*state = epStates[s.State]
	}
	if recvIdle != nil {
		*recvIdle = datBool(s.RecvIdle)
	}
	if reqIdle != nil {
		*reqIdle = datBool(s.ReqIdle)
	}
	return C.DAT_SUCCESS
}

//export go_dat_ep_free
func go_dat_ep_free(h C.godat_handle) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ep_free", h)
	ep, err := epOf(h)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(ep.Free())
}

//export go_dat_ep_reset
func go_dat_ep_reset(h C.godat_handle) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ep_reset", h)
	ep, err := epOf(h)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(ep.Reset())
}

//export go_dat_ep_recv_query
func go_dat_ep_recv_query(h C.godat_handle, nbufs, span *C.DAT_COUNT) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ep_recv_query", h)
	ep, err := epOf(h)
	if err != nil {
		return datReturn(err)
	}
	if nbufs == nil && span == nil {
		// Nothing asked for: the one malformed call this page allows.
		return datReturn(core.ErrArg(2))
	}
	n, sp, err := ep.RecvQuery()
	if err != nil {
		return datReturn(err)
	}
	if nbufs != nil {
		*nbufs = C.DAT_COUNT(n)
	}
	if span != nil {
		*span = C.DAT_COUNT(sp)
	}
	return C.DAT_SUCCESS
}

// watermarkOf maps DAT_WATERMARK_INFINITE to core's value; any other
// negative count stays negative and is rejected by core.
func watermarkOf(v C.DAT_COUNT) int {
	if v == C.DAT_WATERMARK_INFINITE {
		return core.WatermarkInfinite
	}
	if v < 0 {
		return core.WatermarkInfinite - 1
	}
	return int(v)
}

//export go_dat_ep_set_watermark
func go_dat_ep_set_watermark(h C.godat_handle, soft, hard C.DAT_COUNT) (ret C.DAT_RETURN) {
	defer done(&ret, "dat_ep_set_watermark", h)
	ep, err := epOf(h)
	if err != nil {
		return datReturn(err)
	}
	return datReturn(ep.SetWatermark(watermarkOf(soft), watermarkOf(hard)))
}
