package soft

// TCP frames. Every message is a frame: a 32-byte little-endian header,
// then its payload.
//
//	off  0  u8   type
//	off  1  u8   flags (SEND: solicited, ack requested; REQ: version)
//	off  2  u16  room: the smallest receive the grant's SENDs may land in
//	             (saturated; 0 when the receiver cannot say: an SRQ)
//	off  4  u32  grant: receives the sender has posted on this connection
//	             (cumulative); the peer may have at most grant SENDs issued
//	off  8  u32  ack: requests of the peer the sender executed (cumulative)
//	off 12  u32  aux: WRITE/READREQ rkey; READDONE/NAK status; REJ reason;
//	             REQ/ACC magic; NEED the grant the asker has seen
//	off 16  u64  len: payload bytes that follow (READREQ: bytes to read)
//	off 24  u64  addr: WRITE/READREQ target address; NAK the failed
//	             request's number; REQ the service id
//
// checkFrame bounds every field a peer supplies before the reader acts on
// it; a frame that fails is a protocol violation that ends the connection.

import (
	"encoding/binary"

	"godat/rdma"
)

// Frame types beyond the protocol's (wire.go): connection management.
const (
	frReq = 16
	frAcc = 17
	frRej = 18
	frRtu = 19
)

const (
	frameHdr   = 32
	tcpMagic   = 0x31544447 // "GDT1"
	tcpVersion = 2

	rejConsumer   = 1
	rejNoListener = 2
	rejVersion    = 3
)

// frame is a decoded frame header.
type frame struct {
	typ, flags uint8
	room       uint16
	grant, ack uint32
	aux        uint32
	len, addr  uint64
}

func (f *frame) put(b []byte) {
	le := binary.LittleEndian
	b[0], b[1] = f.typ, f.flags
	le.PutUint16(b[2:], f.room)
	le.PutUint32(b[4:], f.grant)
	le.PutUint32(b[8:], f.ack)
	le.PutUint32(b[12:], f.aux)
	le.PutUint64(b[16:], f.len)
	le.PutUint64(b[24:], f.addr)
}

func (f *frame) get(b []byte) {
	le := binary.LittleEndian
	f.typ, f.flags = b[0], b[1]
	f.room = le.Uint16(b[2:])
	f.grant = le.Uint32(b[4:])
	f.ack = le.Uint32(b[8:])
	f.aux = le.Uint32(b[12:])
	f.len = le.Uint64(b[16:])
	f.addr = le.Uint64(b[24:])
}

// credit is the grant a header carries.
func (f *frame) credit() credit { return mkCredit(f.grant, uint32(f.room)) }

// setCredit stamps a grant into a header (room saturates at 65535, above
// eagerMax: enough to tell every eager send).
func (f *frame) setCredit(g credit) {
	f.grant, f.room = g.n(), uint16(min(g.room(), 0xffff))
}

// checkFrame reports whether a data-phase frame is well formed: a known
// type, flags it may carry, a length within the message size (and none
// where the type carries no payload), a status a peer may send.
func checkFrame(f *frame) bool {
	if f.len > maxMsgSize {
		return false
	}
	switch f.typ {
	case msgSend:
		return f.flags&^(flSolicited|flAckReq) == 0 && (f.flags&flAckReq != 0 || f.len <= eagerMax)
	case msgWrite, msgReadReq, msgReadResp:
		return f.flags == 0
	case msgReadDone:
		return f.flags == 0 && f.len == 0 && (f.aux == uint32(rdma.WCSuccess) || f.aux == uint32(rdma.WCRemAccessErr))
	case msgNak:
		return f.flags == 0 && f.len == 0 && f.aux < 256 && nakStatusOK(rdma.WCStatus(f.aux)) && f.addr <= 1<<32-1
	case msgAck, msgNeed, msgDisc:
		return f.flags == 0 && f.len == 0
	}
	return false
}

// checkHandshake reports whether a handshake frame is well formed: REQ and
// ACC carry the magic and at most maxPrivData bytes; REJ a known reason.
func checkHandshake(f *frame) bool {
	switch f.typ {
	case frReq, frAcc:
		return f.aux == tcpMagic && f.len <= maxPrivData
	case frRej:
		return f.aux >= rejConsumer && f.aux <= rejVersion && f.len <= maxPrivData
	case frRtu:
		return f.len == 0
	}
	return false
}
