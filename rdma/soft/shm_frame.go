package soft

// Encoding and checking of what travels in shared-memory ring slots. Every
// decoder takes the slot as the peer left it and bounds-checks each field
// before anything uses it; a slot that fails is a protocol violation of
// that peer and ends its connection only.

import (
	"godat/rdma"
)

// Data slot header fields (after the sequence word).
const (
	dsOffType  = 8  // uint32: type | flags<<8
	dsOffNum   = 12 // uint32: 1 when the payload or descriptor is in the next chunk
	dsOffAux   = 16 // uint32
	dsOffNSGE  = 20 // uint32 rendezvous descriptors
	dsOffLen   = 24 // uint64
	dsOffAddr  = 32 // uint64
	dsOffGrant = 40 // uint32 the producer's grant for the other direction
	dsOffStamp = 44 // uint32 the consumer's inbound tail as the producer read it before publishing
	dsOffData  = 48 // payload or descriptors: a small message is one cache line

	csOffType   = 8  // uint32
	csOffStatus = 12 // uint32
	csOffNum    = 16 // uint32
)

// rdvDesc is a rendezvous message's view of the sender's memory.
type rdvDesc struct {
	n   int
	seg [maxSGE]iov
}

// putDataSlot writes a data slot's header (the payload or descriptors are
// written by the caller).
func putDataSlot(m seg, off int, h *hdr, grant uint32, nsge int) {
	m.put32(off+dsOffType, uint32(h.typ)|uint32(h.flags)<<8)
	m.put32(off+dsOffNum, h.num)
	m.put32(off+dsOffAux, h.aux)
	m.put32(off+dsOffGrant, grant)
	m.put64(off+dsOffLen, h.len)
	m.put64(off+dsOffAddr, h.addr)
	m.put32(off+dsOffNSGE, uint32(nsge))
}

// getDataSlot decodes and checks a published data slot at off; chunk is
// the offset of the chunk its payload or descriptor is in when it says so
// (num 1: the consumer's own next chunk, never a peer's number). Only
// SENDs travel on the data ring, each asking for a verdict: one of at most
// slotInline bytes in the slot or in a chunk, one of at most eagerMax
// bytes in a chunk, a larger one (rendezvous) as a descriptor of the
// sender's memory in a chunk, whose segments add up to its length. pay is
// where the payload is (eager); ok is false for anything else.
func getDataSlot(m seg, off, chunk int, d *rdvDesc) (h hdr, grant uint32, pay int, ok bool) {
	t := m.get32(off + dsOffType)
	h.typ, h.flags = uint8(t), uint8(t>>8)
	h.num, h.aux = m.get32(off+dsOffNum), m.get32(off+dsOffAux)
	grant = m.get32(off + dsOffGrant)
	h.len, h.addr = m.get64(off+dsOffLen), m.get64(off+dsOffAddr)
	if t>>16 != 0 || h.typ != msgSend || h.flags&^(flSolicited|flAckReq|flNotify) != 0 ||
		h.flags&flAckReq == 0 || h.len > maxMsgSize || h.num > 1 {
		return h, 0, 0, false
	}
	inChunk := h.num == 1
	switch {
	case h.len <= slotInline && !inChunk:
		return h, grant, off + dsOffData, true
	case !inChunk:
		return h, 0, 0, false // too long for the slot, and no chunk
	case h.len <= eagerMax:
		return h, grant, chunk, true
	}
	ns := m.get32(off + dsOffNSGE)
	if ns > maxSGE || ns == 0 && h.len != 0 {
		return h, 0, 0, false
	}
	var sum uint64
	for i := 0; i < int(ns); i++ {
		p := chunk + i*16
		a, l := m.get64(p), m.get64(p+8)
		if l == 0 || l > maxMsgSize || a+l < a {
			return h, 0, 0, false
		}
		d.seg[i] = iov{Base: uintptr(a), Len: int(l)}
		sum += l
	}
	d.n = int(ns)
	return h, grant, 0, sum == h.len
}

// putRdvDesc writes the descriptors of a rendezvous message at off (a
// chunk): the non-empty segments of sgl.
func putRdvDesc(m seg, off int, sgl []rdma.SGE) int {
	n := 0
	for i := range sgl {
		if sgl[i].Length == 0 {
			continue
		}
		p := off + n*16
		m.put64(p, sgl[i].Addr)
		m.put64(p+8, uint64(sgl[i].Length))
		n++
	}
	return n
}

// putCtlSlot writes a NAK: request num failed with status.
func putCtlSlot(m seg, off int, typ uint8, num uint32, st rdma.WCStatus) {
	m.put32(off+csOffType, uint32(typ))
	m.put32(off+csOffStatus, uint32(st))
	m.put32(off+csOffNum, num)
}

// nakStatuses are the verdicts a NAK may carry.
func nakStatusOK(st rdma.WCStatus) bool {
	switch st {
	case rdma.WCRemInvReqErr, rdma.WCRemOpErr, rdma.WCLocProtErr, rdma.WCRemAccessErr:
		return true
	}
	return false
}

// getCtlSlot decodes and checks a published control slot: a NAK with a
// status a NAK may carry.
func getCtlSlot(m seg, off int) (num uint32, st rdma.WCStatus, ok bool) {
	t := m.get32(off + csOffType)
	s := m.get32(off + csOffStatus)
	num = m.get32(off + csOffNum)
	if t == msgNak && s < 256 && nakStatusOK(rdma.WCStatus(s)) {
		return num, rdma.WCStatus(s), true
	}
	return 0, 0, false
}
