// Thin wrappers: Go cannot call through the function pointers of the dlopen
// table, and a few calls need a cast Go should not make (an address in the
// consumer's memory is a number, never a Go pointer).

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "shim.h"

struct ibv_context *gd_open_device(struct rdma_cm_id *anchor)
{
	return gd.open_device(anchor->verbs->device);
}

int gd_close_device(struct ibv_context *c)
{
	return gd.close_device(c) ? errno : 0;
}

const char *gd_device_name(struct ibv_context *c)
{
	return gd.get_device_name(c->device);
}

int gd_transport(struct ibv_context *c)
{
	return c->device->transport_type;
}

int gd_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
	return gd.query_device(c, a);
}

struct ibv_pd *gd_alloc_pd(struct ibv_context *c)
{
	return gd.alloc_pd(c);
}

int gd_dealloc_pd(struct ibv_pd *p)
{
	return gd.dealloc_pd(p);
}

struct ibv_mr *gd_reg_mr(struct ibv_pd *p, uint64_t addr, uint64_t len, int access)
{
	return gd.reg_mr(p, (void *)(uintptr_t)addr, len, access);
}

int gd_dereg_mr(struct ibv_mr *m)
{
	return gd.dereg_mr(m);
}

struct ibv_cq *gd_create_cq(struct ibv_context *c, int cqe, uint64_t handle, struct gd_ch *ch)
{
	return gd.create_cq(c, cqe, (void *)(uintptr_t)handle, ch ? ch->cc : NULL, 0);
}

struct ibv_qp *gd_create_qp(struct ibv_pd *p, struct ibv_qp_init_attr *a, uint64_t handle)
{
	a->qp_context = (void *)(uintptr_t)handle;
	return gd.create_qp(p, a);
}

int gd_destroy_qp(struct ibv_qp *q)
{
	return gd.destroy_qp(q);
}

struct ibv_srq *gd_create_srq(struct ibv_pd *p, struct ibv_srq_init_attr *a, uint64_t handle)
{
	a->srq_context = (void *)(uintptr_t)handle;
	return gd.create_srq(p, a);
}

int gd_modify_srq(struct ibv_srq *s, uint32_t max_wr, uint32_t limit, int mask)
{
	struct ibv_srq_attr a;

	memset(&a, 0, sizeof a);
	a.max_wr = max_wr;
	a.srq_limit = limit;
	return gd.modify_srq(s, &a, mask);
}

int gd_query_srq(struct ibv_srq *s, struct ibv_srq_attr *a)
{
	return gd.query_srq(s, a);
}

struct rdma_event_channel *gd_cm_channel(void)
{
	struct rdma_event_channel *ch = gd.cm_create_event_channel();

	if (ch && gd_set_nonblock(ch->fd)) {
		int e = errno;

		gd.cm_destroy_event_channel(ch);
		errno = e;
		return NULL;
	}
	return ch;
}

void gd_cm_channel_destroy(struct rdma_event_channel *ch)
{
	gd.cm_destroy_event_channel(ch);
}

int gd_cm_create_id(struct rdma_event_channel *ch, uint64_t handle, struct rdma_cm_id **id)
{
	return gd.cm_create_id(ch, id, (void *)(uintptr_t)handle, RDMA_PS_TCP) ? errno : 0;
}

int gd_cm_destroy_id(struct rdma_cm_id *id)
{
	return gd.cm_destroy_id(id) ? errno : 0;
}

void gd_id_set_handle(struct rdma_cm_id *id, uint64_t handle)
{
	id->context = (void *)(uintptr_t)handle;
}

int gd_cm_bind(struct rdma_cm_id *id, struct sockaddr *sa)
{
	return gd.cm_bind_addr(id, sa) ? errno : 0;
}

int gd_cm_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst, int ms)
{
	return gd.cm_resolve_addr(id, src, dst, ms) ? errno : 0;
}

int gd_cm_resolve_route(struct rdma_cm_id *id, int ms)
{
	return gd.cm_resolve_route(id, ms) ? errno : 0;
}

int gd_cm_listen(struct rdma_cm_id *id, int backlog)
{
	return gd.cm_listen(id, backlog) ? errno : 0;
}

int gd_cm_reject(struct rdma_cm_id *id, const void *p, int n)
{
	return gd.cm_reject(id, n ? p : NULL, n) ? errno : 0;
}

int gd_cm_disconnect(struct rdma_cm_id *id)
{
	return gd.cm_disconnect(id) ? errno : 0;
}

int gd_cm_establish(struct rdma_cm_id *id)
{
	return gd.cm_establish(id) ? errno : 0;
}

int gd_cm_notify(struct rdma_cm_id *id, int ev)
{
	return gd.cm_notify(id, ev) ? errno : 0;
}

int gd_id_port_num(struct rdma_cm_id *id)
{
	return id->port_num;
}

int gd_probe(struct sockaddr *sa, char *name, int n, int *port, int *active)
{
	struct ibv_port_attr pa;

	struct rdma_cm_id *id;
	int ret = 0;

	// No channel: a synchronous id, enough to ask which device and port
	// an address belongs to.
	if (gd.cm_create_id(NULL, &id, NULL, RDMA_PS_TCP))
		return errno;
	if (gd.cm_bind_addr(id, sa))
		ret = errno;
	else if (!id->verbs)
		ret = ENODEV;
	else {
		snprintf(name, n, "%s", gd.get_device_name(id->verbs->device));
		*port = id->port_num;
		*active = gd_query_port(id->verbs, id->port_num, &pa) == 0 && pa.state == IBV_PORT_ACTIVE;
	}
	gd.cm_destroy_id(id);
	return ret;
}

int gd_probe_inline(struct ibv_context *c)
{
	struct ibv_pd *pd = gd.alloc_pd(c);
	struct ibv_cq *cq = pd ? gd.create_cq(c, 2, NULL, NULL, 0) : NULL;
	int lo = 0, hi = 4096, best = 0;

	// verbs has no device attribute for it: the largest inline size a QP
	// is granted is the device's, found by asking.
	while (cq && lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		struct ibv_qp_init_attr a;
		struct ibv_qp *qp;

		memset(&a, 0, sizeof a);
		a.send_cq = cq;
		a.recv_cq = cq;
		a.qp_type = IBV_QPT_RC;
		a.cap.max_send_wr = 1;
		a.cap.max_recv_wr = 1;
		a.cap.max_send_sge = 1;
		a.cap.max_recv_sge = 1;
		a.cap.max_inline_data = mid;
		qp = gd.create_qp(pd, &a);
		if (qp) {
			if ((int)a.cap.max_inline_data > best)
				best = a.cap.max_inline_data;
			if (mid > best)
				best = mid;
			gd.destroy_qp(qp);
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	if (cq)
		gd.destroy_cq(cq);
	if (pd)
		gd.dealloc_pd(pd);
	return best;
}

int gd_noop(void)
{
	return 0;
}

/* Benchmarks only: an 8-byte ping-pong over two connected QPs through the
 * shim's post and poll calls, both sides on C threads, to tell the C path's
 * cost from the Go runtime's. */
struct gd_pp {
	struct gd_qp *q;
	struct gd_cq *cq;
	struct ibv_sge sge, rsge;
	int n, first, err;
};

static int pp_wait_recv(struct gd_cq *cq)
{
	struct gd_wc wc[4];
	long spins;

	for (spins = 0; spins < 2000000000L; spins++) {
		int k = gd_cq_poll(cq, wc, 4), i;

		for (i = 0; i < k; i++) {
			if (wc[i].status)
				return -1;
			if (wc[i].opcode == GD_WC_RECV)
				return 0;
		}
	}
	return -1;
}

static void *pp_side(void *arg)
{
	struct gd_pp *p = arg;
	int i;

	for (i = 0; i < p->n; i++) {
		int fl = GD_SF_INLINE | (i % 32 == 31 ? GD_SF_SIGNALED : 0);

		if (!p->first && pp_wait_recv(p->cq)) {
			p->err = 1;
			return NULL;
		}
		if (gd_post_recv(p->q, 1, &p->rsge, 1) || gd_post_send(p->q, 2, 0, 0, 0, GD_WR_SEND, fl, &p->sge, 1)) {
			p->err = 2;
			return NULL;
		}
		if (p->first && pp_wait_recv(p->cq)) {
			p->err = 3;
			return NULL;
		}
	}
	return NULL;
}

int gd_pingpong(struct gd_qp *qa, struct gd_cq *ca, struct gd_qp *qb, struct gd_cq *cb, uint64_t abuf,
		uint32_t alkey, uint64_t bbuf, uint32_t blkey, int n)
{
	struct gd_pp a = {.q = qa, .cq = ca, .n = n, .first = 1}, b = {.q = qb, .cq = cb, .n = n};
	pthread_t ta, tb;

	a.sge = (struct ibv_sge){.addr = abuf, .length = 8, .lkey = alkey};
	a.rsge = (struct ibv_sge){.addr = abuf + 64, .length = 64, .lkey = alkey};
	b.sge = (struct ibv_sge){.addr = bbuf, .length = 8, .lkey = blkey};
	b.rsge = (struct ibv_sge){.addr = bbuf + 64, .length = 64, .lkey = blkey};
	pthread_create(&tb, NULL, pp_side, &b);
	pthread_create(&ta, NULL, pp_side, &a);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	return a.err ? a.err : b.err;
}
