// Connection-manager helpers. The backend's queue pairs are not created by
// rdma_create_qp: rdma_cm only carries their number (conn_param.qp_num), and
// the backend moves them through RTR and RTS itself with the attributes
// rdma_init_qp_attr computes (cm.go says why).

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "shim.h"

static int has_pdata(int event)
{
	switch (event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
	case RDMA_CM_EVENT_ESTABLISHED:
	case RDMA_CM_EVENT_REJECTED:
		return 1;
	default:
		return 0;
	}
}

static void copy_addr(struct sockaddr_storage *dst, const struct sockaddr *src)
{
	memset(dst, 0, sizeof *dst);
	if (src->sa_family == AF_INET)
		memcpy(dst, src, sizeof(struct sockaddr_in));
	else if (src->sa_family == AF_INET6)
		memcpy(dst, src, sizeof(struct sockaddr_in6));
}

void gd_id_addrs(struct rdma_cm_id *id, struct sockaddr_storage *local, struct sockaddr_storage *peer)
{
	copy_addr(local, rdma_get_local_addr(id));
	copy_addr(peer, rdma_get_peer_addr(id));
}

int gd_id_port(struct rdma_cm_id *id)
{
	struct sockaddr *sa = rdma_get_local_addr(id);

	if (sa->sa_family == AF_INET)
		return ntohs(((struct sockaddr_in *)sa)->sin_port);
	if (sa->sa_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)sa)->sin6_port);
	return -1;
}

int gd_cm_next(struct rdma_event_channel *ch, struct gd_cmev *ev)
{
	struct rdma_cm_event *e;

	if (gd.cm_get_cm_event(ch, &e))
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	// Everything is copied before the ack: rdma_destroy_id waits for the
	// acks of its events, so an id stays valid only until then.
	memset(ev, 0, sizeof *ev);
	ev->event = e->event;
	ev->status = e->status;
	ev->id = e->id;
	ev->handle = (uintptr_t)e->id->context;
	ev->listen_handle = e->listen_id ? (uintptr_t)e->listen_id->context : 0;
	if (has_pdata(e->event) && e->param.conn.private_data && e->param.conn.private_data_len) {
		ev->plen = e->param.conn.private_data_len;
		if (ev->plen > (int)sizeof ev->pdata)
			ev->plen = sizeof ev->pdata;
		memcpy(ev->pdata, e->param.conn.private_data, ev->plen);
	}
	if (has_pdata(e->event)) {
		ev->initiator_depth = e->param.conn.initiator_depth;
		ev->responder_resources = e->param.conn.responder_resources;
	}
	if (e->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		gd_id_addrs(e->id, &ev->local, &ev->peer);
	gd.cm_ack_cm_event(e);
	return 1;
}

static void conn_param(struct rdma_conn_param *p, uint32_t qpn, int srq, const void *priv, int plen,
		       int resp_res, int init_depth)
{
	memset(p, 0, sizeof *p);
	p->private_data = plen ? priv : NULL;
	p->private_data_len = plen;
	p->responder_resources = resp_res;
	p->initiator_depth = init_depth;
	p->flow_control = 1;
	// A missing receive is waited for forever (RNR retry 7), as the
	// software provider does; a silent peer breaks the connection after
	// GD_RETRY_COUNT retries (gd_cm_ready).
	p->retry_count = GD_RETRY_COUNT;
	p->rnr_retry_count = 7;
	p->srq = srq;
	p->qp_num = qpn;
}

int gd_cm_connect(struct rdma_cm_id *id, uint32_t qpn, int srq, const void *priv, int plen,
		  int resp_res, int init_depth)
{
	struct rdma_conn_param p;

	conn_param(&p, qpn, srq, priv, plen, resp_res, init_depth);
	return gd.cm_connect(id, &p) ? errno : 0;
}

int gd_cm_accept(struct rdma_cm_id *id, uint32_t qpn, int srq, const void *priv, int plen,
		 int resp_res, int init_depth)
{
	struct rdma_conn_param p;

	conn_param(&p, qpn, srq, priv, plen, resp_res, init_depth);
	return gd.cm_accept(id, &p) ? errno : 0;
}

static const int conn_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

int gd_qp_init(struct rdma_cm_id *anchor, struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	int mask;

	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_INIT;
	if (gd.cm_init_qp_attr(anchor, &a, &mask))
		return errno;
	// The CM grants remote access only when it connects; a QP of the
	// contract takes RDMA reads and writes (the MRs' keys decide).
	a.qp_access_flags |= conn_access;
	mask |= IBV_QP_ACCESS_FLAGS;
	return gd.modify_qp(qp, &a, mask);
}

int gd_cm_ready(struct rdma_cm_id *id, struct ibv_qp *qp, int resp_res, int init_depth, int ib)
{
	struct ibv_qp_attr a;
	int mask, ret;

	// INIT again, with what the CM now knows of the connection (pkey,
	// port), as librdmacm does before RTR.
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_INIT;
	if (gd.cm_init_qp_attr(id, &a, &mask))
		return errno;
	if (mask & IBV_QP_ACCESS_FLAGS)
		a.qp_access_flags |= conn_access;
	if ((ret = gd.modify_qp(qp, &a, mask)))
		return ret;

	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR;
	if (gd.cm_init_qp_attr(id, &a, &mask))
		return errno;
	// rdma_ucm reports RoCE-only attribute bits for InfiniBand ports,
	// which the device refuses (librdmacm masks them the same way).
	if (ib)
		mask &= ~0xe00000;
	if (resp_res >= 0)
		a.max_dest_rd_atomic = resp_res;
	if ((ret = gd.modify_qp(qp, &a, mask)))
		return ret;

	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS;
	if (gd.cm_init_qp_attr(id, &a, &mask))
		return errno;
	if (init_depth >= 0)
		a.max_rd_atomic = init_depth;
	// A dead peer is noticed after (retries + 1) ack timeouts. The CM's
	// timeout comes from the path's packet lifetime, on RoCE about 2 s
	// (exponent 19): 16 s and more. An exponent of 16 (268 ms) is ample
	// for any fabric, and 6 retries (rxe takes 7 as "retry forever",
	// which the IB spec reserves for RNR retries) notice a silent peer
	// within about 2 s.
	if ((mask & IBV_QP_TIMEOUT) && a.timeout > GD_ACK_TIMEOUT)
		a.timeout = GD_ACK_TIMEOUT;
	if ((mask & IBV_QP_RETRY_CNT) && a.retry_cnt > GD_RETRY_COUNT)
		a.retry_cnt = GD_RETRY_COUNT;
	return gd.modify_qp(qp, &a, mask);
}
