package soft

// Shared-memory connection management messages, on an abstract SEQPACKET
// unix socket per connection. A message is a 64-byte little-endian header,
// then private data; descriptors travel as SCM_RIGHTS:
//
//	REQ    active → passive: connection segment, active bell, active
//	       registration table (read-only)
//	ACC    passive → active: passive bell, passive registration table
//	REJ    passive → active: consumer reject, with its private data
//	RTU    active → passive: the active side is established
//	DISC   either way: orderly end
//	ACCERR either way: the sender violated the receiver's access rights
//
// decodeCM checks every field a peer supplies; nothing in a message is
// trusted for identity (the peer's pid and uid come from SO_PEERCRED).

import (
	"encoding/binary"
	"errors"
	"net/netip"
)

// CM message types.
const (
	cmReq    = 1
	cmAcc    = 2
	cmRej    = 3
	cmRtu    = 4
	cmDisc   = 5
	cmAccErr = 6
)

const (
	cmVersion = 2
	cmHdr     = 64
	cmMaxMsg  = cmHdr + maxPrivData

	cmOffType    = 0
	cmOffVersion = 4
	cmOffPD      = 8  // the sender's QP's PD (remote checks)
	cmOffHint    = 12 // the sender's hint base for this connection
	cmOffAddr    = 16 // 16 bytes: the sender's IA address
	cmOffSvc     = 32 // REQ: the service id
	cmOffLayout  = 40 // dataSlots, eagerMax, ctlSlots (3 × uint32)
	cmOffPrivLen = 52
	cmOffPort    = 56 // REQ: the active side's port
)

// cmFds is how many descriptors each message type carries.
var cmFds = [...]int{cmReq: 3, cmAcc: 2, cmRej: 0, cmRtu: 0, cmDisc: 0, cmAccErr: 0}

// cmMsg is a decoded CM message.
type cmMsg struct {
	typ  uint32
	pd   uint32
	hint uint32
	addr netip.Addr
	svc  uint64
	port uint16
	priv []byte
}

var errCMMsg = errors.New("soft: malformed connection message")

// encodeCM builds a message.
func encodeCM(m *cmMsg) []byte {
	b := make([]byte, cmHdr+len(m.priv))
	le := binary.LittleEndian
	le.PutUint32(b[cmOffType:], m.typ)
	le.PutUint32(b[cmOffVersion:], cmVersion)
	le.PutUint32(b[cmOffPD:], m.pd)
	le.PutUint32(b[cmOffHint:], m.hint)
	if m.addr.IsValid() {
		a := m.addr.As16()
		copy(b[cmOffAddr:], a[:])
	}
	le.PutUint64(b[cmOffSvc:], m.svc)
	le.PutUint32(b[cmOffLayout:], dataSlots)
	le.PutUint32(b[cmOffLayout+4:], eagerMax)
	le.PutUint32(b[cmOffLayout+8:], ctlSlots)
	le.PutUint32(b[cmOffPrivLen:], uint32(len(m.priv)))
	le.PutUint32(b[cmOffPort:], uint32(m.port))
	copy(b[cmHdr:], m.priv)
	return b
}

// decodeCM checks and decodes a message of n bytes that came with nfds
// descriptors.
func decodeCM(b []byte, nfds int) (cmMsg, error) {
	var m cmMsg
	if len(b) < cmHdr || len(b) > cmMaxMsg {
		return m, errCMMsg
	}
	le := binary.LittleEndian
	m.typ = le.Uint32(b[cmOffType:])
	if m.typ == 0 || m.typ >= uint32(len(cmFds)) || nfds != cmFds[m.typ] ||
		le.Uint32(b[cmOffVersion:]) != cmVersion ||
		le.Uint32(b[cmOffLayout:]) != dataSlots ||
		le.Uint32(b[cmOffLayout+4:]) != eagerMax ||
		le.Uint32(b[cmOffLayout+8:]) != ctlSlots {
		return m, errCMMsg
	}
	pl := le.Uint32(b[cmOffPrivLen:])
	port := le.Uint32(b[cmOffPort:])
	if pl > maxPrivData || int(pl) != len(b)-cmHdr || port > 0xffff {
		return m, errCMMsg
	}
	m.pd = le.Uint32(b[cmOffPD:])
	m.hint = le.Uint32(b[cmOffHint:])
	m.addr = netip.AddrFrom16([16]byte(b[cmOffAddr : cmOffAddr+16])).Unmap()
	m.svc = le.Uint64(b[cmOffSvc:])
	m.port = uint16(port)
	m.priv = append([]byte(nil), b[cmHdr:]...)
	return m, nil
}

// hintBase packs a QP slot and connection generation as a CM message
// carries them; hintOf unpacks a peer's, keeping only the bits a hint has.
func hintBase(slot int, gen uint8) uint32 { return uint32(slot)<<8 | uint32(gen) }

func hintOf(v uint32) uint64 { return hintFor(int(v>>8)&(maxQPs-1), uint8(v)) }
