package soft

import (
	"encoding/binary"
	"math/bits"
	"testing"

	"godat/rdma"
)

// Fuzz targets for what a peer writes into memory we read (hints in our
// bell, its registration table, the ring words of a connection) and the
// TCP handshake frames; decode_test.go has the CM messages, TCP frames and
// ring slots. `make check` runs each for a few seconds (fuzzcheck), `make
// fuzz` longer; seeds are in testdata/fuzz.

// FuzzHint: an entry of our inbound queue, as any peer may have written
// it, decodes only when it carries the stamp of its position, and then
// into a QP slot within the table and a sequence within its bits, which
// encode back to the entry.
func FuzzHint(f *testing.F) {
	f.Add(hintFor(5, 3)|hintStamp(7)|42, uint64(7))
	f.Add(hintFor(maxQPs-1, 255)|hintStamp(1<<23)|hintKick|hintAll, uint64(1<<23))
	f.Add(^uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, e, pos uint64) {
		idx, gen, seq, kick, ok := decodeHint(e, pos)
		if !ok {
			if hintAt(e, pos) {
				t.Fatalf("%#x is the hint at %d but does not decode", e, pos)
			}
			return
		}
		if idx < 0 || idx >= maxQPs || seq > hintSeqMask {
			t.Fatalf("%#x decoded to slot %d, sequence %d", e, idx, seq)
		}
		back := hintFor(idx, gen) | hintStamp(pos) | uint64(seq)
		if kick {
			back |= hintKick
		}
		if back != e {
			t.Fatalf("%#x decoded to %d/%d/%d/%v, which encode to %#x", e, idx, gen, seq, kick, back)
		}
		if b := hintOf(uint32(e)); b>>hintIdxSh >= maxQPs || b&(1<<hintGenSh-1) != 0 {
			t.Fatalf("a CM message's hint base %#x gave %#x", uint32(e), b)
		}
	})
}

// FuzzLookupKey: a lookup in a peer's registration table, whose window of
// slots for the key holds whatever the peer wrote, finds only a slot that
// carries the key with an even version, returns that slot's fields, and
// covers only ranges inside the region (without overflow).
func FuzzLookupKey(f *testing.F) {
	win := make([]byte, keyWindow*keyEntSize)
	binary.LittleEndian.PutUint32(win[3*keyEntSize+entKey:], 0x1234)
	binary.LittleEndian.PutUint64(win[3*keyEntSize+entAddr:], 1<<40)
	binary.LittleEndian.PutUint64(win[3*keyEntSize+entLen:], 4096)
	f.Add(uint32(0x1234), win, uint64(1<<40), uint64(4096))
	binary.LittleEndian.PutUint64(win[3*keyEntSize+entLen:], ^uint64(0))
	f.Add(uint32(0x1234), win, ^uint64(0), uint64(2))
	f.Add(uint32(0), []byte{}, uint64(0), uint64(0))
	m := seg{b: make([]byte, keySegSize)}
	f.Fuzz(func(t *testing.T, key uint32, win []byte, addr, n uint64) {
		clear(m.b)
		h := keyHome(key)
		for i := 0; i < keyWindow && i*keyEntSize < len(win); i++ {
			copy(m.b[keySlotOff(h+i):keySlotOff(h+i)+keyEntSize], win[i*keyEntSize:])
		}
		r, ok := lookupKey(m, key)
		if !ok {
			return
		}
		found := false
		for i := 0; i < keyWindow; i++ {
			off := keySlotOff(h + i)
			if m.ld32(off+entKey) == key && m.ld32(off+entVer)&1 == 0 &&
				r == (region{access: rdma.Access(m.ld32(off + entAccess)), pd: m.ld32(off + entPD), addr: m.ld64(off + entAddr), len: m.ld64(off + entLen)}) {
				found = true
			}
		}
		if key == 0 || !found {
			t.Fatalf("key %#x found as %+v, which no slot of its window holds", key, r)
		}
		if r.covers(addr, n) {
			end, c1 := bits.Add64(addr, n, 0)
			rend, c2 := bits.Add64(r.addr, r.len, 0)
			if c1 != 0 || addr < r.addr || c2 == 0 && end > rend {
				t.Fatalf("%+v covers [%#x, +%#x)", r, addr, n)
			}
		}
	})
}

// FuzzRingTail: the consumer's tail word of a ring is the peer's to
// write; the producer takes it only when it lies between its view and its
// head, so the ring never seems to hold more than it has, nor to have
// given back a slot twice.
func FuzzRingTail(f *testing.F) {
	f.Add(uint64(dataSlots), uint64(0), uint64(5))
	f.Add(uint64(dataSlots+10), uint64(10), ^uint64(0))
	f.Add(^uint64(0), ^uint64(0)-dataSlots, uint64(3))
	m := seg{b: make([]byte, 8)}
	f.Fuzz(func(t *testing.T, head, tail, word uint64) {
		if head-tail > dataSlots {
			return // not a state the producer can be in
		}
		r := ring{m: m, n: dataSlots, tailOff: 0, head: head, tail: tail}
		m.st64(0, word)
		room := r.room()
		if r.tail-tail > head-tail || r.head != head {
			t.Fatalf("head %d, tail %d, word %d: took tail %d", head, tail, word, r.tail)
		}
		if room != (r.head-r.tail < r.n) {
			t.Fatalf("head %d, tail %d: room %v", r.head, r.tail, room)
		}
	})
}

// FuzzTCPHandshake: a handshake header a peer sends is accepted only with
// a known type, the magic where it belongs, a known reject reason and at
// most maxPrivData bytes to follow; the header survives a round trip.
func FuzzTCPHandshake(f *testing.F) {
	var b [frameHdr]byte
	(&frame{typ: frReq, flags: tcpVersion, ack: 9, aux: tcpMagic, addr: 1 << 40, len: 12}).put(b[:])
	f.Add(b[:])
	(&frame{typ: frAcc, aux: tcpMagic, grant: 4, len: maxPrivData}).put(b[:])
	f.Add(b[:])
	(&frame{typ: frRej, aux: rejConsumer, len: 3}).put(b[:])
	f.Add(b[:])
	(&frame{typ: frRtu, grant: 8}).put(b[:])
	f.Add(b[:])
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < frameHdr {
			return
		}
		var fr frame
		fr.get(b)
		if checkHandshake(&fr) {
			switch {
			case fr.len > maxPrivData || fr.stamp != 0:
				t.Fatalf("accepted %+v", fr)
			case (fr.typ == frReq || fr.typ == frAcc) && fr.aux != tcpMagic:
				t.Fatalf("accepted %+v without the magic", fr)
			case fr.typ == frRej && (fr.aux < rejConsumer || fr.aux > rejVersion):
				t.Fatalf("accepted %+v with an unknown reason", fr)
			case fr.typ == frRtu && fr.len != 0:
				t.Fatalf("accepted %+v", fr)
			case fr.typ < frReq || fr.typ > frRtu:
				t.Fatalf("accepted %+v as a handshake", fr)
			}
		}
		var back [frameHdr]byte
		fr.put(back[:])
		if string(back[:]) != string(b[:frameHdr]) {
			t.Fatalf("round trip %x -> %x", b[:frameHdr], back)
		}
	})
}
