package verbs

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"net/netip"
	"runtime"

	"godat/rdma"
)

// The post calls pass the contract's flag bits and opcodes through: they
// are the shim's (and verbs') numbering. These fail to compile otherwise.
var (
	_ [rdma.SendFence - C.GD_SF_FENCE]struct{}
	_ [C.GD_SF_FENCE - rdma.SendFence]struct{}
	_ [rdma.SendSignaled - C.GD_SF_SIGNALED]struct{}
	_ [C.GD_SF_SIGNALED - rdma.SendSignaled]struct{}
	_ [rdma.SendSolicited - C.GD_SF_SOLICITED]struct{}
	_ [C.GD_SF_SOLICITED - rdma.SendSolicited]struct{}
	_ [rdma.SendInline - C.GD_SF_INLINE]struct{}
	_ [C.GD_SF_INLINE - rdma.SendInline]struct{}
	_ [rdma.WRRDMARead - C.GD_WR_RDMA_READ]struct{}
	_ [C.GD_WR_RDMA_READ - rdma.WRRDMARead]struct{}
	_ [rdma.WRSend - C.GD_WR_SEND]struct{}
	_ [C.GD_WR_SEND - rdma.WRSend]struct{}
)

// solicitedMark is the immediate data a solicited send carries: a verbs
// receive completion does not say whether its message was sent solicited
// (the bit only selects which completions notify an armed CQ), and DAT's
// solicited wait needs to know (core leaves an unsolicited receive of such
// a stream queued without waking a waiter). So on InfiniBand and RoCE a
// SendSolicited send goes as IBV_WR_SEND_WITH_IMM with this value, still
// with IBV_SEND_SOLICITED, and the receiver's poll (cq.c) reports a receive
// that carries it as WCSolicited (CapSolicitedFlag). Every verbs peer of a
// godat connection is godat (the private data header, cm_priv.go). iWARP
// has no immediate data: there receives carry no flag and every receive
// of a solicited-wait stream notifies. Sends with the consumer's own
// immediate data (not yet in DAT 1.2) will need the mark elsewhere.
const solicitedMark = C.GD_SOLICITED_MARK

// defaultWR and defaultSGE are the capacities of a QP created with zeros.
const (
	defaultWR  = 64
	defaultSGE = 4
)

// qp is a reliable-connected queue pair: an ibv_qp of the device's own
// context, created in Init, with its connection (conn.go) on an rdma_cm_id
// that carries its number.
type qp struct {
	rdma.QPDefaults
	d    *device
	c    *C.struct_gd_qp
	ibqp *C.struct_ibv_qp
	num  uint32
	h    uint64
	ctx  uint64
	cm   *cmChannel
	pd   *pd
	scq  *cq
	rcq  *cq
	srq  *srq
	cap  rdma.QPCap
	// maxRd and maxInit are the responder resources and initiator depth
	// this QP offers (QPInitAttr.MaxRdAtomic, MaxInitRdAtomic).
	maxRd, maxInit int
	sigAll         bool

	// sHold and rHold are the completions the QP's queues can leave in
	// its CQs (cq.go, fit).
	sHold, rHold int

	// sendKeys and recvKeys cache the last region each queue's posts
	// named (keys.go).
	sendKeys, recvKeys keyCache

	// Under d.mu:
	dead    bool
	conn    *conn // the connection or attempt since the last Reset
	lastWQE bool  // AsyncQPLastWQE raised since the QP last left Init
}

// CreateQP creates an RC queue pair in Init (ibv_create_qp, then INIT with
// the port and partition of the device's address).
func (d *device) CreateQP(a rdma.QPInitAttr) (rdma.QP, error) {
	var out *qp
	var err error
	err = d.locked(func() error {
		out, err = d.createQPLocked(a)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// qpPlan is a QP's objects, resolved, and the creation attributes its
// capacities ask of the device.
type qpPlan struct {
	p        *pd
	scq, rcq *cq
	s        *srq
	ia       C.struct_ibv_qp_init_attr
	// marker: one send slot more than asked, for the marker of a graceful
	// disconnect (qp.c), when the device has room for it.
	marker         bool
	maxRd, maxInit int
	// askRecv is the receives asked for, which may be fewer than the
	// device grants (rxe rounds queues up).
	askRecv int
}

// planQP checks a's objects and capacities against the device.
func (d *device) planQP(a rdma.QPInitAttr) (*qpPlan, error) {
	pl := &qpPlan{}
	var err error
	if pl.p, err = d.pdOf(a.PD); err != nil {
		return nil, err
	}
	if pl.scq, err = d.cqOf(a.SendCQ, "send"); err != nil {
		return nil, err
	}
	if pl.rcq, err = d.cqOf(a.RecvCQ, "receive"); err != nil {
		return nil, err
	}
	if a.SRQ != nil {
		if pl.s, err = d.srqOf(a.SRQ); err != nil {
			return nil, err
		}
	}
	c := a.Cap
	def := func(v *int, dflt int) {
		if *v == 0 {
			*v = dflt
		}
	}
	def(&c.MaxSendWR, min(defaultWR, d.attr.MaxQPWR))
	def(&c.MaxRecvWR, min(defaultWR, d.attr.MaxQPWR))
	def(&c.MaxSendSGE, min(defaultSGE, d.attr.MaxSGE))
	def(&c.MaxRecvSGE, min(defaultSGE, d.attr.MaxSGE))
	at := d.attr
	switch {
	case c.MaxSendWR < 0 || c.MaxSendWR > at.MaxQPWR, c.MaxRecvWR < 0 || c.MaxRecvWR > at.MaxQPWR:
		return nil, fmt.Errorf("verbs: QP work requests %d/%d (the device allows %d): %w", c.MaxSendWR, c.MaxRecvWR, at.MaxQPWR, rdma.ErrInvalid)
	case c.MaxSendSGE < 0 || c.MaxSendSGE > at.MaxSGE, c.MaxRecvSGE < 0 || c.MaxRecvSGE > at.MaxSGE:
		return nil, fmt.Errorf("verbs: QP SGEs %d/%d (the device allows %d): %w", c.MaxSendSGE, c.MaxRecvSGE, at.MaxSGE, rdma.ErrInvalid)
	case c.MaxInlineData < 0 || c.MaxInlineData > at.MaxInline:
		return nil, fmt.Errorf("verbs: QP inline data %d (the device allows %d): %w", c.MaxInlineData, at.MaxInline, rdma.ErrInvalid)
	case a.MaxRdAtomic < 0 || a.MaxRdAtomic > at.MaxQPRdAtom, a.MaxInitRdAtomic < 0 || a.MaxInitRdAtomic > at.MaxQPInitRdAtom:
		return nil, fmt.Errorf("verbs: QP RDMA read depths %d/%d (the device allows %d/%d): %w",
			a.MaxRdAtomic, a.MaxInitRdAtomic, at.MaxQPRdAtom, at.MaxQPInitRdAtom, rdma.ErrInvalid)
	}
	pl.askRecv = c.MaxRecvWR
	sendWR := c.MaxSendWR
	pl.marker = sendWR < at.MaxQPWR
	if pl.marker {
		sendWR++
	}
	ia := &pl.ia
	ia.send_cq = pl.scq.c.cq
	ia.recv_cq = pl.rcq.c.cq
	if pl.s != nil {
		ia.srq = pl.s.c.srq
	}
	ia.qp_type = C.IBV_QPT_RC
	if a.SigAll {
		ia.sq_sig_all = 1
	}
	ia.cap.max_send_wr = C.uint32_t(sendWR)
	ia.cap.max_recv_wr = C.uint32_t(c.MaxRecvWR)
	ia.cap.max_send_sge = C.uint32_t(c.MaxSendSGE)
	ia.cap.max_recv_sge = C.uint32_t(c.MaxRecvSGE)
	ia.cap.max_inline_data = C.uint32_t(c.MaxInlineData)
	if pl.s != nil {
		ia.cap.max_recv_wr, ia.cap.max_recv_sge = 0, 0
	}
	pl.maxRd, pl.maxInit = a.MaxRdAtomic, a.MaxInitRdAtomic
	if pl.maxRd == 0 {
		pl.maxRd = at.MaxQPRdAtom
	}
	if pl.maxInit == 0 {
		pl.maxInit = at.MaxQPInitRdAtom
	}
	return pl, nil
}

// create makes the plan's ibv_qp, named h, in INIT, and says the
// capacities the device granted.
func (pl *qpPlan) create(d *device, h uint64) (*C.struct_ibv_qp, rdma.QPCap, error) {
	ia := pl.ia // the device writes the capacities granted into it
	ibqp, cerr := C.gd_create_qp(pl.p.c, &ia, C.uint64_t(h))
	if ibqp == nil {
		return nil, rdma.QPCap{}, wrap("ibv_create_qp", errnoOf(-1, cerr))
	}
	if r := C.gd_qp_init(d.anchor, ibqp); r != 0 {
		C.gd_destroy_qp(ibqp)
		return nil, rdma.QPCap{}, wrap("ibv_modify_qp to INIT", errnoOf(r, nil))
	}
	granted := rdma.QPCap{MaxSendWR: int(ia.cap.max_send_wr), MaxRecvWR: int(ia.cap.max_recv_wr),
		MaxSendSGE: int(ia.cap.max_send_sge), MaxRecvSGE: int(ia.cap.max_recv_sge), MaxInlineData: int(ia.cap.max_inline_data)}
	if pl.marker {
		granted.MaxSendWR--
	}
	if pl.s != nil {
		granted.MaxRecvWR, granted.MaxRecvSGE = 0, 0
	}
	return ibqp, granted, nil
}

// holds are the completions the QP's queues can leave in its CQs: the send
// ring's slots (the marker's included) and the receive ring's, or the
// SRQ's.
func (pl *qpPlan) holds(c rdma.QPCap) (send, recv int) {
	if pl.s != nil {
		return c.MaxSendWR + 1, pl.s.max
	}
	return c.MaxSendWR + 1, c.MaxRecvWR
}

// use counts the QP on the plan's objects (or, with -1, no longer).
func (pl *qpPlan) use(n int, sHold, rHold int) {
	pl.scq.hold(n * sHold)
	pl.rcq.hold(n * rHold)
	pl.p.refs += n
	pl.scq.refs += n
	pl.rcq.refs += n
	if pl.s != nil {
		pl.s.refs += n
	}
}

func (d *device) createQPLocked(a rdma.QPInitAttr) (*qp, error) {
	pl, err := d.planQP(a)
	if err != nil {
		return nil, err
	}
	cm, err := d.cmChanOf(a.CM)
	if err != nil {
		return nil, err
	}
	h := newHandle()
	ibqp, granted, err := pl.create(d, h)
	if err != nil {
		return nil, err
	}
	var pool *C.struct_gd_pool
	if pl.s != nil {
		pool = pl.s.c.pool
	}
	// The send ring has a slot for the marker even where the device had
	// no room for it (the marker's post then fails and the drain waits
	// for the last request's completion instead).
	gq := C.gd_qp_new(d.c, ibqp, C.uint64_t(h), C.int(granted.MaxSendWR+1), C.int(granted.MaxRecvWR),
		C.int(granted.MaxSendSGE), C.int(granted.MaxRecvSGE), pool)
	if gq == nil {
		C.gd_destroy_qp(ibqp)
		return nil, fmt.Errorf("verbs: QP slots: %w", rdma.ErrNoResources)
	}
	q := &qp{d: d, c: gq, ibqp: ibqp, num: uint32(ibqp.qp_num), h: h, ctx: a.Context, cm: cm, pd: pl.p,
		scq: pl.scq, rcq: pl.rcq, srq: pl.s, cap: granted, maxRd: pl.maxRd, maxInit: pl.maxInit, sigAll: a.SigAll}
	runtime.AddCleanup(q, func(c *C.struct_gd_qp) { C.gd_qp_put(c) }, gq)
	q.setCQs()
	q.sHold, q.rHold = pl.holds(granted)
	pl.use(1, q.sHold, q.rHold)
	d.qps[q] = struct{}{}
	d.objs[h] = q
	return q, nil
}

// Reconfigure gives a QP in Init other CQs, another PD or other capacities
// (dat_ep_modify of an unconnected EP). Verbs changes none of these on an
// existing QP, so the backend creates a new ibv_qp and posts the receives
// the old one held to it again, as OFED dapl allocates a new QP in
// dat_ep_modify (which drops them). The QP number changes; the handle, the
// CM channel, the context and the SRQ stay. Errors: ErrState (not in
// Init: connected, connecting, or in Error before a Reset), ErrInvalid
// (another SRQ, fewer receives or SGEs than the receives posted use, a
// capacity above the device's), ErrClosed.
func (q *qp) Reconfigure(a rdma.QPInitAttr) error {
	return q.d.locked(func() error {
		if q.dead {
			return rdma.ErrClosed
		}
		if q.conn != nil || C.gd_qp_state(q.c) != C.GD_QPS_INIT {
			return rdma.ErrState
		}
		return q.replaceLocked(a)
	})
}

// setCQs tells the C side the QP's CQs, and whether requests posted to it
// in Error are flushed by the backend: an iWARP device leaves them in its
// queue (siw's user-space queue is read by nobody once the QP is in
// Error), where verbs and DAT say they complete as flushed.
func (q *qp) setCQs() {
	synth := 0
	if q.d.iwarp {
		synth = 1
	}
	C.gd_qp_set_cqs(q.c, C.int(synth), q.scq.c, q.rcq.c)
}

// posted is the outcome of a post call: a request the backend completes as
// flushed itself wakes the sleepers of its CQ, which no device event will.
func posted(r C.int, c *cq) error {
	switch r {
	case 0:
		return nil
	case C.GD_POSTED_FLUSHED:
		if c.ch != nil {
			c.ch.Wake()
		}
		return nil
	}
	return postErr(r)
}

// attr is what the QP was created or last reconfigured with.
func (q *qp) attr() rdma.QPInitAttr {
	a := rdma.QPInitAttr{PD: q.pd, SendCQ: q.scq, RecvCQ: q.rcq, Cap: q.cap, MaxRdAtomic: q.maxRd,
		MaxInitRdAtomic: q.maxInit, SigAll: q.sigAll}
	if q.srq != nil {
		a.SRQ = q.srq
	}
	return a
}

// replaceLocked moves a QP in INIT onto a new ibv_qp made after a, posting
// the receives it holds to it again (gd_qp_rebuild); under d.mu.
func (q *qp) replaceLocked(a rdma.QPInitAttr) error {
	d := q.d
	pl, err := d.planQP(a)
	if err != nil {
		return err
	}
	if pl.s != q.srq {
		return fmt.Errorf("verbs: a QP keeps its SRQ: %w", rdma.ErrInvalid)
	}
	ibqp, granted, err := pl.create(d, q.h)
	if err != nil {
		return err
	}
	var orq, nrq *C.struct_gd_ring
	r := C.gd_qp_rebuild(q.c, ibqp, C.int(granted.MaxSendWR+1), C.int(granted.MaxRecvWR), C.int(pl.askRecv),
		C.int(granted.MaxSendSGE), C.int(granted.MaxRecvSGE), &orq, &nrq)
	if r != 0 {
		C.gd_destroy_qp(ibqp)
		if nrq != nil { // receives reposted before the failure, flushed by the destroy
			C.gd_cq_bury_ring(pl.rcq.c, nrq)
			C.gd_ring_put(nrq)
		}
		switch r {
		case C.EINVAL:
			return fmt.Errorf("verbs: the receives posted do not fit the new capacities: %w", rdma.ErrInvalid)
		case C.EBUSY:
			return rdma.ErrState
		}
		return wrap("reposting the receives", errnoOf(r, nil))
	}
	old := &qpPlan{p: q.pd, scq: q.scq, rcq: q.rcq, s: q.srq}
	old.use(-1, q.sHold, q.rHold)
	// Destroying it may flush the receives it held into the old receive
	// CQ (siw), where their slots must stay valid: the ring, which now
	// drops them, is buried there.
	C.gd_destroy_qp(q.ibqp)
	if orq != nil {
		C.gd_cq_bury_ring(q.rcq.c, orq)
		C.gd_ring_put(orq)
	}
	q.ibqp, q.num, q.pd, q.scq, q.rcq, q.cap = ibqp, uint32(ibqp.qp_num), pl.p, pl.scq, pl.rcq, granted
	q.setCQs()
	q.maxRd, q.maxInit, q.sigAll = pl.maxRd, pl.maxInit, a.SigAll
	q.sHold, q.rHold = pl.holds(granted)
	pl.use(1, q.sHold, q.rHold)
	return nil
}

// Num is the queue pair number.
func (q *qp) Num() uint32 { return q.num }

// Cap is the capacities granted.
func (q *qp) Cap() rdma.QPCap { return q.cap }

// State is the QP's state: the one the backend moved it to, unless the
// device put it in Error by itself (ibv_query_qp); a destroyed QP reports
// Error. (iWARP devices report states of their own: siw says Reset for a
// connected QP, so the device's word is taken for Error only.)
func (q *qp) State() rdma.QPState {
	q.d.mu.Lock()
	defer q.d.mu.Unlock()
	if q.dead {
		return rdma.QPSErr
	}
	hw := C.gd_query_state(q.ibqp)
	if hw == C.IBV_QPS_ERR {
		return rdma.QPSErr
	}
	switch C.gd_qp_state(q.c) {
	case C.GD_QPS_INIT:
		return rdma.QPSInit
	case C.GD_QPS_CONN:
		if hw == C.IBV_QPS_RTR || hw == C.IBV_QPS_RTS {
			return rdma.QPState(hw)
		}
		return rdma.QPSInit
	case C.GD_QPS_RTS:
		if hw == C.IBV_QPS_SQD || hw == C.IBV_QPS_SQE {
			return rdma.QPState(hw)
		}
		return rdma.QPSRTS
	}
	return rdma.QPSErr
}

// PostSend appends a send-queue request (ibv_post_send): one C call, no
// allocation.
func (q *qp) PostSend(wr *rdma.SendWR) error {
	n := len(wr.SGL)
	if n > q.cap.MaxSendSGE || wr.Opcode > rdma.WRRDMARead || (wr.Opcode == rdma.WRRDMARead && n > q.d.maxSGERd) {
		return rdma.ErrInvalid
	}
	if wr.Flags&rdma.SendInline != 0 {
		total := 0
		for i := range wr.SGL {
			total += int(wr.SGL[i].Length)
		}
		if total > q.cap.MaxInlineData {
			return rdma.ErrInvalid
		}
	}
	// Inline data is copied at the post and its keys are not used, as
	// in the software provider.
	if wr.Flags&rdma.SendInline == 0 || wr.Opcode == rdma.WRRDMARead {
		need := rdma.Access(0)
		if wr.Opcode == rdma.WRRDMARead {
			need = rdma.AccessLocalWrite
		}
		if err := q.d.keys.check(&q.sendKeys, q.pd, wr.SGL, need); err != nil {
			return q.postFault(err, true)
		}
	}
	op, imm := wr.Opcode, wr.Imm
	if op == rdma.WRSend && wr.Flags&rdma.SendSolicited != 0 && q.d.attr.Caps&rdma.CapSolicitedFlag != 0 {
		op, imm = rdma.WRSendWithImm, solicitedMark
	}
	r := C.gd_post_send_go(qpAddr(q.c), C.uint64_t(wr.WRID), C.uint64_t(wr.RemoteAddr), C.uint32_t(wr.RKey), C.uint32_t(imm),
		C.int(op), C.int(wr.Flags), sgePtr(wr.SGL), C.int(n))
	if r != 0 {
		return posted(r, q.scq)
	}
	return nil
}

// PostRecv appends a receive (ibv_post_recv): one C call, no allocation.
func (q *qp) PostRecv(wr *rdma.RecvWR) error {
	n := len(wr.SGL)
	if q.srq != nil {
		if C.gd_qp_dead(q.c) != 0 {
			return rdma.ErrClosed
		}
		return rdma.ErrState
	}
	if n > q.cap.MaxRecvSGE {
		return rdma.ErrInvalid
	}
	if err := q.d.keys.check(&q.recvKeys, q.pd, wr.SGL, rdma.AccessLocalWrite); err != nil {
		return q.postFault(err, false)
	}
	if r := C.gd_post_recv_go(qpAddr(q.c), C.uint64_t(wr.WRID), sgePtr(wr.SGL), C.int(n)); r != 0 {
		return posted(r, q.rcq)
	}
	return nil
}

// postFault is the error of a post whose segments failed the check: the
// error the post would have met first when the QP is destroyed or (for a
// send) not in a state that takes requests, as the software provider
// checks those first; else err. The state is read only on this path.
func (q *qp) postFault(err error, send bool) error {
	if C.gd_qp_dead(q.c) != 0 {
		return rdma.ErrClosed
	}
	if send {
		if st := C.gd_qp_state(q.c); st != C.GD_QPS_RTS && st != C.GD_QPS_ERR {
			return rdma.ErrState
		}
	}
	return err
}

// LocalAddr is the connection's local address and port.
func (q *qp) LocalAddr() netip.AddrPort {
	q.d.mu.Lock()
	defer q.d.mu.Unlock()
	if q.conn == nil {
		return netip.AddrPort{}
	}
	return q.conn.local
}

// RemoteAddr is the connection's remote address and port.
func (q *qp) RemoteAddr() netip.AddrPort {
	q.d.mu.Lock()
	defer q.d.mu.Unlock()
	if q.conn == nil {
		return netip.AddrPort{}
	}
	return q.conn.remote
}

// setState records the state the post calls check.
func (q *qp) setState(st C.int) { C.gd_qp_set_state(q.c, st) }

// toError puts the QP in Error (flushing what it holds) and records it.
func (q *qp) toError() {
	q.setState(C.GD_QPS_ERR)
	C.gd_modify_state(q.ibqp, C.IBV_QPS_ERR)
	q.raiseLastWQE()
}

// Reset takes a QP in Error back to Init, unconnected and empty.
func (q *qp) Reset() error {
	return q.d.locked(func() error {
		if q.dead {
			return rdma.ErrClosed
		}
		if q.conn == nil {
			return nil // Init
		}
		if C.gd_qp_state(q.c) != C.GD_QPS_ERR {
			return rdma.ErrState
		}
		q.conn.end()
		q.conn = nil
		// The flushes of the old connection may still be in the CQs:
		// their slots stay (buried) and new requests take new ones.
		var osq, orq *C.struct_gd_ring
		if r := C.gd_qp_retire(q.c, &osq, &orq); r != 0 {
			return wrap("reset", errnoOf(r, nil))
		}
		C.gd_cq_bury_ring(q.scq.c, osq)
		if orq != nil {
			C.gd_cq_bury_ring(q.rcq.c, orq)
		}
		if r := C.gd_modify_state(q.ibqp, C.IBV_QPS_RESET); r != 0 {
			return wrap("ibv_modify_qp to RESET", errnoOf(r, nil))
		}
		if r := C.gd_qp_init(q.d.anchor, q.ibqp); r != 0 {
			return wrap("ibv_modify_qp to INIT", errnoOf(r, nil))
		}
		q.setState(C.GD_QPS_INIT)
		q.lastWQE = false
		if q.d.iwarp {
			// An iWARP device keeps a QP bound to the connection it
			// served (siw refuses to accept or connect it again,
			// ECONNRESET): the QP goes on a new ibv_qp, and a new number.
			return q.replaceLocked(q.attr())
		}
		return nil
	})
}

// Destroy frees the QP (ibv_destroy_qp); a connection ends abruptly
// (rdma_destroy_id tells the peer) and nothing more completes.
func (q *qp) Destroy() error {
	return q.d.locked(func() error {
		if q.dead {
			return rdma.ErrClosed
		}
		q.destroyLocked()
		return nil
	})
}

func (q *qp) destroyLocked() {
	if q.dead {
		return
	}
	q.dead = true
	if q.conn != nil {
		q.conn.end()
		q.conn = nil
	}
	C.gd_qp_kill(q.c, q.scq.c, q.rcq.c)
	q.scq.hold(-q.sHold)
	q.rcq.hold(-q.rHold)
	q.pd.refs--
	q.scq.refs--
	q.rcq.refs--
	if q.srq != nil {
		q.srq.refs--
	}
	delete(q.d.qps, q)
	delete(q.d.objs, q.h)
	delete(q.d.draining, q)
}

// qpOf is the QP of this device behind an rdma.QP.
func (d *device) qpOf(x rdma.QP) (*qp, error) {
	q, ok := x.(*qp)
	switch {
	case !ok || q == nil || q.d != d:
		return nil, fmt.Errorf("verbs: a QP of another device: %w", rdma.ErrInvalid)
	case q.dead:
		return nil, rdma.ErrClosed
	}
	return q, nil
}
