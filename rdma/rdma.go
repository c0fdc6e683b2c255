// Package rdma is the transport contract the DAT core is written against,
// in the vocabulary of verbs (libibverbs) and rdma_cm (librdmacm): a device
// with protection domains, memory regions, completion queues sharing a
// waitable completion channel, reliable-connected queue pairs, shared
// receive queues, asynchronous events, and a connection manager with an
// event channel. Each type names its verbs counterpart in its doc comment.
//
// Backends (rdma/soft: shared memory and TCP; rdma/verbs: libibverbs) implement
// it and register themselves by name with Register; the export layer opens
// the one a dat.conf entry names with Open. Backends never import core.
//
// Conventions every backend keeps (the conformance suite in rdma/rdmatest
// checks them):
//   - Numbering is the backend's own: statuses and opcodes here are verbs
//     enums; nothing in this package is in DAT numbering.
//   - Nothing runs a busy thread on the consumer's behalf. A backend may use
//     goroutines that sleep in the kernel (a socket read, an fd poll).
//   - Poll, PostSend and PostRecv never allocate on their fast paths and never
//     hold a lock across a system call whose cost grows with the transfer.
//   - Completions of one queue pair's send queue, and of its receive queue,
//     reach their CQ in the order the work requests were posted (receives of
//     a QP on an SRQ: in message arrival order). Across queue pairs sharing
//     a CQ, completions are in the order the transport completed them; for
//     receives, the order in which the messages arrived.
//   - Optional features are capabilities (Caps); a backend that lacks one
//     embeds the matching *Defaults type of defaults.go, whose methods return
//     ErrNotSupported.
package rdma

import (
	"fmt"
	"sort"
	"sync"
)

// Params are a backend's open parameters: the key=value pairs of a dat.conf
// entry's instance data.
type Params map[string]string

// OpenFunc opens a device of a backend. async receives the device's
// asynchronous events (ibv_get_async_event); it is called from backend
// goroutines and must not block or call back into the device.
type OpenFunc func(p Params, async AsyncHandler) (Device, error)

var (
	regMu    sync.Mutex
	backends = map[string]OpenFunc{}
)

// Register makes a backend available under name. Backends call it from an
// init function; registering a name twice panics (a programming error).
func Register(name string, open OpenFunc) {
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := backends[name]; dup {
		panic("rdma: backend " + name + " registered twice")
	}
	backends[name] = open
}

// Open opens a device of the backend registered under name. An unknown
// name is ErrNoBackend.
func Open(name string, p Params, async AsyncHandler) (Device, error) {
	regMu.Lock()
	open := backends[name]
	regMu.Unlock()
	if open == nil {
		return nil, fmt.Errorf("rdma: backend %q: %w", name, ErrNoBackend)
	}
	if async == nil {
		async = func(AsyncEvent) {}
	}
	return open(p, async)
}

// Backends lists the registered backend names, sorted.
func Backends() []string {
	regMu.Lock()
	defer regMu.Unlock()
	names := make([]string, 0, len(backends))
	for n := range backends {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
