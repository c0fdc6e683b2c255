package soft

// Hostile peers: for each attack of the threat model (DESIGN.md section
// 13), the attacker runs in another process (this test binary re-executed
// with helperEnv "attack-..."), speaks the wire protocol itself where an
// honest device would refuse to send what it sends, and prints what it
// achieved, one line per step; the test is the victim and checks both
// sides.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"godat/rdma"
)

// say prints one line of the attacker's report.
func say(f string, a ...any) { fmt.Printf(f+"\n", a...) }

// runAttack plays the attacker named by args[0]; it never returns.
func runAttack(args []string) {
	switch args[0] {
	case "attack-uid":
		attackUID(args[1:])
	case "attack-trunc":
		attackTrunc(args[1:])
	case "attack-widen":
		attackWiden(args[1:])
	case "attack-ring":
		attackRing(args[1:])
	case "attack-pid":
		attackPid(args[1:])
	case "bystander":
		bystander()
	case "attack-scan":
		attackScan(args[1:])
	case "attack-halfopen":
		attackHalfOpen(args[1:])
	default:
		say("error unknown attack %q", args[0])
	}
	os.Exit(0)
}

func mustU64(s string, base int) uint64 {
	v, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		say("error %v", err)
		os.Exit(1)
	}
	return v
}

// attacker starts this test binary as an attacker process of our uid.
func attacker(t *testing.T, args ...any) (*exec.Cmd, io.Writer, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+fmt.Sprint(args...))
	w, err := cmd.StdinPipe()
	require.NoError(t, err)
	r, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, w, bufio.NewReader(r)
}

// rawShm is an attacker's own shared-memory resources: a device for its
// bell and table, and a dialed CM socket.
func rawShm(svc uint64) (*device, *net.UnixConn) {
	d, err := rdma.Open("soft", rdma.Params{"transport": "shm"}, nil)
	if err != nil {
		say("error %v", err)
		os.Exit(1)
	}
	s, err := dialShmName(sockName(lo, svc))
	if err != nil {
		say("error %v", err)
		os.Exit(1)
	}
	return d.(*device), s
}

// ---- (g) a peer of another uid ----

// attackUID <svc>: a well-formed request with sealed segments, sent
// whatever the listener's uid (an honest device refuses a listener of
// another uid before sending anything); prints whether it was answered.
func attackUID(args []string) {
	svc := mustU64(args[0], 10)
	d, s := rawShm(svc)
	fd, _, err := newSegment("conn", connSegSize, false)
	if err != nil {
		say("error %v", err)
		return
	}
	keys, _ := d.keysReadOnly()
	// The listener may close before the request is written (EPIPE).
	err = writeCM(s, &cmMsg{typ: cmReq, addr: lo, svc: svc, port: 1}, fd, d.bellFd, keys)
	_ = s.SetReadDeadline(time.Now().Add(testWait))
	if err != nil && !errors.Is(err, unix.EPIPE) && !errors.Is(err, unix.ECONNRESET) {
		say("error %v", err)
	} else if m, fds, err := readCM(s); err != nil {
		say("closed unanswered")
	} else {
		closeFds(fds)
		say("answered %d", m.typ)
	}
}

// A process of another uid that speaks the protocol itself is refused by
// a shared-memory listener (SO_PEERCRED) before anything of it is mapped
// or reaches the consumer.
func TestHostileShmOtherUser(t *testing.T) {
	b := newEnd(t, rdma.Params{"transport": "shm"})
	l, err := b.dev.Listen(b.cm, 0, true, 4, 5)
	require.NoError(t, err)
	defer l.Close()
	_, out := helperAs(t, fmt.Sprint("attack-uid ", l.ServiceID()))
	require.Equal(t, "closed unanswered", line(t, out))
	var ev rdma.CMEvent
	require.ErrorIs(t, b.cm.Get(&ev, 50*time.Millisecond), rdma.ErrTimeout, "a request from another user reached the consumer")
}

// ---- (a) a peer truncates the memory it shared ----

// attackTrunc <svc> <sealed 0|1>: sends a request whose connection segment
// is sealed or not and reads the answer; then truncates the segment to
// nothing (under the listener's mapping when it answered) and hints the
// listener to read its ring there, as a peer would to make it fault
// (SIGBUS). Prints the answer and the truncation's outcome.
func attackTrunc(args []string) {
	svc, sealed := mustU64(args[0], 10), args[1] == "1"
	d, s := rawShm(svc)
	var fd int
	var err error
	if sealed {
		var m seg
		fd, m, err = newSegment("evil", connSegSize, false)
		m.unmap()
	} else {
		if fd, err = unix.MemfdCreate("evil", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING); err == nil {
			err = unix.Ftruncate(fd, connSegSize)
		}
	}
	if err != nil {
		say("error %v", err)
		return
	}
	keys, _ := d.keysReadOnly()
	if err := writeCM(s, &cmMsg{typ: cmReq, addr: lo, svc: svc, port: 1}, fd, d.bellFd, keys); err != nil {
		say("error %v", err)
		return
	}
	_ = s.SetReadDeadline(time.Now().Add(testWait))
	m, fds, err := readCM(s)
	truncate := func() {
		if err := unix.Ftruncate(fd, 0); err != nil {
			say("truncate refused")
		} else {
			say("truncate done")
		}
	}
	if err != nil {
		say("closed unanswered")
		truncate()
		return
	}
	defer closeFds(fds)
	say("answered %d", m.typ)
	truncate() // under the listener's mapping now
	_ = writeCM(s, &cmMsg{typ: cmRtu})
	// A hint for the first data slot makes the listener read the ring.
	if bell, err := mapPeer(fds[0], bellSegSize, true); err == nil {
		bellRef{bell}.post(hintOf(m.hint))
	}
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// A peer that truncates its connection segment after sending it: unsealed,
// the listener refuses it before mapping anything (F_GET_SEALS), so no
// access can fault (SIGBUS) and no request reaches the consumer; sealed,
// the kernel refuses the truncation and the connection is an honest one.
func TestHostileShmTruncatedSegment(t *testing.T) {
	b := newEnd(t, rdma.Params{"transport": "shm"})
	l, err := b.dev.Listen(b.cm, 0, true, 4, 5)
	require.NoError(t, err)
	defer l.Close()

	_, _, out := attacker(t, "attack-trunc ", l.ServiceID(), " 0")
	require.Equal(t, "closed unanswered", line(t, out))
	require.Equal(t, "truncate done", line(t, out), "an unsealed memfd can be shrunk: the seal check is the defence")
	var ev rdma.CMEvent
	// The listener closes the socket only after deciding: a request it
	// delivered would be queued already.
	require.ErrorIs(t, b.cm.Get(&ev, 50*time.Millisecond), rdma.ErrTimeout, "a request with an unsealed segment reached the consumer")

	_, in, out := attacker(t, "attack-trunc ", l.ServiceID(), " 1")
	ev = b.event(t)
	require.Equal(t, rdma.CMConnectRequest, ev.Type)
	require.NoError(t, ev.Request.Accept(b.qp, nil))
	require.Equal(t, "answered 2", line(t, out))
	require.Equal(t, "truncate refused", line(t, out))
	require.Equal(t, rdma.CMEstablished, b.event(t).Type)
	var wc [1]rdma.WC
	for i := 0; i < 100; i++ { // drains the hinted ring, intact
		b.rcq.Poll(wc[:])
	}
	require.Equal(t, rdma.QPSRTS, b.qp.State())
	_, _ = io.WriteString(in, "end\n")
}

// ---- (c) a peer widens our registrations ----

// keySlotOf is the offset of key's slot in a table, or -1.
func keySlotOf(m seg, key uint32) int {
	for i := 0; i < keyWindow; i++ {
		if off := keySlotOff(keyHome(key) + i); m.ld32(off+entKey) == key {
			return off
		}
	}
	return -1
}

// attackWiden <svc>: a raw handshake that keeps the listener's table
// descriptor (its ACC's private data names a key); then every way a peer
// has to write through it, each widening the key's region to 2^40 bytes
// where it works. One line per way: "<way> refused" or "<way> wrote".
func attackWiden(args []string) {
	svc := mustU64(args[0], 10)
	d, s := rawShm(svc)
	fd, _, err := newSegment("conn", connSegSize, false)
	if err != nil {
		say("error %v", err)
		return
	}
	keys, _ := d.keysReadOnly()
	if err := writeCM(s, &cmMsg{typ: cmReq, addr: lo, svc: svc, port: 1}, fd, d.bellFd, keys); err != nil {
		say("error %v", err)
		return
	}
	_ = s.SetReadDeadline(time.Now().Add(testWait))
	m, fds, err := readCM(s)
	if err != nil || m.typ != cmAcc || len(m.priv) < 4 {
		say("error no ACC: %v", err)
		return
	}
	key, kfd := binary.LittleEndian.Uint32(m.priv), fds[1]
	widen := func(b []byte) {
		if off := keySlotOf(seg{b: b}, key); off >= 0 {
			seg{b: b}.st64(off+entLen, 1<<40)
		}
	}
	report := func(way string, err error) {
		if err != nil {
			say("%s refused", way)
		} else {
			say("%s wrote", way)
		}
	}
	b, err := unix.Mmap(kfd, 0, keySegSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err == nil {
		widen(b)
	}
	report("mmap-rw", err)
	ro, err := unix.Mmap(kfd, 0, keySegSize, unix.PROT_READ, unix.MAP_SHARED)
	if err == nil {
		if err = unix.Mprotect(ro, unix.PROT_READ|unix.PROT_WRITE); err == nil {
			widen(ro)
		}
	}
	report("mprotect", err)
	// A read-only descriptor reopened read-write through /proc.
	rw, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", kfd), unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err == nil {
		if b, err = unix.Mmap(rw, 0, keySegSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err == nil {
			widen(b)
		}
	}
	report("reopen-mmap", err)
	err = unix.EBADF
	if rw >= 0 {
		var rro []byte
		if rro, err = unix.Mmap(rw, 0, keySegSize, unix.PROT_READ, unix.MAP_SHARED); err == nil {
			if err = unix.Mprotect(rro, unix.PROT_READ|unix.PROT_WRITE); err == nil {
				widen(rro)
			}
		}
	}
	report("reopen-mprotect", err)
	err = unix.EBADF
	if rw >= 0 && ro != nil {
		if off := keySlotOf(seg{b: ro}, key); off >= 0 {
			var big [8]byte
			binary.LittleEndian.PutUint64(big[:], 1<<40)
			_, err = unix.Pwrite(rw, big[:], int64(off+entLen))
		}
	}
	report("reopen-write", err)
	report("truncate", unix.Ftruncate(kfd, 0))
	_, err = unix.FcntlInt(uintptr(kfd), unix.F_ADD_SEALS, unix.F_SEAL_WRITE)
	report("seal", err)
	_ = writeCM(s, &cmMsg{typ: cmRtu})
	say("done")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// A peer gets our registration table read-only: no way it has of writing
// through its descriptor works (mapping it writable, mprotect, reopening
// it read-write through /proc and mapping it writable, or read-only then
// mprotect, write(2), truncating, sealing), and the region keeps its
// registered bounds.
func TestHostileShmWidenRegistration(t *testing.T) {
	b := newEnd(t, rdma.Params{"transport": "shm"})
	buf, mr := b.buf(t, 4096, allAccess)
	l, err := b.dev.Listen(b.cm, 0, true, 4, 5)
	require.NoError(t, err)
	defer l.Close()
	_, in, out := attacker(t, "attack-widen ", l.ServiceID())
	ev := b.event(t)
	require.Equal(t, rdma.CMConnectRequest, ev.Type)
	var priv [4]byte
	binary.LittleEndian.PutUint32(priv[:], mr.RKey())
	require.NoError(t, ev.Request.Accept(b.qp, priv[:]))
	for _, way := range []string{"mmap-rw", "mprotect", "reopen-mmap", "reopen-mprotect", "reopen-write", "truncate", "seal"} {
		require.Equal(t, way+" refused", line(t, out))
	}
	require.Equal(t, "done", line(t, out))
	r, ok := lookupKey(devOf(b).keys.m, mr.RKey())
	require.True(t, ok)
	require.Equal(t, region{access: allAccess, pd: b.pd.(*pd).id, addr: BufAddr(buf), len: 4096}, r, "the registration changed")
	require.Equal(t, rdma.CMEstablished, b.event(t).Type)
	_, _ = io.WriteString(in, "end\n")
}

// ---- (d) bogus slot headers and sequence words ----

// attackRing <svc> <variant>: connects an honest QP, then, holding its own
// QP lock as a sender does, publishes what variant names on the
// connection's rings and notifies the victim; prints the CM event its QP
// gets.
func attackRing(args []string) {
	svc, variant := mustU64(args[0], 10), args[1]
	dv, err := rdma.Open("soft", rdma.Params{"transport": "shm"}, nil)
	if err != nil {
		say("error %v", err)
		return
	}
	pd, _ := dv.AllocPD()
	cm, _ := dv.CreateCMChannel()
	cq, _ := dv.CreateCQ(16, nil, 0)
	q, err := dv.CreateQP(rdma.QPInitAttr{PD: pd, SendCQ: cq, RecvCQ: cq, CM: cm,
		Cap: rdma.QPCap{MaxSendWR: 4, MaxRecvWR: 4, MaxSendSGE: 1, MaxRecvSGE: 1}})
	if err != nil {
		say("error %v", err)
		return
	}
	var ev rdma.CMEvent
	if err := q.Connect(netip.AddrPortFrom(lo, 0), svc, nil, testWait); err != nil || cm.Get(&ev, testWait) != nil || ev.Type != rdma.CMEstablished {
		say("error not established: %v %v", err, ev.Type)
		return
	}
	qq := q.(*qp)
	w := qq.shmw.Load()
	chunk := w.txDir + chunkOff + int(w.txChunk%chunkSlots)*chunkSize
	slot := func(h hdr, nsge int) {
		off := w.tx.slot(w.tx.head)
		putDataSlot(w.mem, off, &h, 0, nsge)
		pos := w.tx.head
		w.tx.publish(false)
		w.notifyPeer(pos, false)
	}
	qq.mu.Lock()
	switch variant {
	case "oversized": // an inline header longer than a slot, with no chunk
		slot(hdr{typ: msgSend, flags: flAckReq, len: eagerMax + 1}, 0)
	case "inline-huge": // an inline length past the segment
		slot(hdr{typ: msgSend, flags: flAckReq, len: 1 << 40}, 0)
	case "huge": // a length past any message
		slot(hdr{typ: msgSend, flags: flAckReq, num: 1, len: 1 << 62}, 0)
	case "nsge": // a rendezvous descriptor count past the chunk
		slot(hdr{typ: msgSend, flags: flAckReq, num: 1, len: 3 * eagerMax}, 1<<31)
	case "sum": // descriptors that do not add up to the length
		putRdvDesc(w.mem, chunk, []rdma.SGE{{Addr: 0x1000, Length: eagerMax + 1}})
		slot(hdr{typ: msgSend, flags: flAckReq, num: 1, len: 3 * eagerMax}, 1)
	case "rdvaddr": // a well-formed descriptor of memory we do not have
		putRdvDesc(w.mem, chunk, []rdma.SGE{{Addr: 0x1000, Length: 2 * eagerMax}})
		slot(hdr{typ: msgSend, flags: flAckReq, num: 1, len: 2 * eagerMax}, 1)
	case "nak": // a NAK carrying success, for a request never sent
		putCtlSlot(w.mem, w.txc.slot(w.txc.head), msgNak, 7, rdma.WCSuccess)
		w.txc.publish(false)
		w.notifyPeer(0, true)
	case "acked": // a verdict count for requests never sent
		w.mem.st64(w.rxDir+dirOffAcked, 5)
		w.notifyPeer(0, true)
	default:
		say("error variant %q", variant)
	}
	qq.mu.Unlock()
	if cm.Get(&ev, testWait) != nil {
		say("no event")
		return
	}
	say("event %v", ev.Type)
}

// waitRecv waits on e's completion channel, as dat_evd_wait does (Seq,
// poll, arm, poll, Wait), for one receive completion.
func waitRecv(t *testing.T, e *end) rdma.WC {
	t.Helper()
	var wc [1]rdma.WC
	deadline := time.Now().Add(testWait)
	for {
		seq := e.ch.Seq()
		if e.rcq.Poll(wc[:]) == 1 {
			return wc[0]
		}
		require.NoError(t, e.rcq.Arm(false))
		if e.rcq.Poll(wc[:]) == 1 {
			return wc[0]
		}
		require.True(t, time.Now().Before(deadline), "the wait did not return")
		e.ch.Wait(seq, time.Until(deadline))
	}
}

// A peer that publishes a malformed slot header or sequence word breaks
// its own connection: the victim's receive is flushed (its wait returns),
// its QP is in Error with CMBroken, nothing panicked, and no lock was left
// held: the QP resets and the device serves a new connection.
func TestHostileShmRing(t *testing.T) {
	for _, variant := range []string{"oversized", "inline-huge", "huge", "nsge", "sum", "rdvaddr", "nak", "acked"} {
		t.Run(variant, func(t *testing.T) {
			b := newEnd(t, rdma.Params{"transport": "shm"})
			rb, rmr := b.buf(t, 4*eagerMax, allAccess)
			require.NoError(t, b.qp.PostRecv(&rdma.RecvWR{WRID: 42, SGL: []rdma.SGE{sge(rb, rmr)}}))
			l, err := b.dev.Listen(b.cm, 0, true, 4, 5)
			require.NoError(t, err)
			defer l.Close()
			_, _, out := attacker(t, "attack-ring ", l.ServiceID(), " ", variant)
			ev := b.event(t)
			require.Equal(t, rdma.CMConnectRequest, ev.Type)
			require.NoError(t, ev.Request.Accept(b.qp, nil))
			require.Equal(t, rdma.CMEstablished, b.event(t).Type)

			wc := waitRecv(t, b)
			require.Equal(t, uint64(42), wc.WRID)
			require.NotEqual(t, rdma.WCSuccess, wc.Status)
			require.Equal(t, rdma.CMBroken, b.event(t).Type)
			require.Equal(t, rdma.QPSErr, b.qp.State())
			require.Equal(t, "event "+rdma.CMBroken.String(), line(t, out))
			require.Equal(t, []byte(nil), nonZero(rb), "the bogus message placed data")

			require.NoError(t, b.qp.Reset())
			c := newEnd(t, rdma.Params{"transport": "shm"})
			b.qp = b.newQP(t, nil)
			connect(t, c, b, nil, nil)
			sendTag(t, c, b, 9)
		})
	}
}

// nonZero is b when it holds a non-zero byte, else nil.
func nonZero(b []byte) []byte {
	for _, x := range b {
		if x != 0 {
			return b
		}
	}
	return nil
}

// ---- (b) confused deputy ----

// The address both the attacker and the bystander map their page at.
const deputyAddr = 0x5a5a_0000_0000

// mapAt maps a page at deputyAddr holding text.
func mapAt(text string) error {
	_, _, e := unix.Syscall6(unix.SYS_MMAP, deputyAddr, 4096, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_FIXED_NOREPLACE, ^uintptr(0), 0)
	if e != 0 {
		return e
	}
	copy(userBytes(deputyAddr, 4096), text)
	return nil
}

// bystander: a third process with a secret at deputyAddr; prints its pid.
func bystander() {
	if err := mapAt("secret!!"); err != nil {
		say("error %v", err)
		return
	}
	say("pid %d", os.Getpid())
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// attackPid <svc> <bystander pid>: registers its own page at deputyAddr
// for remote read and connects with private data that claims to be the
// bystander (its pid) and offers the page's key; every field of the
// request an honest device fills from its own state is the victim's
// business, so the claim can only travel in the private data.
func attackPid(args []string) {
	svc, victimOf := mustU64(args[0], 10), mustU64(args[1], 10)
	if err := mapAt("attacker"); err != nil {
		say("error %v", err)
		return
	}
	dv, err := rdma.Open("soft", rdma.Params{"transport": "shm"}, nil)
	if err != nil {
		say("error %v", err)
		return
	}
	pd, _ := dv.AllocPD()
	mr, err := pd.RegMR(deputyAddr, 4096, rdma.AccessRemoteRead|rdma.AccessLocalWrite)
	if err != nil {
		say("error %v", err)
		return
	}
	cm, _ := dv.CreateCMChannel()
	cq, _ := dv.CreateCQ(16, nil, 0)
	q, _ := dv.CreateQP(rdma.QPInitAttr{PD: pd, SendCQ: cq, RecvCQ: cq, CM: cm})
	var priv [12]byte
	binary.LittleEndian.PutUint32(priv[0:], mr.RKey())
	binary.LittleEndian.PutUint64(priv[4:], victimOf)
	var ev rdma.CMEvent
	if err := q.Connect(netip.AddrPortFrom(lo, 0), svc, priv[:], testWait); err != nil || cm.Get(&ev, testWait) != nil {
		say("error %v", err)
		return
	}
	say("event %v", ev.Type)
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// Confused deputy: the peer's pid for process_vm_* is the one the kernel
// gives for the CM socket (SO_PEERCRED), never one a peer claims. The
// attacker claims a bystander's pid and offers a key for an address where
// the bystander keeps a secret; the victim's RDMA read gets the
// attacker's own bytes.
func TestHostileShmConfusedDeputy(t *testing.T) {
	bin, _, bout := attacker(t, "bystander")
	f := strings.Fields(line(t, bout))
	require.Equal(t, []string{"pid", strconv.Itoa(bin.Process.Pid)}, f)

	b := newEnd(t, rdma.Params{"transport": "shm"})
	l, err := b.dev.Listen(b.cm, 0, true, 4, 5)
	require.NoError(t, err)
	defer l.Close()
	cmd, _, out := attacker(t, "attack-pid ", l.ServiceID(), " ", bin.Process.Pid)
	ev := b.event(t)
	require.Equal(t, rdma.CMConnectRequest, ev.Type)
	priv := ev.Request.PrivateData()
	require.Len(t, priv, 12)
	require.Equal(t, uint64(bin.Process.Pid), binary.LittleEndian.Uint64(priv[4:]), "the claim")
	require.NoError(t, ev.Request.Accept(b.qp, nil))
	require.Equal(t, rdma.CMEstablished, b.event(t).Type)
	require.Equal(t, "event "+rdma.CMEstablished.String(), line(t, out))
	require.Equal(t, cmd.Process.Pid, b.qp.(*qp).shmw.Load().peerPid, "the peer's pid is not the socket's")

	rb, rmr := b.buf(t, 8, allAccess)
	require.NoError(t, b.qp.PostSend(&rdma.SendWR{WRID: 1, Opcode: rdma.WRRDMARead, Flags: rdma.SendSignaled,
		SGL: []rdma.SGE{sge(rb, rmr)}, RemoteAddr: deputyAddr, RKey: binary.LittleEndian.Uint32(priv)}))
	wc := pollN(t, b.scq, 1)[0]
	require.Equal(t, rdma.WCSuccess, wc.Status)
	require.Equal(t, "attacker", string(rb), "read another process's memory")
}

// ---- (e) TCP blind key scan ----

// attackScan <port> <svc> <known key> <target addr> <n>: n guesses at
// the key of a region at a known address, a raw connection each (an honest
// device would end its own connection on the first refusal): it sends two
// RDMA writes of "PWNED!!!" at once, the guess and the next one, and counts
// the writes the victim executed (its cumulative ack word) and refused
// (NAK) until the connection ends. Guesses: the 8 keys on either
// side of the known one (sequential keys), then random ones. Prints a
// summary: connections, refusals, writes executed without a refusal, and
// the most writes executed on one connection.
func attackScan(args []string) {
	to := netip.AddrPortFrom(lo, uint16(mustU64(args[0], 10))).String()
	svc, known, addr, n := mustU64(args[1], 10), uint32(mustU64(args[2], 10)), mustU64(args[3], 10), int(mustU64(args[4], 10))
	naks, acks, most := 0, 0, 0
	for i := 0; i < n; i++ {
		guess := rand.Uint32()
		if i < 16 {
			guess = known + uint32(i/2+1)*uint32(1-2*(i&1)) // known+1, known-1, known+2, ...
		}
		c, err := net.Dial("tcp", to)
		if err != nil {
			say("error %v", err)
			return
		}
		_ = c.SetDeadline(time.Now().Add(testWait))
		var b [frameHdr + 8]byte
		(&frame{typ: frReq, flags: tcpVersion, aux: tcpMagic, addr: svc}).put(b[:])
		var f frame
		_, err = c.Write(b[:frameHdr])
		if err == nil {
			_, err = io.ReadFull(c, b[:frameHdr])
			f.get(b[:])
		}
		if err != nil || f.typ != frAcc {
			say("error no ACC: %v %d", err, f.typ)
			return
		}
		_, _ = io.CopyN(io.Discard, c, int64(f.len))
		(&frame{typ: frRtu}).put(b[:])
		_, _ = c.Write(b[:frameHdr])
		copy(b[frameHdr:], "PWNED!!!")
		for k := uint32(0); k < 2; k++ {
			(&frame{typ: msgWrite, aux: guess + k, len: 8, addr: addr}).put(b[:])
			_, _ = c.Write(b[:])
		}
		// The ack word counts the writes executed, refused ones included.
		executed, refused := uint32(0), 0
		for {
			if _, err := io.ReadFull(c, b[:frameHdr]); err != nil {
				break
			}
			f.get(b[:])
			executed = max(executed, f.ack)
			if f.typ == msgNak {
				refused++
			}
			if _, err := io.CopyN(io.Discard, c, int64(min(f.len, 1<<20))); err != nil {
				break
			}
		}
		naks += refused
		acks += int(executed) - refused
		most = max(most, int(executed))
		c.Close()
	}
	say("connections %d refused %d accepted %d most-per-connection %d", n, naks, acks, most)
}

// A blind key scan over TCP: keys are random over 32 bits, so the keys
// next to a known one name nothing, and every bad guess breaks the
// connection (the scan costs a reconnect per guess). The unadvertised
// region is untouched.
func TestHostileTCPKeyScan(t *testing.T) {
	const n = 24
	b := newEnd(t, rdma.Params{"transport": "tcp"})
	_, amr := b.buf(t, 4096, allAccess) // advertised: the attacker knows its key
	tb, _ := b.buf(t, 4096, allAccess)  // the target: its key was never given out
	l, err := b.dev.Listen(b.cm, 0, true, 4, 5)
	require.NoError(t, err)
	defer l.Close()
	_, _, out := attacker(t, "attack-scan ", tcpPortOf(l.ServiceID()), " ", l.ServiceID(), " ", amr.RKey(), " ", BufAddr(tb), " ", n)
	qps := map[rdma.QP]bool{}
	for broken := 0; broken < n; {
		switch ev := b.event(t); ev.Type {
		case rdma.CMConnectRequest:
			q := b.newQP(t, nil)
			qps[q] = true
			require.NoError(t, ev.Request.Accept(q, nil))
		case rdma.CMEstablished:
		case rdma.CMBroken:
			broken++
		default:
			t.Fatalf("event %v", ev.Type)
		}
	}
	require.Len(t, qps, n, "one connection per guess")
	require.Equal(t, fmt.Sprintf("connections %d refused %d accepted 0 most-per-connection 1", n, n), line(t, out))
	require.Equal(t, []byte(nil), nonZero(tb), "the scan wrote the unadvertised region")
}

// Keys are unpredictable: random over the full 32 bits of an RMR context,
// no key one off another.
func TestKeysUnpredictable(t *testing.T) {
	b := newEnd(t, rdma.Params{"transport": "tcp"})
	buf := mapBuf(t, 4096)
	var or uint32
	and := ^uint32(0)
	seen := map[uint32]bool{}
	var prev uint32
	for i := 0; i < 1024; i++ {
		mr, err := b.pd.RegMR(BufAddr(buf), 4096, rdma.AccessRemoteRead)
		require.NoError(t, err)
		k := mr.RKey()
		require.False(t, seen[k+1] || seen[k-1], "a key next to another")
		require.NotEqual(t, prev+1, k)
		seen[k], prev = true, k
		or, and = or|k, and&k
	}
	require.Equal(t, ^uint32(0), or, "a key bit never set")
	require.Zero(t, and, "a key bit always set")
}

// ---- (f) a half-open TCP handshake ----

// attackHalfOpen <port> <svc>: two connections to a TCP listener: one
// silent, one that sends a request, reads the answer and never confirms;
// prints when the victim closes each (bounded by the handshake timeout and
// testWait).
func attackHalfOpen(args []string) {
	to := netip.AddrPortFrom(lo, uint16(mustU64(args[0], 10))).String()
	svc := mustU64(args[1], 10)
	silent, err := net.Dial("tcp", to)
	if err != nil {
		say("error %v", err)
		return
	}
	half, err := net.Dial("tcp", to)
	if err != nil {
		say("error %v", err)
		return
	}
	var req [frameHdr]byte
	(&frame{typ: frReq, flags: tcpVersion, aux: tcpMagic, addr: svc}).put(req[:])
	if _, err := half.Write(req[:]); err != nil {
		say("error %v", err)
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wait := func(name string, c net.Conn, skip int) {
		defer wg.Done()
		_ = c.SetReadDeadline(time.Now().Add(cmTimeout + testWait))
		_, _ = io.ReadFull(c, make([]byte, skip))
		_, err := io.Copy(io.Discard, c)
		mu.Lock()
		defer mu.Unlock()
		if isTimeout(err) {
			say("%s kept", name)
		} else {
			say("%s closed", name)
		}
	}
	wg.Add(2)
	go wait("silent", silent, 0)
	go wait("half", half, frameHdr)
	wg.Wait()
}

// Half-open handshakes are bounded (cmTimeout, 5 s, per passive half): a
// connection that sends no request is closed, and an accepted request
// whose confirmation never comes fails its QP with CMAcceptError and
// closes the connection.
func TestTCPHalfOpenHandshake(t *testing.T) {
	b := newEnd(t, rdma.Params{"transport": "tcp"})
	l, err := b.dev.Listen(b.cm, 0, true, 4, 5)
	require.NoError(t, err)
	defer l.Close()
	_, _, out := attacker(t, "attack-halfopen ", tcpPortOf(l.ServiceID()), " ", l.ServiceID())
	ev := b.event(t)
	require.Equal(t, rdma.CMConnectRequest, ev.Type)
	require.NoError(t, ev.Request.Accept(b.qp, nil))
	var got rdma.CMEvent
	require.NoError(t, b.cm.Get(&got, cmTimeout+testWait))
	require.Equal(t, rdma.CMAcceptError, got.Type)
	require.Equal(t, rdma.QPSErr, b.qp.State())
	lines := []string{line(t, out), line(t, out)}
	require.ElementsMatch(t, []string{"silent closed", "half closed"}, lines)
}
