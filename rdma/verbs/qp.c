// Queue pairs: the post calls, their slot rings and the queue-pair state the
// post calls check, so that a post is one C call.

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

static const uint8_t wc_of_wr[GD_WR_COUNT] = {
	[GD_WR_RDMA_WRITE] = GD_WC_RDMA_WRITE,
	[GD_WR_RDMA_WRITE_WITH_IMM] = GD_WC_RDMA_WRITE,
	[GD_WR_SEND] = GD_WC_SEND,
	[GD_WR_SEND_WITH_IMM] = GD_WC_SEND,
	[GD_WR_RDMA_READ] = GD_WC_RDMA_READ,
};

static const enum ibv_wr_opcode ibv_of_wr[GD_WR_COUNT] = {
	[GD_WR_RDMA_WRITE] = IBV_WR_RDMA_WRITE,
	[GD_WR_RDMA_WRITE_WITH_IMM] = IBV_WR_RDMA_WRITE_WITH_IMM,
	[GD_WR_SEND] = IBV_WR_SEND,
	[GD_WR_SEND_WITH_IMM] = IBV_WR_SEND_WITH_IMM,
	[GD_WR_RDMA_READ] = IBV_WR_RDMA_READ,
};

static struct gd_ring *ring_new(struct gd_qp *q, int kind, uint32_t cap)
{
	struct gd_ring *r = calloc(1, sizeof *r + (size_t)cap * sizeof(struct gd_slot));
	uint32_t i;

	if (!r)
		return NULL;
	r->refs = 1;
	r->qp = q;
	r->cap = cap;
	r->kind = kind;
	for (i = 0; i < cap; i++) {
		r->slots[i].owner = r;
		r->slots[i].kind = kind;
		r->slots[i].op = GD_WC_RECV;
	}
	return r;
}

void gd_ring_put(struct gd_ring *r)
{
	if (r && __atomic_sub_fetch(&r->refs, 1, __ATOMIC_SEQ_CST) == 0)
		free(r);
}

struct gd_qp *gd_qp_new(struct gd_dev *d, struct ibv_qp *qp, uint64_t handle, int scap,
			int rcap, int max_ssge, int max_rsge, struct gd_pool *srq)
{
	struct gd_qp *q = calloc(1, sizeof *q);

	if (!q)
		return NULL;
	q->refs = 1;
	q->state = GD_QPS_INIT;
	q->num = qp->qp_num;
	q->handle = handle;
	q->qp = qp;
	q->dev = d;
	q->srq = srq;
	q->max_ssge = max_ssge > 0 ? max_ssge : 1;
	q->max_rsge = max_rsge > 0 ? max_rsge : 1;
	pthread_mutex_init(&q->slock, NULL);
	pthread_mutex_init(&q->rlock, NULL);
	q->sq = ring_new(q, GD_SLOT_SEND, scap > 0 ? scap : 1);
	q->rq = srq ? NULL : ring_new(q, GD_SLOT_RECV, rcap > 0 ? rcap : 1);
	q->ssge = calloc(q->max_ssge, sizeof *q->ssge);
	q->rsge = calloc(q->max_rsge, sizeof *q->rsge);
	if (!q->sq || (!srq && !q->rq) || !q->ssge || !q->rsge) {
		gd_ring_put(q->sq);
		gd_ring_put(q->rq);
		free(q->ssge);
		free(q->rsge);
		free(q);
		return NULL;
	}
	__atomic_add_fetch(&d->refs, 1, __ATOMIC_SEQ_CST);
	return q;
}

void gd_qp_put(struct gd_qp *q)
{
	struct gd_ring *r, *next;

	if (__atomic_sub_fetch(&q->refs, 1, __ATOMIC_SEQ_CST) != 0)
		return;
	for (r = q->retired; r; r = next) {
		next = r->next;
		gd_ring_put(r);
	}
	gd_ring_put(q->sq);
	gd_ring_put(q->rq);
	free(q->ssge);
	free(q->rsge);
	free(q->rsaved);
	free(q->rsaved_n);
	gd_dev_put(q->dev);
	free(q);
}

// drop_saved lets the saved receives go; under rlock.
static void drop_saved(struct gd_qp *q)
{
	free(q->rsaved);
	free(q->rsaved_n);
	q->rsaved = NULL;
	q->rsaved_n = NULL;
}

// save_recv keeps a receive posted in INIT for gd_qp_rebuild; under rlock.
static void save_recv(struct gd_qp *q, uint32_t idx, const struct ibv_sge *sgl, int nsge)
{
	uint32_t cap = q->rq->cap, i = idx % cap;

	if (q->rsaved_lost)
		return;
	if (!q->rsaved) {
		q->rsaved = calloc((size_t)cap * (size_t)q->max_rsge, sizeof *q->rsaved);
		q->rsaved_n = calloc(cap, 1);
		if (!q->rsaved || !q->rsaved_n) {
			drop_saved(q);
			q->rsaved_lost = 1;
			return;
		}
	}
	if (nsge)
		memcpy(&q->rsaved[(size_t)i * q->max_rsge], sgl, (size_t)nsge * sizeof *sgl);
	q->rsaved_n[i] = (uint8_t)nsge;
}

int gd_qp_rebuild(struct gd_qp *q, struct ibv_qp *nqp, int scap, int rcap, int rlimit, int max_ssge,
		  int max_rsge, struct gd_ring **old_rq, struct gd_ring **new_rq)
{
	struct gd_ring *sq = NULL, *rq = NULL, *osq, *orq;
	struct ibv_sge *ssge = NULL, *rsge = NULL, *saved = NULL;
	uint8_t *saved_n = NULL;
	struct ibv_recv_wr w, *bad;
	uint32_t n = 0, k, i;
	int ret = ENOMEM;

	*old_rq = *new_rq = NULL;
	max_ssge = max_ssge > 0 ? max_ssge : 1;
	max_rsge = max_rsge > 0 ? max_rsge : 1;
	scap = scap > 0 ? scap : 1;
	rcap = rcap > 0 ? rcap : 1;
	pthread_mutex_lock(&q->slock);
	pthread_mutex_lock(&q->rlock);
	if (LOAD(&q->dead) || LOAD(&q->state) != GD_QPS_INIT || q->sq->tail != LOAD(&q->sq->head)) {
		ret = EBUSY;
		goto out;
	}
	if (q->rq) {
		n = q->rq->tail - LOAD(&q->rq->head);
		if (n > (uint32_t)rcap || (rlimit > 0 && n > (uint32_t)rlimit)) {
			ret = EINVAL;
			goto out;
		}
		if (n && (q->rsaved_lost || !q->rsaved))
			goto out; /* ENOMEM: the receives cannot be posted again */
		for (k = 0; k < n; k++)
			if (q->rsaved_n[(q->rq->head + k) % q->rq->cap] > max_rsge) {
				ret = EINVAL;
				goto out;
			}
	}
	sq = ring_new(q, GD_SLOT_SEND, (uint32_t)scap);
	ssge = calloc(max_ssge, sizeof *ssge);
	rsge = calloc(max_rsge, sizeof *rsge);
	if (!sq || !ssge || !rsge)
		goto out;
	if (q->rq) {
		rq = ring_new(q, GD_SLOT_RECV, (uint32_t)rcap);
		saved = calloc((size_t)rcap * (size_t)max_rsge, sizeof *saved);
		saved_n = calloc(rcap, 1);
		if (!rq || !saved || !saved_n)
			goto out;
		for (k = 0; k < n; k++) {
			uint32_t from = (q->rq->head + k) % q->rq->cap;
			struct gd_slot *s = &rq->slots[k];
			int nsge = q->rsaved_n[from];

			s->wr_id = q->rq->slots[from].wr_id;
			s->idx = k;
			for (i = 0; i < (uint32_t)nsge; i++)
				saved[(size_t)k * max_rsge + i] = q->rsaved[(size_t)from * q->max_rsge + i];
			saved_n[k] = (uint8_t)nsge;
			memset(&w, 0, sizeof w);
			w.wr_id = (uintptr_t)s;
			w.sg_list = &saved[(size_t)k * max_rsge];
			w.num_sge = nsge;
			if ((ret = ibv_post_recv(nqp, &w, &bad)) != 0) {
				// The caller destroys nqp, which may flush what it
				// holds into its CQ: the ring goes there (dead).
				if (k) {
					STORE(&rq->dead, 1);
					*new_rq = rq;
					rq = NULL;
				}
				goto out;
			}
			rq->tail++;
		}
	}
	osq = q->sq;
	orq = q->rq;
	q->qp = nqp;
	q->num = nqp->qp_num;
	q->sq = sq;
	q->rq = rq;
	free(q->ssge);
	free(q->rsge);
	q->ssge = ssge;
	q->rsge = rsge;
	q->max_ssge = max_ssge;
	q->max_rsge = max_rsge;
	drop_saved(q);
	q->rsaved = saved;
	q->rsaved_n = saved_n;
	q->rsaved_lost = 0;
	// In INIT nothing completes, but a device may flush the receives of
	// the old QP into its CQ when it is destroyed (siw does): the old
	// receive ring, if it holds any, stops delivering and goes to the
	// caller, to bury in that CQ once the old QP is gone. The send ring
	// is empty.
	gd_ring_put(osq);
	if (orq && orq->tail != LOAD(&orq->head)) {
		STORE(&orq->dead, 1);
		*old_rq = orq;
	} else {
		gd_ring_put(orq);
	}
	sq = rq = NULL;
	ssge = rsge = saved = NULL;
	saved_n = NULL;
	ret = 0;
out:
	pthread_mutex_unlock(&q->rlock);
	pthread_mutex_unlock(&q->slock);
	gd_ring_put(sq);
	gd_ring_put(rq);
	free(ssge);
	free(rsge);
	free(saved);
	free(saved_n);
	return ret;
}

// post_synth takes a slot for a request posted in Error that the device
// would never complete (siw leaves it in its user-space queue): Poll of c
// completes it as flushed once every request posted before it on the
// queue has completed. Under the queue's lock, with room checked.
static int post_synth(struct gd_ring *r, struct gd_cq *c, uint64_t wr_id, uint8_t op)
{
	struct gd_slot *s = &r->slots[r->tail % r->cap];

	s->wr_id = wr_id;
	s->idx = r->tail;
	s->op = op;
	s->synth = 1;
	STORE(&r->tail, r->tail + 1);
	gd_cq_synth_add(c, r);
	return GD_POSTED_FLUSHED;
}

void gd_qp_set_cqs(struct gd_qp *q, int synth, struct gd_cq *scq, struct gd_cq *rcq)
{
	pthread_mutex_lock(&q->slock);
	pthread_mutex_lock(&q->rlock);
	q->synth = synth;
	q->scqc = scq;
	q->rcqc = rcq;
	pthread_mutex_unlock(&q->rlock);
	pthread_mutex_unlock(&q->slock);
}

int gd_post_send(struct gd_qp *q, uint64_t wr_id, uint64_t raddr, uint32_t rkey, uint32_t imm,
		 int op, int flags, const struct ibv_sge *sgl, int nsge)
{
	struct ibv_send_wr *w = &q->swr, *bad;
	struct gd_ring *r;
	struct gd_slot *s;
	int st, ret;

	if (op < 0 || op >= GD_WR_COUNT || nsge < 0 || nsge > q->max_ssge)
		return EINVAL;
	pthread_mutex_lock(&q->slock);
	if (LOAD(&q->dead)) {
		ret = GD_ECLOSED;
		goto out;
	}
	st = LOAD(&q->state);
	if (st != GD_QPS_RTS && st != GD_QPS_ERR) {
		ret = GD_ESTATE;
		goto out;
	}
	r = q->sq;
	// The last slot is kept for the marker of a graceful disconnect.
	if (r->tail - LOAD(&r->head) >= r->cap - 1) {
		ret = GD_EFULL;
		goto out;
	}
	if (st == GD_QPS_ERR && q->synth) {
		ret = post_synth(r, q->scqc, wr_id, wc_of_wr[op]);
		goto out;
	}
	s = &r->slots[r->tail % r->cap];
	s->wr_id = wr_id;
	s->idx = r->tail;
	s->op = wc_of_wr[op];
	s->synth = 0;
	if (nsge)
		memcpy(q->ssge, sgl, (size_t)nsge * sizeof *sgl);
	memset(w, 0, sizeof *w);
	w->wr_id = (uintptr_t)s;
	w->sg_list = q->ssge;
	w->num_sge = nsge;
	w->opcode = ibv_of_wr[op];
	w->send_flags = ((flags & GD_SF_FENCE) ? IBV_SEND_FENCE : 0) |
			((flags & GD_SF_SIGNALED) ? IBV_SEND_SIGNALED : 0) |
			((flags & GD_SF_SOLICITED) ? IBV_SEND_SOLICITED : 0) |
			((flags & GD_SF_INLINE) ? IBV_SEND_INLINE : 0);
	w->imm_data = htonl(imm);
	w->wr.rdma.remote_addr = raddr;
	w->wr.rdma.rkey = rkey;
	ret = ibv_post_send(q->qp, w, &bad);
	if (ret == 0)
		r->tail++;
	else if (ret == ENOMEM)
		ret = GD_EFULL;
out:
	pthread_mutex_unlock(&q->slock);
	return ret;
}

int gd_post_recv(struct gd_qp *q, uint64_t wr_id, const struct ibv_sge *sgl, int nsge)
{
	struct ibv_recv_wr *w = &q->rwr, *bad;
	struct gd_ring *r;
	struct gd_slot *s;
	int ret, kick = 0;

	if (nsge < 0 || nsge > q->max_rsge)
		return EINVAL;
	pthread_mutex_lock(&q->rlock);
	if (LOAD(&q->dead)) {
		ret = GD_ECLOSED;
		goto out;
	}
	r = q->rq;
	if (!r) {
		ret = GD_ESTATE; /* the QP takes its receives from an SRQ */
		goto out;
	}
	if (r->tail - LOAD(&r->head) >= r->cap) {
		ret = GD_EFULL;
		goto out;
	}
	if (LOAD(&q->state) == GD_QPS_ERR && q->synth) {
		ret = post_synth(r, q->rcqc, wr_id, GD_WC_RECV);
		goto out;
	}
	s = &r->slots[r->tail % r->cap];
	s->wr_id = wr_id;
	s->idx = r->tail;
	s->synth = 0;
	if (nsge)
		memcpy(q->rsge, sgl, (size_t)nsge * sizeof *sgl);
	memset(w, 0, sizeof *w);
	w->wr_id = (uintptr_t)s;
	w->sg_list = q->rsge;
	w->num_sge = nsge;
	ret = ibv_post_recv(q->qp, w, &bad);
	if (ret == 0) {
		int st = LOAD(&q->state); // after the post: see the kick below

		if (st == GD_QPS_INIT)
			save_recv(q, r->tail, sgl, nsge);
		r->tail++;
		kick = st == GD_QPS_ERR;
	} else if (ret == ENOMEM) {
		ret = GD_EFULL;
	}
out:
	pthread_mutex_unlock(&q->rlock);
	// A receive posted to a QP in Error must complete as flushed. Some
	// devices (rxe) flush the receive queue only when the QP enters Error,
	// and a receive posted from user space afterwards would wait forever:
	// entering Error again (allowed from any state) flushes it.
	if (kick)
		gd_modify_state(q->qp, IBV_QPS_ERR);
	return ret;
}

int gd_post_mark(struct gd_qp *q)
{
	struct ibv_send_wr *w = &q->swr, *bad;
	struct gd_ring *r;
	struct gd_slot *s;
	int ret;

	pthread_mutex_lock(&q->slock);
	r = q->sq;
	if (LOAD(&q->dead) || LOAD(&q->state) != GD_QPS_RTS) {
		ret = GD_ESTATE;
		goto out;
	}
	if (r->tail - LOAD(&r->head) >= r->cap) {
		ret = GD_EFULL;
		goto out;
	}
	s = &r->slots[r->tail % r->cap];
	s->wr_id = 0;
	s->idx = r->tail;
	s->op = GD_OP_MARK;
	// A zero-length RDMA write names no memory (the responder checks no
	// key for it) and completes after every request posted before it.
	memset(w, 0, sizeof *w);
	w->wr_id = (uintptr_t)s;
	w->opcode = IBV_WR_RDMA_WRITE;
	w->send_flags = IBV_SEND_SIGNALED;
	ret = ibv_post_send(q->qp, w, &bad);
	if (ret == 0) {
		r->tail++;
		q->drain_to = r->tail;
		STORE(&q->draining, 1);
	}
out:
	pthread_mutex_unlock(&q->slock);
	return ret;
}

void gd_qp_drain(struct gd_qp *q, int on)
{
	pthread_mutex_lock(&q->slock);
	if (on)
		q->drain_to = q->sq->tail;
	STORE(&q->draining, on ? 1 : 0);
	pthread_mutex_unlock(&q->slock);
}

uint32_t gd_qp_take(struct gd_qp *q)
{
	return __atomic_exchange_n(&q->notes, 0, __ATOMIC_SEQ_CST);
}

void gd_qp_set_state(struct gd_qp *q, int st)
{
	STORE(&q->state, st);
	if (st == GD_QPS_INIT)
		return;
	// The saved receives serve gd_qp_rebuild, in INIT only: a QP leaving
	// INIT lets them go rather than keep them for its whole connection
	// (MPI-like programs post receives before they connect thousands of
	// QPs). Receives still posted can no longer be posted again.
	pthread_mutex_lock(&q->rlock);
	drop_saved(q);
	q->rsaved_lost = q->rq && q->rq->tail != LOAD(&q->rq->head);
	pthread_mutex_unlock(&q->rlock);
}

int gd_qp_state(struct gd_qp *q)
{
	return LOAD(&q->state);
}

int gd_qp_dead(struct gd_qp *q)
{
	return LOAD(&q->dead);
}

int gd_qp_kill(struct gd_qp *q, struct gd_cq *scq, struct gd_cq *rcq)
{
	struct gd_ring *r;
	int ret;

	pthread_mutex_lock(&q->slock);
	pthread_mutex_lock(&q->rlock);
	STORE(&q->dead, 1);
	STORE(&q->sq->dead, 1);
	if (q->rq)
		STORE(&q->rq->dead, 1);
	for (r = q->retired; r; r = r->next)
		STORE(&r->dead, 1);
	pthread_mutex_unlock(&q->rlock);
	pthread_mutex_unlock(&q->slock);
	ret = gd.destroy_qp(q->qp);
	// A ring whose every post was accounted for by Poll (head == tail)
	// has nothing left in a CQ: no grave, so that a CQ nobody polls does
	// not keep the rings of every QP ever destroyed on it.
	if (q->sq->tail != LOAD(&q->sq->head))
		gd_cq_bury(scq, q->sq, GD_SLOT_SEND, q->num);
	if (q->rq && q->rq->tail != LOAD(&q->rq->head))
		gd_cq_bury(rcq, q->rq, GD_SLOT_RECV, q->num);
	// The SRQ's receives this QP took may still be in its receive CQ:
	// the grave names the QP so that Poll drops them.
	if (q->srq)
		gd_cq_bury(rcq, q->srq, GD_SLOT_SRQ, q->num);
	return ret;
}

uint32_t gd_qp_sq_outstanding(struct gd_qp *q)
{
	uint32_t n;

	pthread_mutex_lock(&q->slock);
	n = q->sq->tail - LOAD(&q->sq->head);
	pthread_mutex_unlock(&q->slock);
	return n;
}

int gd_qp_retire(struct gd_qp *q, struct gd_ring **old_sq, struct gd_ring **old_rq)
{
	struct gd_ring *sq, *rq = NULL;

	sq = ring_new(q, GD_SLOT_SEND, q->sq->cap);
	if (!sq)
		return ENOMEM;
	if (q->rq) {
		rq = ring_new(q, GD_SLOT_RECV, q->rq->cap);
		if (!rq) {
			gd_ring_put(sq);
			return ENOMEM;
		}
	}
	pthread_mutex_lock(&q->slock);
	pthread_mutex_lock(&q->rlock);
	*old_sq = q->sq;
	*old_rq = q->rq;
	q->sq->next = q->retired;
	q->retired = q->sq;
	if (q->rq) {
		q->rq->next = q->retired;
		q->retired = q->rq;
	}
	// Retired rings still deliver the flushes they hold, but a completion
	// in error there no longer concerns the QP's new connection.
	__atomic_store_n(&q->sq->qp, NULL, __ATOMIC_SEQ_CST);
	if (q->rq)
		__atomic_store_n(&q->rq->qp, NULL, __ATOMIC_SEQ_CST);
	q->sq = sq;
	q->rq = rq;
	q->rsaved_lost = 0; /* fresh rings: nothing posted that was not saved */
	pthread_mutex_unlock(&q->rlock);
	pthread_mutex_unlock(&q->slock);
	return 0;
}

int gd_modify_state(struct ibv_qp *qp, enum ibv_qp_state st)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof a);
	a.qp_state = st;
	return gd.modify_qp(qp, &a, IBV_QP_STATE);
}

int gd_query_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (gd.query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

int gd_query_timeouts(struct ibv_qp *qp, int *timeout, int *retry, int *rnr)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (gd.query_qp(qp, &a, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY, &ia))
		return errno;
	*timeout = a.timeout;
	*retry = a.retry_cnt;
	*rnr = a.rnr_retry;
	return 0;
}
