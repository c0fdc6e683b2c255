package main

/*
#include "godat.h"
*/
import "C"

import (
	"unsafe"

	"godat/core"
	"godat/export/cabi"
	"godat/export/dat12"
)

func epOf(h C.godat_handle) (*core.EP, error) {
	if o, ok := cabi.LookupObj(uintptr(h), core.TypeEP); ok {
		if ep, ok := o.(*core.EP); ok {
			return ep, nil
		}
	}
	return nil, core.ErrHandle(core.SubHandleEP)
}

func createEP(c *dat12.Call, h C.godat_handle, pzh C.godat_handle, recv, req, conn C.godat_handle, srqh C.godat_handle,
	attr *C.DAT_EP_ATTR, out *C.DAT_EP_HANDLE, outArg int) C.DAT_RETURN {
	ia, err := lookup[*core.IA](h, core.TypeIA, core.SubHandleIA)
	if err != nil {
		return datReturn(c, err)
	}
	cfg := core.EPConfig{}
	if cfg.PZ, err = lookup[*core.PZ](pzh, core.TypePZ, core.SubHandlePZ); err != nil {
		return datReturn(c, err)
	}
	if cfg.RecvEVD, err = lookupOptional[*core.EVD](recv, core.TypeEVD, core.SubHandleEVDRecv); err != nil {
		return datReturn(c, err)
	}
	if cfg.ReqEVD, err = lookupOptional[*core.EVD](req, core.TypeEVD, core.SubHandleEVDRequest); err != nil {
		return datReturn(c, err)
	}
	if cfg.ConnEVD, err = lookupOptional[*core.EVD](conn, core.TypeEVD, core.SubHandleEVDConn); err != nil {
		return datReturn(c, err)
	}
	if srqh != 0 {
		if cfg.SRQ, err = lookup[*core.SRQ](srqh, core.TypeSRQ, core.SubHandleSRQ); err != nil {
			return datReturn(c, err)
		}
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(outArg))
	}
	cabi.ProbeOut(out)
	if attr == nil && srqh != 0 {
		// dat_ep_create_with_srq: "Consumer can not specify NULL for
		// ep_attributes".
		return datReturn(c, dat12.ArgAt(7))
	}
	if attr != nil {
		a, ok := dat12.EPAttrFromC(unsafe.Pointer(attr))
		if !ok {
			return datReturn(c, core.ErrArg(core.ArgEPAttr))
		}
		cfg.Attr = &a
	}
	ep, err := ia.CreateEP(cfg)
	if err != nil {
		return datReturn(c, err)
	}
	putHandle(out, ep)
	return C.DAT_SUCCESS
}

var callEPCreate = dat12.NewCall("dat_ep_create", dat12.Args{core.ArgEPAttr: 6})

//export go_dat_ep_create
func go_dat_ep_create(h C.godat_handle, pz C.godat_handle, recv, req, conn C.godat_handle, attr *C.DAT_EP_ATTR, out *C.DAT_EP_HANDLE) (ret C.DAT_RETURN) {
	c := callEPCreate
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	return createEP(c, h, pz, recv, req, conn, 0, attr, out, 7)
}

var callEPCreateWithSRQ = dat12.NewCall("dat_ep_create_with_srq", dat12.Args{core.ArgPZ: 2, core.ArgEPAttr: 7})

//export go_dat_ep_create_with_srq
func go_dat_ep_create_with_srq(h C.godat_handle, pz C.godat_handle, recv, req, conn C.godat_handle, srq C.godat_handle,
	attr *C.DAT_EP_ATTR, out *C.DAT_EP_HANDLE) (ret C.DAT_RETURN) {
	c := callEPCreateWithSRQ
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	if srq == 0 {
		return datReturn(c, core.ErrHandle(core.SubHandleSRQ))
	}
	return createEP(c, h, pz, recv, req, conn, srq, attr, out, 8)
}

var callEPQuery = dat12.NewCall("dat_ep_query", dat12.Args{})

//export go_dat_ep_query
func go_dat_ep_query(h C.godat_handle, mask C.DAT_EP_PARAM_MASK, out *C.DAT_EP_PARAM) (ret C.DAT_RETURN) {
	c := callEPQuery
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ep, err := epOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	if mask&^C.DAT_EP_FIELD_ALL != 0 {
		return datReturn(c, dat12.ArgAt(2))
	}
	if out == nil {
		return datReturn(c, dat12.ArgAt(3))
	}
	p, err := ep.Query()
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, dat12.PutEPParam(unsafe.Pointer(out), ep, p))
}

var callEPModify = dat12.NewCall("dat_ep_modify", dat12.Args{core.ArgEPAttr: 3, core.ArgPZ: 3, core.ArgEVD: 3})

//export go_dat_ep_modify
func go_dat_ep_modify(h C.godat_handle, mask C.DAT_EP_PARAM_MASK, in *C.DAT_EP_PARAM) (ret C.DAT_RETURN) {
	c := callEPModify
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ep, err := epOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	if mask&^C.DAT_EP_FIELD_ALL != 0 {
		return datReturn(c, dat12.ArgAt(2))
	}
	if in == nil {
		return datReturn(c, dat12.ArgAt(3))
	}
	// The IA, the state, addresses, port qualifiers ("Cannot be
	// modified") and the SRQ are fixed.
	const fixed = C.DAT_EP_FIELD_IA_HANDLE | C.DAT_EP_FIELD_EP_STATE | C.DAT_EP_FIELD_LOCAL_IA_ADDRESS_PTR |
		C.DAT_EP_FIELD_LOCAL_PORT_QUAL | C.DAT_EP_FIELD_REMOTE_IA_ADDRESS_PTR | C.DAT_EP_FIELD_REMOTE_PORT_QUAL |
		C.DAT_EP_FIELD_SRQ_HANDLE
	if mask&fixed != 0 {
		return datReturn(c, dat12.ArgAt(2))
	}
	attr, hs, err := dat12.EPModifyFromC(uint64(mask), unsafe.Pointer(in), ep.Attr())
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, ep.Modify(attr, hs))
}

var callEPConnect = dat12.NewCall("dat_ep_connect", dat12.Args{core.ArgPrivateData: 5})

//export go_dat_ep_connect
func go_dat_ep_connect(h C.godat_handle, addr *C.DAT_SOCK_ADDR, qual C.DAT_CONN_QUAL, timeout C.DAT_TIMEOUT,
	psize C.DAT_COUNT, pdata C.DAT_PVOID, qos C.DAT_QOS, flags C.DAT_CONNECT_FLAGS) (ret C.DAT_RETURN) {
	c := callEPConnect
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ep, err := epOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	a, ok := cabi.Sockaddr(unsafe.Pointer(addr))
	if !ok {
		if addr == nil {
			return datReturn(c, dat12.ArgAt(2))
		}
		return datReturn(c, core.ErrAddressUnsupported)
	}
	if timeout == 0 {
		return datReturn(c, dat12.ArgAt(4))
	}
	if psize < 0 || psize > 0 && pdata == nil {
		return datReturn(c, dat12.ArgAt(5))
	}
	if err := dat12.CheckQoS(uint32(qos), 7); err != nil {
		return datReturn(c, err)
	}
	if flags&^C.DAT_CONNECT_MULTIPATH_FLAG != 0 {
		return datReturn(c, dat12.ArgAt(8))
	}
	if flags&C.DAT_CONNECT_MULTIPATH_FLAG != 0 {
		return datReturn(c, core.ErrModelNotSupported)
	}
	pd, err := privateData(ep.IA(), pdata, psize)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, ep.Connect(a, uint64(qual), dat12.Timeout(uint32(timeout)), pd))
}

var callEPDupConnect = dat12.NewCall("dat_ep_dup_connect", dat12.Args{core.ArgPrivateData: 4})

//export go_dat_ep_dup_connect
func go_dat_ep_dup_connect(h C.godat_handle, dup C.godat_handle, timeout C.DAT_TIMEOUT, psize C.DAT_COUNT, pdata C.DAT_PVOID, qos C.DAT_QOS) (ret C.DAT_RETURN) {
	c := callEPDupConnect
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ep, err := epOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	other, err := epOf(dup)
	if err != nil {
		return datReturn(c, err)
	}
	if timeout == 0 {
		return datReturn(c, dat12.ArgAt(3))
	}
	if psize < 0 || psize > 0 && pdata == nil {
		return datReturn(c, dat12.ArgAt(4))
	}
	if err := dat12.CheckQoS(uint32(qos), 6); err != nil {
		return datReturn(c, err)
	}
	pd, err := privateData(ep.IA(), pdata, psize)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, ep.DupConnect(other, dat12.Timeout(uint32(timeout)), pd))
}

var callEPDisconnect = dat12.NewCall("dat_ep_disconnect", dat12.Args{})

//export go_dat_ep_disconnect
func go_dat_ep_disconnect(h C.godat_handle, flags C.DAT_CLOSE_FLAGS) (ret C.DAT_RETURN) {
	c := callEPDisconnect
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ep, err := epOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	if flags != C.DAT_CLOSE_ABRUPT_FLAG && flags != C.DAT_CLOSE_GRACEFUL_FLAG {
		return datReturn(c, dat12.ArgAt(2))
	}
	return datReturn(c, ep.Disconnect(flags == C.DAT_CLOSE_GRACEFUL_FLAG))
}

// The four post calls check their arguments in the order their pages list
// them: the EP handle, the local IOV, the remote IOV, then the completion
// flags, which core would check first. The local IOV is converted into a
// buffer on the wrapper's stack, a small one for the common short list;
// the segments go straight to core, so a post allocates nothing.

// postLocal is dat_ep_post_send (op sendOp), _recv, _rdma_read and
// _rdma_write up to the local IOV; the rest is post's.
func postLocal(c *dat12.Call, op postOp, h C.godat_handle, n C.DAT_COUNT, iov *C.DAT_LMR_TRIPLET, cookie C.DAT_UINT64,
	remote *C.DAT_RMR_TRIPLET, flags C.DAT_COMPLETION_FLAGS) C.DAT_RETURN {
	ep, err := epOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	p := unsafe.Pointer(iov)
	if err := dat12.CheckIOV(p, int32(n)); err != nil {
		return datReturn(c, err)
	}
	if n <= dat12.SmallIOV {
		var b dat12.SmallSegmentBuf
		return datReturn(c, post(op, ep, b.Fill(p, int(n)), uint64(cookie), remote, flags))
	}
	var b dat12.SegmentBuf
	return datReturn(c, post(op, ep, b.Fill(p, int(n)), uint64(cookie), remote, flags))
}

// postOp says which post call postLocal serves.
type postOp uint8

const (
	sendOp postOp = iota
	recvOp
	readOp
	writeOp
)

// post checks the rest of a post's arguments and hands it to core.
func post(op postOp, ep *core.EP, segs []core.Segment, cookie uint64, remote *C.DAT_RMR_TRIPLET, flags C.DAT_COMPLETION_FLAGS) error {
	var r core.RemoteSegment
	if op == readOp || op == writeOp {
		if remote == nil {
			return dat12.ArgAt(5)
		}
		r = dat12.Remote(unsafe.Pointer(remote))
	}
	f, ok := dat12.CompletionFlags(uint32(flags))
	if !ok {
		return core.ErrArg(core.ArgCompletionFlags)
	}
	switch op {
	case sendOp:
		return ep.PostSend(segs, cookie, f)
	case recvOp:
		return ep.PostRecv(segs, cookie, f)
	case readOp:
		return ep.PostRDMARead(segs, cookie, &r, f)
	}
	return ep.PostRDMAWrite(segs, cookie, &r, f)
}

var callEPPostSend = dat12.NewCall("dat_ep_post_send", dat12.Args{core.ArgSegmentCount: 2, core.ArgLocalIOV: 3, core.ArgCompletionFlags: 5})

//export go_dat_ep_post_send
func go_dat_ep_post_send(h C.godat_handle, n C.DAT_COUNT, iov *C.DAT_LMR_TRIPLET, cookie C.DAT_UINT64, flags C.DAT_COMPLETION_FLAGS) (ret C.DAT_RETURN) {
	c := callEPPostSend
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	if n == 1 && iov != nil {
		ep, seg, f, err := postOne(h, iov, flags)
		if err != nil {
			return datReturn(c, err)
		}
		return datReturn(c, ep.PostSend(seg[:], uint64(cookie), f))
	}
	return postLocal(c, sendOp, h, n, iov, cookie, nil, flags)
}

// postOne is postLocal's checks and conversion for the usual send or
// receive, of one segment (what CheckIOV and post check of it, in the same
// order: the handle, then the flags), without the general path's buffer
// and dispatch.
func postOne(h C.godat_handle, iov *C.DAT_LMR_TRIPLET, flags C.DAT_COMPLETION_FLAGS) (*core.EP, [1]core.Segment, core.CompletionFlags, error) {
	var seg [1]core.Segment
	ep, err := epOf(h)
	if err != nil {
		return nil, seg, 0, err
	}
	f, ok := dat12.CompletionFlags(uint32(flags))
	if !ok {
		return nil, seg, 0, core.ErrArg(core.ArgCompletionFlags)
	}
	seg[0] = dat12.Segment(unsafe.Pointer(iov))
	return ep, seg, f, nil
}

var callEPPostRecv = dat12.NewCall("dat_ep_post_recv", dat12.Args{core.ArgSegmentCount: 2, core.ArgLocalIOV: 3, core.ArgCompletionFlags: 5})

//export go_dat_ep_post_recv
func go_dat_ep_post_recv(h C.godat_handle, n C.DAT_COUNT, iov *C.DAT_LMR_TRIPLET, cookie C.DAT_UINT64, flags C.DAT_COMPLETION_FLAGS) (ret C.DAT_RETURN) {
	c := callEPPostRecv
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	if n == 1 && iov != nil {
		ep, seg, f, err := postOne(h, iov, flags)
		if err != nil {
			return datReturn(c, err)
		}
		return datReturn(c, ep.PostRecv(seg[:], uint64(cookie), f))
	}
	return postLocal(c, recvOp, h, n, iov, cookie, nil, flags)
}

var callEPPostRDMARead = dat12.NewCall("dat_ep_post_rdma_read", dat12.Args{core.ArgSegmentCount: 2, core.ArgLocalIOV: 3, core.ArgCompletionFlags: 6})

//export go_dat_ep_post_rdma_read
func go_dat_ep_post_rdma_read(h C.godat_handle, n C.DAT_COUNT, iov *C.DAT_LMR_TRIPLET, cookie C.DAT_UINT64, remote *C.DAT_RMR_TRIPLET, flags C.DAT_COMPLETION_FLAGS) (ret C.DAT_RETURN) {
	c := callEPPostRDMARead
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	return postLocal(c, readOp, h, n, iov, cookie, remote, flags)
}

var callEPPostRDMAWrite = dat12.NewCall("dat_ep_post_rdma_write", dat12.Args{core.ArgSegmentCount: 2, core.ArgLocalIOV: 3, core.ArgCompletionFlags: 6})

//export go_dat_ep_post_rdma_write
func go_dat_ep_post_rdma_write(h C.godat_handle, n C.DAT_COUNT, iov *C.DAT_LMR_TRIPLET, cookie C.DAT_UINT64, remote *C.DAT_RMR_TRIPLET, flags C.DAT_COMPLETION_FLAGS) (ret C.DAT_RETURN) {
	c := callEPPostRDMAWrite
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	return postLocal(c, writeOp, h, n, iov, cookie, remote, flags)
}

var callEPGetStatus = dat12.NewCall("dat_ep_get_status", dat12.Args{})

//export go_dat_ep_get_status
func go_dat_ep_get_status(h C.godat_handle, state *C.DAT_EP_STATE, recvIdle, reqIdle *C.DAT_BOOLEAN) (ret C.DAT_RETURN) {
	c := callEPGetStatus
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ep, err := epOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	s, err := ep.Status()
	if err != nil {
		return datReturn(c, err)
	}
	if state != nil {
		*state = C.DAT_EP_STATE(dat12.EPState(s.State))
	}
	if recvIdle != nil {
		*recvIdle = C.DAT_BOOLEAN(dat12.Bool(s.RecvIdle))
	}
	if reqIdle != nil {
		*reqIdle = C.DAT_BOOLEAN(dat12.Bool(s.ReqIdle))
	}
	return C.DAT_SUCCESS
}

var callEPFree = dat12.NewCall("dat_ep_free", dat12.Args{})

//export go_dat_ep_free
func go_dat_ep_free(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callEPFree
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ep, err := epOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, ep.Free())
}

var callEPReset = dat12.NewCall("dat_ep_reset", dat12.Args{})

//export go_dat_ep_reset
func go_dat_ep_reset(h C.godat_handle) (ret C.DAT_RETURN) {
	c := callEPReset
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ep, err := epOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, ep.Reset())
}

var callEPRecvQuery = dat12.NewCall("dat_ep_recv_query", dat12.Args{})

//export go_dat_ep_recv_query
func go_dat_ep_recv_query(h C.godat_handle, nbufs, span *C.DAT_COUNT) (ret C.DAT_RETURN) {
	c := callEPRecvQuery
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ep, err := epOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	if nbufs == nil && span == nil {
		// Nothing asked for: the one malformed call this page allows.
		return datReturn(c, dat12.ArgAt(2))
	}
	n, sp, err := ep.RecvQuery()
	if err != nil {
		return datReturn(c, err)
	}
	if nbufs != nil {
		*nbufs = C.DAT_COUNT(n)
	}
	if span != nil {
		*span = C.DAT_COUNT(sp)
	}
	return C.DAT_SUCCESS
}

var callEPSetWatermark = dat12.NewCall("dat_ep_set_watermark", dat12.Args{core.ArgSoftWatermark: 2, core.ArgHardWatermark: 3})

//export go_dat_ep_set_watermark
func go_dat_ep_set_watermark(h C.godat_handle, soft, hard C.DAT_COUNT) (ret C.DAT_RETURN) {
	c := callEPSetWatermark
	defer c.Enter().Done((*uint32)(&ret), uintptr(h))
	ep, err := epOf(h)
	if err != nil {
		return datReturn(c, err)
	}
	return datReturn(c, ep.SetWatermark(dat12.Watermark(int32(soft)), dat12.Watermark(int32(hard))))
}
