// Asynchronous events of a device context, read without blocking from the
// device's event thread.

#include <errno.h>
#include <string.h>

#include "shim.h"

int gd_async_next(struct ibv_context *ctx, struct gd_aev *ev)
{
	struct ibv_async_event e;

	if (gd.get_async_event(ctx, &e))
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	memset(ev, 0, sizeof *ev);
	ev->type = e.event_type;
	switch (e.event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		ev->handle = (uintptr_t)e.element.qp->qp_context;
		break;
	case IBV_EVENT_CQ_ERR:
		ev->handle = (uintptr_t)e.element.cq->cq_context;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		ev->handle = (uintptr_t)e.element.srq->srq_context;
		break;
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		ev->port = e.element.port_num;
		break;
	default:
		break;
	}
	// The handles were read before the ack: destroying a QP, CQ or SRQ
	// waits for the acks of its events.
	gd.ack_async_event(&e);
	return 1;
}
