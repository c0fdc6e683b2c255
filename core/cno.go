package core

import (
	"sync"
	"sync/atomic"
	"time"
)

// CNO is a consumer notification object: one wait over several EVDs.
type CNO struct {
	Object
	ia *IA

	mu        sync.Mutex
	evds      []*EVD
	triggered []*EVD // EVDs that notified and were not yet returned
	agent     [2]uint64
	waiters   int
	dead      bool
	sleepers  atomic.Int32
}

// CreateCNO creates a CNO (dat_cno_create). agent is the opaque OS wait
// proxy agent (instance data and function), kept for query.
func (ia *IA) CreateCNO(agent [2]uint64) (*CNO, error) {
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if err := ia.liveLocked(); err != nil {
		return nil, err
	}
	c := &CNO{ia: ia, agent: agent}
	c.kind = TypeCNO
	if err := bindLocked(ia, ia.cnos, c); err != nil {
		return nil, err
	}
	return c, nil
}

// IA is the CNO's interface adapter.
func (c *CNO) IA() *IA { return c.ia }

// Agent reports the OS wait proxy agent.
func (c *CNO) Agent() ([2]uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return [2]uint64{}, ErrHandle(SubHandleCNO)
	}
	return c.agent, nil
}

// ModifyAgent replaces the OS wait proxy agent (dat_cno_modify_agent).
func (c *CNO) ModifyAgent(agent [2]uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return ErrHandle(SubHandleCNO)
	}
	c.agent = agent
	return nil
}

func (c *CNO) attach(e *EVD) {
	c.mu.Lock()
	c.evds = append(c.evds, e)
	c.mu.Unlock()
}

func (c *CNO) detach(e *EVD) {
	c.mu.Lock()
	for i, x := range c.evds {
		if x == e {
			c.evds = append(c.evds[:i:i], c.evds[i+1:]...)
			break
		}
	}
	for i, x := range c.triggered {
		if x == e {
			c.triggered = append(c.triggered[:i:i], c.triggered[i+1:]...)
			break
		}
	}
	wake := len(c.evds) == 0 && c.waiters > 0
	c.mu.Unlock()
	if wake {
		c.ia.doorbell.Ring()
	}
}

// trigger records that e has a notification; it is kept until a wait takes
// it, so a trigger that comes before the wait is never lost.
func (c *CNO) trigger(e *EVD) {
	c.mu.Lock()
	for _, x := range c.triggered {
		if x == e {
			c.mu.Unlock()
			return
		}
	}
	c.triggered = append(c.triggered, e)
	c.mu.Unlock()
	if c.sleepers.Load() > 0 {
		c.ia.doorbell.Ring()
	}
}

// Wait blocks until an EVD attached to the CNO notifies, returning it, or
// returns DAT_QUEUE_EMPTY after timeout (negative: no bound). It returns a
// nil EVD and no error when the IA closes or every EVD is freed.
func (c *CNO) Wait(timeout time.Duration) (*EVD, error) {
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return nil, ErrHandle(SubHandleCNO)
	}
	c.waiters++
	c.mu.Unlock()
	c.sleepers.Add(1)
	defer func() {
		c.sleepers.Add(-1)
		c.mu.Lock()
		c.waiters--
		c.mu.Unlock()
	}()

	db := c.ia.doorbell
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	for {
		seq := db.Seq()
		c.mu.Lock()
		evds := append([]*EVD(nil), c.evds...)
		c.mu.Unlock()
		// Arrivals become events (and triggers) only when someone makes
		// progress, and the CNO waiter is that someone.
		for _, e := range evds {
			e.progress()
		}
		c.mu.Lock()
		if c.dead || c.ia.closed.Load() {
			c.mu.Unlock()
			return nil, nil
		}
		if len(c.triggered) > 0 {
			e := c.triggered[0]
			c.triggered = c.triggered[1:]
			c.mu.Unlock()
			return e, nil
		}
		if len(c.evds) == 0 && len(evds) > 0 {
			c.mu.Unlock()
			return nil, nil
		}
		c.mu.Unlock()
		var left time.Duration = -1
		if timeout == 0 {
			return nil, ErrQueueEmpty
		}
		if timeout > 0 {
			if left = time.Until(deadline); left <= 0 {
				return nil, ErrQueueEmpty
			}
		}
		db.Wait(seq, left)
	}
}

// Free destroys the CNO (dat_cno_free); refused while an EVD uses it or a
// thread waits on it.
func (c *CNO) Free() error {
	ia := c.ia
	ia.mu.Lock()
	defer ia.mu.Unlock()
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return ErrHandle(SubHandleCNO)
	}
	if len(c.evds) > 0 || c.waiters > 0 {
		c.mu.Unlock()
		return ErrState(SubStateCNOInUse)
	}
	c.mu.Unlock()
	c.destroyLocked()
	return nil
}

func (c *CNO) destroyLocked() {
	c.mu.Lock()
	c.dead = true
	c.evds, c.triggered = nil, nil
	c.mu.Unlock()
	c.ia.doorbell.Ring()
	delete(c.ia.cnos, c)
	c.ia.handles.Release(c)
}
