package soft

// The memory-registration table: an open-addressing hash table in a sealed
// memfd that only its device writes. Peers on this host map it read-only
// (their descriptor is opened O_RDONLY) to check our remote keys one-sidedly
// before they read or write our memory; we read it for local keys.
//
// Keys are random over the full 32 bits (non-zero, unique among live keys),
// so a peer can only reach a region whose key it was given: over TCP a bad
// key breaks the connection, so a blind scan costs a reconnect per guess. A
// key lives in one of keyWindow slots from its hash; registration draws
// another key when that window is full, so a lookup reads at most keyWindow
// slots and needs no tombstones (a miss reads the whole window: error paths
// only). Each slot is a seqlock: the version is odd while the owner
// rewrites the slot, and a reader retries (a bounded number of times: a
// peer's table may be hostile) until it reads one version throughout.

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"sync/atomic"

	"godat/rdma"
)

// Registration table layout.
const (
	keyOffMagic = 0
	keyOffTable = 64
	keySlots    = 1 << 15
	keyMaxLive  = keySlots / 2 // load factor at most one half
	keyWindow   = 16
	keyEntSize  = 32
	keySegSize  = (keyOffTable + keySlots*keyEntSize + 4095) &^ 4095
	keyMagic    = 0x6b746467 // "gdtk"

	entVer    = 0 // uint32 seqlock version: odd while being written
	entKey    = 4 // uint32, 0 when free
	entAccess = 8
	entPD     = 12
	entAddr   = 16
	entLen    = 24

	keyRetries = 8 // seqlock retries per slot before a read counts as a miss
)

// region is a registration as read from a table.
type region struct {
	access rdma.Access
	pd     uint32
	addr   uint64
	len    uint64
}

// keyHome is the first slot of key's window.
func keyHome(key uint32) int { return int((key * 0x9e3779b1) >> (32 - 15)) }

func keySlotOff(i int) int { return keyOffTable + (i&(keySlots-1))*keyEntSize }

// lookupKey finds key in the table m (ours or a peer's).
func lookupKey(m seg, key uint32) (region, bool) {
	if key == 0 || len(m.b) < keySegSize {
		return region{}, false
	}
	h := keyHome(key)
	for i := 0; i < keyWindow; i++ {
		off := keySlotOff(h + i)
		for try := 0; try < keyRetries; try++ {
			v := m.ld32(off + entVer)
			if v&1 != 0 {
				continue
			}
			if m.ld32(off+entKey) != key {
				break
			}
			r := region{
				access: rdma.Access(m.ld32(off + entAccess)),
				pd:     m.ld32(off + entPD),
				addr:   m.ld64(off + entAddr),
				len:    m.ld64(off + entLen),
			}
			if m.ld32(off+entVer) == v {
				return r, true
			}
		}
	}
	return region{}, false
}

// covers reports whether [addr, addr+n) lies inside the region.
func (r region) covers(addr, n uint64) bool { return rdma.Within(r.addr, r.len, addr, n) }

// keyTable is the owner's side of its registration table.
type keyTable struct {
	mu   sync.Mutex // leaf: held only while a slot is rewritten
	m    seg
	live int
	gen  atomic.Uint64 // bumped by every change: validates keyCache
}

// keyCache remembers the last key a QP or SRQ looked up; it is valid while
// the table's generation is unchanged (a post names the same region again
// and again, and a lookup reads a seqlocked window of the table).
type keyCache struct {
	key uint32
	gen uint64
	r   region
}

// holds reports whether the cached region, still valid at table
// generation g, is s's (its key), of PD pd, with the rights need, and
// covers s: the common post's whole check, in a few compares.
func (c *keyCache) holds(g uint64, s *rdma.SGE, pd uint32, need rdma.Access) bool {
	return s.LKey == c.key && g == c.gen && c.key != 0 && c.r.pd == pd && c.r.access&need == need &&
		c.r.covers(s.Addr, uint64(s.Length))
}

// lookupCached is lookup through a cache its caller owns (under its lock).
func (t *keyTable) lookupCached(c *keyCache, key uint32) (region, bool) {
	g := t.gen.Load()
	if key == c.key && g == c.gen && key != 0 {
		return c.r, true
	}
	r, ok := t.lookup(key)
	if ok {
		*c = keyCache{key: key, gen: g, r: r}
	}
	return r, ok
}

func (t *keyTable) init(m seg) {
	t.m = m
	m.st32(keyOffMagic, keyMagic)
}

// randKey draws a non-zero random key.
func randKey() uint32 {
	var b [4]byte
	for {
		_, _ = rand.Read(b[:])
		if k := binary.LittleEndian.Uint32(b[:]); k != 0 {
			return k
		}
	}
}

// insert registers a region under a fresh random key and returns the key
// and its slot.
func (t *keyTable) insert(r region) (uint32, int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m.b == nil {
		return 0, 0, rdma.ErrClosed
	}
	if t.live >= keyMaxLive {
		return 0, 0, rdma.ErrNoResources
	}
	for draw := 0; draw < 64; draw++ {
		key := randKey()
		if _, dup := lookupKey(t.m, key); dup {
			continue
		}
		h := keyHome(key)
		for i := 0; i < keyWindow; i++ {
			off := keySlotOff(h + i)
			if t.m.ld32(off+entKey) != 0 {
				continue
			}
			v := t.m.ld32(off + entVer)
			t.m.st32(off+entVer, v+1)
			t.m.st32(off+entAccess, uint32(r.access))
			t.m.st32(off+entPD, r.pd)
			t.m.st64(off+entAddr, r.addr)
			t.m.st64(off+entLen, r.len)
			t.m.st32(off+entKey, key)
			t.m.st32(off+entVer, v+2)
			t.gen.Add(1)
			t.live++
			return key, (h + i) & (keySlots - 1), nil
		}
	}
	return 0, 0, rdma.ErrNoResources
}

// remove frees the slot of key; false when it no longer holds it.
func (t *keyTable) remove(key uint32, slot int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m.b == nil {
		return false
	}
	off := keySlotOff(slot)
	if t.m.ld32(off+entKey) != key {
		return false
	}
	v := t.m.ld32(off + entVer)
	t.m.st32(off+entVer, v+1)
	t.m.st32(off+entKey, 0)
	t.m.st32(off+entVer, v+2)
	t.gen.Add(1)
	t.live--
	return true
}

// lookup reads our own table.
func (t *keyTable) lookup(key uint32) (region, bool) { return lookupKey(t.m, key) }
