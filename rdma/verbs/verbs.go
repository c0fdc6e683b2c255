// Package verbs is the transport backend over real RDMA devices: libibverbs
// for the data path and librdmacm for connections (InfiniBand, RoCE, and
// iWARP through rdma_cm). It registers itself as "verbs".
//
// No hard dependency: the libraries are opened with dlopen on the first
// device open and called through a table of function pointers (dl.c), so a
// program linked with this package starts, and its other backends work, on
// a machine without rdma-core; Open then fails with rdma.ErrNoDevice and a
// message saying what is missing. The headers (Debian's libibverbs-dev and
// librdmacm-dev) are needed at build time only.
//
// Open parameters (a dat.conf entry's instance data; the first that is
// given decides):
//
//	addr=<ip>            the device whose port has this IP address
//	netdev=<interface>   the device behind the interface's first address
//	dev=<name>[,port=N]  the named device's port N (default 1), reached
//	                     at the first interface address rdma_cm maps to it
//	(none)               the first device with an active port and an address
//
// transport= is the dat.conf's business and ignored here; any other key is
// refused.
//
// How the contract maps onto verbs, and where it cannot:
//   - Queue pairs are created with ibv_create_qp, not rdma_create_qp, and
//     connections carry their number (conn_param.qp_num); the backend moves
//     them through RTR and RTS itself (cm.go says why).
//   - Work requests carry the address of a slot in C memory as their wr_id
//     (shim.h): the slot gives back the consumer's wr_id and the request's
//     opcode, which verbs leaves undefined on error completions.
//   - Service ids map to rdma_cm ports as the software TCP transport maps
//     them (port = id mod 65536, plus 64512 below 1024); the connect private
//     data starts with the whole id (cm.go).
//   - Capabilities are what the device has: SRQs and their limit where
//     max_srq > 0; the solicited flag on receive completions except on
//     iWARP (solicited sends carry a mark in their immediate data, qp.go);
//     no outstanding counts, no growing CQs, no memory windows (the
//     contract has no bind work request), no QPs of another PD than their
//     SRQ's (rxe checks an SRQ's buffers against the QP's PD).
//   - A QP is reconfigured (new CQs, PD or capacities, in Init only) by
//     creating a new ibv_qp and posting the old one's receives to it again
//     (qp.go, qp.c gd_qp_rebuild); on iWARP a reset does the same, since
//     siw does not connect a QP again once it served a connection.
//   - Posted segments are checked against the backend's record of the
//     registrations before the device sees them (CapPostCheck, keys.go),
//     where verbs would check them only at execution and break the
//     connection.
//   - A CQ is as deep as the completions its QPs can leave in it (cq.go),
//     so it never overruns: a verbs overrun is fatal to its QPs.
package verbs

/*
#cgo CFLAGS: -O2 -Wall
#include "shim.h"
*/
import "C"

import (
	"sync/atomic"

	"godat/rdma"
)

func init() { rdma.Register("verbs", open) }

// handles name the backend's objects to C and the kernel (qp_context,
// cq_context, srq_context, rdma_cm_id context): plain numbers, never Go
// pointers, looked up in the device's table.
var lastHandle atomic.Uint64

func newHandle() uint64 { return lastHandle.Add(1) }
