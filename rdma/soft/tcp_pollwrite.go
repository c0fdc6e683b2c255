package soft

// Writes that a polling consumer carries on (issue 17). A frame too large
// for a post to write at once (postWriteMax), or a socket found full, used
// to go to the connection's writer goroutine. With each process pinned to
// one CPU, that goroutine shared the consumer's CPU: a post woke its
// thread (a 4 MiB RDMA write post over godat-tcp, p99 18-20 us against
// 2-3 us median), and with one P the polling consumer had to give the P up
// to it (runtime.Gosched) every 10 us of a stream, two context switches
// each. So while a consumer polls the device (a Poll within standDown, no
// Wait serving it), the right to write goes to the loop's write list
// instead (tcpWire.polls), and every Poll of the device writes one chunk
// (writerChunk, one non-blocking sendmsg) of each listed connection, the
// way a libfabric tcp endpoint's progress writes its queue from the
// consumer's calls. Once nobody polls (the loop goroutine's stand-down
// ends, a Wait starts serving, the loop stops), the list goes to the
// writer goroutines as before.

// pollTurn is writeLoop's budget for a Poll paying a listed write: one
// sendmsg of at most writerChunk, the rest back to the list.
const pollTurn = -1

// takesWrites reports whether a consumer's Polls carry writes on: one
// polled within standDown, and no Wait serves the loop (a sleeper does
// not write).
func (l *tcpLoop) takesWrites() bool {
	t := l.lastPoll.Load()
	return t != 0 && monoNow()-t < int64(standDown) && !l.sleeper.Load()
}

// oweWrite lists w, whose right to write the polls now hold (w.polls).
// The loop goroutine must not sleep on its epoll set meanwhile: if the
// consumer stops polling, it hands the write to the writer goroutine.
func (l *tcpLoop) oweWrite(w *tcpWire) {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		w.toWriter()
		return
	}
	l.wq = append(l.wq, w)
	l.wqn.Store(int32(len(l.wq)))
	l.mu.Unlock()
	// wqn is stored before asleep is looked at; the goroutine stores
	// asleep before it looks at wqn: one of them sees the other.
	if l.asleep.CompareAndSwap(true, false) {
		_ = l.ep.SetReadDeadline(aLongTimeAgo)
	}
}

// takeWrites moves the list to l.wpaying (l.wpay held).
func (l *tcpLoop) takeWrites() []*tcpWire {
	l.mu.Lock()
	l.wq, l.wpaying = l.wpaying[:0], l.wq
	l.wqn.Store(0)
	l.mu.Unlock()
	return l.wpaying
}

// payWrites is a Poll's share: one chunk of each listed connection. A
// Poll that finds another paying leaves the list to it.
func (l *tcpLoop) payWrites() {
	if !l.wpay.TryLock() {
		return
	}
	ws := l.takeWrites()
	for _, w := range ws {
		if w.payTurn() {
			l.paid++
		}
	}
	clear(ws)
	l.wpay.Unlock()
}

// handWrites gives every listed write to its writer goroutine: nobody
// polls now.
func (l *tcpLoop) handWrites() {
	if l.wqn.Load() == 0 {
		return
	}
	l.wpay.Lock()
	ws := l.takeWrites()
	for _, w := range ws {
		w.toWriter()
	}
	clear(ws)
	l.wpay.Unlock()
}

// payTurn writes one chunk of w's queue if the polls still hold its right
// to write (the writer goroutine may have taken it: a shutdown's kick),
// and reports whether they did.
func (w *tcpWire) payTurn() bool {
	w.wmu.Lock()
	if !w.polls {
		w.wmu.Unlock()
		return false
	}
	w.polls = false // writing stays set: this thread holds the right now
	w.wmu.Unlock()
	w.writeLoop(false, pollTurn)
	return true
}

// toWriter hands w's right to write from the polls to the writer
// goroutine.
func (w *tcpWire) toWriter() {
	w.wmu.Lock()
	mine := w.polls
	if mine {
		w.polls, w.handed = false, true
	}
	w.wmu.Unlock()
	if mine {
		w.d.tcp.setMoving(&w.wrMoving, true)
		w.kickWriter()
	}
}
