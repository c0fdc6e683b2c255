package verbs

import "encoding/binary"

// The backend's private data headers. InfiniBand's CM delivers private
// data in fixed-size fields (the receiver cannot tell how much was sent),
// so each carries the consumer data's length:
//
//	connect: service id (8 bytes, little endian), length (1), data
//	accept:  length (1), data
//	reject:  kind (1: the consumer rejected, 2: refused), length (1), data
//
// The service id travels whole because the port only carries its low 16
// bits (addr.go, portOf).
const (
	reqHdr = 9
	repHdr = 1
	rejHdr = 2

	rejConsumer = 1
	rejRefused  = 2
)

// maxPrivateData is the consumer's share of the smallest private data field
// the CM carries: InfiniBand's and RoCE's connect request has 92 bytes, of
// which rdma_cm's IP header takes 36; iWARP's (MPA) is bounded by rdma_cm's
// 8-bit length.
func maxPrivateData(iwarp bool) int {
	if iwarp {
		return 255 - reqHdr
	}
	return 56 - reqHdr
}

func reqHeader(sid uint64, priv []byte) []byte {
	b := make([]byte, reqHdr, reqHdr+len(priv))
	binary.LittleEndian.PutUint64(b, sid)
	b[8] = byte(len(priv))
	return append(b, priv...)
}

// parseReq reads a connect's header; ok is false for a request that is not
// the backend's.
func parseReq(b []byte) (sid uint64, priv []byte, ok bool) {
	if len(b) < reqHdr || int(b[8]) > len(b)-reqHdr {
		return 0, nil, false
	}
	if n := int(b[8]); n > 0 {
		priv = b[reqHdr : reqHdr+n]
	}
	return binary.LittleEndian.Uint64(b), priv, true
}

func repHeader(priv []byte) []byte { return append([]byte{byte(len(priv))}, priv...) }

func parseRep(b []byte) []byte {
	if len(b) < repHdr || int(b[0]) > len(b)-repHdr || b[0] == 0 {
		return nil
	}
	return b[repHdr : repHdr+int(b[0])]
}

func rejHeader(kind byte, priv []byte) []byte {
	return append([]byte{kind, byte(len(priv))}, priv...)
}

// parseRej reads a reject's header; a reject without one (the peer's CM
// found no listener, or tore the request down) is a refusal.
func parseRej(b []byte) (kind byte, priv []byte) {
	if len(b) < rejHdr || int(b[1]) > len(b)-rejHdr || (b[0] != rejConsumer && b[0] != rejRefused) {
		return rejRefused, nil
	}
	if n := int(b[1]); n > 0 {
		priv = b[rejHdr : rejHdr+n]
	}
	return b[0], priv
}

// portOf is the rdma_cm port that serves a service id: its low 16 bits,
// moved up by 64512 below 1024 (ports an ordinary user cannot bind), as
// the software TCP transport maps qualifiers to TCP ports.
func portOf(id uint64) uint16 {
	p := uint16(id)
	if p < 1024 {
		p += 65536 - 1024
	}
	return p
}
