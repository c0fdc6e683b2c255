package soft

// Connection-manager event channels: an in-memory queue of events, in the
// order they happened (producers queue under the lock of the object the
// event is about, so two events of one QP cannot swap), with an eventfd,
// created on first use, that is readable while events are queued.

import (
	"sync"
	"time"

	"godat/rdma"
)

type cmChannel struct {
	dev    *device
	mu     sync.Mutex // leaf
	q      []rdma.CMEvent
	head   int
	dead   bool
	efd    eventfd
	arrive chan struct{} // one token: events were queued
}

// CreateCMChannel creates an event channel (rdma_create_event_channel).
func (d *device) CreateCMChannel() (rdma.CMChannel, error) {
	c := &cmChannel{dev: d, efd: -1, arrive: make(chan struct{}, 1)}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed.Load() {
		return nil, rdma.ErrClosed
	}
	d.cmchans[c] = struct{}{}
	return c, nil
}

// put queues an event; it never blocks. Events for a destroyed channel
// are dropped.
func (c *cmChannel) put(ev rdma.CMEvent) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return
	}
	c.q = append(c.q, ev)
	if len(c.q)-c.head == 1 && c.efd >= 0 {
		c.efd.signal()
	}
	select {
	case c.arrive <- struct{}{}:
	default:
	}
}

// Fd polls readable while events are queued.
func (c *cmChannel) Fd() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.efd < 0 && !c.dead {
		e, err := newEventfd()
		if err != nil {
			return -1
		}
		c.efd = e
		if len(c.q) > c.head {
			e.signal()
		}
	}
	return int(c.efd)
}

// Get takes the oldest event, waiting up to d for one.
func (c *cmChannel) Get(ev *rdma.CMEvent, d time.Duration) error {
	var timer <-chan time.Time
	for {
		c.mu.Lock()
		if c.dead {
			c.mu.Unlock()
			return rdma.ErrClosed
		}
		if c.head < len(c.q) {
			*ev = c.q[c.head]
			c.q[c.head] = rdma.CMEvent{}
			c.head++
			if c.head == len(c.q) {
				c.q, c.head = c.q[:0], 0
				if c.efd >= 0 {
					c.efd.clear()
				}
			} else {
				// Others are waiting: pass the token on.
				select {
				case c.arrive <- struct{}{}:
				default:
				}
			}
			c.mu.Unlock()
			return nil
		}
		c.mu.Unlock()
		if d == 0 {
			return rdma.ErrTimeout
		}
		if timer == nil && d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-c.arrive:
		case <-timer:
			return rdma.ErrTimeout
		}
	}
}

// Destroy frees the channel; a Get in progress returns ErrClosed.
func (c *cmChannel) Destroy() error {
	d := c.dev
	d.mu.Lock()
	defer d.mu.Unlock()
	c.mu.Lock()
	dead := c.dead
	c.mu.Unlock()
	if dead {
		return rdma.ErrClosed
	}
	c.kill()
	delete(d.cmchans, c)
	return nil
}

// kill marks the channel destroyed and wakes its Get; d.mu is held.
func (c *cmChannel) kill() {
	c.mu.Lock()
	c.dead = true
	c.q, c.head = nil, 0
	if c.efd >= 0 {
		c.efd.close()
		c.efd = -1
	}
	c.mu.Unlock()
	// A closed channel wakes every Get at once (and for good); nothing
	// sends on it after dead is set.
	close(c.arrive)
}
