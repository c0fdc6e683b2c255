package soft

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

// Everything a peer sends is decoded by a function that takes the bytes
// as the peer left them; these tests and fuzz targets feed them malformed
// input (go test runs the seeds; go test -fuzz explores further).

func TestDecodeCM(t *testing.T) {
	good := encodeCM(&cmMsg{typ: cmReq, pd: 3, hint: 0x1234, addr: lo, svc: 99, port: 7, priv: []byte("hi")})
	m, err := decodeCM(good, 3)
	require.NoError(t, err)
	require.Equal(t, cmMsg{typ: cmReq, pd: 3, hint: 0x1234, addr: lo, svc: 99, port: 7, priv: []byte("hi")}, m)

	bad := func(f func(b []byte) []byte, nfds int) {
		t.Helper()
		b := f(append([]byte(nil), good...))
		_, err := decodeCM(b, nfds)
		require.Error(t, err)
	}
	le := binary.LittleEndian
	bad(func(b []byte) []byte { return b }, 2)                                         // REQ with 2 descriptors
	bad(func(b []byte) []byte { return b[:cmHdr-1] }, 3)                               // short
	bad(func(b []byte) []byte { le.PutUint32(b[cmOffType:], 99); return b }, 3)        // unknown type
	bad(func(b []byte) []byte { le.PutUint32(b[cmOffVersion:], 1); return b }, 3)      // version
	bad(func(b []byte) []byte { le.PutUint32(b[cmOffLayout:], 63); return b }, 3)      // layout
	bad(func(b []byte) []byte { le.PutUint32(b[cmOffPrivLen:], 1<<31); return b }, 3)  // private data length
	bad(func(b []byte) []byte { le.PutUint32(b[cmOffPrivLen:], 3); return b }, 3)      // longer than the message
	bad(func(b []byte) []byte { le.PutUint32(b[cmOffPort:], 1<<20); return b }, 3)     // port
	bad(func(b []byte) []byte { return append(b, make([]byte, maxPrivData)...) }, 3)   // too long
	bad(func(b []byte) []byte { le.PutUint32(b[cmOffPrivLen:], 300); return b }, 3)    // above maxPrivData
	bad(func(b []byte) []byte { le.PutUint32(b[cmOffType:], cmAcc); return b }, 3)     // ACC carries 2
	bad(func(b []byte) []byte { le.PutUint32(b[cmOffType:], cmDisc); return b[:] }, 1) // DISC carries none
	require.Equal(t, maxQPs-1, int(hintOf(0xffffffff)>>hintIdxSh&(1<<12-1)), "a peer's hint base keeps to a hint's bits")
}

func FuzzDecodeCM(f *testing.F) {
	f.Add(encodeCM(&cmMsg{typ: cmReq, addr: lo, svc: 1, priv: []byte("x")}), 3)
	f.Add(encodeCM(&cmMsg{typ: cmAcc, addr: netip.IPv6Loopback()}), 2)
	f.Add(encodeCM(&cmMsg{typ: cmRej, priv: make([]byte, maxPrivData)}), 0)
	f.Add([]byte{1, 2, 3}, 0)
	f.Fuzz(func(t *testing.T, b []byte, nfds int) {
		m, err := decodeCM(b, nfds)
		if err != nil {
			return
		}
		if len(m.priv) > maxPrivData || m.typ == 0 || int(m.typ) >= len(cmFds) || cmFds[m.typ] != nfds {
			t.Fatalf("accepted %+v with %d descriptors", m, nfds)
		}
	})
}

func TestCheckFrame(t *testing.T) {
	ok := []frame{
		{typ: msgSend, flags: flAckReq, len: 8}, {typ: msgSend, flags: flAckReq | flNotify, len: 1 << 20},
		{typ: msgSend, flags: flSolicited | flAckReq},
		{typ: msgWrite, len: maxMsgSize}, {typ: msgReadReq, len: 4}, {typ: msgReadResp},
		{typ: msgReadDone, aux: uint32(rdma.WCRemAccessErr)}, {typ: msgNak, aux: uint32(rdma.WCRemInvReqErr), addr: 5},
		{typ: msgAck}, {typ: msgNeed, aux: 3}, {typ: msgDisc},
	}
	for _, f := range ok {
		require.True(t, checkFrame(&f), "%+v", f)
	}
	bad := []frame{
		{typ: 0}, {typ: 200}, {typ: msgSend, len: 8}, {typ: msgSend, flags: flAckReq | 0x80},
		{typ: msgWrite, len: maxMsgSize + 1}, {typ: msgReadDone, aux: uint32(rdma.WCGeneralErr)},
		{typ: msgNak, aux: 1000}, {typ: msgNak, aux: uint32(rdma.WCRemOpErr), addr: 1 << 40},
		{typ: msgAck, len: 1}, {typ: msgDisc, flags: 1}, {typ: frReq},
	}
	for _, f := range bad {
		require.False(t, checkFrame(&f), "%+v", f)
	}
	require.True(t, checkHandshake(&frame{typ: frReq, aux: tcpMagic, len: maxPrivData}))
	require.False(t, checkHandshake(&frame{typ: frReq, aux: tcpMagic, len: maxPrivData + 1}))
	require.False(t, checkHandshake(&frame{typ: frAcc, aux: 1}))
	require.False(t, checkHandshake(&frame{typ: frRej, aux: 9}))
	require.False(t, checkHandshake(&frame{typ: msgSend}))
}

func FuzzCheckFrame(f *testing.F) {
	var b [frameHdr]byte
	(&frame{typ: msgSend, flags: flAckReq, len: 1 << 20, grant: 4}).put(b[:])
	f.Add(b[:])
	(&frame{typ: msgNak, aux: uint32(rdma.WCRemAccessErr), addr: 9}).put(b[:])
	f.Add(b[:])
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < frameHdr {
			return
		}
		var fr frame
		fr.get(b)
		if checkFrame(&fr) {
			if fr.len > maxMsgSize || fr.typ == msgSend && fr.flags&flAckReq == 0 {
				t.Fatalf("accepted %+v", fr)
			}
		}
		var back [frameHdr]byte
		fr.put(back[:])
		var again frame
		again.get(back[:])
		if again != fr {
			t.Fatalf("round trip %+v -> %+v", fr, again)
		}
	})
}

// slotSeg is one data slot, one chunk and one control slot of memory, as
// a peer could have left them.
func slotSeg(b []byte) seg {
	m := seg{b: make([]byte, dataStride+chunkSize+ctlStride)}
	copy(m.b, b)
	return m
}

const (
	tChunk = dataStride             // the chunk of slotSeg
	tCtl   = dataStride + chunkSize // its control slot
)

func TestDataSlotChecks(t *testing.T) {
	m := slotSeg(nil)
	var d rdvDesc
	h := hdr{typ: msgSend, flags: flAckReq, num: 1, len: 3 * eagerMax}
	putDataSlot(m, 0, &h, 4, 2)
	putRdvDesc(m, tChunk, []rdma.SGE{{Addr: 0x1000, Length: eagerMax}, {Addr: 0x9000, Length: 2 * eagerMax}})
	got, g, _, ok := getDataSlot(m, 0, tChunk, &d)
	require.True(t, ok)
	require.Equal(t, h, got)
	require.Equal(t, uint32(4), g)
	require.Equal(t, 2, d.n)

	binary.LittleEndian.PutUint64(m.b[tChunk+24:], 2*eagerMax+1) // segments do not add up
	_, _, _, ok = getDataSlot(m, 0, tChunk, &d)
	require.False(t, ok)
	m.put32(dsOffNSGE, maxSGE+1) // too many segments
	_, _, _, ok = getDataSlot(m, 0, tChunk, &d)
	require.False(t, ok)
	for _, bad := range []hdr{
		{typ: msgSend, flags: flAckReq, len: slotInline + 1},         // too long for the slot, no chunk
		{typ: msgSend, flags: flAckReq, num: 2, len: 8},              // num is 0 or 1
		{typ: msgSend, len: 8},                                       // not asking for a verdict
		{typ: msgAck, flags: flAckReq},                               // not a data ring message
		{typ: msgSend, flags: flAckReq | 0x80, len: 8},               // unknown flag
		{typ: msgSend, flags: flAckReq, num: 1, len: maxMsgSize + 1}, // too long
	} {
		putDataSlot(m, 0, &bad, 0, 0)
		_, _, _, ok = getDataSlot(m, 0, tChunk, &d)
		require.False(t, ok, "%+v", bad)
	}
	h = hdr{typ: msgSend, flags: flAckReq, len: 8}
	putDataSlot(m, 0, &h, 0, 0)
	_, _, pay, ok := getDataSlot(m, 0, tChunk, &d)
	require.True(t, ok)
	require.Equal(t, dsOffData, pay, "inline payload")
	h = hdr{typ: msgSend, flags: flAckReq, num: 1, len: eagerMax}
	putDataSlot(m, 0, &h, 0, 0)
	_, _, pay, ok = getDataSlot(m, 0, tChunk, &d)
	require.True(t, ok)
	require.Equal(t, tChunk, pay, "payload in the consumer's chunk")

	putCtlSlot(m, tCtl, msgNak, 7, rdma.WCRemAccessErr)
	num, st, ok := getCtlSlot(m, tCtl)
	require.True(t, ok)
	require.Equal(t, []any{uint32(7), rdma.WCRemAccessErr}, []any{num, st})
	putCtlSlot(m, tCtl, msgNak, 7, rdma.WCSuccess) // a NAK must carry a failure
	_, _, ok = getCtlSlot(m, tCtl)
	require.False(t, ok)
	putCtlSlot(m, tCtl, msgAck, 7, rdma.WCSuccess) // only NAKs travel there
	_, _, ok = getCtlSlot(m, tCtl)
	require.False(t, ok)
}

func FuzzSlots(f *testing.F) {
	m := slotSeg(nil)
	h := hdr{typ: msgSend, flags: flAckReq, num: 1, len: 2 * eagerMax}
	putDataSlot(m, 0, &h, 0, 1)
	putRdvDesc(m, tChunk, []rdma.SGE{{Addr: 1, Length: 2 * eagerMax}})
	putCtlSlot(m, tCtl, msgNak, 1, rdma.WCRemOpErr)
	f.Add(append([]byte(nil), m.b...))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m := slotSeg(b)
		var d rdvDesc
		if h, _, pay, ok := getDataSlot(m, 0, tChunk, &d); ok {
			var sum uint64
			for i := 0; i < d.n; i++ {
				sum += uint64(d.seg[i].Len)
			}
			switch {
			case h.typ != msgSend || h.flags&flAckReq == 0 || h.len > maxMsgSize:
				t.Fatalf("accepted %+v", h)
			case h.len > eagerMax && (h.num != 1 || sum != h.len || d.n > maxSGE):
				t.Fatalf("accepted %+v with %d segments of %d bytes", h, d.n, sum)
			case h.len <= eagerMax && (pay+int(h.len) > len(m.b) || h.num == 0 && h.len > slotInline):
				t.Fatalf("accepted %+v with its payload at %d", h, pay)
			}
		}
		if _, st, ok := getCtlSlot(m, tCtl); ok && !nakStatusOK(st) {
			t.Fatalf("accepted a NAK with status %v", st)
		}
	})
}

// The registration table's lookups read at most a window of slots, and a
// key is found only with its own content.
func TestKeyTable(t *testing.T) {
	fd, m, err := newSegment("t", keySegSize, true)
	require.NoError(t, err)
	defer func() { m.unmap(); closeFds([]int{fd}) }()
	var kt keyTable
	kt.init(m)
	keys := map[uint32]int{}
	for i := 0; i < 2000; i++ {
		k, slot, err := kt.insert(region{access: rdma.AccessRemoteRead, pd: 1, addr: uint64(i) << 12, len: 4096})
		require.NoError(t, err)
		require.NotZero(t, k)
		_, dup := keys[k]
		require.False(t, dup, "a key given twice")
		keys[k] = slot
	}
	for k, slot := range keys {
		r, ok := lookupKey(m, k)
		require.True(t, ok)
		require.Equal(t, uint32(1), r.pd)
		require.True(t, kt.remove(k, slot))
		_, ok = lookupKey(m, k)
		require.False(t, ok, "found after removal")
	}
	_, ok := lookupKey(m, 0)
	require.False(t, ok)
	_, ok = lookupKey(seg{b: make([]byte, 10)}, 5)
	require.False(t, ok, "a short table")
}
