package core

import "godat/rdma"

// PZ is a protection zone: LMRs, RMRs, EPs and SRQs of one PZ may be used
// together. It is a transport protection domain.
type PZ struct {
	Object
	ia    *IA
	pd    rdma.PD
	users int // EPs, LMRs, RMRs, SRQs; guarded by ia.mu
	dead  bool
}

// CreatePZ creates a protection zone (dat_pz_create).
func (ia *IA) CreatePZ() (*PZ, error) {
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if err := ia.liveLocked(); err != nil {
		return nil, err
	}
	if len(ia.pzs) >= ia.attr.MaxPZs {
		return nil, E(KindInsufficientResources, SubResourceProtectionDomain)
	}
	pd, err := ia.dev.dev.AllocPD()
	if err != nil {
		return nil, mapTransportError(err)
	}
	pz := &PZ{ia: ia, pd: pd}
	pz.kind = TypePZ
	if err := bindLocked(ia, ia.pzs, pz); err != nil {
		pd.Dealloc()
		return nil, err
	}
	return pz, nil
}

// IA is the PZ's interface adapter.
func (pz *PZ) IA() *IA { return pz.ia }

// Free destroys the PZ (dat_pz_free); refused while anything uses it.
func (pz *PZ) Free() error {
	ia := pz.ia
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if pz.dead {
		return ErrHandle(SubHandlePZ)
	}
	if pz.users > 0 {
		return ErrState(SubStatePZInUse)
	}
	pz.destroyLocked()
	return nil
}

func (pz *PZ) destroyLocked() {
	pz.dead = true
	pz.pd.Dealloc()
	delete(pz.ia.pzs, pz)
	pz.ia.handles.Release(pz)
}

// usableLocked checks that pz belongs to ia and is alive; ia.mu is held.
func (pz *PZ) usableLocked(ia *IA) error {
	if pz == nil || pz.dead || pz.ia != ia {
		return ErrHandle(SubHandlePZ)
	}
	return nil
}
