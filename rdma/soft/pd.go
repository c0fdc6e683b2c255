package soft

// Protection domains and memory regions.

import (
	"sync/atomic"

	"golang.org/x/sys/unix"

	"godat/rdma"
)

// pd is a protection domain; id is what registrations and peers' remote
// checks compare.
type pd struct {
	dev  *device
	id   uint32
	refs atomic.Int32 // QPs, SRQs and MRs using it
	dead atomic.Bool
}

// AllocPD allocates a protection domain (ibv_alloc_pd).
func (d *device) AllocPD() (rdma.PD, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		return nil, rdma.ErrClosed
	}
	if len(d.pds) >= maxPDs {
		return nil, rdma.ErrNoResources
	}
	d.nextPD++
	if d.nextPD == 0 {
		d.nextPD = 1
	}
	p := &pd{dev: d, id: d.nextPD}
	d.pds[p] = struct{}{}
	return p, nil
}

// Dealloc frees the PD (ibv_dealloc_pd).
func (p *pd) Dealloc() error {
	d := p.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case p.dead.Load():
		return rdma.ErrClosed
	case p.refs.Load() > 0:
		return rdma.ErrBusy
	}
	p.dead.Store(true)
	delete(d.pds, p)
	return nil
}

// asPD accepts only a live PD of device d.
func (d *device) asPD(x rdma.PD) (*pd, bool) {
	p, ok := x.(*pd)
	return p, ok && p != nil && p.dev == d && !p.dead.Load()
}

// mr is a registered region: one slot of the registration table.
type mr struct {
	pd   *pd
	key  uint32
	slot int
	dead atomic.Bool
}

// RegMR registers [addr, addr+length) (ibv_reg_mr). It checks that the
// range is mapped (msync reports a hole as ENOMEM without touching a page:
// its cost follows the number of mappings, not the length); whether it is
// writable is not checked here, and a copy that faults later ends its work
// request with an error completion instead (copy_unsafe.go).
func (p *pd) RegMR(addr, length uint64, access rdma.Access) (rdma.MR, error) {
	if length == 0 || addr+length < addr || length > maxMRSize ||
		access&rdma.AccessRemoteWrite != 0 && access&rdma.AccessLocalWrite == 0 ||
		access&^(rdma.AccessLocalWrite|rdma.AccessRemoteWrite|rdma.AccessRemoteRead) != 0 {
		return nil, rdma.ErrInvalid
	}
	if p.dead.Load() || p.dev.closed.Load() {
		return nil, rdma.ErrClosed
	}
	if !mapped(addr, length) {
		return nil, rdma.ErrFault
	}
	key, slot, err := p.dev.keys.insert(region{access: access, pd: p.id, addr: addr, len: length})
	if err != nil {
		return nil, err
	}
	p.refs.Add(1)
	return &mr{pd: p, key: key, slot: slot}, nil
}

// mapped reports whether every page of [addr, addr+n) is mapped.
func mapped(addr, n uint64) bool {
	const page = 4096
	start := addr &^ (page - 1)
	end := (addr + n + page - 1) &^ (page - 1)
	if end < start {
		return false
	}
	_, _, e := unix.Syscall(unix.SYS_MSYNC, uintptr(start), uintptr(end-start), unix.MS_ASYNC)
	return e == 0
}

// LKey names the region in local scatter/gather entries.
func (m *mr) LKey() uint32 { return m.key }

// RKey names the region to peers; it is the same random key.
func (m *mr) RKey() uint32 { return m.key }

// Dereg deregisters the region (ibv_dereg_mr).
func (m *mr) Dereg() error {
	if !m.dead.CompareAndSwap(false, true) || m.pd.dev.closed.Load() {
		return rdma.ErrClosed
	}
	m.pd.dev.keys.remove(m.key, m.slot)
	m.pd.refs.Add(-1)
	return nil
}
