// Completion channels: the contract's generation count over an
// ibv_comp_channel that many threads wait on at once, for different CQs.
//
// One waiter at a time (the poller) sleeps in ppoll on the channel's fd; the
// others sleep on a futex word (gen). Whoever reads CQ events acks them and
// bumps seq once for all, then wakes every sleeper. No notification is
// lost:
//   - a CQ event stays in the fd until a poller reads it, and a waiter whose
//     seq is current either becomes the poller (and then sees the fd
//     readable) or sleeps on gen while a poller exists;
//   - a poller leaving (timeout, signal) bumps gen, so sleepers wake and one
//     of them takes over; a sleeper reads gen before it tries to become the
//     poller, so a departure between the two makes its futex wait return at
//     once;
//   - Seq reads the channel's fd itself when no poller does, so that the
//     count reflects every notification delivered, waited for or not;
//   - the Fd (an epoll over the channel's fd and the note eventfd) polls
//     readable after a notification until the next Seq;
//   - Wake bumps seq before it looks for a poller to kick (kick eventfd),
//     and a new poller sets poller before it reads seq one last time, so
//     either Wake sees the poller or the poller sees the new seq.
// All atomics are sequentially consistent: the arguments above are Dekker
// pairs (store, then load of the other side's word).
//
// SIGURG, the Go runtime's preemption signal, is blocked during both
// sleeps, so that only a consumer's signal handler makes a wait report
// EINTR.
//
// The futex on gen is a shared one (no FUTEX_PRIVATE_FLAG), like the
// software provider's waits, although gen is in private memory: the Go
// runtime and libc sleep on private futexes only, so a thread seen in a
// shared futex wait (/proc/PID/task/TID/syscall) is in a DAT wait and not
// on some lock on its way there, which is how the C suite knows a waiter is
// blocked before it acts (ctest/pages.h). The kernel keys it by the address
// in this process, as a private one; it costs a page lookup per call.

#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

#define LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)

struct gd_ch *gd_ch_new(struct ibv_context *ctx, char *msg, int n)
{
	struct gd_ch *ch = calloc(1, sizeof *ch);
	struct epoll_event ev;

	if (!ch) {
		snprintf(msg, n, "out of memory");
		return NULL;
	}
	ch->kick = ch->note = ch->ep = -1;
	ch->cc = gd.create_comp_channel(ctx);
	if (!ch->cc) {
		snprintf(msg, n, "ibv_create_comp_channel: %s", strerror(errno));
		goto fail;
	}
	if (gd_set_nonblock(ch->cc->fd)) {
		snprintf(msg, n, "completion channel fd: %s", strerror(errno));
		goto fail;
	}
	ch->kick = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ch->note = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ch->ep = epoll_create1(EPOLL_CLOEXEC);
	if (ch->kick < 0 || ch->note < 0 || ch->ep < 0) {
		snprintf(msg, n, "eventfd/epoll: %s", strerror(errno));
		goto fail;
	}
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	if (epoll_ctl(ch->ep, EPOLL_CTL_ADD, ch->cc->fd, &ev) || epoll_ctl(ch->ep, EPOLL_CTL_ADD, ch->note, &ev)) {
		snprintf(msg, n, "epoll_ctl: %s", strerror(errno));
		goto fail;
	}
	return ch;
fail:
	if (ch->cc)
		gd.destroy_comp_channel(ch->cc);
	if (ch->kick >= 0)
		close(ch->kick);
	if (ch->note >= 0)
		close(ch->note);
	if (ch->ep >= 0)
		close(ch->ep);
	free(ch);
	return NULL;
}

static void wake_sleepers(struct gd_ch *ch)
{
	ADD(&ch->gen, 1);
	if (LOAD(&ch->sleepers))
		syscall(SYS_futex, &ch->gen, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void kick(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof one) < 0) {
		/* a full counter is still readable: nothing lost */
	}
}

static void drain_fd(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof v) > 0) {
	}
}

/* drain reads and acks every pending CQ event; one bump covers them all.
 * A waiter's drain sets the Fd's note (it consumed the fd's readiness on
 * behalf of whoever polls the Fd); Seq's does not (its caller is about to
 * look at its CQs). */
static void drain(struct gd_ch *ch, int note)
{
	struct ibv_cq *cq;
	void *ctx;
	int got = 0;

	while (gd.get_cq_event(ch->cc, &cq, &ctx) == 0) {
		gd.ack_cq_events(cq, 1);
		got++;
	}
	if (!got)
		return;
	ADD(&ch->seq, 1);
	if (note && __atomic_exchange_n(&ch->noted, 1, __ATOMIC_SEQ_CST) == 0)
		kick(ch->note);
	wake_sleepers(ch);
}

void gd_ch_reset_note(struct gd_ch *ch)
{
	if (__atomic_exchange_n(&ch->noted, 0, __ATOMIC_SEQ_CST))
		drain_fd(ch->note);
}

uint32_t gd_ch_seq(struct gd_ch *ch)
{
	// The count must reflect every notification already delivered, also
	// when nobody waits: read the channel unless a poller is on it (it
	// reads at once). The inside count keeps Destroy from freeing the
	// channel meanwhile.
	ADD(&ch->inside, 1);
	if (!LOAD(&ch->closed)) {
		gd_ch_reset_note(ch);
		if (!LOAD(&ch->poller))
			drain(ch, 0);
	}
	ADD(&ch->inside, -1);
	return LOAD(&ch->seq);
}

void gd_ch_wake(struct gd_ch *ch)
{
	ADD(&ch->seq, 1);
	wake_sleepers(ch);
	if (LOAD(&ch->poller))
		kick(ch->kick);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void block_preempt(sigset_t *with, sigset_t *old)
{
	sigemptyset(with);
	pthread_sigmask(SIG_BLOCK, NULL, old);
	*with = *old;
	sigaddset(with, SIGURG);
}

/* poll_once is the poller's sleep; it returns 1 when a signal handler ran. */
static int poll_once(struct gd_ch *ch, int64_t ns)
{
	struct pollfd fds[2] = {{.fd = ch->cc->fd, .events = POLLIN}, {.fd = ch->kick, .events = POLLIN}};
	struct timespec ts, *tsp = NULL;
	sigset_t mask, old;
	int r;

	if (ns >= 0) {
		ts.tv_sec = ns / 1000000000;
		ts.tv_nsec = ns % 1000000000;
		tsp = &ts;
	}
	block_preempt(&mask, &old);
	r = ppoll(fds, 2, tsp, &mask);
	if (r < 0)
		return errno == EINTR;
	if (fds[1].revents & POLLIN)
		drain_fd(ch->kick);
	if (fds[0].revents)
		drain(ch, 1);
	return 0;
}

/* sleep_once is a sleeper's futex wait on gen; 1 when a signal handler ran. */
static int sleep_once(struct gd_ch *ch, uint32_t gen, int64_t ns)
{
	struct timespec ts, *tsp = NULL;
	sigset_t mask, old;
	long r;

	if (ns >= 0) {
		ts.tv_sec = ns / 1000000000;
		ts.tv_nsec = ns % 1000000000;
		tsp = &ts;
	}
	block_preempt(&mask, &old);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	r = syscall(SYS_futex, &ch->gen, FUTEX_WAIT, gen, tsp, NULL, 0);
	int intr = r < 0 && errno == EINTR;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return intr;
}

int gd_ch_wait(struct gd_ch *ch, uint32_t seq, int64_t ns)
{
	int64_t deadline = ns >= 0 ? now_ns() + ns : 0, left = -1;
	int intr = 0;

	ADD(&ch->inside, 1);
	for (;;) {
		uint32_t gen = LOAD(&ch->gen), zero = 0;

		if (LOAD(&ch->seq) != seq || LOAD(&ch->closed))
			break;
		if (ns >= 0) {
			left = deadline - now_ns();
			if (left <= 0)
				break;
		}
		if (__atomic_compare_exchange_n(&ch->poller, &zero, 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			if (LOAD(&ch->seq) == seq && !LOAD(&ch->closed))
				intr = poll_once(ch, left);
			STORE(&ch->poller, 0);
			wake_sleepers(ch); /* one of them takes over */
		} else {
			ADD(&ch->sleepers, 1);
			intr = sleep_once(ch, gen, left);
			ADD(&ch->sleepers, -1);
		}
		if (intr)
			break;
	}
	ADD(&ch->inside, -1);
	return intr;
}

void gd_ch_close(struct gd_ch *ch)
{
	STORE(&ch->closed, 1);
	gd_ch_wake(ch);
}

int gd_ch_inside(struct gd_ch *ch)
{
	return LOAD(&ch->inside);
}

int gd_ch_destroy(struct gd_ch *ch)
{
	int ret = gd.destroy_comp_channel(ch->cc);

	if (ret)
		return ret;
	close(ch->kick);
	close(ch->note);
	close(ch->ep);
	return 0;
}

void gd_ch_free(struct gd_ch *ch)
{
	free(ch);
}
