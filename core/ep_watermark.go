package core

// Receive watermarks (dat_ep_set_watermark) and receive counts
// (dat_ep_recv_query). The count the watermarks compare is the EP's held
// count: buffers taken for arriving messages (from the SRQ or the EP's own
// queue) whose completions the consumer has not dequeued. It rises in the
// receive sink and falls in the EVD's dequeue (Event.reaped).

// tookBuffer checks the watermarks after the EP took a buffer and now holds
// n. It runs while a completion is converted, under an EVD's pollMu: the
// hard watermark's disconnect is left to a goroutine.
func (ep *EP) tookBuffer(n int32) {
	ep.checkSoft(n)
	if n > ep.hardWM.Load() && ep.breaking.CompareAndSwap(false, true) {
		go ep.hardBreak()
	}
}

// checkSoft posts the soft high watermark's asynchronous event when n
// exceeds the armed value; the swap disarms it, so one event per setting.
func (ep *EP) checkSoft(n int32) {
	if t := ep.softArm.Load(); n > t && ep.softArm.CompareAndSwap(t, wmOff) {
		ep.ia.asyncError(EventAsyncEPBroken, ep, ReasonSRQSoftHighWatermark)
	}
}

// hardBreak breaks the connection of an EP over its hard high watermark:
// the connection ends abruptly and the consumer gets
// DAT_CONNECTION_EVENT_BROKEN on the connect EVD. Without a connection
// there is nothing to break; the check is repeated when one is established.
func (ep *EP) hardBreak() {
	ep.mu.Lock()
	if ep.dead || ep.state != EPConnected && ep.state != EPDisconnectPending {
		ep.breaking.Store(false)
		ep.mu.Unlock()
		return
	}
	ep.hwBroken = true
	ep.mu.Unlock()
	ep.qp.Disconnect(false)
}

// SetWatermark sets and arms the soft and hard high watermarks
// (dat_ep_set_watermark); WatermarkInfinite disables one. Valid in every
// EP state. When the EP already holds more buffers than a new value, the
// event comes from this call.
func (ep *EP) SetWatermark(soft, hard int) error {
	if soft < WatermarkInfinite {
		return ErrArg(ArgSoftWatermark)
	}
	if hard < WatermarkInfinite {
		return ErrArg(ArgHardWatermark)
	}
	ep.mu.Lock()
	if ep.dead {
		ep.mu.Unlock()
		return ErrHandle(SubHandleEP)
	}
	ep.attr.SRQSoftHW = soft
	ep.softArm.Store(wmThreshold(soft))
	ep.hardWM.Store(wmThreshold(hard))
	ep.mu.Unlock()
	n := ep.held.Load()
	ep.checkSoft(n)
	if n > ep.hardWM.Load() && ep.breaking.CompareAndSwap(false, true) {
		ep.hardBreak()
	}
	return nil
}

// connectedWatermark re-checks the hard watermark when a connection is
// established: "the Provider is ready to generate a connection broken event
// as soon as the connection is established".
func (ep *EP) connectedWatermark() {
	if ep.held.Load() > ep.hardWM.Load() && ep.breaking.CompareAndSwap(false, true) {
		go ep.hardBreak()
	}
}

// RecvQuery reports the receive buffers allocated to the EP and not yet
// completed, and their span (dat_ep_recv_query), after polling the EP's
// receive CQ so arrivals are counted. A buffer of the EP's own queue is
// allocated when posted, and the transport places messages in order, so
// the span equals the count. A buffer of an SRQ is allocated when the EP
// takes it, and the transport places the message and completes it in that
// same step: an EP using an SRQ never has an allocated, uncompleted buffer
// to report, so both counts are 0.
func (ep *EP) RecvQuery() (nbufs, span int, err error) {
	ep.mu.Lock()
	dead, evd := ep.dead, ep.recvEVD
	ep.mu.Unlock()
	if dead {
		return 0, 0, ErrHandle(SubHandleEP)
	}
	if evd != nil {
		evd.pump(-1)
	}
	if ep.srq != nil {
		return 0, 0, nil
	}
	n := ep.rq.outstanding()
	return n, n, nil
}

// Held is the EP's held count, the number its watermarks compare.
func (ep *EP) Held() int { return int(ep.held.Load()) }

// reaped releases what a dequeued (or discarded) receive completion held.
func (ev *Event) reaped() {
	if ev.held {
		ev.EP.held.Add(-1)
	}
	if ev.srq != nil {
		ev.srq.outstanding.Add(-1)
	}
}
