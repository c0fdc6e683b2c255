package rdmatest

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"godat/rdma"
)

var deviceTests = []test{
	{"OpenQueryClose", (*suite).deviceOpenQueryClose},
	{"CloseEndsEverything", (*suite).deviceCloseEndsEverything},
}

// Query reports sane limits, and a closed device refuses everything.
func (s *suite) deviceOpenQueryClose(t *testing.T) {
	w := s.world(t)
	a := w.open()
	at := a.attr
	require.NotEmpty(t, at.Name, "device name")
	for name, v := range map[string]int{"MaxQP": at.MaxQP, "MaxQPWR": at.MaxQPWR, "MaxSGE": at.MaxSGE,
		"MaxCQ": at.MaxCQ, "MaxCQE": at.MaxCQE, "MaxMR": at.MaxMR, "MaxPD": at.MaxPD,
		"MaxPrivateData": at.MaxPrivateData, "MaxQPRdAtom": at.MaxQPRdAtom, "MaxQPInitRdAtom": at.MaxQPInitRdAtom} {
		require.GreaterOrEqual(t, v, 1, name)
	}
	require.GreaterOrEqual(t, at.MaxInline, 0)
	require.NotZero(t, at.MaxMRSize)
	require.NotZero(t, at.MaxMsgSize)
	if at.Caps&rdma.CapSRQ != 0 {
		require.GreaterOrEqual(t, at.MaxSRQ, 1)
		require.GreaterOrEqual(t, at.MaxSRQWR, 1)
		require.GreaterOrEqual(t, at.MaxSRQSGE, 1)
	}
	require.True(t, a.dev.Addr().IsValid(), "device address")
	require.Equal(t, at, a.dev.Query(), "a second Query")
	scq, rcq := a.newCQ(4), a.newCQ(4)

	require.NoError(t, a.close())
	isErr(t, a.dev.Close(), rdma.ErrClosed, "second Close")
	_, err := a.dev.AllocPD()
	isErr(t, err, rdma.ErrClosed, "AllocPD after Close")
	_, err = a.dev.CreateCompChannel()
	isErr(t, err, rdma.ErrClosed, "CreateCompChannel after Close")
	_, err = a.dev.CreateCMChannel()
	isErr(t, err, rdma.ErrClosed, "CreateCMChannel after Close")
	_, err = a.dev.CreateCQ(1, nil, 0)
	isErr(t, err, rdma.ErrClosed, "CreateCQ after Close")
	_, err = a.dev.Listen(a.cm, 0, true, 1, 0)
	isErr(t, err, rdma.ErrClosed, "Listen after Close")
	_, err = a.dev.CreateQP(rdma.QPInitAttr{PD: a.pd, SendCQ: scq.cq, RecvCQ: rcq.cq, CM: a.cm, Cap: a.defaultCap()})
	if !errors.Is(err, rdma.ErrInvalid) { // its PD and CQs died with it: that answer is as true
		isErr(t, err, rdma.ErrClosed, "CreateQP after Close")
	}
	if at.Caps&rdma.CapSRQ != 0 {
		_, err = a.dev.CreateSRQ(rdma.SRQInitAttr{PD: a.pd, MaxWR: 1, MaxSGE: 1})
		if !errors.Is(err, rdma.ErrInvalid) { // as for CreateQP
			isErr(t, err, rdma.ErrClosed, "CreateSRQ after Close")
		}
	}
}

// Close tears down every object of the device: its connected QP ends (the
// peer sees the connection end and its work flushed), its listeners close,
// waits on its channels return, and every object reports ErrClosed.
func (s *suite) deviceCloseEndsEverything(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	ab := a.side.buf(64, accAll)
	bb := b.side.buf(64, accAll)
	require.NoError(t, a.qp.PostRecv(recv(1, ab.all())))
	require.NoError(t, b.qp.PostRecv(recv(2, bb.all())))
	l := a.side.listen(0, true, 4)
	idle := a.side.newQP(qpOpts{})
	id, aAddr := l.l.ServiceID(), a.side.addr()

	// A sleeper on the completion channel and one on a CM channel the
	// world does not drain.
	seq := a.side.ch.Seq()
	waited := make(chan struct{})
	go func() {
		a.side.ch.Wait(seq, 3*bound)
		close(waited)
	}()
	cm2, err := a.side.dev.CreateCMChannel()
	require.NoError(t, err)
	got := make(chan error, 1)
	go func() {
		var ev rdma.CMEvent
		got <- cm2.Get(&ev, 3*bound)
	}()
	time.Sleep(20 * time.Millisecond) // let them sleep (or not: either must work)

	require.NoError(t, a.side.close())
	select {
	case <-waited:
	case <-time.After(bound):
		t.Fatal("a Wait on the closed device's completion channel did not return")
	}
	select {
	case err := <-got:
		isErr(t, err, rdma.ErrClosed, "a Get in progress on a CM channel of the closed device")
	case <-time.After(bound):
		t.Fatal("a Get on the closed device's CM channel did not return")
	}
	// The device's own CM channel ends with ErrClosed (after the events
	// it may still hold).
	var ev rdma.CMEvent
	for i := 0; ; i++ {
		err := a.side.cm.Get(&ev, bound)
		if err != nil {
			isErr(t, err, rdma.ErrClosed, "Get on a CM channel of the closed device")
			break
		}
		require.Less(t, i, 100, "the closed device's CM channel keeps giving events")
	}

	isErr(t, a.qp.PostSend(send(3, rdma.SendSignaled, ab.all())), rdma.ErrClosed, "PostSend after Close")
	isErr(t, a.qp.PostRecv(recv(4, ab.all())), rdma.ErrClosed, "PostRecv after Close")
	isErr(t, idle.qp.Connect(b.side.addr(), 1, nil, time.Second), rdma.ErrClosed, "Connect after Close")
	isErr(t, a.qp.Destroy(), rdma.ErrClosed, "QP Destroy after Close")
	isErr(t, a.scq.cq.Arm(false), rdma.ErrClosed, "Arm after Close")
	isErr(t, a.scq.cq.Destroy(), rdma.ErrClosed, "CQ Destroy after Close")
	isErr(t, a.side.ch.Destroy(), rdma.ErrClosed, "CompChannel Destroy after Close")
	isErr(t, a.side.cm.Destroy(), rdma.ErrClosed, "CMChannel Destroy after Close")
	isErr(t, ab.mr.Dereg(), rdma.ErrClosed, "Dereg after Close")
	isErr(t, a.side.pd.Dealloc(), rdma.ErrClosed, "Dealloc after Close")
	isErr(t, l.l.Close(), rdma.ErrClosed, "Listener Close after Close")

	// The peer: its connection ends, its QP is in Error, its receive flushed.
	ev = w.event(b.side, b.ctx)
	if ev.Type != rdma.CMDisconnected && ev.Type != rdma.CMBroken {
		t.Fatalf("the peer of a closed device got %v, want disconnected or broken", ev.Type)
	}
	state(t, b, rdma.QPSErr)
	checkWC(t, w.take1(b.rcq), 2, rdma.WCWRFlushErr, rdma.WCRecv, b)

	// Nobody listens on the closed device's service id any more.
	c := b.side.newQP(qpOpts{})
	require.NoError(t, c.qp.Connect(aAddr, id, nil, bound))
	w.expectEvent(c, rdma.CMRefused)
}

var memoryTests = []test{
	{"PDAllocDealloc", (*suite).memoryPD},
	{"MRRegDereg", (*suite).memoryMR},
	{"MRInvalid", (*suite).memoryMRInvalid},
}

// A PD is busy while an MR, a QP or an SRQ uses it.
func (s *suite) memoryPD(t *testing.T) {
	w := s.world(t)
	a := w.open()
	pd, err := a.dev.AllocPD()
	require.NoError(t, err)
	pd2, err := a.dev.AllocPD()
	require.NoError(t, err)
	require.NoError(t, pd2.Dealloc())
	isErr(t, pd2.Dealloc(), rdma.ErrClosed, "second Dealloc")

	m := w.mem(4096)
	mr, err := pd.RegMR(addrOf(m), 4096, accAll)
	require.NoError(t, err)
	isErr(t, pd.Dealloc(), rdma.ErrBusy, "Dealloc with an MR")
	require.NoError(t, mr.Dereg())

	c := a.newQP(qpOpts{pd: pd})
	isErr(t, pd.Dealloc(), rdma.ErrBusy, "Dealloc with a QP")
	require.NoError(t, c.qp.Destroy())

	if a.attr.Caps&rdma.CapSRQ != 0 {
		srq, err := a.dev.CreateSRQ(rdma.SRQInitAttr{PD: pd, MaxWR: 4, MaxSGE: 1})
		require.NoError(t, err)
		isErr(t, pd.Dealloc(), rdma.ErrBusy, "Dealloc with an SRQ")
		require.NoError(t, srq.Destroy())
	}
	require.NoError(t, pd.Dealloc())
	isErr(t, pd.Dealloc(), rdma.ErrClosed, "second Dealloc")
	_, err = pd.RegMR(addrOf(m), 4096, accAll)
	isErr(t, err, rdma.ErrClosed, "RegMR in a deallocated PD")
}

// Keys are non-zero and distinct; Dereg twice is ErrClosed.
func (s *suite) memoryMR(t *testing.T) {
	w := s.world(t)
	a := w.open()
	m := w.mem(4 * 4096)
	lkeys, rkeys := map[uint32]bool{}, map[uint32]bool{}
	var mrs []rdma.MR
	for i, acc := range []rdma.Access{accAll, 0, rdma.AccessLocalWrite, rdma.AccessRemoteRead, accAll, accAll} {
		// overlapping and identical ranges are allowed, as in verbs
		mr, err := a.pd.RegMR(addrOf(m)+uint64(i%3)*4096, 4096+uint64(i)*100, acc)
		require.NoError(t, err, "RegMR %d", i)
		require.NotZero(t, mr.LKey(), "lkey")
		require.NotZero(t, mr.RKey(), "rkey")
		require.False(t, lkeys[mr.LKey()], "lkey %#x given twice", mr.LKey())
		require.False(t, rkeys[mr.RKey()], "rkey %#x given twice", mr.RKey())
		lkeys[mr.LKey()], rkeys[mr.RKey()] = true, true
		mrs = append(mrs, mr)
	}
	for _, mr := range mrs {
		require.NoError(t, mr.Dereg())
		isErr(t, mr.Dereg(), rdma.ErrClosed, "second Dereg")
	}
}

// Malformed registrations are ErrInvalid; memory that is not mapped (or
// not writable where write access is asked) is ErrFault or accepted.
func (s *suite) memoryMRInvalid(t *testing.T) {
	w := s.world(t)
	a := w.open()
	m := w.mem(4096)
	_, err := a.pd.RegMR(addrOf(m), 0, accAll)
	isErr(t, err, rdma.ErrInvalid, "length 0")
	_, err = a.pd.RegMR(addrOf(m), 4096, rdma.AccessRemoteWrite)
	isErr(t, err, rdma.ErrInvalid, "remote write without local write")
	_, err = a.pd.RegMR(math.MaxUint64-100, 4096, 0)
	isErr(t, err, rdma.ErrInvalid, "a range that wraps")
	if a.attr.MaxMRSize < math.MaxUint64-addrOf(m) {
		_, err = a.pd.RegMR(addrOf(m), a.attr.MaxMRSize+1, 0)
		isErr(t, err, rdma.ErrInvalid, "a range above MaxMRSize")
	}

	gone := w.mem(4096)
	w.unmap(gone)
	mr, err := a.pd.RegMR(addrOf(gone), 4096, rdma.AccessLocalWrite)
	if err == nil {
		require.NoError(t, mr.Dereg())
	} else {
		isErr(t, err, rdma.ErrFault, "registering unmapped memory")
	}
	ro := w.mem(4096)
	require.NoError(t, protectReadOnly(ro))
	mr, err = a.pd.RegMR(addrOf(ro), 4096, rdma.AccessLocalWrite)
	if err == nil {
		require.NoError(t, mr.Dereg())
	} else {
		isErr(t, err, rdma.ErrFault, "registering read-only memory for writing")
	}
	mr, err = a.pd.RegMR(addrOf(ro), 4096, rdma.AccessRemoteRead)
	require.NoError(t, err, "registering read-only memory for reading")
	require.NoError(t, mr.Dereg())
}

var cqTests = []test{
	{"Lifecycle", (*suite).cqLifecycle},
	{"Resize", (*suite).cqResize},
}

// CreateCQ checks its depth; a CQ is busy while a QP uses it; an empty Poll
// returns 0.
func (s *suite) cqLifecycle(t *testing.T) {
	w := s.world(t)
	a := w.open()
	_, err := a.dev.CreateCQ(0, a.ch, 1)
	isErr(t, err, rdma.ErrInvalid, "depth 0")
	if a.attr.MaxCQE < math.MaxInt {
		_, err = a.dev.CreateCQ(a.attr.MaxCQE+1, a.ch, 1)
		isErr(t, err, rdma.ErrInvalid, "depth above MaxCQE")
	}
	var wc [4]rdma.WC
	bare, err := a.dev.CreateCQ(1, nil, 1) // polled only
	require.NoError(t, err)
	require.Equal(t, 0, bare.Poll(wc[:]))
	require.Equal(t, 0, bare.Poll(nil))
	require.NoError(t, bare.Destroy())
	isErr(t, bare.Destroy(), rdma.ErrClosed, "second Destroy")

	scq, rcq := a.newCQ(16), a.newCQ(16)
	require.NoError(t, scq.cq.Arm(false))
	require.NoError(t, scq.cq.Arm(true))
	require.Equal(t, 0, scq.cq.Poll(wc[:]))
	c := a.newQP(qpOpts{scq: scq, rcq: rcq})
	isErr(t, scq.cq.Destroy(), rdma.ErrBusy, "Destroy of a QP's send CQ")
	isErr(t, rcq.cq.Destroy(), rdma.ErrBusy, "Destroy of a QP's receive CQ")
	require.NoError(t, c.qp.Destroy())
	scq.dead, rcq.dead = true, true
	require.NoError(t, scq.cq.Destroy())
	require.NoError(t, rcq.cq.Destroy())
	isErr(t, scq.cq.Arm(false), rdma.ErrClosed, "Arm of a destroyed CQ")
	isErr(t, scq.cq.Destroy(), rdma.ErrClosed, "second Destroy")
}

// Resize keeps the completions a CQ holds (where the backend resizes).
func (s *suite) cqResize(t *testing.T) {
	w := s.world(t)
	a, b := w.pair()
	err := b.rcq.cq.Resize(b.side.defaultDepth())
	if err != nil {
		isErr(t, err, rdma.ErrNotSupported, "Resize")
		t.Skip("the backend does not resize CQs")
	}
	isErr(t, b.rcq.cq.Resize(0), rdma.ErrInvalid, "Resize to 0")
	sb, rb := a.side.buf(64, accAll), b.side.buf(4*64, accAll)
	for i := range 4 {
		require.NoError(t, b.qp.PostRecv(recv(uint64(i), rb.sge(i*64, 64))))
	}
	b.rcq.manual = true // held in the CQ until resized
	for i := range 4 {
		require.NoError(t, a.qp.PostSend(send(uint64(i), rdma.SendSignaled, sb.all())))
	}
	w.take(a.scq, 4)
	var wc [1]rdma.WC
	w.until("the first receive completion", func() bool { return b.rcq.cq.Poll(wc[:]) == 1 })
	checkWC(t, wc[0], 0, rdma.WCSuccess, rdma.WCRecv, b)
	require.NoError(t, b.rcq.cq.Resize(b.side.defaultDepth()/2+8))
	b.rcq.manual = false
	for i, wc := range w.take(b.rcq, 3) {
		checkWC(t, wc, uint64(i+1), rdma.WCSuccess, rdma.WCRecv, b)
	}
}

var channelTests = []test{
	{"SeqWaitWake", (*suite).channelSeqWaitWake},
	{"ArmedCompletionWakes", (*suite).channelArmWakes},
	{"ArmedSolicitedWakes", (*suite).channelArmSolicitedWakes},
	{"CMChannelGet", (*suite).channelCMGet},
	{"CMChannelFd", (*suite).channelCMFd},
}

// returns runs f in a goroutine and fails unless it returns within bound.
func returns(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		f()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(bound):
		t.Fatalf("%s did not return within %v", what, bound)
	}
}

// Wake bumps Seq and ends every Wait on an older Seq, also one that only
// starts after the Wake; a bounded Wait returns by itself.
func (s *suite) channelSeqWaitWake(t *testing.T) {
	w := s.world(t)
	a := w.open()
	ch := a.ch
	require.GreaterOrEqual(t, ch.Fd(), 0)
	s0 := ch.Seq()
	ch.Wake()
	require.NotEqual(t, s0, ch.Seq(), "Seq after Wake")
	returns(t, "Wait on a Seq older than a Wake", func() { ch.Wait(s0, 3*bound) })

	s1 := ch.Seq()
	ch.Wake() // between Seq and Wait: must not be lost
	returns(t, "Wait after a Wake that followed its Seq", func() { ch.Wait(s1, -1) })

	returns(t, "a bounded Wait without a wake", func() {
		require.False(t, ch.Wait(ch.Seq(), 20*time.Millisecond), "interrupted")
	})

	// Every sleeper wakes.
	s2 := ch.Seq()
	done := make(chan struct{}, 3)
	for range 3 {
		go func() {
			ch.Wait(s2, 3*bound)
			done <- struct{}{}
		}()
	}
	time.Sleep(20 * time.Millisecond) // let them sleep (or not: either must work)
	ch.Wake()
	for i := range 3 {
		select {
		case <-done:
		case <-time.After(bound):
			t.Fatalf("sleeper %d of 3 not woken by one Wake", i)
		}
	}

	cq := a.newCQ(4)
	isErr(t, ch.Destroy(), rdma.ErrBusy, "Destroy of a channel a CQ uses")
	cq.dead = true
	require.NoError(t, cq.cq.Destroy())
	require.NoError(t, ch.Destroy())
	isErr(t, ch.Destroy(), rdma.ErrClosed, "second Destroy")
}

// channelWake checks that an armed CQ's completion ends a Wait on its
// channel and, with nobody waiting, makes the channel's fd readable (a Wait
// may consume the fd's readiness: reading it is the backend's business).
func (s *suite) channelWake(t *testing.T, solicited bool) {
	w := s.world(t)
	a, b := w.pair()
	sb, rb := a.side.buf(64, accAll), b.side.buf(64, accAll)
	b.rcq.manual = true
	ch := b.side.ch
	fd := ch.Fd() // taken first, as a consumer integrating it with poll(2) does
	require.GreaterOrEqual(t, fd, 0)
	fl := rdma.SendSignaled
	if solicited {
		fl |= rdma.SendSolicited
	}
	for i := range 2 {
		id := uint64(i + 1)
		require.NoError(t, b.qp.PostRecv(recv(id, rb.all())))
		seq := ch.Seq()
		require.NoError(t, b.rcq.cq.Arm(solicited))
		if i == 0 {
			woke := make(chan struct{})
			go func() {
				ch.Wait(seq, 3*bound)
				close(woke)
			}()
			require.NoError(t, a.qp.PostSend(send(id, fl, sb.all())))
			w.until("the armed CQ's completion to wake a Wait on its channel", func() bool {
				select {
				case <-woke:
					return true
				default:
					return false
				}
			})
		} else {
			// Nothing else runs meanwhile: a backend may reset the fd's
			// readiness in Seq or Wait.
			require.NoError(t, a.qp.PostSend(send(id, fl, sb.all())))
			require.True(t, pollReadable(t, fd), "channel fd after a notification")
		}
		require.NotEqual(t, seq, ch.Seq(), "Seq after the armed completion")
		var wc [1]rdma.WC
		w.until("the completion", func() bool { return b.rcq.cq.Poll(wc[:]) == 1 })
		checkWC(t, wc[0], id, rdma.WCSuccess, rdma.WCRecv, b)
	}
}

func (s *suite) channelArmWakes(t *testing.T)          { s.channelWake(t, false) }
func (s *suite) channelArmSolicitedWakes(t *testing.T) { s.channelWake(t, true) }

// Get is bounded; Destroy ends a Get in progress with ErrClosed.
func (s *suite) channelCMGet(t *testing.T) {
	w := s.world(t)
	a := w.open()
	cm, err := a.dev.CreateCMChannel()
	require.NoError(t, err)
	require.GreaterOrEqual(t, cm.Fd(), 0)
	var ev rdma.CMEvent
	isErr(t, cm.Get(&ev, 0), rdma.ErrTimeout, "Get(0) on an empty channel")
	isErr(t, cm.Get(&ev, 20*time.Millisecond), rdma.ErrTimeout, "bounded Get on an empty channel")
	got := make(chan error, 1)
	go func() {
		var ev rdma.CMEvent
		got <- cm.Get(&ev, 3*bound)
	}()
	// Give the Get time to start sleeping (if it has not, this is the test
	// of a Get after Destroy, which passes as well).
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, cm.Destroy())
	select {
	case err := <-got:
		isErr(t, err, rdma.ErrClosed, "a Get in progress when the channel is destroyed")
	case <-time.After(bound):
		t.Fatal("Destroy did not end a Get in progress")
	}
	isErr(t, cm.Get(&ev, 0), rdma.ErrClosed, "Get after Destroy")
	isErr(t, cm.Destroy(), rdma.ErrClosed, "second Destroy")
}

// A CM channel's fd polls readable while an event is queued.
func (s *suite) channelCMFd(t *testing.T) {
	w := s.world(t)
	a, b := w.open().newQP(qpOpts{}), w.open()
	cm, err := b.dev.CreateCMChannel()
	require.NoError(t, err)
	l, err := b.dev.Listen(cm, 0, true, 4, 77)
	require.NoError(t, err)
	defer l.Close()
	require.NoError(t, a.qp.Connect(b.addr(), l.ServiceID(), nil, bound))
	require.True(t, pollReadable(t, cm.Fd()), "CM channel fd with a request queued")
	var ev rdma.CMEvent
	require.NoError(t, cm.Get(&ev, bound))
	require.Equal(t, rdma.CMConnectRequest, ev.Type)
	require.Equal(t, uint64(77), ev.Context)
	require.NoError(t, ev.Request.Reject(rdma.RejectConsumer, nil))
	w.expectEvent(a, rdma.CMRejected)
}

var qpTests = []test{
	{"Create", (*suite).qpCreate},
	{"CreateInvalid", (*suite).qpCreateInvalid},
}

// CreateQP grants at least what was asked, defaults for zeros, and starts
// in Init; Destroy twice is ErrClosed.
func (s *suite) qpCreate(t *testing.T) {
	w := s.world(t)
	a := w.open()
	want := rdma.QPCap{MaxSendWR: min(16, a.attr.MaxQPWR), MaxRecvWR: min(16, a.attr.MaxQPWR),
		MaxSendSGE: min(2, a.attr.MaxSGE), MaxRecvSGE: min(2, a.attr.MaxSGE), MaxInlineData: min(64, a.attr.MaxInline)}
	c := a.newQP(qpOpts{cap: want})
	got := c.qp.Cap()
	require.GreaterOrEqual(t, got.MaxSendWR, want.MaxSendWR)
	require.GreaterOrEqual(t, got.MaxRecvWR, want.MaxRecvWR)
	require.GreaterOrEqual(t, got.MaxSendSGE, want.MaxSendSGE)
	require.GreaterOrEqual(t, got.MaxRecvSGE, want.MaxRecvSGE)
	require.GreaterOrEqual(t, got.MaxInlineData, want.MaxInlineData)
	state(t, c, rdma.QPSInit)
	require.False(t, c.qp.RemoteAddr().IsValid(), "remote address of an unconnected QP")

	scq, rcq := a.newCQ(4), a.newCQ(4)
	qp, err := a.dev.CreateQP(rdma.QPInitAttr{PD: a.pd, SendCQ: scq.cq, RecvCQ: rcq.cq, CM: a.cm, Context: 9})
	require.NoError(t, err, "CreateQP with default capacities")
	d := qp.Cap()
	require.Positive(t, d.MaxSendWR)
	require.Positive(t, d.MaxRecvWR)
	require.Positive(t, d.MaxSendSGE)
	require.Positive(t, d.MaxRecvSGE)
	require.NotEqual(t, c.qp.Num(), qp.Num(), "QP numbers")

	require.NoError(t, qp.Destroy())
	isErr(t, qp.Destroy(), rdma.ErrClosed, "second Destroy")
	isErr(t, qp.PostRecv(recv(1)), rdma.ErrClosed, "PostRecv after Destroy")
	isErr(t, qp.PostSend(send(1, 0)), rdma.ErrClosed, "PostSend after Destroy")
}

// Capacities above the device's, missing objects and objects of another
// device are ErrInvalid.
func (s *suite) qpCreateInvalid(t *testing.T) {
	w := s.world(t)
	a, b := w.open(), w.open()
	scq, rcq, other := a.newCQ(4), a.newCQ(4), b.newCQ(4)
	ok := rdma.QPInitAttr{PD: a.pd, SendCQ: scq.cq, RecvCQ: rcq.cq, CM: a.cm, Cap: a.defaultCap()}
	bad := map[string]func(*rdma.QPInitAttr){
		"no PD":               func(q *rdma.QPInitAttr) { q.PD = nil },
		"no send CQ":          func(q *rdma.QPInitAttr) { q.SendCQ = nil },
		"no receive CQ":       func(q *rdma.QPInitAttr) { q.RecvCQ = nil },
		"another device's CQ": func(q *rdma.QPInitAttr) { q.RecvCQ = other.cq },
		"another device's PD": func(q *rdma.QPInitAttr) { q.PD = b.pd },
		"send SGEs":           func(q *rdma.QPInitAttr) { q.Cap.MaxSendSGE = a.attr.MaxSGE + 1 },
		"receive SGEs":        func(q *rdma.QPInitAttr) { q.Cap.MaxRecvSGE = a.attr.MaxSGE + 1 },
		"inline data":         func(q *rdma.QPInitAttr) { q.Cap.MaxInlineData = a.attr.MaxInline + 1 },
	}
	if a.attr.MaxQPWR < math.MaxInt {
		bad["send WRs"] = func(q *rdma.QPInitAttr) { q.Cap.MaxSendWR = a.attr.MaxQPWR + 1 }
		bad["receive WRs"] = func(q *rdma.QPInitAttr) { q.Cap.MaxRecvWR = a.attr.MaxQPWR + 1 }
	}
	for name, f := range bad {
		attr := ok
		f(&attr)
		_, err := a.dev.CreateQP(attr)
		isErr(t, err, rdma.ErrInvalid, "CreateQP with %s", name)
	}
	qp, err := a.dev.CreateQP(ok)
	require.NoError(t, err)
	require.NoError(t, qp.Destroy())
}
