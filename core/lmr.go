package core

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"godat/rdma"
)

// MemType is the kind of memory an LMR registers.
type MemType uint8

// LMR memory types.
const (
	MemVirtual MemType = iota
	MemLMR
	MemSharedVirtual
)

// MemPriv are memory privileges. The bits are core's; an export layer
// converts its ABI's flags (and refuses bits it does not know).
type MemPriv uint32

// Memory privileges.
const (
	PrivLocalRead MemPriv = 1 << iota
	PrivLocalWrite
	PrivRemoteRead
	PrivRemoteWrite

	PrivAll = PrivLocalRead | PrivLocalWrite | PrivRemoteRead | PrivRemoteWrite
)

// access is what the transport registers for p. Local read is always
// granted (the transport has no flag for it): verbs has no local-read
// permission (a registered region is readable by its own side), every
// reference provider lets a send or RDMA write read an LMR registered
// without DAT_MEM_PRIV_LOCAL_READ_FLAG, and programs do not ask for it
// (dat_lmr_create(3DAT) leaves it open).
func (p MemPriv) access() rdma.Access {
	var a rdma.Access
	if p&PrivLocalWrite != 0 {
		a |= rdma.AccessLocalWrite
	}
	if p&PrivRemoteRead != 0 {
		a |= rdma.AccessRemoteRead
	}
	if p&PrivRemoteWrite != 0 {
		a |= rdma.AccessRemoteWrite
	}
	return a
}

// LMRRegion describes what an LMR registers: an address range of the
// consumer (virtual and shared virtual) or an existing LMR.
type LMRRegion struct {
	Type   MemType
	Addr   uint64
	LMR    *LMR
	Cookie [40]byte // shared virtual memory id
}

// LMR is a registered local memory region.
type LMR struct {
	Object
	ia     *IA
	pz     *PZ
	region LMRRegion
	addr   uint64
	length uint64
	priv   MemPriv
	mr     rdma.MR
	users  int // LMRs created over this one and RMRs bound to it; guarded by ia.mu
	dead   bool
}

// LMRInfo is what dat_lmr_create returns and dat_lmr_query reports.
type LMRInfo struct {
	Region         LMRRegion
	PZ             *PZ
	Length         uint64
	Priv           MemPriv
	LMRContext     uint32
	RMRContext     uint32 // 0 without remote privileges
	RegisteredSize uint64
	RegisteredAddr uint64
}

// CreateLMR registers memory (dat_lmr_create).
func (ia *IA) CreateLMR(region LMRRegion, length uint64, pz *PZ, priv MemPriv) (*LMR, LMRInfo, error) {
	if priv&^PrivAll != 0 {
		return nil, LMRInfo{}, ErrArg(ArgMemPriv)
	}
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if err := ia.liveLocked(); err != nil {
		return nil, LMRInfo{}, err
	}
	if err := pz.usableLocked(ia); err != nil {
		return nil, LMRInfo{}, err
	}
	addr := region.Addr
	switch region.Type {
	case MemVirtual, MemSharedVirtual:
		if length == 0 {
			// The page lists no code for an empty region; DAT_LENGTH_ERROR
			// says what is wrong, and is what godat promises for it. It
			// comes before the address check, as in the references: a
			// NULL, zero-length region is a length error too.
			return nil, LMRInfo{}, E(KindLengthError, SubNone)
		}
		if addr == 0 {
			return nil, LMRInfo{}, ErrArg(ArgRegion)
		}
		if length > ia.attr.MaxLMRBlockSize || addr+length < addr {
			return nil, LMRInfo{}, ErrArg(ArgLength)
		}
		if region.Type == MemSharedVirtual && !sharedMapping(addr, length) {
			// dat_lmr_create(3DAT): "shared virtual buffer was not
			// created shared by the platform".
			return nil, LMRInfo{}, ErrState(SubNone)
		}
	case MemLMR:
		parent := region.LMR
		if parent == nil || parent.dead || parent.ia != ia {
			return nil, LMRInfo{}, ErrHandle(SubHandleLMR)
		}
		// "Length parameter is ignored": the new LMR covers the old one.
		addr, length = parent.addr, parent.length
	default:
		return nil, LMRInfo{}, ErrModelNotSupported
	}
	if len(ia.lmrs) >= ia.attr.MaxLMRs {
		return nil, LMRInfo{}, E(KindInsufficientResources, SubResourceMemoryRegion)
	}
	mr, err := pz.pd.RegMR(addr, length, priv.access())
	if err != nil {
		if errors.Is(err, rdma.ErrNoResources) {
			// On RDMA hardware the usual cause is the locked-memory
			// limit, which the user must raise: the transport's
			// message says so, at warn level (the default when
			// logging is on), not only in the debug line of the call.
			Logf(LevelWarn, "dat_lmr_create: %v", err)
		}
		return nil, LMRInfo{}, mapTransportError(err)
	}
	l := &LMR{ia: ia, pz: pz, region: region, addr: addr, length: length, priv: priv, mr: mr}
	l.kind = TypeLMR
	if err := bindLocked(ia, ia.lmrs, l); err != nil {
		mr.Dereg()
		return nil, LMRInfo{}, err
	}
	pz.users++
	if region.Type == MemLMR {
		region.LMR.users++
	}
	return l, l.infoLocked(), nil
}

func (l *LMR) infoLocked() LMRInfo {
	i := LMRInfo{Region: l.region, PZ: l.pz, Length: l.length, Priv: l.priv,
		LMRContext: l.mr.LKey(), RegisteredSize: l.length, RegisteredAddr: l.addr}
	if l.priv&(PrivRemoteRead|PrivRemoteWrite) != 0 {
		i.RMRContext = l.mr.RKey()
	}
	return i
}

// IA is the LMR's interface adapter.
func (l *LMR) IA() *IA { return l.ia }

// Query reports the LMR's parameters (dat_lmr_query).
func (l *LMR) Query() (LMRInfo, error) {
	l.ia.mu.Lock()
	defer l.ia.mu.Unlock()
	if l.dead {
		return LMRInfo{}, ErrHandle(SubHandleLMR)
	}
	return l.infoLocked(), nil
}

// Free deregisters the LMR (dat_lmr_free); refused while an LMR created
// over it exists or an RMR is bound to it.
func (l *LMR) Free() error {
	ia := l.ia
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if l.dead {
		return ErrHandle(SubHandleLMR)
	}
	if l.users > 0 {
		return ErrState(SubStateLMRInUse)
	}
	l.destroyLocked()
	return nil
}

func (l *LMR) destroyLocked() {
	if l.dead {
		return
	}
	l.dead = true
	l.mr.Dereg()
	l.pz.users--
	if l.region.Type == MemLMR && l.region.LMR != nil {
		l.region.LMR.users--
	}
	delete(l.ia.lmrs, l)
	l.ia.handles.Release(l)
}

// lmrByContextLocked finds the live LMR whose lmr_context is ctx.
func (ia *IA) lmrByContextLocked(ctx uint32) *LMR {
	for l := range ia.lmrs {
		if l.mr.LKey() == ctx {
			return l
		}
	}
	return nil
}

// Segment is a local address range and the context (key) of the LMR that
// registers it. An export layer fills segments from its ABI's triplets.
type Segment struct {
	Addr       uint64
	Length     uint64
	LMRContext uint32
}

// SyncRDMA checks the segments of dat_lmr_sync_rdma_read/write. Memory is
// coherent on every platform this provider runs on, so nothing needs to be
// flushed; the segments must still name registered memory.
func (ia *IA) SyncRDMA(segs []Segment) error {
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if err := ia.liveLocked(); err != nil {
		return err
	}
	for _, s := range segs {
		l := ia.lmrByContextLocked(s.LMRContext)
		if l == nil || s.Addr < l.addr || s.Addr+s.Length > l.addr+l.length || s.Addr+s.Length < s.Addr {
			return ErrArg(ArgLocalIOV)
		}
	}
	return nil
}

// sharedMapping reports whether [addr, addr+n) lies in shared mappings of
// this process (MAP_SHARED, the platform's shared memory), read from
// /proc/self/maps. Where that file cannot be read every range counts as
// shared: only a positive "private" answer refuses a registration.
func sharedMapping(addr, n uint64) bool {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return true
	}
	end := addr + n
	for _, line := range strings.Split(string(b), "\n") {
		// start-end perms ...
		rng, rest, ok := strings.Cut(line, " ")
		if !ok || len(rest) < 4 {
			continue
		}
		lo, hi, ok := strings.Cut(rng, "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		stop, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || stop <= addr || start > addr {
			continue
		}
		if rest[3] != 's' {
			return false
		}
		if stop >= end {
			return true
		}
		addr = stop // the range goes on in the next mapping
	}
	return false
}

// mapTransportError turns a backend error into a DAT error. Backends wrap
// their sentinels with detail (fmt.Errorf("...: %w")), so match the chain.
func mapTransportError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(Error); ok {
		return err
	}
	for _, m := range transportErrors {
		if errors.Is(err, m.from) {
			return Because(m.to, err)
		}
	}
	return Because(ErrInternal, err)
}

var transportErrors = [...]struct{ from, to error }{
	{rdma.ErrQueueFull, ErrQueueFull},
	{rdma.ErrServiceInUse, ErrConnQualInUse},
	{rdma.ErrNoResources, ErrNoMemory},
	{rdma.ErrState, ErrState(SubNone)},
	{rdma.ErrNoDevice, ErrAddressUnreachable},
	{rdma.ErrInvalid, E(KindInvalidParameter, SubNone)},
	{rdma.ErrClosed, E(KindAbort, SubNone)},
	{rdma.ErrProtection, E(KindProtectionViolation, SubNone)},
	{rdma.ErrPrivileges, E(KindPrivilegesViolation, SubNone)},
	{rdma.ErrFault, E(KindPrivilegesViolation, SubNone)},
	{rdma.ErrBusy, ErrState(SubNone)},
	{rdma.ErrTimeout, ErrTimeout},
	{rdma.ErrNotSupported, ErrModelNotSupported},
}
