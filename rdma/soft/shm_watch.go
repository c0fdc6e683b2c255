package soft

// Rings a consumer looks at without hints. A CQ's hot connection (the one
// that last completed a receive into it) is looked at directly by the
// CQ's Poll, so the hint its sender appends after each message only cost
// the sender a compare-and-swap on a line we poll and cost us the drop of
// a stale hint in the next Poll. While we watch its ring, we set the
// connection's dirOffWatched word and its sender skips the hint
// (shmWire.unhinted), unless someone of ours sleeps.
//
// Arrival order. Unhinted messages have no place in the inbound queue, so
// every drain looks at the watched rings before each hint it takes and
// takes first a message whose stamp (our queue tail as its sender read it
// before publishing) is not past that hint's position: every hint appended
// before that message's post began is taken, and that hint came from a
// post that overlapped it or began later (hintBefore, which looks at the
// ring's slot first and the queue after it). A CQ has one hot connection, so
// one watched ring per CQ holds unhinted messages at a time, plus rings
// that were hot: when a CQ's hot connection changes, the old one's word is
// cleared with a locked exchange and its entry stays, up to the ring
// position its published messages end at then (until), since any message
// published later carries a hint (its sender saw the word clear). Those
// entries come before the new hot one in the list and are served first:
// a sender that posts on one connection and then on another saw the first
// one's word set before the second's was.
//
// Sleep. A sender skips hints only while nobody of ours sleeps, and a
// sleeper counts itself before its last look, which drains the watched
// rings too (drainWatched): so a sleeper either takes the message or is
// rung by its hint.

// maxWatched bounds the watched rings: every drain looks at each before
// every hint it takes.
const maxWatched = 8

// watchEvery is how often a Poll of a CQ without a hot connection drains
// the watched rings when no hint waits: a consumer that polls only its
// request CQ still lets the peer's sends complete (their verdicts wait for
// the placement), as it would with hints.
const watchEvery = 64

// watchedRing is a connection whose sender may skip hints: a hot one
// (until ^0), or one that was and still holds messages published unhinted
// before its word was cleared, up to ring position until.
type watchedRing struct {
	w     *shmWire
	until uint64
}

const watchHot = ^uint64(0)

// watchLocked lets w's sender skip hints, unless maxWatched rings are
// watched or w's entry from its last turn is still being served (one
// entry per ring keeps the order of its turns); in.mu held.
func (d *device) watchLocked(w *shmWire) {
	in := &d.in
	if w.watched || w.closed.Load() || len(in.watch) >= maxWatched {
		return
	}
	for i := range in.watch {
		if in.watch[i].w == w {
			return
		}
	}
	in.watch = append(in.watch, watchedRing{w: w, until: watchHot})
	in.nwatch.Store(int32(len(in.watch)))
	w.watched = true
	w.mem.st32(w.rxDir+dirOffWatched, 1)
}

// unwatchLocked makes w's sender hint again. The word is cleared with a
// locked exchange before the look at the ring, so every message whose
// sender still saw it set is seen published; the entry stays until those
// are taken. in.mu held.
func (d *device) unwatchLocked(w *shmWire) {
	if !w.watched {
		return
	}
	w.watched = false
	w.mem.st32(w.rxDir+dirOffWatched, 0)
	end := w.rx.tail
	for end-w.rx.tail < dataSlots && w.rx.published(end) {
		end++
	}
	for i := range d.in.watch {
		if e := &d.in.watch[i]; e.w == w && e.until == watchHot {
			e.until = end
			d.in.cooled++
		}
	}
}

// forgetLocked drops w's entry (its connection is released); in.mu held.
func (d *device) forgetLocked(w *shmWire) {
	in := &d.in
	w.watched = false
	for i := range in.watch {
		if in.watch[i].w == w {
			in.dropWatch(i)
			return
		}
	}
}

func (in *inbound) dropWatch(i int) {
	if in.watch[i].until != watchHot {
		in.cooled--
	}
	copy(in.watch[i:], in.watch[i+1:])
	in.watch[len(in.watch)-1] = watchedRing{}
	in.watch = in.watch[:len(in.watch)-1]
	in.nwatch.Store(int32(len(in.watch)))
}

// serveWatchLocked takes the messages of the watched rings that come
// before the hint at queue position pos, or every one published when no
// hint waits there; in.mu held. It stops after a rendezvous placement
// (pulled). As in peekHot, a message's slot is seen published before the
// queue is looked at: a hint appended before its post began is then seen
// (a look at the queue first could miss one appended just before it).
func (d *device) serveWatchLocked(pos uint64) {
	in := &d.in
	for i := 0; i < len(in.watch); {
		// Indexed, not a pointer: a placement may append an entry
		// (makeHot) and move the array.
		w := in.watch[i].w
		if !w.rxWait {
			d.serveRingLocked(w, pos, in.watch[i].until)
		}
		if u := in.watch[i].until; u != watchHot && (w.closed.Load() || w.rxWait || w.rx.tail >= u) {
			// Served (a message waiting for an SRQ receive is resumed
			// with every one behind it, hinted or not: shmWire.resume).
			in.dropWatch(i)
			continue
		}
		if in.pulled {
			return
		}
		i++
	}
}

// serveRingLocked takes w's published messages below ring position until,
// as long as no hint waiting at queue position pos comes before the next
// of them (hintBefore); it stops at a message that waits for an SRQ
// receive, and after a rendezvous placement (pulled). in.mu held.
func (d *device) serveRingLocked(w *shmWire, pos, until uint64) {
	for !d.in.pulled && !w.closed.Load() && w.rx.tail < until && w.rx.ready() {
		if d.hintBefore(w, pos) {
			return
		}
		w.onHint(uint32(w.rx.tail)&hintSeqMask, false)
		if w.rxWait {
			return
		}
	}
}

// drainWatched is a sleeper's last look at the watched rings of d (it has
// counted itself a sleeper): unlike a Poll's, it waits for the drain lock.
func (d *device) drainWatched() {
	in := &d.in
	in.mu.Lock()
	if !d.closed.Load() {
		d.drainLocked()
	}
	in.mu.Unlock()
}
