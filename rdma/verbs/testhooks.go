package verbs

/*
#include "shim.h"

// gd_test_probe calls a watch's probe as the export layer's C dequeue does.
static int gd_test_probe(uint64_t fn, uint64_t arg, uint64_t val)
{
	return ((int (*)(uint64_t, uint64_t))(uintptr_t)fn)(arg, val);
}

// gd_test_word reads a watched word, as the export layer's C check does.
static uint64_t gd_test_word(uint64_t a)
{
	return __atomic_load_n((const uint64_t *)(uintptr_t)a, __ATOMIC_ACQUIRE);
}
*/
import "C"

import "godat/rdma"

// Hooks for the package's tests, which cannot use cgo themselves (go test
// forbids import "C" in _test.go files): they reach the C side for them.

// qpTimeouts reads a QP's ack timeout exponent, retry count and RNR retry
// count (ibv_query_qp).
func qpTimeouts(x any) (timeout, retry, rnr int, ok bool) {
	q, _ := x.(*qp)
	if q == nil {
		return 0, 0, 0, false
	}
	var t, r, n C.int
	if C.gd_query_timeouts(q.ibqp, &t, &r, &n) != 0 {
		return 0, 0, 0, false
	}
	return int(t), int(r), int(n), true
}

// killQPSilently destroys a QP's verbs object behind the CM's back: to its
// peer it looks like a host that died (no disconnect request is sent).
func killQPSilently(x any) bool {
	q, _ := x.(*qp)
	if q == nil {
		return false
	}
	q.d.mu.Lock()
	defer q.d.mu.Unlock()
	return C.gd_modify_state(q.ibqp, C.IBV_QPS_RESET) == 0
}

// srqCounts are the limit events the device raised and those the backend
// raised at arming.
func srqCounts(x any) (fired, emulated int) {
	s, _ := x.(*srq)
	if s == nil {
		return -1, -1
	}
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	return s.fired, s.emulated
}

// cgoNoop is an empty C call (benchmarks: the price of one cgo call).
func cgoNoop() int { return int(C.gd_noop()) }

// pingPongC runs n 8-byte ping-pongs between two connected QPs on C
// threads through the shim's post and poll calls (benchmarks: the C path
// without the Go runtime). Each QP's CQ takes its sends and receives.
func pingPongC(qa, qb any, abuf, bbuf uint64, alkey, blkey uint32, n int) int {
	a, b := qa.(*qp), qb.(*qp)
	return int(C.gd_pingpong(a.c, a.rcq.c, b.c, b.rcq.c, C.uint64_t(abuf), C.uint32_t(alkey),
		C.uint64_t(bbuf), C.uint32_t(blkey), C.int(n)))
}

// librariesLoad tells whether libibverbs and librdmacm can be loaded here.
func librariesLoad() bool {
	var msg [256]C.char
	return C.gd_load(&msg[0], C.int(len(msg))) == 0
}

// probeQuiet asks a watch's probe whether its CQ is still empty, as the
// export layer's C dequeue does (cabi.h, godat_quiet_empty).
func probeQuiet(w rdma.QuietWatch) bool {
	return C.gd_test_probe(C.uint64_t(w.Probe), C.uint64_t(w.ProbeArg), C.uint64_t(w.ProbeVal)) != 0
}

// quietWord reads a watch's first word, as the export layer's C check does.
func quietWord(w rdma.QuietWatch) uint64 { return uint64(C.gd_test_word(C.uint64_t(w.Epoch))) }
