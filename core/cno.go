package core

import (
	"sync"
	"time"
)

// AgentFunc calls an OS wait proxy agent (the opaque instance data and
// function words the consumer gave) for evd, or with a nil evd when the
// CNO is unblocked because its IA or its EVDs went away.
type AgentFunc func(agent [2]uint64, evd *EVD)

// CNO is a consumer notification object: one wait over several EVDs.
type CNO struct {
	Object
	ia *IA

	mu        sync.Mutex
	evds      []*EVD // copied on write: look iterates a snapshot
	next      int    // where the next look starts
	agent     [2]uint64
	waiters   int
	orphaned  uint64 // times the last EVD went away; wakes waiters with no EVD
	dead      bool
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
	c.evds = append(c.evds[:len(c.evds):len(c.evds)], e)
	c.mu.Unlock()
	c.ia.wake() // a waiter looks at the new EVD too
}

// detach removes e from the CNO; freed says e is being destroyed, which
// unblocks the agent with no EVD once the last EVD is gone.
func (c *CNO) detach(e *EVD, freed bool) {
	c.mu.Lock()
	for i, x := range c.evds {
		if x == e {
			c.evds = append(c.evds[:i:i], c.evds[i+1:]...)
			break
		}
	}
	// dat_cno_wait(3DAT): waiters and the agent are unblocked with no EVD
	// "when all EVDs the CNO is associated with are freed".
	last := freed && len(c.evds) == 0
	wake := last && c.waiters > 0
	var agent [2]uint64
	if last {
		c.orphaned++
		agent = c.takeAgentLocked()
	}
	c.mu.Unlock()
	if wake {
		c.ia.wake()
	}
	if freed {
		c.agentDueLocked(agent)
	} else {
		c.callAgent(agent, nil)
	}
}

// agentDueLocked queues the agent's "unblocked with no EVD" call caused by
// destroying an object; ia.mu is held. The call that destroyed the object
// makes it (runDueAgents) before it returns, once its locks are released:
// after dat_evd_free or dat_ia_close returns no agent runs for them, so
// the consumer may release the agent's instance data.
func (c *CNO) agentDueLocked(agent [2]uint64) {
	if agent[1] != 0 && c.ia.agent != nil {
		c.ia.agentsDue = append(c.ia.agentsDue, agent)
	}
}

// takeAgentLocked removes the agent for one call: dat_cno_create(3DAT),
// "After it is invoked, it is no longer associated with the CNO."
func (c *CNO) takeAgentLocked() [2]uint64 {
	a := c.agent
	if a[1] == 0 { // no function: nothing to invoke
		return [2]uint64{}
	}
	c.agent = [2]uint64{}
	return a
}

// callAgent invokes agent (if any) on its own goroutine: triggers arrive
// from transport completion sinks, which hold transport locks, and the
// agent may call back into the library.
func (c *CNO) callAgent(agent [2]uint64, e *EVD) {
	if agent[1] == 0 || c.ia.agent == nil {
		return
	}
	go c.ia.agent(agent, e)
}

// trigger hands the CNO's OS wait proxy agent, if any, the EVD that just
// got a notification (dat_cno_create(3DAT): the agent is invoked when the
// CNO is triggered, and is then no longer associated with the CNO). Waiters
// need no trigger: they look at the EVDs themselves.
func (c *CNO) trigger(e *EVD) {
	c.mu.Lock()
	agent := c.takeAgentLocked()
	c.mu.Unlock()
	c.callAgent(agent, e)
}

// Wait blocks until an EVD attached to the CNO has a notification event,
// returning it, or returns DAT_QUEUE_EMPTY after timeout (negative: no
// bound), or DAT_INTERRUPTED_CALL when a signal handler runs on the
// sleeping thread. It returns a nil EVD and no error when the IA closes or
// every EVD is freed.
//
// The wait is level-triggered: it returns an enabled EVD that nobody waits
// on directly (dat_cno_wait(3DAT): a disabled or "Waited" EVD does not
// deliver notifications) and that holds a notification event, whenever it
// got there; so no notification that came before or during the wait is
// lost, however many events an EVD holds. The page makes the returned EVD
// a hint and asks the consumer to poll every EVD of the CNO; successive
// waits start their look at the EVD after the one returned last, so that a
// busy EVD does not hide the others.
func (c *CNO) Wait(timeout time.Duration) (*EVD, error) {
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return nil, ErrHandle(SubHandleCNO)
	}
	c.waiters++
	orphaned := c.orphaned
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.waiters--
		c.mu.Unlock()
	}()

	ia := c.ia
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	sp := newSpinner(&ia.spinBudget)
	var got *EVD
	var end bool
	if timeout != 0 {
		sp.spin(timeout, func() bool {
			got, end = c.look(orphaned)
			return got != nil || end
		})
	}
	for {
		seq := ia.comp.Seq()
		if got == nil && !end {
			got, end = c.look(orphaned)
		}
		switch {
		case got != nil:
			sp.done(true)
			return got, nil
		case end:
			return nil, nil
		case timeout == 0:
			return nil, ErrQueueEmpty
		}
		var left time.Duration = -1
		if timeout > 0 {
			if left = time.Until(deadline); left <= 0 {
				sp.done(false)
				return nil, ErrQueueEmpty
			}
		}
		// Arm every CQ of the CNO, then look once more: a completion
		// that came before an arm does not notify.
		for _, e := range c.snapshot() {
			e.arm()
		}
		if got, end = c.look(orphaned); got != nil || end {
			continue
		}
		sp.slept = true
		if ia.sleep(seq, left) {
			return nil, ErrInterrupted
		}
	}
}

// snapshot is the CNO's EVDs now.
func (c *CNO) snapshot() []*EVD {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.evds
}

// look pumps the CNO's EVDs and returns one that can deliver a
// notification; end is true when the wait must return with no EVD (the CNO
// or IA is gone, or every EVD was freed since the wait began).
func (c *CNO) look(orphaned uint64) (e *EVD, end bool) {
	c.mu.Lock()
	evds, start := c.evds, c.next
	gone := c.dead || c.ia.closed.Load() || c.orphaned != orphaned
	c.mu.Unlock()
	if gone {
		return nil, true
	}
	for i := range evds {
		x := evds[(start+i)%len(evds)]
		x.pump(1)
		if x.notifying() {
			c.mu.Lock()
			c.next = (start + i + 1) % max(len(c.evds), 1)
			c.mu.Unlock()
			return x, false
		}
	}
	return nil, false
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
	c.evds = nil
	var agent [2]uint64
	if c.ia.closing {
		agent = c.takeAgentLocked() // the IA is destroyed: unblock it
	}
	c.mu.Unlock()
	c.agentDueLocked(agent)
	c.ia.wake()
	delete(c.ia.cnos, c)
	c.ia.handles.Release(c)
}
