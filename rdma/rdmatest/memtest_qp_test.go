package rdmatest

import (
	"net/netip"
	"slices"
	"time"

	"godat/rdma"
)

// mSend is a posted send-queue request.
type mSend struct {
	wr     rdma.SendWR
	inline []byte
	sig    bool
}

// mRecv is a posted receive.
type mRecv struct {
	wrid uint64
	sgl  []rdma.SGE
}

type mQP struct {
	dev           *mDevice
	num           uint32
	pd            *mPD
	scq, rcq      *mCQ
	srq           *mSRQ
	cm            *mCM
	ctx           uint64
	cap           rdma.QPCap
	sigAll        bool
	state         rdma.QPState
	sq            []*mSend
	rq            []*mRecv
	peer          *mQP
	req           *mReq // our connection request, while connecting
	local, remote netip.AddrPort
	closed        bool
}

func (d *mDevice) grant(c rdma.QPCap, srq bool) (rdma.QPCap, error) {
	at := d.Query()
	if c.MaxSendWR > at.MaxQPWR || c.MaxRecvWR > at.MaxQPWR || c.MaxSendSGE > at.MaxSGE ||
		c.MaxRecvSGE > at.MaxSGE || c.MaxInlineData > at.MaxInline {
		return c, rdma.ErrInvalid
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.MaxSendWR, 64)
	def(&c.MaxRecvWR, 64)
	def(&c.MaxSendSGE, 4)
	def(&c.MaxRecvSGE, 4)
	if srq {
		c.MaxRecvWR, c.MaxRecvSGE = 0, 0
	}
	return c, nil
}

func (d *mDevice) CreateQP(a rdma.QPInitAttr) (rdma.QP, error) {
	fab.Lock()
	defer fab.Unlock()
	if d.closed {
		return nil, rdma.ErrClosed
	}
	q := &mQP{dev: d, ctx: a.Context, sigAll: a.SigAll, state: rdma.QPSInit}
	if err := q.setup(a); err != nil {
		return nil, err
	}
	if a.SRQ != nil {
		s, ok := a.SRQ.(*mSRQ)
		if !ok || s.dev != d || s.closed {
			q.release()
			return nil, rdma.ErrInvalid
		}
		q.srq = s
		s.refs++
	}
	if a.CM != nil {
		c, ok := a.CM.(*mCM)
		if !ok {
			q.release()
			return nil, rdma.ErrInvalid
		}
		q.cm = c
	}
	fab.nextQPN++
	q.num = fab.nextQPN
	d.qps[q] = true
	return q, nil
}

// setup takes the PD, CQs and capacities of a (for create and reconfigure).
func (q *mQP) setup(a rdma.QPInitAttr) error {
	if a.PD == nil || a.SendCQ == nil || a.RecvCQ == nil {
		return rdma.ErrInvalid
	}
	pd, err := q.dev.check(a.PD)
	if err != nil {
		return err
	}
	scq, err := q.dev.checkCQ(a.SendCQ)
	if err != nil {
		return err
	}
	rcq, err := q.dev.checkCQ(a.RecvCQ)
	if err != nil {
		return err
	}
	c, err := q.dev.grant(a.Cap, a.SRQ != nil || q.srq != nil)
	if err != nil {
		return err
	}
	if q.srq == nil && c.MaxRecvWR < len(q.rq) {
		return rdma.ErrInvalid
	}
	q.release()
	q.pd, q.scq, q.rcq, q.cap = pd, scq, rcq, c
	pd.refs++
	scq.refs++
	rcq.refs++
	return nil
}

// release drops the QP's hold on its PD and CQs.
func (q *mQP) release() {
	if q.pd != nil {
		q.pd.refs--
		q.scq.refs--
		q.rcq.refs--
		q.pd, q.scq, q.rcq = nil, nil, nil
	}
}

func (q *mQP) Num() uint32 { return q.num }

func (q *mQP) State() rdma.QPState {
	fab.Lock()
	defer fab.Unlock()
	return q.state
}

func (q *mQP) Cap() rdma.QPCap {
	fab.Lock()
	defer fab.Unlock()
	return q.cap
}

func (q *mQP) dead() bool { return q.closed || q.dev.closed }

// checkLocal is the one check of a local segment: at post time with
// CapPostCheck, at execution otherwise.
func checkLocal(pd *mPD, e rdma.SGE, write bool) error {
	m := fab.lkeys[e.LKey]
	switch {
	case m == nil || m.closed || m.dev != pd.dev:
		return rdma.ErrPrivileges
	case m.pd != pd:
		return rdma.ErrProtection
	case !m.covers(e.Addr, e.Length):
		return rdma.ErrInvalid
	case write && m.acc&rdma.AccessLocalWrite == 0:
		return rdma.ErrPrivileges
	}
	return nil
}

func (q *mQP) PostSend(wr *rdma.SendWR) error {
	fab.Lock()
	defer fab.Unlock()
	if q.dead() {
		return rdma.ErrClosed
	}
	if q.state != rdma.QPSRTS && q.state != rdma.QPSSQD && q.state != rdma.QPSErr {
		return rdma.ErrState
	}
	if len(wr.SGL) > q.cap.MaxSendSGE || wr.Opcode == rdma.WRRDMARead && q.dev.cfg.sgeRd > 0 && len(wr.SGL) > q.dev.cfg.sgeRd {
		return rdma.ErrInvalid
	}
	switch wr.Opcode {
	case rdma.WRSend, rdma.WRRDMAWrite, rdma.WRRDMARead:
	default:
		return rdma.ErrInvalid
	}
	if len(q.sq) >= q.cap.MaxSendWR {
		return rdma.ErrQueueFull
	}
	s := &mSend{wr: *wr, sig: q.sigAll || wr.Flags&rdma.SendSignaled != 0}
	s.wr.SGL = slices.Clone(wr.SGL)
	if wr.Flags&rdma.SendInline != 0 && wr.Opcode != rdma.WRRDMARead {
		n := 0
		for _, e := range wr.SGL {
			n += int(e.Length)
		}
		if n > q.cap.MaxInlineData {
			return rdma.ErrInvalid
		}
		for _, e := range wr.SGL {
			b, err := readMem(e.Addr, int(e.Length))
			if err != nil {
				return rdma.ErrFault
			}
			s.inline = append(s.inline, b...)
		}
	} else if q.dev.cfg.caps&rdma.CapPostCheck != 0 {
		for _, e := range wr.SGL {
			if err := checkLocal(q.pd, e, wr.Opcode == rdma.WRRDMARead); err != nil {
				return err
			}
		}
	}
	if q.state == rdma.QPSErr {
		q.scq.add(rdma.WC{WRID: wr.WRID, QPNum: q.num, Status: rdma.WCWRFlushErr, Opcode: wcOp(wr.Opcode)})
		return nil
	}
	q.sq = append(q.sq, s)
	q.progress()
	return nil
}

func (q *mQP) PostRecv(wr *rdma.RecvWR) error {
	fab.Lock()
	defer fab.Unlock()
	if q.dead() {
		return rdma.ErrClosed
	}
	if q.srq != nil {
		return rdma.ErrState
	}
	if len(wr.SGL) > q.cap.MaxRecvSGE {
		return rdma.ErrInvalid
	}
	if len(q.rq) >= q.cap.MaxRecvWR {
		return rdma.ErrQueueFull
	}
	if q.dev.cfg.caps&rdma.CapPostCheck != 0 {
		for _, e := range wr.SGL {
			if err := checkLocal(q.pd, e, true); err != nil {
				return err
			}
		}
	}
	if q.state == rdma.QPSErr {
		q.rcq.add(rdma.WC{WRID: wr.WRID, QPNum: q.num, Status: rdma.WCWRFlushErr, Opcode: rdma.WCRecv})
		return nil
	}
	q.rq = append(q.rq, &mRecv{wrid: wr.WRID, sgl: slices.Clone(wr.SGL)})
	if q.peer != nil {
		q.peer.progress()
	}
	return nil
}

// gather reads a request's local segments.
func (q *mQP) gather(s *mSend) ([]byte, rdma.WCStatus) {
	if s.inline != nil || s.wr.Flags&rdma.SendInline != 0 {
		return s.inline, rdma.WCSuccess
	}
	var out []byte
	for _, e := range s.wr.SGL {
		if checkLocal(q.pd, e, false) != nil {
			return nil, rdma.WCLocProtErr
		}
		b, err := readMem(e.Addr, int(e.Length))
		if err != nil {
			return nil, rdma.WCLocProtErr
		}
		out = append(out, b...)
	}
	return out, rdma.WCSuccess
}

// scatter writes data into sgl, checked against pd.
func scatter(pd *mPD, sgl []rdma.SGE, data []byte) rdma.WCStatus {
	room := 0
	for _, e := range sgl {
		if checkLocal(pd, e, true) != nil {
			return rdma.WCLocProtErr
		}
		room += int(e.Length)
	}
	if room < len(data) {
		return rdma.WCLocLenErr
	}
	for _, e := range sgl {
		n := min(int(e.Length), len(data))
		if n == 0 {
			break
		}
		if writeMem(e.Addr, data[:n]) != nil {
			return rdma.WCLocProtErr
		}
		data = data[n:]
	}
	return rdma.WCSuccess
}

// remote finds the peer's region for an RDMA access, or reports it refused.
func (q *mQP) allows(rkey uint32, addr uint64, n uint32, need rdma.Access) bool {
	m := fab.rkeys[rkey]
	return m != nil && !m.closed && m.pd == q.pd && m.covers(addr, n) && m.acc&need != 0
}

// nextRecv is the receive the next message to q would take.
func (q *mQP) nextRecv() *mRecv {
	if q.srq != nil {
		if len(q.srq.q) > 0 {
			return q.srq.q[0]
		}
		return nil
	}
	if len(q.rq) > 0 {
		return q.rq[0]
	}
	return nil
}

func (q *mQP) takeRecv() {
	if q.srq != nil {
		q.srq.take()
		return
	}
	q.rq = q.rq[1:]
}

func (q *mQP) complete(s *mSend, n int) {
	if s.sig {
		q.scq.add(rdma.WC{WRID: s.wr.WRID, QPNum: q.num, ByteLen: uint32(n), Status: rdma.WCSuccess, Opcode: wcOp(s.wr.Opcode)})
	}
	q.sq = q.sq[1:]
}

// fail completes the head request with st and breaks the connection.
func (q *mQP) fail(s *mSend, st rdma.WCStatus) {
	q.scq.add(rdma.WC{WRID: s.wr.WRID, QPNum: q.num, Status: st, Opcode: wcOp(s.wr.Opcode)})
	q.sq = q.sq[1:]
	q.breakConn(rdma.CMBroken)
}

// progress executes the send queue from its head while it can.
func (q *mQP) progress() {
	for len(q.sq) > 0 && (q.state == rdma.QPSRTS || q.state == rdma.QPSSQD) && q.peer != nil {
		s, p := q.sq[0], q.peer
		switch s.wr.Opcode {
		case rdma.WRSend:
			r := p.nextRecv()
			if r == nil {
				return // waits for a receive, without limit
			}
			data, st := q.gather(s)
			if st != rdma.WCSuccess {
				q.fail(s, st)
				return
			}
			p.takeRecv()
			pd := p.pd
			if p.srq != nil {
				pd = p.srq.pd
			}
			if st := scatter(pd, r.sgl, data); st != rdma.WCSuccess {
				p.rcq.add(rdma.WC{WRID: r.wrid, QPNum: p.num, Status: st, Opcode: rdma.WCRecv})
				if st == rdma.WCLocLenErr {
					q.fail(s, rdma.WCRemInvReqErr)
				} else {
					q.fail(s, rdma.WCRemOpErr)
				}
				return
			}
			var fl rdma.WCFlags
			if s.wr.Flags&rdma.SendSolicited != 0 && p.dev.cfg.caps&rdma.CapSolicitedFlag != 0 {
				fl = rdma.WCSolicited
			}
			p.rcq.addSol(rdma.WC{WRID: r.wrid, QPNum: p.num, ByteLen: uint32(len(data)), Status: rdma.WCSuccess, Opcode: rdma.WCRecv, Flags: fl},
				s.wr.Flags&rdma.SendSolicited != 0)
			q.complete(s, len(data))
		case rdma.WRRDMAWrite:
			data, st := q.gather(s)
			if st != rdma.WCSuccess {
				q.fail(s, st)
				return
			}
			if !p.allows(s.wr.RKey, s.wr.RemoteAddr, uint32(len(data)), rdma.AccessRemoteWrite) ||
				writeMem(s.wr.RemoteAddr, data) != nil {
				q.remoteFail(s)
				return
			}
			q.complete(s, len(data))
		case rdma.WRRDMARead:
			n := 0
			for _, e := range s.wr.SGL {
				n += int(e.Length)
			}
			if !p.allows(s.wr.RKey, s.wr.RemoteAddr, uint32(n), rdma.AccessRemoteRead) {
				q.remoteFail(s)
				return
			}
			data, err := readMem(s.wr.RemoteAddr, n)
			if err != nil {
				q.remoteFail(s)
				return
			}
			if st := scatter(q.pd, s.wr.SGL, data); st != rdma.WCSuccess {
				q.fail(s, rdma.WCLocProtErr)
				return
			}
			q.complete(s, n)
		}
	}
	if q.state == rdma.QPSSQD && len(q.sq) == 0 {
		q.breakConn(rdma.CMDisconnected)
	}
}

// remoteFail reports a refused RDMA access: WCRemAccessErr here, an access
// error at the peer, and the connection broken.
func (q *mQP) remoteFail(s *mSend) {
	p := q.peer
	p.dev.async(rdma.AsyncEvent{Type: rdma.AsyncQPAccessErr, Context: p.ctx})
	q.fail(s, rdma.WCRemAccessErr)
}

// toError moves the QP to Error and flushes everything it holds.
func (q *mQP) toError() {
	if q.state == rdma.QPSErr {
		return
	}
	q.state = rdma.QPSErr
	for _, s := range q.sq {
		q.scq.add(rdma.WC{WRID: s.wr.WRID, QPNum: q.num, Status: rdma.WCWRFlushErr, Opcode: wcOp(s.wr.Opcode)})
	}
	for _, r := range q.rq {
		q.rcq.add(rdma.WC{WRID: r.wrid, QPNum: q.num, Status: rdma.WCWRFlushErr, Opcode: rdma.WCRecv})
	}
	q.sq, q.rq = nil, nil
	if q.srq != nil {
		q.dev.async(rdma.AsyncEvent{Type: rdma.AsyncQPLastWQE, Context: q.ctx})
	}
}

// breakConn ends the connection on both sides with ev.
func (q *mQP) breakConn(ev rdma.CMEventType) {
	p := q.peer
	q.peer = nil
	q.toError()
	q.cm.push(rdma.CMEvent{Type: ev, Context: q.ctx})
	if p != nil {
		p.peer = nil
		p.toError()
		p.cm.push(rdma.CMEvent{Type: ev, Context: p.ctx})
	}
}

func (q *mQP) Disconnect(graceful bool) error {
	fab.Lock()
	defer fab.Unlock()
	if q.dead() {
		return rdma.ErrClosed
	}
	switch q.state {
	case rdma.QPSInit:
		return rdma.ErrState
	case rdma.QPSErr:
		return nil
	case rdma.QPSRTR: // a connection attempt
		q.req.gaveUp = true
		q.req = nil
		q.toError()
		q.cm.push(rdma.CMEvent{Type: rdma.CMDisconnected, Context: q.ctx})
		return nil
	}
	if !graceful {
		q.breakConn(rdma.CMDisconnected)
		return nil
	}
	q.state = rdma.QPSSQD
	q.progress()
	if q.state == rdma.QPSSQD {
		time.AfterFunc(2*time.Second, func() {
			fab.Lock()
			defer fab.Unlock()
			if q.state == rdma.QPSSQD {
				q.breakConn(rdma.CMDisconnected)
			}
		})
	}
	return nil
}

func (q *mQP) Reset() error {
	fab.Lock()
	defer fab.Unlock()
	if q.dead() {
		return rdma.ErrClosed
	}
	switch q.state {
	case rdma.QPSInit:
		return nil
	case rdma.QPSErr:
		q.state = rdma.QPSInit
		q.local, q.remote = netip.AddrPort{}, netip.AddrPort{}
		return nil
	}
	return rdma.ErrState
}

func (q *mQP) LocalAddr() netip.AddrPort {
	fab.Lock()
	defer fab.Unlock()
	return q.local
}

func (q *mQP) RemoteAddr() netip.AddrPort {
	fab.Lock()
	defer fab.Unlock()
	return q.remote
}

func (q *mQP) Outstanding() (int, int, error) {
	fab.Lock()
	defer fab.Unlock()
	if q.dev.cfg.caps&rdma.CapQPOutstanding == 0 {
		return 0, 0, rdma.ErrNotSupported
	}
	if q.dead() {
		return 0, 0, rdma.ErrClosed
	}
	return len(q.sq), len(q.rq), nil
}

func (q *mQP) Reconfigure(a rdma.QPInitAttr) error {
	fab.Lock()
	defer fab.Unlock()
	if q.dev.cfg.caps&rdma.CapQPReconfigure == 0 {
		return rdma.ErrNotSupported
	}
	if q.dead() {
		return rdma.ErrClosed
	}
	if q.state != rdma.QPSInit && q.state != rdma.QPSErr {
		return rdma.ErrState
	}
	return q.setup(a)
}

func (q *mQP) Destroy() error {
	fab.Lock()
	defer fab.Unlock()
	if q.dead() {
		return rdma.ErrClosed
	}
	q.destroyLocked()
	return nil
}

func (q *mQP) destroyLocked() {
	if p := q.peer; p != nil {
		p.peer = nil
		p.toError()
		p.cm.push(rdma.CMEvent{Type: rdma.CMDisconnected, Context: p.ctx})
	}
	if q.req != nil {
		q.req.gaveUp = true
	}
	q.release()
	if q.srq != nil {
		q.srq.refs--
	}
	q.closed = true
	delete(q.dev.qps, q)
}

type mSRQ struct {
	dev    *mDevice
	pd     *mPD
	ctx    uint64
	maxWR  int
	maxSGE int
	limit  int
	q      []*mRecv
	refs   int
	closed bool
}

func (d *mDevice) CreateSRQ(a rdma.SRQInitAttr) (rdma.SRQ, error) {
	fab.Lock()
	defer fab.Unlock()
	if d.cfg.caps&rdma.CapSRQ == 0 {
		return nil, rdma.ErrNotSupported
	}
	if d.closed {
		return nil, rdma.ErrClosed
	}
	at := d.Query()
	if a.PD == nil || a.MaxWR < 1 || a.MaxWR > at.MaxSRQWR || a.MaxSGE > at.MaxSRQSGE || a.Limit > a.MaxWR {
		return nil, rdma.ErrInvalid
	}
	pd, err := d.check(a.PD)
	if err != nil {
		return nil, err
	}
	s := &mSRQ{dev: d, pd: pd, ctx: a.Context, maxWR: a.MaxWR, maxSGE: max(a.MaxSGE, 1)}
	pd.refs++
	d.srqs = append(d.srqs, s)
	s.arm(a.Limit)
	return s, nil
}

// arm arms the limit, firing at once when fewer receives are held.
func (s *mSRQ) arm(limit int) {
	s.limit = limit
	s.fire()
}

func (s *mSRQ) fire() {
	if s.limit > 0 && len(s.q) < s.limit {
		s.limit = 0
		s.dev.async(rdma.AsyncEvent{Type: rdma.AsyncSRQLimitReached, Context: s.ctx})
	}
}

func (s *mSRQ) take() {
	s.q = s.q[1:]
	s.fire()
}

func (s *mSRQ) dead() bool { return s.closed || s.dev.closed }

func (s *mSRQ) PostRecv(wr *rdma.RecvWR) error {
	fab.Lock()
	defer fab.Unlock()
	if s.dead() {
		return rdma.ErrClosed
	}
	if len(wr.SGL) > s.maxSGE {
		return rdma.ErrInvalid
	}
	if len(s.q) >= s.maxWR {
		return rdma.ErrQueueFull
	}
	if s.dev.cfg.caps&rdma.CapPostCheck != 0 {
		for _, e := range wr.SGL {
			if err := checkLocal(s.pd, e, true); err != nil {
				return err
			}
		}
	}
	s.q = append(s.q, &mRecv{wrid: wr.WRID, sgl: slices.Clone(wr.SGL)})
	for q := range s.dev.qps {
		if q.srq == s && q.peer != nil {
			q.peer.progress()
		}
	}
	return nil
}

func (s *mSRQ) Modify(a rdma.SRQAttr, mask rdma.SRQAttrMask) error {
	fab.Lock()
	defer fab.Unlock()
	if s.dead() {
		return rdma.ErrClosed
	}
	maxWR := s.maxWR
	if mask&rdma.SRQMaxWR != 0 {
		if a.MaxWR < len(s.q) || a.MaxWR < 1 || a.MaxWR > s.dev.Query().MaxSRQWR {
			return rdma.ErrInvalid
		}
		maxWR = a.MaxWR
	}
	if mask&rdma.SRQLimit != 0 {
		if s.dev.cfg.caps&rdma.CapSRQLimit == 0 {
			return rdma.ErrNotSupported
		}
		if a.Limit > maxWR {
			return rdma.ErrInvalid
		}
	}
	s.maxWR = maxWR
	if mask&rdma.SRQLimit != 0 {
		s.arm(a.Limit)
	}
	return nil
}

func (s *mSRQ) Query() (rdma.SRQAttr, error) {
	fab.Lock()
	defer fab.Unlock()
	if s.dead() {
		return rdma.SRQAttr{}, rdma.ErrClosed
	}
	return rdma.SRQAttr{MaxWR: s.maxWR, MaxSGE: s.maxSGE, Limit: s.limit}, nil
}

func (s *mSRQ) Destroy() error {
	fab.Lock()
	defer fab.Unlock()
	if s.dead() {
		return rdma.ErrClosed
	}
	if s.refs > 0 {
		return rdma.ErrBusy
	}
	s.closed = true
	s.pd.refs--
	return nil
}
