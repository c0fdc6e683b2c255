package verbs

// Post-time checks of local segments (CapPostCheck). A verbs device checks
// a request's local keys, bounds and rights only when it executes the
// request, and a failure there is an error completion that puts the QP in
// Error: the connection is lost for a bad pointer. The software provider
// refuses such a post instead, as dat_ep_post_send(3DAT) and its siblings
// describe (DAT_PROTECTION_VIOLATION, DAT_PRIVILEGES_VIOLATION,
// DAT_INVALID_PARAMETER), so the backend checks the segments against its
// own record of the registrations before it hands a request to the device.
// The device still checks at execution: a region deregistered after the
// post fails there as before.

import (
	"sync"
	"sync/atomic"

	"godat/rdma"
)

// keyRegion is a registration as the checks need it.
type keyRegion struct {
	pd        *pd
	access    rdma.Access
	addr, len uint64
}

// covers reports whether [addr, addr+n) lies inside the region.
func (r *keyRegion) covers(addr, n uint64) bool { return rdma.Within(r.addr, r.len, addr, n) }

// keyTable is a device's live registrations by local key (lkeys are unique
// within a device context).
type keyTable struct {
	mu  sync.RWMutex // leaf: held only for the map operation
	m   map[uint32]keyRegion
	gen atomic.Uint64 // bumped by every change: validates keyCache
}

func (t *keyTable) add(lkey uint32, r keyRegion) {
	t.mu.Lock()
	if t.m == nil {
		t.m = map[uint32]keyRegion{}
	}
	t.m[lkey] = r
	t.gen.Add(1)
	t.mu.Unlock()
}

func (t *keyTable) remove(lkey uint32) {
	t.mu.Lock()
	delete(t.m, lkey)
	t.gen.Add(1)
	t.mu.Unlock()
}

func (t *keyTable) lookup(lkey uint32) (keyRegion, bool) {
	t.mu.RLock()
	r, ok := t.m[lkey]
	t.mu.RUnlock()
	return r, ok
}

// keyCache remembers the region of the last key a queue's posts named: a
// program posts from the same region again and again, and then the whole
// check is a few compares. Posts to one queue may come from several
// threads (ibv_post_send is thread-safe, and so is the contract's post): a
// post that finds the cache in use looks in the table instead of waiting.
type keyCache struct {
	mu  sync.Mutex // TryLock only
	key uint32
	gen uint64
	r   keyRegion
}

// check checks sgl's segments against the registrations for a request on
// a queue of PD p that needs the rights need: ErrPrivileges for a key that
// names no region or a region without those rights, ErrProtection for a
// region of another PD, ErrInvalid for a segment outside its region (the
// contract's post errors under CapPostCheck). Empty segments are not
// checked, as the device does not access them.
func (t *keyTable) check(c *keyCache, p *pd, sgl []rdma.SGE, need rdma.Access) error {
	g := t.gen.Load()
	owned := c.mu.TryLock()
	err := t.checkWith(c, owned, g, p, sgl, need)
	if owned {
		c.mu.Unlock()
	}
	return err
}

func (t *keyTable) checkWith(c *keyCache, owned bool, g uint64, p *pd, sgl []rdma.SGE, need rdma.Access) error {
	for i := range sgl {
		s := &sgl[i]
		if s.Length == 0 {
			continue
		}
		// The cached region is read in place: a post's check is a few
		// compares when it hits, without a copy of the region.
		r := &c.r
		if !owned || c.key != s.LKey || c.gen != g || c.r.pd == nil {
			found, ok := t.lookup(s.LKey)
			if !ok {
				return rdma.ErrPrivileges
			}
			if owned {
				// Cached with the generation read before the lookup: a
				// change since then invalidates it at the next post.
				c.key, c.gen, c.r = s.LKey, g, found
			} else {
				r = &found
			}
		}
		if err := rdma.SegmentError(r.pd == p, r.access, need, r.covers(s.Addr, uint64(s.Length))); err != nil {
			return err
		}
	}
	return nil
}
