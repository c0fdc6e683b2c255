package soft

import (
	"sync"

	"godat/rdma"
)

// Shared receive queues. An srq is a ring of posted receives in process
// memory; the consumer posts to it and whichever QP has a message to place
// takes the oldest receive (qp.nextRecv). The take is the moment a buffer
// leaves the SRQ: the QP places the message and pushes its completion in the
// same step, under its lock, so a receive is never "taken but not yet
// completed" for longer than that step.
//
// A QP that finds the SRQ empty leaves the message in its inbound ring, as
// it does with an empty receive queue of its own: the sender sees nothing
// until the ring's dataSlots slots are full, then its sends wait in its send
// queue; there is no timeout (the equivalent of an infinite RNR retry). The
// SRQ remembers the starved take and its next post rings the doorbell.

// Limits of shared receive queues.
const (
	maxSRQs  = 4096
	maxSRQWR = 1 << 16
)

type srq struct {
	dev    *device
	pd     uint32
	maxSGE int
	limitH rdma.LimitHandler

	mu         sync.Mutex
	cookies    []uint64
	nsge       []uint8
	sgl        []rdma.SGE // maxSGE entries per ring slot
	mask       uint64
	head, tail uint64
	max        uint64
	limit      int  // armed low watermark; 0 when disarmed
	starved    bool // a Take found the ring empty since the last post
	dead       bool
}

func (d *device) CreateSRQ(cfg rdma.SRQConfig) (rdma.SRQ, error) {
	if cfg.MaxWR <= 0 || cfg.MaxWR > maxSRQWR || cfg.MaxSGE < 0 || cfg.MaxSGE > maxSGE {
		return nil, rdma.ErrInvalid
	}
	s := &srq{dev: d, pd: cfg.PD, maxSGE: cfg.MaxSGE, limitH: cfg.Limit}
	s.alloc(uint64(cfg.MaxWR))
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, rdma.ErrClosed
	}
	if len(d.srqs) >= maxSRQs {
		return nil, rdma.ErrNoResources
	}
	d.srqs[s] = struct{}{}
	return s, nil
}

// alloc sizes the ring for n receives, keeping the posted ones in order;
// s.mu is held (or s is not shared yet).
func (s *srq) alloc(n uint64) {
	c := pow2(n)
	cookies := make([]uint64, c)
	nsge := make([]uint8, c)
	sgl := make([]rdma.SGE, int(c)*s.maxSGE)
	k := uint64(0)
	for i := s.head; i != s.tail; i++ {
		j := i & s.mask
		cookies[k], nsge[k] = s.cookies[j], s.nsge[j]
		copy(sgl[int(k)*s.maxSGE:], s.slot(j))
		k++
	}
	s.cookies, s.nsge, s.sgl = cookies, nsge, sgl
	s.mask, s.head, s.tail, s.max = c-1, 0, k, n
}

// slot is the scatter list stored in ring slot j.
func (s *srq) slot(j uint64) []rdma.SGE {
	base := int(j) * s.maxSGE
	return s.sgl[base : base+int(s.nsge[j])]
}

func (s *srq) PD() uint32 { return s.pd }

func (s *srq) PostRecv(wr *rdma.RecvWR) error {
	if wr == nil || len(wr.SGL) > s.maxSGE {
		return rdma.ErrInvalid
	}
	if err := sglVerify(s.dev.seg, s.pd, wr.SGL, rdma.AccessLocalWrite); err != nil {
		return err
	}
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		return rdma.ErrClosed
	}
	if s.tail-s.head >= s.max {
		s.mu.Unlock()
		return rdma.ErrQueueFull
	}
	j := s.tail & s.mask
	s.cookies[j] = wr.Cookie
	base := int(j) * s.maxSGE
	s.nsge[j] = uint8(copy(s.sgl[base:base+s.maxSGE], wr.SGL))
	s.tail++
	wake := s.starved
	s.starved = false
	s.mu.Unlock()
	if wake {
		s.dev.db.Ring()
	}
	return nil
}

func (s *srq) Take(sgl []rdma.SGE) (uint64, int, bool) {
	s.mu.Lock()
	if s.dead || s.head == s.tail {
		s.starved = !s.dead
		s.mu.Unlock()
		return 0, 0, false
	}
	j := s.head & s.mask
	cookie := s.cookies[j]
	n := copy(sgl, s.slot(j))
	s.head++
	fire := s.limit > 0 && int(s.tail-s.head) < s.limit
	if fire {
		s.limit = 0
	}
	s.mu.Unlock()
	if fire && s.limitH != nil {
		s.limitH.SRQLimit(s)
	}
	return cookie, n, true
}

func (s *srq) Available() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int(s.tail - s.head)
}

func (s *srq) Resize(maxWR int) error {
	if maxWR <= 0 || maxWR > maxSRQWR {
		return rdma.ErrInvalid
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.dead:
		return rdma.ErrClosed
	case uint64(maxWR) < s.tail-s.head:
		return rdma.ErrState
	}
	if pow2(uint64(maxWR)) != uint64(len(s.cookies)) {
		// Grow, or give memory back when shrinking: the posted receives
		// move over in order.
		s.alloc(uint64(maxWR))
	}
	s.max = uint64(maxWR)
	return nil
}

func (s *srq) ArmLimit(limit int) {
	s.mu.Lock()
	s.limit = max(limit, 0)
	fire := s.limit > 0 && int(s.tail-s.head) < s.limit
	if fire {
		s.limit = 0
	}
	s.mu.Unlock()
	if fire && s.limitH != nil {
		s.limitH.SRQLimit(s)
	}
}

func (s *srq) Destroy() error {
	s.mu.Lock()
	if s.dead {
		s.mu.Unlock()
		return rdma.ErrClosed
	}
	s.dead = true
	s.cookies, s.nsge, s.sgl = nil, nil, nil
	s.head, s.tail, s.mask = 0, 0, 0
	s.mu.Unlock()
	s.dev.mu.Lock()
	delete(s.dev.srqs, s)
	s.dev.mu.Unlock()
	return nil
}

// mrClassify checks [addr, addr+n) against the live region named by key in
// table m like mrCheck, and says what is wrong: ErrPrivileges for an unknown
// key or missing rights, ErrProtection for another PD, ErrInvalid for a
// range outside the region.
func mrClassify(m shm, key uint32, pd uint32, addr, n uint64, need rdma.Access) error {
	if key == 0 || m.b == nil {
		return rdma.ErrPrivileges
	}
	off := iaOffTable + int(key&mrIdxMask)*mrEntrySize
	if m.ld32(off+mrOffKey) != key {
		return rdma.ErrPrivileges
	}
	acc := rdma.Access(m.ld32(off + mrOffAccess))
	rpd := m.ld32(off + mrOffPD)
	raddr := m.ld64(off + mrOffAddr)
	rlen := m.ld64(off + mrOffLen)
	if m.ld32(off+mrOffKey) != key {
		return rdma.ErrPrivileges
	}
	end := addr + n
	switch {
	case rpd != pd:
		return rdma.ErrProtection
	case acc&need != need:
		return rdma.ErrPrivileges
	case addr < raddr || end < addr || end > raddr+rlen:
		return rdma.ErrInvalid
	}
	return nil
}
