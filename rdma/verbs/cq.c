// Completion queues: Poll translates the device's completions into the
// contract's (the consumer's wr_id and opcode from the slot), frees the
// slots, and drops what belongs to destroyed queue pairs.

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

#define LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

/* Freed gd_cqs, for the next gd_cq_new (shim.h: their memory stays). */
static pthread_mutex_t cq_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gd_cq **cq_pool;
static size_t cq_pool_n, cq_pool_cap;

struct gd_cq *gd_cq_new(struct ibv_cq *cq)
{
	struct gd_cq *c = NULL;

	pthread_mutex_lock(&cq_pool_lock);
	if (cq_pool_n)
		c = cq_pool[--cq_pool_n];
	pthread_mutex_unlock(&cq_pool_lock);
	if (!c) {
		c = calloc(1, sizeof *c);
		if (!c)
			return NULL;
		pthread_mutex_init(&c->lock, NULL);
	}
	/* A stale probe may hold the lock a moment: it finds the old gen. */
	pthread_mutex_lock(&c->lock);
	c->cq = cq;
	c->dead = 0;
	pthread_mutex_unlock(&c->lock);
	return c;
}

void gd_cq_free(struct gd_cq *c)
{
	pthread_mutex_lock(&c->lock);
	free(c->synth);
	free(c->graves);
	free(c->stash);
	c->synth = NULL;
	c->nsynth = c->capsynth = 0;
	c->graves = NULL;
	c->ngraves = c->capgraves = 0;
	c->stash = NULL;
	c->sh = c->sn = c->scap = 0;
	c->cq = NULL;
	c->dead = 1;
	__atomic_store_n(&c->gen, c->gen + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&c->lock);

	pthread_mutex_lock(&cq_pool_lock);
	if (cq_pool_n == cq_pool_cap) {
		size_t n = cq_pool_cap ? 2 * cq_pool_cap : 16;
		struct gd_cq **a = realloc(cq_pool, n * sizeof *a);

		if (a) {
			cq_pool = a;
			cq_pool_cap = n;
		}
	}
	/* Without room it is dropped, never freed: a probe may still come. */
	if (cq_pool_n < cq_pool_cap)
		cq_pool[cq_pool_n++] = c;
	pthread_mutex_unlock(&cq_pool_lock);
}

static void owner_put(void *owner, int kind)
{
	if (kind == GD_SLOT_SRQ)
		gd_pool_put(owner);
	else
		gd_ring_put(owner);
}

static void owner_get(void *owner, int kind)
{
	uint32_t *refs = kind == GD_SLOT_SRQ ? &((struct gd_pool *)owner)->refs : &((struct gd_ring *)owner)->refs;

	__atomic_add_fetch(refs, 1, __ATOMIC_SEQ_CST);
}

static void release_graves(struct gd_cq *c)
{
	int i;

	for (i = 0; i < c->ngraves; i++)
		owner_put(c->graves[i].owner, c->graves[i].kind);
	c->ngraves = 0;
}

int gd_cq_bury(struct gd_cq *c, void *owner, int kind, uint32_t qpn)
{
	int ret = 0;

	pthread_mutex_lock(&c->lock);
	if (c->dead)
		goto out; /* no completion outlives its CQ */
	if (c->ngraves == c->capgraves) {
		int n = c->capgraves ? 2 * c->capgraves : 8;
		struct gd_grave *g = realloc(c->graves, (size_t)n * sizeof *g);

		if (!g) {
			ret = ENOMEM;
			goto out;
		}
		c->graves = g;
		c->capgraves = n;
	}
	owner_get(owner, kind);
	c->graves[c->ngraves++] = (struct gd_grave){.owner = owner, .kind = kind, .qpn = qpn};
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/* dead_qp tells whether qpn is a destroyed QP whose SRQ receives may still
 * be in this CQ. */
static int dead_qp(struct gd_cq *c, uint32_t qpn)
{
	int i;

	for (i = 0; i < c->ngraves; i++)
		if (c->graves[i].kind == GD_SLOT_SRQ && c->graves[i].qpn == qpn)
			return 1;
	return 0;
}

static uint8_t wc_opcode(enum ibv_wc_opcode op, uint8_t posted)
{
	switch (op) {
	case IBV_WC_SEND:
		return GD_WC_SEND;
	case IBV_WC_RDMA_WRITE:
		return GD_WC_RDMA_WRITE;
	case IBV_WC_RDMA_READ:
		return GD_WC_RDMA_READ;
	case IBV_WC_COMP_SWAP:
		return GD_WC_COMP_SWAP;
	case IBV_WC_FETCH_ADD:
		return GD_WC_FETCH_ADD;
	case IBV_WC_BIND_MW:
		return GD_WC_BIND_MW;
	case IBV_WC_RECV:
		return GD_WC_RECV;
	case IBV_WC_RECV_RDMA_WITH_IMM:
		return GD_WC_RECV_RDMA_WITH_IMM;
	default:
		return posted;
	}
}

void gd_qp_note(struct gd_qp *q, uint32_t bits)
{
	struct gd_dev *d = q->dev;
	uint64_t one = 1;

	__atomic_or_fetch(&q->notes, bits, __ATOMIC_SEQ_CST);
	if (__atomic_exchange_n(&q->queued, 1, __ATOMIC_SEQ_CST))
		return;
	__atomic_add_fetch(&q->refs, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&d->lock);
	q->errnext = d->errq;
	d->errq = q;
	pthread_mutex_unlock(&d->lock);
	if (write(d->kick, &one, sizeof one) < 0) {
		/* the counter cannot overflow in practice; nothing to do */
	}
}

/* translate turns w into *o; 0 when the completion is not delivered. */
static int translate(struct gd_cq *c, const struct ibv_wc *w, struct gd_wc *o)
{
	struct gd_slot *s = (struct gd_slot *)(uintptr_t)w->wr_id;
	uint64_t id = s->wr_id;
	uint8_t op = s->op;

	if (s->kind == GD_SLOT_SRQ) {
		struct gd_pool *p = s->owner;

		pthread_mutex_lock(&p->lock);
		s->next = p->free;
		p->free = s;
		p->taken++;
		pthread_mutex_unlock(&p->lock);
		if (LOAD(&p->dead) || dead_qp(c, w->qp_num))
			return 0;
	} else {
		struct gd_ring *r = s->owner;
		struct gd_qp *q;

		// Completions of one queue come in post order, so this frees
		// the slot and, on a send queue, those of the unsignalled
		// requests before it.
		STORE(&r->head, s->idx + 1);
		if (LOAD(&r->dead))
			return 0;
		q = LOAD(&r->qp);
		if (q) {
			if (w->status != IBV_WC_SUCCESS && w->status != IBV_WC_WR_FLUSH_ERR)
				gd_qp_note(q, GD_NOTE_ERROR);
			if (r->kind == GD_SLOT_SEND && LOAD(&q->draining) &&
			    (int32_t)(s->idx + 1 - LOAD(&q->drain_to)) >= 0)
				gd_qp_note(q, GD_NOTE_DRAINED);
		}
		if (op == GD_OP_MARK)
			return 0;
	}
	o->wr_id = id;
	o->qp_num = w->qp_num;
	o->status = w->status <= GD_WC_GENERAL_ERR ? (uint8_t)w->status : GD_WC_GENERAL_ERR;
	o->flags = 0;
	o->imm = 0;
	o->pad = 0;
	if (w->status == IBV_WC_SUCCESS) {
		o->opcode = wc_opcode(w->opcode, op);
		o->byte_len = w->byte_len;
		if (w->wc_flags & IBV_WC_WITH_IMM) {
			uint32_t imm = ntohl(w->imm_data);

			if (w->opcode == IBV_WC_RECV && imm == GD_SOLICITED_MARK) {
				o->flags = GD_WCF_SOLICITED;
			} else {
				o->flags = GD_WCF_WITH_IMM;
				o->imm = imm;
			}
		}
	} else {
		// verbs defines only wr_id, status and qp_num of an error
		// completion: the opcode is the request's.
		o->opcode = op;
		o->byte_len = 0;
	}
	return 1;
}

/* take moves up to n device completions into out; *empty is set when the
 * device had no more. */
static int take(struct gd_cq *c, struct gd_wc *out, int n, int *empty)
{
	int got = 0;

	*empty = 0;
	while (got < n) {
		int want = n - got, k, i;

		if (want > (int)(sizeof c->wc / sizeof c->wc[0]))
			want = sizeof c->wc / sizeof c->wc[0];
		k = ibv_poll_cq(c->cq, want, c->wc);
		if (k < 0)
			k = 0;
		for (i = 0; i < k; i++)
			got += translate(c, &c->wc[i], &out[got]);
		if (k < want) {
			*empty = 1;
			// Every completion of a QP destroyed before this poll was
			// already in the CQ (destroy is synchronous): none is left
			// now, and their slots may go.
			if (c->ngraves)
				release_graves(c);
			break;
		}
	}
	return got;
}

void gd_cq_synth_add(struct gd_cq *c, struct gd_ring *r)
{
	int i;

	pthread_mutex_lock(&c->lock);
	if (c->dead)
		goto out;
	for (i = 0; i < c->nsynth; i++)
		if (c->synth[i] == r)
			goto out;
	if (c->nsynth == c->capsynth) {
		int n = c->capsynth ? 2 * c->capsynth : 4;
		struct gd_ring **a = realloc(c->synth, (size_t)n * sizeof *a);

		if (!a)
			goto out; /* the request then waits for the ring's next listing */
		c->synth = a;
		c->capsynth = n;
	}
	owner_get(r, r->kind);
	c->synth[c->nsynth++] = r;
out:
	pthread_mutex_unlock(&c->lock);
}

static void release_synth(struct gd_cq *c)
{
	int i;

	for (i = 0; i < c->nsynth; i++)
		gd_ring_put(c->synth[i]);
	c->nsynth = 0;
}

/* take_synth completes, as flushed, the requests posted in Error of the
 * listed rings whose every earlier request has completed (the device's
 * completions of the ring, all polled before: take found the CQ empty). A
 * ring leaves the list when it holds nothing more. Under c->lock. */
static int take_synth(struct gd_cq *c, struct gd_wc *out, int n)
{
	int got = 0, i = 0;

	while (i < c->nsynth && got < n) {
		struct gd_ring *r = c->synth[i];
		uint32_t h = LOAD(&r->head);
		struct gd_slot *s;
		struct gd_qp *q;

		if (h == LOAD(&r->tail)) {
			c->synth[i] = c->synth[--c->nsynth];
			gd_ring_put(r);
			continue;
		}
		s = &r->slots[h % r->cap];
		if (!s->synth) {
			i++; /* the device still owes an earlier completion */
			continue;
		}
		STORE(&r->head, h + 1);
		if (LOAD(&r->dead))
			continue;
		q = LOAD(&r->qp);
		out[got++] = (struct gd_wc){.wr_id = s->wr_id, .qp_num = q ? q->num : 0,
					    .status = IBV_WC_WR_FLUSH_ERR, .opcode = s->op};
	}
	return got;
}

int gd_cq_poll(struct gd_cq *c, struct gd_wc *out, int n)
{
	int got = 0, empty = 0;

	pthread_mutex_lock(&c->lock);
	if (c->dead)
		goto out;
	while (c->sn && got < n) {
		out[got++] = c->stash[c->sh];
		c->sh = (c->sh + 1) % c->scap;
		c->sn--;
	}
	/* What the stash gave is the poll: the stash holds what a probe
	 * (gd_cq_quiet) or a pump polled before, and a dequeue after a probe
	 * wants that one completion, not a second poll of the device that
	 * mostly finds nothing. Callers poll again until a poll finds none. */
	if (got == 0)
		got = take(c, out, n, &empty);
	if (got < n && empty && c->nsynth)
		got += take_synth(c, out + got, n - got);
out:
	pthread_mutex_unlock(&c->lock);
	return got;
}

/* stash_ready makes the stash (c->lock held): 0, or -1 without memory. */
static int stash_ready(struct gd_cq *c)
{
	if (c->stash)
		return 0;
	c->scap = 1024;
	c->stash = calloc(c->scap, sizeof *c->stash);
	if (!c->stash) {
		c->scap = 0;
		return -1;
	}
	return 0;
}

int gd_cq_stash_ready(struct gd_cq *c)
{
	int ret;

	pthread_mutex_lock(&c->lock);
	ret = c->dead ? -1 : stash_ready(c);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int gd_cq_quiet(uint64_t arg, uint64_t gen)
{
	struct gd_cq *c = (struct gd_cq *)(uintptr_t)arg;
	int quiet = 0, empty;

	if (pthread_mutex_trylock(&c->lock) != 0)
		return 0; /* a Poll or a probe is at it: let the caller look */
	/* With nothing stashed, the stash's head slot is free: a completion
	 * polled goes there, first for the next gd_cq_poll. Requests posted
	 * in Error (synth) complete only in a Poll. */
	if (c->gen == gen && !c->dead && c->stash && c->sn == 0 && c->nsynth == 0) {
		if (take(c, &c->stash[c->sh], 1, &empty) == 0)
			quiet = 1;
		else
			c->sn = 1;
	}
	pthread_mutex_unlock(&c->lock);
	return quiet;
}

uint64_t gd_cq_quiet_fn(void)
{
	return (uint64_t)(uintptr_t)&gd_cq_quiet;
}

int gd_cq_pump(struct gd_cq *c)
{
	int moved = 0, empty = 0;

	pthread_mutex_lock(&c->lock);
	if (c->dead || stash_ready(c) != 0)
		goto out;
	while (!empty && c->sn < c->scap) {
		uint32_t tl = (c->sh + c->sn) % c->scap;
		int room = c->scap - c->sn, got;

		// Contiguous room only, so that take writes in place.
		if ((uint32_t)room > c->scap - tl)
			room = c->scap - tl;
		got = take(c, &c->stash[tl], room, &empty);
		c->sn += got;
		moved += got;
		if (got == 0 && !empty)
			continue;
	}
out:
	pthread_mutex_unlock(&c->lock);
	return moved;
}

int gd_cq_arm(struct gd_cq *c, int solicited)
{
	int ret;

	pthread_mutex_lock(&c->lock);
	ret = c->dead ? GD_ECLOSED : ibv_req_notify_cq(c->cq, solicited);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int gd_cq_resize(struct gd_cq *c, int depth)
{
	int ret;

	pthread_mutex_lock(&c->lock);
	ret = c->dead ? GD_ECLOSED : gd.resize_cq(c->cq, depth);
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int gd_cq_destroy(struct gd_cq *c)
{
	int ret;

	pthread_mutex_lock(&c->lock);
	if (c->dead) {
		pthread_mutex_unlock(&c->lock);
		return GD_ECLOSED;
	}
	ret = gd.destroy_cq(c->cq);
	if (ret == 0) {
		c->dead = 1;
		release_graves(c);
		release_synth(c);
		c->sn = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int gd_cq_destroy_raw(struct ibv_cq *cq)
{
	return gd.destroy_cq(cq);
}

int gd_cq_bury_ring(struct gd_cq *c, struct gd_ring *r)
{
	return gd_cq_bury(c, r, r->kind, 0);
}
