package verbs

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"godat/rdma"
)

// cmChannel is a queue of contract CM events. The device's event thread
// reads every rdma_cm event of the device from one rdma_event_channel and
// queues the contract's events here, for the QP or listener they concern:
// the connection steps rdma_cm leaves to the program (resolving the route,
// moving the QP to RTR and RTS, establishing) then happen at once, whoever
// calls Get, and a listener's requests reach the channel its Listen named.
type cmChannel struct {
	d     *device
	efd   int // eventfd: readable while events are queued
	mu    sync.Mutex
	q     []rdma.CMEvent
	ready chan struct{} // a token when events were queued
	gone  chan struct{} // closed by Destroy
	dead  bool
}

// CreateCMChannel creates a connection-manager event channel.
func (d *device) CreateCMChannel() (rdma.CMChannel, error) {
	var out *cmChannel
	err := d.locked(func() error {
		fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
		if err != nil {
			return fmt.Errorf("verbs: eventfd: %v: %w", err, rdma.ErrNoResources)
		}
		out = &cmChannel{d: d, efd: fd, ready: make(chan struct{}, 1), gone: make(chan struct{})}
		d.cmchans[out] = struct{}{}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Fd polls readable while events are queued.
func (ch *cmChannel) Fd() int {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.dead {
		return -1
	}
	return ch.efd
}

// push queues ev (events of a destroyed channel are dropped).
func (ch *cmChannel) push(ev rdma.CMEvent) {
	if ch == nil {
		return
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.dead {
		return
	}
	ch.q = append(ch.q, ev)
	if len(ch.q) == 1 {
		var one = [8]byte{1}
		_, _ = unix.Write(ch.efd, one[:])
	}
	select {
	case ch.ready <- struct{}{}:
	default:
	}
}

// Get takes the oldest event, waiting up to d for one.
func (ch *cmChannel) Get(ev *rdma.CMEvent, d time.Duration) error {
	var timer <-chan time.Time
	for {
		ch.mu.Lock()
		if ch.dead {
			ch.mu.Unlock()
			return rdma.ErrClosed
		}
		if len(ch.q) > 0 {
			*ev = ch.q[0]
			ch.q[0] = rdma.CMEvent{}
			ch.q = ch.q[1:]
			if len(ch.q) == 0 {
				var b [8]byte
				_, _ = unix.Read(ch.efd, b[:])
				ch.q = nil
			} else {
				// Another getter may be waiting for the rest.
				select {
				case ch.ready <- struct{}{}:
				default:
				}
			}
			ch.mu.Unlock()
			return nil
		}
		ch.mu.Unlock()
		if d == 0 {
			return rdma.ErrTimeout
		}
		if d > 0 && timer == nil {
			t := time.NewTimer(d)
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-ch.ready:
		case <-ch.gone:
		case <-timer:
			return rdma.ErrTimeout
		}
	}
}

// Destroy frees the channel; a Get in progress returns ErrClosed.
func (ch *cmChannel) Destroy() error {
	return ch.d.locked(func() error {
		ch.mu.Lock()
		dead := ch.dead
		ch.mu.Unlock()
		if dead {
			return rdma.ErrClosed
		}
		ch.destroyLocked()
		delete(ch.d.cmchans, ch)
		return nil
	})
}

func (ch *cmChannel) destroyLocked() {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.dead {
		return
	}
	ch.dead = true
	ch.q = nil
	close(ch.gone)
	_ = unix.Close(ch.efd)
}

// cmChanOf is the CM channel of this device behind an rdma.CMChannel.
func (d *device) cmChanOf(x rdma.CMChannel) (*cmChannel, error) {
	if x == nil {
		return nil, nil
	}
	ch, ok := x.(*cmChannel)
	switch {
	case !ok || ch == nil || ch.d != d:
		return nil, fmt.Errorf("verbs: a CM channel of another device: %w", rdma.ErrInvalid)
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.dead {
		return nil, rdma.ErrClosed
	}
	return ch, nil
}
