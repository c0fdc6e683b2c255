// Package soft is the software RDMA provider, registered as backend "soft"
// of package rdma: shared memory between processes of one host, TCP
// between hosts. It is one queue-pair engine over a small wire interface,
// with two wires.
//
// # Parameters
//
// transport=shm (default) | tcp | auto; addr=<ip or interface> (default
// 127.0.0.1); timeout=<seconds> (default 10: how long a silent TCP peer may
// stay silent before its connections break). An auto device listens on
// both wires and picks one per connection at connect time: shared memory
// when the address is of this host and a shared-memory listener answers
// there (@godat/<addr>/<service id as 16 hex digits>), TCP otherwise; a
// connection's wire is fixed for its life, and the QP is one QP whatever
// the wire (receives posted before the connection stay where they are).
//
// # The engine (qp*.go, conn.go, srq.go, cq.go)
//
// The engine owns the verbs state machine and the CM events, the send and
// receive queues, the SRQ take, the one post-time check of local segments
// against the registration table (CapPostCheck), completion generation in
// order, flush (WCWRFlushErr), Reconfigure, Outstanding, disconnect with a
// bounded drain, reset and destroy, and every protocol choice (wire.go):
//
//   - Credits: a SEND leaves only against a grant, the receiver's count of
//     receives posted on the connection (on an SRQ, srqWindow = 64 messages
//     beyond those completed). A sender without one keeps the send queued
//     and asks once (an RNR wait without limit); so a message always lands
//     in a posted receive, and a receiver buffers nothing but the wire's
//     own window. A message that finds its SRQ empty waits at the head of
//     its connection, holding back what follows it, until the SRQ gets a
//     receive.
//   - Completion of sends (verbs RC): a send completes once its message is
//     placed in the receive: success, WCRemInvReqErr when the receive was
//     too small (the receiver gets WCLocLenErr), WCRemOpErr when the
//     receive faulted or its region went (the receiver gets WCLocProtErr).
//     So a send's completion means the message arrived: a message sent
//     after another's completion, on any connection, arrives after it.
//     Payloads of up to 8 KiB (eagerMax, also MaxInline) travel with their
//     message (copied into the ring slot, or following the frame header);
//     larger ones are read by the receiver from the sender's memory
//     (process_vm_readv) or streamed. On shared memory the receiver places
//     a message when its consumer polls or waits (there is no thread of
//     ours in between): a send completes when the peer's program next
//     calls in. The receiver publishes its count of verdicts in a word the
//     sender reads when it next posts or polls; it wakes the sender only
//     for a signalled send, a sender out of room, or a failure.
//   - RDMA: one-sided on shared memory (the initiator checks the target's
//     table, then process_vm_readv/writev; the write is visible before any
//     later send of the QP, and completes at once); over TCP a request to
//     the target's responder (qp_resp.go), which checks and executes it
//     without any call of the target program; a write completes on the
//     target's acknowledgement, a read when its data is in place. Reads
//     outstanding are bounded by the initiator depth (16); a fenced request
//     waits for every earlier read.
//   - Access violations (a bad key, out of bounds, a missing right, another
//     PD, a region gone or unmapped at the target) break the connection:
//     the initiator's request completes WCRemAccessErr and every later one
//     is flushed, both sides get CMBroken, the target raises
//     AsyncQPAccessErr; not a byte is written.
//   - Memory a request names is touched only through fault-safe copies
//     (copy_unsafe.go) or system calls that fail cleanly: a region unmapped
//     after registration fails its request with WCLocProtErr on every wire.
//     Where the wire already carried part of the request (a rendezvous
//     payload read by the receiver, a TCP payload after its header) the
//     connection then breaks as well.
//   - Graceful disconnect: the send queue drains for at most 5 s (SQD),
//     then the peer gets CMDisconnected; TCP lingers at most 2 s for the
//     peer to close, and closing the device waits as long for the DISC
//     frames to be written (a program exits right after).
//
// A wire (shm_*.go, tcp_*.go) only moves messages: it issues them, hands
// inbound ones to the engine with their payload, carries the credit and
// acknowledgement counters, does the remote checks of one-sided access,
// and tears its connection down.
//
// # Completion queues and arrival order
//
// A CQ is a ring of completions that grows past its depth (AsyncCQOverrun
// once per excursion). Completions go in when the work completes, so a CQ
// shared by many QPs holds them in the order the transport completed them;
// for receives, the order the messages arrived. An empty Poll costs a few
// loads whatever the number of QPs (the CQ's count, the head slot of the
// device's inbound queue). Nothing runs a busy thread for the consumer:
// on shared memory Poll itself takes arrivals (bounded), and a waiter is
// woken by peers through the futex word; over TCP Poll reads the ready
// connections itself (one epoll_wait for all), and a receive loop goroutine
// per device (tcp_loop.go), asleep in the netpoller, does when nobody polls
// (the sockets themselves are not in the netpoller: tcp_sock.go).
//
// The inbound queue (bell.go) is how arrival order across shared-memory
// connections is known: a peer that publishes a message in its
// connection's ring appends a hint naming the connection and the message's
// position to the receiving device's queue, and Poll processes each named
// connection up to that position, in queue order. The payloads stay in
// per-connection rings; a peer can write the whole queue, so an entry is
// only a hint, taken only at the position its stamp names and never
// trusted for anything but where to look: a forged hint makes us look at a
// ring whose slots carry their own publication word; a hint lost to a full
// queue raises the overflow flag, and the next drain rescans every
// connection; an erased or garbled one leaves a hole that the rescan a
// sleeping waiter runs every second steps over (finding the message in
// its ring), as it also puts back a tail a peer moved away. Nothing is
// lost; a consumer that only polls and never sleeps gets no periodic
// rescan. The consumer never writes the queue (it publishes its head now
// and then), so a hint's cache line crosses cores once per message.
//
// Over TCP, the receive loop (a polling consumer or the loop goroutine,
// one at a time) serves connections in the order the kernel reports them
// readable (an edge-triggered epoll set), one frame per turn,
// which keeps frames of many connections in about the order they arrived;
// large payloads are read straight into place by a helper goroutine.
//
// # Lock order
//
// See qp.go: device.mu, listener, connReq.mu, inbound.mu (the drain, taken
// with TryLock by Poll), qp.mu, conn.placeMu (a teardown barrier), srq.mu,
// the wires' own locks, cq.mu, then leaves (device.deferMu among them). No
// lock that Poll or a post takes is held across a system call whose cost
// grows with the transfer: one-sided accesses and rendezvous pulls run
// under placeMu only (a read lock; the issuing thread keeps others from
// issuing past them with a flag, so RDMA writes stay visible before later
// sends; from 64 KiB on the post leaves them to the device's next Poll or
// its watcher), socket writes happen in
// flush outside every lock but the writer's short one, and large TCP
// payloads are read by the helper without qp.mu. The drain lock is held
// across one rendezvous pull at most; a concurrent Poll of another CQ does
// not wait for it (TryLock) but sees that arrival late.
//
// # Trust (shared memory)
//
// A shared-memory listener accepts only peers running as its own uid, and
// an active side connects only to a listener of its own uid (SO_PEERCRED,
// since anyone may bind an abstract name first); the pid process_vm_* uses
// is the kernel's (SO_PEERCRED), never a peer's word. Every memfd we hand
// out is sealed against shrinking and growing (and further seals); every
// peer memfd is checked for the shrink seal and its size before it is
// mapped, so no access through a mapping can fault. Our registration table
// is handed out read-only (a second, O_RDONLY descriptor): a peer can read
// which keys exist but never widen a region; what peers must write (the
// futex word, the sleepers count, the inbound queue) is a separate bell
// segment. Keys are random over 32 bits, unique among live keys. Every
// field a peer supplies (slot headers, lengths, descriptors, sequence
// words, CM messages, frame headers) is checked before use by a decoder
// that is tested and fuzzed on its own (decode_test.go); a bad peer breaks
// only its own connection (CMBroken) and never makes us panic or hold a
// lock. A same-uid peer could attach to us with ptrace anyway; the checks
// make a buggy or dying peer cost us nothing but its connection.
//
// # TCP
//
// One TCP connection per QP. Service id s is served at port s mod 65536
// (moved up by 64512 below 1024) of the device address; the whole id
// travels in the request, so ids of one device that share a port share its
// listener, and an id nobody listens on is refused. Private data up to 256
// bytes each way. Keepalive after timeout/2 of silence and
// TCP_USER_TIMEOUT=timeout detect a dead host; a peer process that dies is
// seen at once. The connect request must come within 5 s of the TCP
// connection and the confirmation within 5 s of the accept (a half-open
// handshake is then closed and its QP fails with CMAcceptError). The TCP
// wire neither authenticates nor encrypts; remote keys are random, and a
// bad one breaks the connection, so a blind scan costs a reconnection per
// guess.
package soft
