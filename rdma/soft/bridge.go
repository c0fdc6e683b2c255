package soft

// The bridge: a goroutine per device, started only when needed, that
// sleeps on the device's bell and drains its inbound queue when woken, so
// that arrivals from peers become completions without the consumer's
// Poll. It is needed when a completion is awaited other than by Polls and
// Waits on this device: a channel's fd polled with poll(2), or a CQ of this
// device whose channel belongs to another device (Wait sleeps on that
// device's bell, which our peers do not ring). It sleeps in the kernel; the
// price is a futex wake by every peer that hints while it sleeps.

import "time"

// startBridge starts the device's bridge once.
func (d *device) startBridge() {
	d.bridgeOnce.Do(func() {
		d.bridgeStop, d.bridgeGone = make(chan struct{}), make(chan struct{})
		go d.bridgeLoop()
	})
}

// stopBridge ends the bridge (Close, before the bell goes).
func (d *device) stopBridge() {
	d.bridgeOnce.Do(func() {}) // no bridge may start from now on
	if d.bridgeStop == nil {
		return
	}
	close(d.bridgeStop)
	d.ringSelf()
	<-d.bridgeGone
}

func (d *device) bridgeLoop() {
	defer close(d.bridgeGone)
	for {
		if !d.bellEnter() {
			return
		}
		// The word is read before the stop check: stopBridge closes stop,
		// then bumps the word, so a sleep on a word read before that bump
		// ends.
		seq := d.bell.ld32(bellOffSeq)
		select {
		case <-d.bridgeStop:
			d.bellLeave()
			return
		default:
		}
		d.drainInbound()
		d.sleepOnBell(seq, time.Second)
		d.bellLeave()
	}
}
