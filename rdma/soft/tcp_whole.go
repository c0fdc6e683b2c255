package soft

// Large payloads placed by the thread that serves the loop (issue 17).
// A payload with directMin bytes or more still in the socket went to a
// helper goroutine that read it into place with blocking reads. With each
// process pinned to one CPU, that goroutine shared the CPU with the
// consumer, which polled beside it (giving the CPU up every 10 us,
// yieldToMovers) or slept and was woken for every segment that came; and
// a receiver slow to read let the sender's window close, so that the
// sender's kernel sent in small pieces. Instead the turn asks the kernel
// to report the socket readable only once the whole payload is there
// (SO_RCVLOWAT, which also grows the socket's buffer to hold it, as it
// does for zero-copy receivers) and comes back then: the serving thread
// (a consumer's Poll, a Wait's sleeper, the loop goroutine) reads the
// payload into place with one call that cannot wait. A socket reported
// readable with less than that (the peer closed, an error, or the kernel
// would not hold it all: its buffer at the limit, or the window closed)
// leaves the payload to the helper, as does one over wholeMax.

import "golang.org/x/sys/unix"

// wholeMax bounds the payload a serving thread places with one read: the
// read is a copy of that size, inside a consumer's call.
const wholeMax = 4 << 20

// What whole tells the turn.
const (
	wholeHere = iota // the socket holds it all: place it now
	wholeWait        // not yet: the socket turns readable when it does
	wholeNo          // the helper places it
)

// whole decides how the rest of the current payload, left bytes not yet
// read, is placed (the reader only). Once the mark is set, a look while
// the socket is not readable costs one poll(2), as a read that finds
// nothing would.
func (w *tcpWire) whole(left uint64) int {
	if left > wholeMax {
		return wholeNo
	}
	armed := w.lowat == left
	if armed && !w.sock.readable() {
		return wholeWait
	}
	if w.holdsAll(left) {
		return wholeHere
	}
	if !armed {
		if !w.setLowat(left) {
			return wholeNo
		}
		// Setting the mark reports a socket that meets it at once; a look
		// now sees what came meanwhile.
		if !w.sock.readable() {
			return wholeWait
		}
		if w.holdsAll(left) {
			return wholeHere
		}
	}
	w.setLowat(0)
	return wholeNo
}

// holdsAll reports whether the socket holds the left bytes; when it does,
// the mark goes back to the default, since the read takes them all.
func (w *tcpWire) holdsAll(left uint64) bool {
	if n, err := w.sock.inq(); err != nil || uint64(n) < left {
		return false
	}
	w.setLowat(0)
	w.wholes++
	return true
}

// setLowat sets the socket's receive low-water mark to n bytes (0: back
// to the default of one), and reports whether it could; when it could
// not, the mark is as it was. The kernel caps the mark at half the
// socket's largest buffer (tcp_rmem's third figure, 6 MiB on Debian, or
// the SO_RCVBUF a program set): a mark set lower than asked would report
// the socket readable before the payload is all there, so that counts as
// could not, and the mark goes back.
func (w *tcpWire) setLowat(n uint64) bool {
	if w.lowat == n {
		return true
	}
	want := max(n, 1)
	got, err := w.sock.setLowat(int(want))
	if err != nil {
		return false
	}
	if uint64(got) < want {
		w.lowatCapped++
		if _, err := w.sock.setLowat(int(max(w.lowat, 1))); err != nil {
			w.lowat = uint64(got) // what the socket holds now
		}
		return false
	}
	w.lowat = n
	return true
}

// inq is the number of bytes the socket holds unread.
func (s *tcpSock) inq() (int, error) {
	if !s.acquire() {
		return 0, errGone
	}
	defer s.release()
	return unix.IoctlGetInt(s.fd, unix.SIOCINQ)
}

// setLowat sets SO_RCVLOWAT to n and returns the mark the kernel set.
func (s *tcpSock) setLowat(n int) (int, error) {
	if !s.acquire() {
		return 0, errGone
	}
	defer s.release()
	if err := unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_RCVLOWAT, n); err != nil {
		return 0, err
	}
	if n == 1 {
		return 1, nil
	}
	return unix.GetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_RCVLOWAT)
}

// readable reports whether the socket is readable now (its low-water mark
// met, or the kernel reports it so for another reason: see the top).
func (s *tcpSock) readable() bool {
	if !s.acquire() {
		return true
	}
	defer s.release()
	fds := [1]unix.PollFd{{Fd: int32(s.fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds[:], 0)
	return err != nil || n > 0
}
