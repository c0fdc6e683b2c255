// Shared receive queues: a pool of slots (receives of an SRQ complete in
// arrival order across its QPs, not in post order) and the count of
// receives held, which the emulated "at once" limit uses.

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

#define LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)

static int pool_grow(struct gd_pool *p, uint32_t n)
{
	struct gd_chunk *c = calloc(1, sizeof *c + (size_t)n * sizeof(struct gd_slot));
	uint32_t i;

	if (!c)
		return ENOMEM;
	for (i = 0; i < n; i++) {
		c->slots[i].owner = p;
		c->slots[i].kind = GD_SLOT_SRQ;
		c->slots[i].op = GD_WC_RECV;
		c->slots[i].next = p->free;
		p->free = &c->slots[i];
	}
	c->next = p->chunks;
	p->chunks = c;
	p->cap += n;
	return 0;
}

struct gd_srq *gd_srq_new(struct ibv_srq *srq, int max_wr, int max_sge)
{
	struct gd_srq *s = calloc(1, sizeof *s);
	struct gd_pool *p = calloc(1, sizeof *p);

	if (!s || !p)
		goto fail;
	p->refs = 1;
	pthread_mutex_init(&p->lock, NULL);
	if (pool_grow(p, max_wr > 0 ? max_wr : 1))
		goto fail;
	p->max = max_wr;
	s->srq = srq;
	s->pool = p;
	s->max_sge = max_sge > 0 ? max_sge : 1;
	s->sge = calloc(s->max_sge, sizeof *s->sge);
	if (!s->sge)
		goto fail;
	pthread_mutex_init(&s->lock, NULL);
	return s;
fail:
	if (p)
		gd_pool_put(p);
	free(s);
	return NULL;
}

void gd_pool_put(struct gd_pool *p)
{
	struct gd_chunk *c, *next;

	if (__atomic_sub_fetch(&p->refs, 1, __ATOMIC_SEQ_CST) != 0)
		return;
	for (c = p->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	free(p);
}

void gd_srq_free(struct gd_srq *s)
{
	gd_pool_put(s->pool);
	free(s->sge);
	free(s);
}

int gd_post_srq_recv(struct gd_srq *s, uint64_t wr_id, const struct ibv_sge *sgl, int nsge)
{
	struct gd_pool *p = s->pool;
	struct ibv_recv_wr *w = &s->wr, *bad;
	struct gd_slot *slot;
	int ret;

	if (nsge < 0 || nsge > s->max_sge)
		return EINVAL;
	pthread_mutex_lock(&s->lock);
	if (LOAD(&s->dead)) {
		ret = GD_ECLOSED;
		goto out;
	}
	pthread_mutex_lock(&p->lock);
	if (p->posted - p->taken >= p->max || !p->free) {
		pthread_mutex_unlock(&p->lock);
		ret = GD_EFULL;
		goto out;
	}
	slot = p->free;
	p->free = slot->next;
	p->posted++;
	pthread_mutex_unlock(&p->lock);
	slot->wr_id = wr_id;
	if (nsge)
		memcpy(s->sge, sgl, (size_t)nsge * sizeof *sgl);
	memset(w, 0, sizeof *w);
	w->wr_id = (uintptr_t)slot;
	w->sg_list = s->sge;
	w->num_sge = nsge;
	ret = ibv_post_srq_recv(s->srq, w, &bad);
	if (ret) {
		pthread_mutex_lock(&p->lock);
		slot->next = p->free;
		p->free = slot;
		p->posted--;
		pthread_mutex_unlock(&p->lock);
		if (ret == ENOMEM)
			ret = GD_EFULL;
	}
out:
	pthread_mutex_unlock(&s->lock);
	return ret;
}

uint32_t gd_srq_held(struct gd_srq *s)
{
	struct gd_pool *p = s->pool;
	uint32_t n;

	pthread_mutex_lock(&p->lock);
	n = p->posted - p->taken;
	pthread_mutex_unlock(&p->lock);
	return n;
}

int gd_srq_resize(struct gd_srq *s, uint32_t max)
{
	struct gd_pool *p = s->pool;
	int ret = 0;

	pthread_mutex_lock(&p->lock);
	if (max > p->cap)
		ret = pool_grow(p, max - p->cap);
	if (!ret)
		p->max = max;
	pthread_mutex_unlock(&p->lock);
	return ret;
}

int gd_srq_kill(struct gd_srq *s)
{
	int ret;

	pthread_mutex_lock(&s->lock);
	ret = gd.destroy_srq(s->srq);
	if (ret == 0) {
		__atomic_store_n(&s->dead, 1, __ATOMIC_SEQ_CST);
		__atomic_store_n(&s->pool->dead, 1, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

int gd_destroy_srq_raw(struct ibv_srq *s)
{
	return gd.destroy_srq(s);
}
