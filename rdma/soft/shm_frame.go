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
	dsOffNum   = 12 // uint32
	dsOffAux   = 16 // uint32
	dsOffNSGE  = 20 // uint32 rendezvous descriptors
	dsOffLen   = 24 // uint64
	dsOffAddr  = 32 // uint64
	dsOffGrant = 40 // uint64 the producer's credit for the other direction
	dsOffData  = slotHdr

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
func putDataSlot(m seg, off int, h *hdr, grant credit, nsge int) {
	m.put32(off+dsOffType, uint32(h.typ)|uint32(h.flags)<<8)
	m.put32(off+dsOffNum, h.num)
	m.put32(off+dsOffAux, h.aux)
	m.put64(off+dsOffGrant, uint64(grant))
	m.put64(off+dsOffLen, h.len)
	m.put64(off+dsOffAddr, h.addr)
	m.put32(off+dsOffNSGE, uint32(nsge))
}

// getDataSlot decodes and checks a published data slot. Only SENDs travel
// on the data ring; one of at most eagerMax bytes carries them in the
// slot, a larger one (a rendezvous message, which asks for a verdict) a
// descriptor of the sender's memory whose segments add up to its length.
// ok is false for anything else.
func getDataSlot(m seg, off int, d *rdvDesc) (h hdr, grant credit, ok bool) {
	t := m.get32(off + dsOffType)
	h.typ, h.flags = uint8(t), uint8(t>>8)
	h.num, h.aux = m.get32(off+dsOffNum), m.get32(off+dsOffAux)
	grant = credit(m.get64(off + dsOffGrant))
	h.len, h.addr = m.get64(off+dsOffLen), m.get64(off+dsOffAddr)
	if t>>16 != 0 || h.typ != msgSend || h.flags&^(flSolicited|flAckReq) != 0 || h.len > maxMsgSize {
		return h, 0, false
	}
	if h.len <= eagerMax {
		return h, grant, true
	}
	if h.flags&flAckReq == 0 {
		return h, 0, false
	}
	ns := m.get32(off + dsOffNSGE)
	if ns > maxSGE || ns == 0 && h.len != 0 {
		return h, 0, false
	}
	var sum uint64
	for i := 0; i < int(ns); i++ {
		p := off + dsOffData + i*16
		a, l := m.get64(p), m.get64(p+8)
		if l == 0 || l > maxMsgSize || a+l < a {
			return h, 0, false
		}
		d.seg[i] = iov{Base: uintptr(a), Len: int(l)}
		sum += l
	}
	d.n = int(ns)
	return h, grant, sum == h.len
}

// putRdvDesc writes the descriptors of a rendezvous message: the non-empty
// segments of sgl.
func putRdvDesc(m seg, off int, sgl []rdma.SGE) int {
	n := 0
	for i := range sgl {
		if sgl[i].Length == 0 {
			continue
		}
		p := off + dsOffData + n*16
		m.put64(p, sgl[i].Addr)
		m.put64(p+8, uint64(sgl[i].Length))
		n++
	}
	return n
}

// putCtlSlot writes an acknowledgement (msgAck: requests up to num) or a
// NAK (msgNak: request num failed with status).
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

// getCtlSlot decodes and checks a published control slot.
func getCtlSlot(m seg, off int) (typ uint8, num uint32, st rdma.WCStatus, ok bool) {
	t := m.get32(off + csOffType)
	s := m.get32(off + csOffStatus)
	num = m.get32(off + csOffNum)
	switch {
	case t == msgAck && s == 0:
		return msgAck, num, rdma.WCSuccess, true
	case t == msgNak && s < 256 && nakStatusOK(rdma.WCStatus(s)):
		return msgNak, num, rdma.WCStatus(s), true
	}
	return 0, 0, 0, false
}
