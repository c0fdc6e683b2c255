// Device helpers: the event thread's sleep, the queue of QPs Poll found in
// error, and port queries without the inline wrapper's library fallback.

#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "shim.h"

struct gd_dev *gd_dev_new(void)
{
	struct gd_dev *d = calloc(1, sizeof *d);

	if (!d)
		return NULL;
	d->refs = 1;
	d->kick = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->kick < 0) {
		free(d);
		return NULL;
	}
	pthread_mutex_init(&d->lock, NULL);
	return d;
}

void gd_dev_put(struct gd_dev *d)
{
	if (__atomic_sub_fetch(&d->refs, 1, __ATOMIC_SEQ_CST) != 0)
		return;
	close(d->kick);
	free(d);
}

int gd_dev_wait(struct gd_dev *d, int async_fd, int cm_fd, int ms)
{
	struct pollfd fds[3] = {
		{.fd = async_fd, .events = POLLIN},
		{.fd = cm_fd, .events = POLLIN},
		{.fd = d->kick, .events = POLLIN},
	};
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
	sigset_t mask;
	int r, bits = 0;
	uint64_t v;

	pthread_sigmask(SIG_BLOCK, NULL, &mask);
	sigaddset(&mask, SIGURG);
	r = ppoll(fds, 3, ms >= 0 ? &ts : NULL, &mask);
	if (r <= 0)
		return 0;
	if (fds[0].revents)
		bits |= 1;
	if (fds[1].revents)
		bits |= 2;
	if (fds[2].revents) {
		bits |= 4;
		while (read(d->kick, &v, sizeof v) > 0) {
		}
	}
	return bits;
}

void gd_dev_kick(struct gd_dev *d)
{
	uint64_t one = 1;

	if (write(d->kick, &one, sizeof one) < 0) {
		/* still readable */
	}
}

uint64_t gd_dev_errq(struct gd_dev *d)
{
	struct gd_qp *q;
	uint64_t h;

	pthread_mutex_lock(&d->lock);
	q = d->errq;
	if (q)
		d->errq = q->errnext;
	pthread_mutex_unlock(&d->lock);
	if (!q)
		return 0;
	h = q->handle;
	// Notes added from now on queue the QP again.
	__atomic_store_n(&q->queued, 0, __ATOMIC_SEQ_CST);
	gd_qp_put(q);
	return h;
}

int gd_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *pa)
{
	struct verbs_context *vctx = verbs_get_ctx_op(ctx, query_port);

	memset(pa, 0, sizeof *pa);
	if (vctx)
		return vctx->query_port(ctx, port, pa, sizeof *pa);
	return gd.query_port(ctx, port, (struct _compat_ibv_port_attr *)pa);
}

int gd_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -1;
	return 0;
}
