package soft

import (
	"sync"

	"godat/rdma"
)

// Memory registration table entry layout (in the IA segment).
const (
	mrOffKey    = 0 // uint32: the live key, 0 when free (stored last)
	mrOffAccess = 4
	mrOffPD     = 8
	mrOffAddr   = 16
	mrOffLen    = 24

	mrIdxMask = mrTableCap - 1
	mrGenMax  = 1<<(32-mrIdxBits) - 1
)

// mrTable is the owner's view of its registration table.
type mrTable struct {
	mu   sync.Mutex
	m    shm
	free []uint32 // free indexes (stack)
	gen  []uint32 // next generation per index
}

func (t *mrTable) init(m shm) {
	t.m = m
	t.free = make([]uint32, 0, mrTableCap)
	for i := mrTableCap - 1; i >= 0; i-- {
		t.free = append(t.free, uint32(i))
	}
	t.gen = make([]uint32, mrTableCap)
	for i := range t.gen {
		t.gen[i] = 1
	}
}

type mr struct {
	dev *device
	key uint32
}

func (r *mr) LKey() uint32 { return r.key }
func (r *mr) RKey() uint32 { return r.key }

func (r *mr) Deregister() error {
	t := &r.dev.mrs
	t.mu.Lock()
	defer t.mu.Unlock()
	if r.key == 0 || t.m.b == nil {
		return rdma.ErrClosed
	}
	idx := r.key & mrIdxMask
	off := iaOffTable + int(idx)*mrEntrySize
	t.m.st32(off+mrOffKey, 0)
	g := t.gen[idx] + 1
	if g > mrGenMax {
		g = 1
	}
	t.gen[idx] = g
	t.free = append(t.free, idx)
	r.key = 0
	return nil
}

func (d *device) RegisterMR(pd uint32, addr uint64, length uint64, access rdma.Access) (rdma.MR, error) {
	if length == 0 || addr+length < addr {
		return nil, rdma.ErrInvalid
	}
	if access&rdma.AccessRemoteWrite != 0 && access&rdma.AccessLocalWrite == 0 {
		// verbs rule: remote write needs local write.
		return nil, rdma.ErrInvalid
	}
	t := &d.mrs
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m.b == nil {
		return nil, rdma.ErrClosed
	}
	if len(t.free) == 0 {
		return nil, rdma.ErrNoResources
	}
	idx := t.free[len(t.free)-1]
	t.free = t.free[:len(t.free)-1]
	key := t.gen[idx]<<mrIdxBits | idx
	off := iaOffTable + int(idx)*mrEntrySize
	t.m.st32(off+mrOffAccess, uint32(access))
	t.m.st32(off+mrOffPD, pd)
	t.m.st64(off+mrOffAddr, addr)
	t.m.st64(off+mrOffLen, length)
	t.m.st32(off+mrOffKey, key)
	return &mr{dev: d, key: key}, nil
}

// sglLength checks every non-empty segment of sgl with mrCheck and returns
// the total length; false when one fails. Both QP kinds use it when they
// execute a request (a region can go away while the request waits).
func sglLength(tab shm, pd uint32, sgl []rdma.SGE, need rdma.Access) (uint64, bool) {
	var total uint64
	for i := range sgl {
		s := &sgl[i]
		if s.Length == 0 {
			continue
		}
		if !mrCheck(tab, s.LKey, pd, s.Addr, s.Length, need) {
			return 0, false
		}
		total += s.Length
	}
	return total, true
}

// sglVerify checks local segments at post time with mrClassify, so the
// consumer gets the fault as a return value.
func sglVerify(tab shm, pd uint32, sgl []rdma.SGE, need rdma.Access) error {
	for i := range sgl {
		s := &sgl[i]
		if s.Length == 0 {
			continue
		}
		if err := mrClassify(tab, s.LKey, pd, s.Addr, s.Length, need); err != nil {
			return err
		}
	}
	return nil
}

// recvStatus is the status of placing a message of L bytes in a receive
// with segments sgl registered in pd.
func recvStatus(tab shm, pd uint32, sgl []rdma.SGE, L uint64) rdma.Status {
	capacity, ok := sglLength(tab, pd, sgl, rdma.AccessLocalWrite)
	switch {
	case !ok:
		return rdma.StatusLocalProtection
	case capacity < L:
		return rdma.StatusLocalLength
	}
	return rdma.StatusSuccess
}

// mrCheck reports whether [addr, addr+n) lies inside the live region named
// by key in table m, registered in pd with every right in need.
func mrCheck(m shm, key uint32, pd uint32, addr, n uint64, need rdma.Access) bool {
	if key == 0 || m.b == nil {
		return false
	}
	off := iaOffTable + int(key&mrIdxMask)*mrEntrySize
	if m.ld32(off+mrOffKey) != key {
		return false
	}
	acc := rdma.Access(m.ld32(off + mrOffAccess))
	rpd := m.ld32(off + mrOffPD)
	raddr := m.ld64(off + mrOffAddr)
	rlen := m.ld64(off + mrOffLen)
	if m.ld32(off+mrOffKey) != key { // changed while we read it
		return false
	}
	if rpd != pd || acc&need != need {
		return false
	}
	end := addr + n
	return addr >= raddr && end >= addr && end <= raddr+rlen
}
