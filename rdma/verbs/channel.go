package verbs

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"godat/rdma"
)

// compChannel is an ibv_comp_channel with the contract's generation count;
// chan.c has the wake-up scheme. The C struct stays allocated until the Go
// object is garbage, so that Seq and Wait on a destroyed channel read
// valid memory (and return at once).
type compChannel struct {
	d    *device
	c    *C.struct_gd_ch
	fd   int
	refs int // CQs notifying it; under d.mu
	// life orders Wake (which writes the channel's eventfd) against
	// Destroy (which closes it).
	life sync.RWMutex
	dead atomic.Bool
}

// CreateCompChannel creates a completion channel (ibv_create_comp_channel).
func (d *device) CreateCompChannel() (rdma.CompChannel, error) {
	var out *compChannel
	err := d.locked(func() error {
		var msg [256]C.char
		c := C.gd_ch_new(d.ctx, &msg[0], C.int(len(msg)))
		if c == nil {
			return wrapMsg("completion channel", C.GoString(&msg[0]), rdma.ErrNoResources)
		}
		out = &compChannel{d: d, c: c, fd: int(c.ep)}
		runtime.AddCleanup(out, func(c *C.struct_gd_ch) { C.gd_ch_free(c) }, c)
		d.chans[out] = struct{}{}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Fd polls readable after a notification: it is an epoll descriptor over
// the channel's fd (notifications nobody has read yet) and an eventfd that
// a waiter who read them sets, and the next Seq resets.
func (ch *compChannel) Fd() int {
	if ch.dead.Load() {
		return -1
	}
	return ch.fd
}

// Seq is the channel's generation count. It reads the channel first (a
// system call, unless a waiter is polling it): a notification counts as
// soon as the device delivered it, waited for or not. It resets the Fd's
// readiness: a notification after this call makes it readable again.
func (ch *compChannel) Seq() uint32 { return uint32(C.gd_ch_seq(ch.c)) }

// Wait sleeps until Seq differs from seq or d passes; it never spins and
// reports EINTR from a signal handler.
func (ch *compChannel) Wait(seq uint32, d time.Duration) bool {
	ns := int64(-1)
	if d >= 0 {
		ns = int64(d)
	}
	if ns == 0 {
		return false
	}
	return C.gd_ch_wait(ch.c, C.uint32_t(seq), C.int64_t(ns)) != 0
}

// Wake bumps the count and wakes every sleeper.
func (ch *compChannel) Wake() {
	ch.life.RLock()
	defer ch.life.RUnlock()
	if !ch.dead.Load() {
		C.gd_ch_wake(ch.c)
	}
}

// Destroy frees the channel (ibv_destroy_comp_channel).
func (ch *compChannel) Destroy() error {
	return ch.d.locked(func() error {
		switch {
		case ch.dead.Load():
			return rdma.ErrClosed
		case ch.refs > 0:
			return rdma.ErrBusy
		}
		ch.destroyLocked()
		delete(ch.d.chans, ch)
		return nil
	})
}

// destroyLocked ends every wait, then frees the verbs channel and the
// descriptors once no waiter is inside (waiters leave at once: closed is
// set and they were woken).
func (ch *compChannel) destroyLocked() {
	if ch.dead.Load() {
		return
	}
	C.gd_ch_close(ch.c)
	for C.gd_ch_inside(ch.c) != 0 {
		time.Sleep(50 * time.Microsecond)
	}
	ch.life.Lock()
	ch.dead.Store(true)
	ch.life.Unlock()
	C.gd_ch_destroy(ch.c)
}

// chanOf is the completion channel of this device behind an
// rdma.CompChannel (nil: none).
func (d *device) chanOf(x rdma.CompChannel) (*compChannel, error) {
	if x == nil {
		return nil, nil
	}
	ch, ok := x.(*compChannel)
	switch {
	case !ok || ch == nil || ch.d != d:
		return nil, wrapMsg("CreateCQ", "a completion channel of another device", rdma.ErrInvalid)
	case ch.dead.Load():
		return nil, rdma.ErrClosed
	}
	return ch, nil
}
