package verbs

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"syscall"

	"golang.org/x/sys/unix"

	"godat/rdma"
)

// pd is a protection domain (ibv_pd).
type pd struct {
	d    *device
	c    *C.struct_ibv_pd
	refs int // MRs, QPs and SRQs in it; under d.mu
	dead bool
}

// AllocPD allocates a protection domain (ibv_alloc_pd).
func (d *device) AllocPD() (rdma.PD, error) {
	var out *pd
	err := d.locked(func() error {
		c, err := C.gd_alloc_pd(d.ctx)
		if c == nil {
			return wrap("ibv_alloc_pd", errnoOf(-1, err))
		}
		out = &pd{d: d, c: c}
		d.pds[out] = struct{}{}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Dealloc frees the PD (ibv_dealloc_pd).
func (p *pd) Dealloc() error {
	return p.d.locked(func() error {
		switch {
		case p.dead:
			return rdma.ErrClosed
		case p.refs > 0:
			return rdma.ErrBusy
		}
		if r := C.gd_dealloc_pd(p.c); r != 0 {
			return wrap("ibv_dealloc_pd", errnoOf(r, nil))
		}
		p.dead = true
		delete(p.d.pds, p)
		return nil
	})
}

func (p *pd) deallocLocked() {
	if !p.dead {
		C.gd_dealloc_pd(p.c)
		p.dead = true
	}
}

// pdOf is the PD of this device behind an rdma.PD.
func (d *device) pdOf(x rdma.PD) (*pd, error) {
	p, ok := x.(*pd)
	switch {
	case !ok || p == nil || p.d != d:
		return nil, fmt.Errorf("verbs: a protection domain of another device: %w", rdma.ErrInvalid)
	case p.dead:
		return nil, rdma.ErrClosed
	}
	return p, nil
}

// mr is a registered memory region (ibv_mr).
type mr struct {
	p          *pd
	c          *C.struct_ibv_mr
	lkey, rkey uint32
	dead       bool
}

// RegMR registers [addr, addr+length) with the given access (ibv_reg_mr).
// The device pins the pages: a region stays readable and writable by the
// device until Dereg, whatever the process does with its mapping.
func (p *pd) RegMR(addr, length uint64, access rdma.Access) (rdma.MR, error) {
	d := p.d
	switch {
	case length == 0, addr > math.MaxUint64-length, length > d.attr.MaxMRSize:
		return nil, fmt.Errorf("verbs: region [%#x, +%#x): %w", addr, length, rdma.ErrInvalid)
	case access&rdma.AccessRemoteWrite != 0 && access&rdma.AccessLocalWrite == 0:
		return nil, fmt.Errorf("verbs: remote write access needs local write: %w", rdma.ErrInvalid)
	}
	flags := C.int(0)
	for _, m := range []struct {
		a rdma.Access
		f C.int
	}{{rdma.AccessLocalWrite, C.IBV_ACCESS_LOCAL_WRITE}, {rdma.AccessRemoteWrite, C.IBV_ACCESS_REMOTE_WRITE},
		{rdma.AccessRemoteRead, C.IBV_ACCESS_REMOTE_READ}, {rdma.AccessMWBind, C.IBV_ACCESS_MW_BIND}} {
		if access&m.a != 0 {
			flags |= m.f
		}
	}
	var out *mr
	err := d.locked(func() error {
		if p.dead {
			return rdma.ErrClosed
		}
		c, err := C.gd_reg_mr(p.c, C.uint64_t(addr), C.uint64_t(length), flags)
		if c == nil {
			return regErr(length, errnoOf(-1, err))
		}
		out = &mr{p: p, c: c, lkey: uint32(c.lkey), rkey: uint32(c.rkey)}
		if out.rkey == 0 {
			// Some devices (rxe) give a region without remote access no
			// rkey; the contract's keys are never 0. Its lkey names it
			// as well: a peer's request with it is refused all the same
			// (the device finds no remote key).
			out.rkey = out.lkey
		}
		p.refs++
		d.mrs[out] = struct{}{}
		d.keys.add(out.lkey, keyRegion{pd: p, access: access, addr: addr, len: length})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// regErr explains a failed registration. Pinning counts against
// RLIMIT_MEMLOCK (unless the process has CAP_IPC_LOCK), the usual reason a
// registration fails on a real system: the message names the limit and how
// to raise it, for the log.
func regErr(length uint64, e syscall.Errno) error {
	if e == syscall.ENOMEM || e == syscall.EAGAIN {
		var rl unix.Rlimit
		if unix.Getrlimit(unix.RLIMIT_MEMLOCK, &rl) == nil && rl.Cur != unix.RLIM_INFINITY {
			return fmt.Errorf("verbs: ibv_reg_mr of %d bytes: %v: registered memory is locked memory, and the "+
				"locked-memory limit (RLIMIT_MEMLOCK) is %s; raise it with `ulimit -l unlimited` in the shell "+
				"that starts the program, a memlock line in /etc/security/limits.conf, or LimitMEMLOCK=infinity "+
				"for a systemd service: %w", length, e, sizeOf(rl.Cur), rdma.ErrNoResources)
		}
	}
	return wrap(fmt.Sprintf("ibv_reg_mr of %d bytes", length), e)
}

func sizeOf(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// LKey names the region in local scatter/gather entries.
func (m *mr) LKey() uint32 { return m.lkey }

// RKey names the region to a peer's RDMA reads and writes.
func (m *mr) RKey() uint32 { return m.rkey }

// Dereg deregisters the region (ibv_dereg_mr).
func (m *mr) Dereg() error {
	d := m.p.d
	return d.locked(func() error {
		if m.dead {
			return rdma.ErrClosed
		}
		if r := C.gd_dereg_mr(m.c); r != 0 {
			return wrap("ibv_dereg_mr", errnoOf(r, nil))
		}
		m.dead = true
		m.p.refs--
		delete(d.mrs, m)
		d.keys.remove(m.lkey)
		return nil
	})
}

func (m *mr) deregLocked() {
	if !m.dead {
		C.gd_dereg_mr(m.c)
		m.dead = true
		m.p.d.keys.remove(m.lkey)
	}
}

// isClosed tells errors.Is(err, rdma.ErrClosed) for the callers that map it.
func isClosed(err error) bool { return errors.Is(err, rdma.ErrClosed) }
