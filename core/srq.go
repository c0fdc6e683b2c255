package core

import "godat/rdma"

// SRQ is a shared receive queue. Its semantics (watermarks, counts, resize)
// are specified by the seed pages; until the transport supports shared
// receive queues, creating one reports DAT_NOT_IMPLEMENTED.
type SRQ struct {
	Object
	ia      *IA
	pz      *PZ
	backend rdma.SRQ
	eps     map[*EP]struct{}
	dead    bool
}

// SRQAttr are the SRQ attributes of DAT_SRQ_ATTR.
type SRQAttr struct {
	MaxRecvDTOs  int
	MaxRecvIOV   int
	LowWatermark int
}

// CreateSRQ creates a shared receive queue (dat_srq_create).
func (ia *IA) CreateSRQ(pz *PZ, attr SRQAttr) (*SRQ, error) {
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if err := ia.liveLocked(); err != nil {
		return nil, err
	}
	if err := pz.usableLocked(ia); err != nil {
		return nil, err
	}
	return nil, ErrNotImplemented
}

// IA is the SRQ's interface adapter.
func (s *SRQ) IA() *IA { return s.ia }

func (s *SRQ) attach(ep *EP) { s.eps[ep] = struct{}{} }
func (s *SRQ) detach(ep *EP) { delete(s.eps, ep) }

func (s *SRQ) destroyLocked() {
	s.dead = true
	if s.backend != nil {
		s.backend.Destroy()
	}
	s.pz.users--
	delete(s.ia.srqs, s)
	s.ia.handles.Release(s)
}
