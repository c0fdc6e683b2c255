package core

import "godat/rdma"

// The EVD's completion queue: how DTO completions become DAT events.

func newEVD(ia *IA, qlen int, flags EVDFlags, cno *CNO) (*EVD, error) {
	n := min(max(qlen, evdMinRing), evdInitRing)
	e := &EVD{ia: ia, flags: flags, ring: make([]Event, n), qlen: qlen, enabled: true, waitable: true, cno: cno}
	e.kind = TypeEVD
	e.hasCNO.Store(cno != nil)
	id, ok := evdIDs.add(e)
	if !ok {
		return nil, E(KindInsufficientResources, SubResourceTEVD)
	}
	e.id = id
	if flags&EVDDTO != 0 {
		cq, err := ia.dev.dev.CreateCQ(qlen, ia.comp, uint64(id))
		if err != nil {
			evdIDs.remove(id)
			return nil, mapTransportError(err)
		}
		e.cq = cq
	}
	return e, nil
}

// pumpDequeue is dequeue's path when the ring is empty: it polls the CQ
// until a poll makes an event or finds nothing; the first completion that
// makes an event is returned in out at once (the polling consumer's
// latency path takes no lock of the queue), the rest go to the ring. It
// reports whether out was filled. Batches that make no event (see pump) do
// not end the look: the EVD is not empty while events wait behind them.
func (e *EVD) pumpDequeue(out *Event) bool {
	e.pollMu.Lock()
	var k int
	for k == 0 {
		n := e.pollLocked()
		if n == 0 {
			e.pollUnlock()
			return false
		}
		if n == 1 && e.queued.Load() == 0 && !e.blocked.Load() && !e.hasCNO.Load() {
			// The usual poll: one completion, converted straight into out
			// (a copy through e.evs would wait on the stores that built it).
			if e.convertOne(&e.wcs[0], out, true) {
				out.EVD = e
				out.reaped()
				e.pollUnlock()
				return true
			}
			continue
		}
		k = e.convertLocked(n)
	}
	if k == 1 && e.queued.Load() == 0 && !e.blocked.Load() && !e.hasCNO.Load() {
		*out = e.evs[0]
		out.EVD = e
		out.reaped()
		e.evs[0] = Event{}
		e.pollUnlock()
		return true
	}
	e.enqueueLocked(k)
	e.pollUnlock()
	return false
}

// pump moves completions from the CQ into the ring: batches until one
// makes an event, or everything (max < 0) for a threshold wait, whose
// count must include them; either way it stops when a poll finds nothing.
// It returns the number of events added.
//
// A batch that makes no event (suppressed sends core signalled to get
// their slots back) does not stop it: a wait arms the CQ and then looks
// once more, and a completion that came before the arm notifies nobody,
// so that look must reach it behind any number of such completions (else
// the waiter sleeps with events in its CQ). Nor does a short batch: it
// says nothing of the EVD's CQs on other devices (pollLocked).
func (e *EVD) pump(max int) int {
	if e.cq == nil {
		return 0
	}
	e.pollMu.Lock()
	defer e.pollUnlock()
	return e.pumpLocked(max)
}

// pumpLocked is pump with pollMu held.
func (e *EVD) pumpLocked(max int) int {
	added := 0
	for {
		n := e.pollLocked()
		if n == 0 {
			break
		}
		k := e.convertLocked(n)
		e.enqueueLocked(k)
		added += k
		if max >= 0 && k > 0 {
			break
		}
	}
	return added
}

// pollLocked polls the EVD's CQ, then its CQs on other devices if any,
// into e.wcs; pollMu is held.
func (e *EVD) pollLocked() int {
	n := e.cq.Poll(e.wcs[:])
	if n > 0 {
		return n
	}
	if p := e.more.Load(); p != nil {
		for _, f := range *p {
			if n = f.cq.Poll(e.wcs[:]); n > 0 {
				return n
			}
		}
	}
	return 0
}

// arm arms every CQ of the EVD for the next completion.
func (e *EVD) arm() {
	if e.cq == nil {
		return
	}
	_ = e.cq.Arm(false)
	if p := e.more.Load(); p != nil {
		for _, f := range *p {
			_ = f.cq.Arm(false)
		}
	}
}

// enqueueLocked moves the first k converted events into the ring; pollMu
// is held, so they enter in the CQ's order.
func (e *EVD) enqueueLocked(k int) {
	if k == 0 {
		return
	}
	e.mu.Lock()
	if e.dead {
		e.mu.Unlock()
		for i := 0; i < k; i++ {
			e.evs[i].reaped()
			e.evs[i] = Event{}
		}
		return
	}
	triggers := 0
	for i := 0; i < k; i++ {
		if e.insertLocked(&e.evs[i]) {
			triggers++
		}
		e.evs[i] = Event{}
	}
	cno := e.cno
	e.mu.Unlock()
	if triggers > 0 {
		cno.trigger(e, triggers)
	}
}

// drainDeadLocked empties the CQ of a destroyed EVD, releasing what its
// completions held; pollMu is held.
func (e *EVD) drainDeadLocked() {
	for {
		n := e.pollLocked()
		if n == 0 {
			return
		}
		k := e.convertLocked(n)
		for i := 0; i < k; i++ {
			e.evs[i].reaped()
			e.evs[i] = Event{}
		}
	}
}

// convertLocked turns the n polled completions into events in e.evs,
// dropping the ones that make no event (suppressed successes, completions
// of objects freed since); it returns how many events it made. pollMu is
// held.
func (e *EVD) convertLocked(n int) int {
	k := 0
	for i := 0; i < n; i++ {
		if e.convertOne(&e.wcs[i], &e.evs[k], false) {
			k++
		}
	}
	return k
}

// convertOne turns one polled completion into ev; false when it makes no
// event. reaped: ev goes to the consumer at once (EP.recvEvent). pollMu is
// held.
func (e *EVD) convertOne(wc *rdma.WC, ev *Event, reaped bool) bool {
	kind, id, seq := wridSplit(wc.WRID)
	switch kind {
	case wrSend:
		if ep := epIDs.get(id); ep != nil {
			return ep.sendDone(seq, wc, ev)
		}
	case wrRecv:
		if ep := epIDs.get(id); ep != nil {
			return ep.recvDone(seq, wc, ev, reaped)
		}
	case wrSRQ:
		if s := srqIDs.get(id); s != nil {
			return s.recvDone(seq, wc, ev, reaped)
		}
	}
	return false
}

// dtoStatus maps a transport completion status to the DAT DTO status: the
// one place the two numberings meet (see the transport-contract notes for
// which verbs status each backend uses for what).
func dtoStatus(s rdma.WCStatus) DTOStatus {
	switch s {
	case rdma.WCSuccess:
		return DTOSuccess
	case rdma.WCWRFlushErr:
		return DTOFlushed
	case rdma.WCLocLenErr:
		return DTOLocalLength
	case rdma.WCLocQPOpErr, rdma.WCLocEECOpErr:
		return DTOLocalEP
	case rdma.WCLocProtErr, rdma.WCLocAccessErr:
		return DTOLocalProtection
	case rdma.WCBadRespErr:
		return DTOBadResponse
	case rdma.WCRemAccessErr:
		return DTORemoteAccess
	case rdma.WCRemInvReqErr, rdma.WCRemOpErr:
		return DTORemoteResponder
	case rdma.WCRNRRetryExcErr:
		return DTOReceiverNotReady
	case rdma.WCMWBindErr:
		return DTORMROperationFailed
	}
	return DTOTransport
}
