/*
 * The C side of the verbs backend: libibverbs and librdmacm are opened with
 * dlopen on the first device open (so libdat.so.1 does not depend on them),
 * their functions are called through the table gd, and the hot paths (post,
 * poll, channel wait) are one C call each from Go.
 *
 * The static inline functions of <infiniband/verbs.h> that only call through
 * the context's ops (ibv_post_send, ibv_post_recv, ibv_post_srq_recv,
 * ibv_poll_cq, ibv_req_notify_cq) are used directly: they need no symbol.
 * Inline functions that fall back to a library symbol are not used (the
 * link would then need -libverbs).
 */
#ifndef GODAT_VERBS_SHIM_H
#define GODAT_VERBS_SHIM_H

#include <stdint.h>
#include <stddef.h>
#include <pthread.h>
#include <sys/socket.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* ---- the dlopen table (dl.c) ---- */

#define GD_IBV_FNS(X)                                                          \
	X(open_device) X(close_device) X(get_device_name) X(query_device)      \
	X(query_port) X(alloc_pd) X(dealloc_pd) X(reg_mr) X(dereg_mr)          \
	X(create_comp_channel) X(destroy_comp_channel) X(create_cq)            \
	X(destroy_cq) X(resize_cq) X(get_cq_event) X(ack_cq_events)            \
	X(create_qp) X(modify_qp) X(query_qp) X(destroy_qp) X(create_srq)      \
	X(modify_srq) X(query_srq) X(destroy_srq) X(get_async_event)           \
	X(ack_async_event)

#define GD_CM_FNS(X)                                                           \
	X(create_event_channel) X(destroy_event_channel) X(create_id)          \
	X(destroy_id) X(bind_addr) X(resolve_addr) X(resolve_route)            \
	X(connect) X(listen) X(accept) X(reject) X(disconnect) X(establish)    \
	X(notify) X(get_cm_event) X(ack_cm_event) X(init_qp_attr)

/* The member names drop the library prefix: several ibv_ names are
 * function-like macros in verbs.h, which a member access followed by '('
 * would expand. */
struct gd_fns {
#define GD_IBV_MEMBER(n) __typeof__(ibv_##n) *n;
#define GD_CM_MEMBER(n) __typeof__(rdma_##n) *cm_##n;
	GD_IBV_FNS(GD_IBV_MEMBER)
	GD_CM_FNS(GD_CM_MEMBER)
#undef GD_IBV_MEMBER
#undef GD_CM_MEMBER
};

extern struct gd_fns gd;

/* gd_load opens both libraries once; 0, or -1 with a message in msg. */
int gd_load(char *msg, int n);

/* ---- numbering shared with Go (checked by a test) ---- */

/* Completion statuses: verbs order, as rdma.WCStatus. */
#define GD_WC_GENERAL_ERR 21
/* rdma.WCOpcode values. */
enum { GD_WC_SEND, GD_WC_RDMA_WRITE, GD_WC_RDMA_READ, GD_WC_COMP_SWAP, GD_WC_FETCH_ADD,
       GD_WC_BIND_MW, GD_WC_RECV, GD_WC_RECV_RDMA_WITH_IMM };
/* The slot op of the backend's own marker request (never delivered). */
#define GD_OP_MARK 0xff
/* rdma.WCFlags bits. */
enum { GD_WCF_WITH_IMM = 1, GD_WCF_SOLICITED = 2 };
/* The immediate data of a solicited send (qp.go, solicitedMark): a
 * receive completion that carries it is reported as WCSolicited. */
#define GD_SOLICITED_MARK 0x64617453u
/* rdma.WROpcode values. */
enum { GD_WR_RDMA_WRITE, GD_WR_RDMA_WRITE_WITH_IMM, GD_WR_SEND, GD_WR_SEND_WITH_IMM,
       GD_WR_RDMA_READ, GD_WR_COUNT };
/* rdma.SendFlags bits. */
enum { GD_SF_FENCE = 1, GD_SF_SIGNALED = 2, GD_SF_SOLICITED = 4, GD_SF_INLINE = 8 };

/* gd_wc is rdma.WC, field for field (checked by a test). */
struct gd_wc {
	uint64_t wr_id;
	uint32_t byte_len;
	uint32_t qp_num;
	uint32_t imm;
	uint8_t status;
	uint8_t opcode;
	uint8_t flags;
	uint8_t pad;
};

/* Errors of the post calls, beyond positive errno values. */
enum { GD_ECLOSED = -1, GD_ESTATE = -2, GD_EFULL = -3 };
/* A post to a QP in Error that the backend completes as flushed itself
 * (gd_qp_set_cqs: a device that does not flush it): accepted; the caller
 * wakes the CQ's sleepers. */
enum { GD_POSTED_FLUSHED = -4 };

/* ---- work-request slots ---- */

/*
 * Every posted work request gets a slot in C memory whose address is the
 * wr_id given to the device; the slot keeps the consumer's wr_id and the
 * opcode (verbs leaves the opcode of an error completion undefined, the
 * contract wants it). A slot is reused only after Poll has read its
 * completion (for a send queue: a later one, unsignalled requests complete
 * silently), so a completion always finds its own slot.
 *
 * Slots live in rings (a QP's send and receive queues) or in an SRQ pool.
 * A ring outlives its QP until every CQ that may still hold its completions
 * has been polled empty or destroyed (gd_cq graves), because some devices
 * (rxe) leave a destroyed QP's completions in the CQ.
 */
enum { GD_SLOT_SEND = 1, GD_SLOT_RECV, GD_SLOT_SRQ };

struct gd_slot {
	uint64_t wr_id;
	void *owner;          /* struct gd_ring or struct gd_pool */
	struct gd_slot *next; /* pool free list */
	uint32_t idx;         /* ring: the running post count */
	uint8_t kind;
	uint8_t op;    /* GD_WC_* of the request */
	uint8_t synth; /* posted in Error: Poll completes it as flushed */
};

struct gd_qp;

struct gd_ring {
	uint32_t refs;     /* atomic: the QP's, plus one per CQ grave */
	uint32_t dead;     /* the QP was destroyed: completions are dropped */
	struct gd_qp *qp;  /* NULL once retired by a reset */
	uint32_t cap;
	uint32_t tail;     /* posted; under the QP's queue lock */
	uint32_t head;     /* completed; atomic, written under the CQ lock */
	uint8_t kind;
	struct gd_ring *next; /* the QP's retired rings */
	struct gd_slot slots[];
};

struct gd_chunk {
	struct gd_chunk *next;
	struct gd_slot slots[];
};

/* gd_pool is an SRQ's slots: receives complete in any order across QPs. */
struct gd_pool {
	uint32_t refs;          /* atomic: the SRQ's, plus one per CQ grave */
	uint32_t dead;
	pthread_mutex_t lock;   /* free list, counts */
	struct gd_slot *free;
	struct gd_chunk *chunks;
	uint32_t cap;           /* slots allocated */
	uint32_t max;           /* receives the SRQ may hold */
	uint32_t posted;        /* posts, ever */
	uint32_t taken;         /* completions read, ever */
};

/* ---- devices (dev.c) ---- */

struct gd_dev {
	uint32_t refs;           /* atomic: Go's device, plus one per gd_qp */
	int kick;                /* eventfd: wakes the device's event thread */
	pthread_mutex_t lock;    /* errq */
	struct gd_qp *errq;      /* QPs that completed a request in error */
};

struct gd_dev *gd_dev_new(void);
void gd_dev_put(struct gd_dev *d);
/* gd_dev_wait sleeps on the async fd, the CM fd and the kick eventfd; it
 * returns a bit set (1 async, 2 CM, 4 kick) or 0 on timeout. */
int gd_dev_wait(struct gd_dev *d, int async_fd, int cm_fd, int ms);
/* gd_dev_errq takes the next QP handle queued for a completion in error; 0
 * when none. */
uint64_t gd_dev_errq(struct gd_dev *d);
void gd_dev_kick(struct gd_dev *d);
int gd_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *pa);
int gd_set_nonblock(int fd);

/* ---- queue pairs (qp.c) ---- */

/* Connection states the post calls check (posts need no Go call). */
enum { GD_QPS_INIT = 1, GD_QPS_CONN, GD_QPS_RTS, GD_QPS_ERR };
/* Notes Poll leaves for the device's event thread. */
enum { GD_NOTE_ERROR = 1, GD_NOTE_DRAINED = 2 };

struct gd_qp {
	uint32_t refs;  /* atomic: Go's QP, plus the device error queue's */
	uint32_t dead;  /* destroyed: posts fail with GD_ECLOSED */
	int state;      /* GD_QPS_*, atomic */
	uint32_t num;
	uint64_t handle;
	struct ibv_qp *qp;
	struct gd_dev *dev;
	struct gd_pool *srq;

	/* Lock order of the C side: a QP's slock before its rlock (retire,
	 * rebuild, set_cqs); either before a CQ's lock (a post in Error on a
	 * synth QP lists its ring); a CQ's lock before an SRQ pool's lock and
	 * a device's lock (Poll frees SRQ slots and notes QPs in error). The
	 * export layer's probe (gd_cq_quiet) only try-locks a CQ, holding
	 * nothing; the pool of freed CQs' lock (cq.c) is a leaf, taken after a
	 * CQ's lock is released. */
	pthread_mutex_t slock;
	struct gd_ring *sq;
	struct ibv_send_wr swr;
	struct ibv_sge *ssge;
	int max_ssge;

	pthread_mutex_t rlock;
	struct gd_ring *rq;
	struct ibv_recv_wr rwr;
	struct ibv_sge *rsge;
	int max_rsge;

	struct gd_ring *retired; /* rings replaced by resets, until the QP goes */
	/* The SGEs of the receives posted in INIT, by receive-ring slot
	 * (max_rsge each, their count in rsaved_n), so that gd_qp_rebuild can
	 * post them again; allocated by the first such post, freed when the
	 * QP leaves INIT. rsaved_lost: the ring holds receives that were not
	 * saved (an allocation failed, or they outlived a stay out of INIT):
	 * nothing can be posted again. Under rlock. */
	struct ibv_sge *rsaved;
	uint8_t *rsaved_n;
	int rsaved_lost;
	uint32_t notes;       /* GD_NOTE_* bits, atomic */
	uint32_t queued;      /* on dev->errq, atomic */
	struct gd_qp *errnext;
	uint32_t drain_to;    /* graceful disconnect: send posts to wait for */
	uint32_t draining;    /* atomic */
	/* synth: requests posted in Error are not given to the device but
	 * completed as flushed by Poll of scqc/rcqc (iWARP devices: siw never
	 * flushes them). Under both queue locks. */
	int synth;
	struct gd_cq *scqc, *rcqc;
};

struct gd_qp *gd_qp_new(struct gd_dev *d, struct ibv_qp *qp, uint64_t handle, int scap,
			int rcap, int max_ssge, int max_rsge, struct gd_pool *srq);
void gd_qp_put(struct gd_qp *q);
int gd_post_send(struct gd_qp *q, uint64_t wr_id, uint64_t raddr, uint32_t rkey, uint32_t imm,
		 int op, int flags, const struct ibv_sge *sgl, int nsge);
int gd_post_recv(struct gd_qp *q, uint64_t wr_id, const struct ibv_sge *sgl, int nsge);
/* The posts and the poll as Go calls them, the object's address as an
 * integer: cgo checks at run time every pointer argument whose C type holds
 * pointers for Go pointers (cgoCheckPointer, about 100 instructions a call),
 * and these objects are C memory. The lists are pointer-free, so unchecked. */
static inline int gd_post_send_go(uintptr_t q, uint64_t wr_id, uint64_t raddr, uint32_t rkey,
				  uint32_t imm, int op, int flags, const struct ibv_sge *sgl, int nsge)
{
	return gd_post_send((struct gd_qp *)q, wr_id, raddr, rkey, imm, op, flags, sgl, nsge);
}
static inline int gd_post_recv_go(uintptr_t q, uint64_t wr_id, const struct ibv_sge *sgl, int nsge)
{
	return gd_post_recv((struct gd_qp *)q, wr_id, sgl, nsge);
}
/* gd_qp_outstanding is the send requests posted and not yet known complete. */
uint32_t gd_qp_sq_outstanding(struct gd_qp *q);
/* gd_qp_retire gives the QP fresh rings after a reset; the caller buries
 * the old ones in the CQs, where flushed completions may still wait. */
int gd_qp_retire(struct gd_qp *q, struct gd_ring **old_sq, struct gd_ring **old_rq);
/* gd_qp_rebuild moves a QP in INIT with no send outstanding onto nqp (a
 * new ibv_qp in INIT, of other CQs, PD or capacities) with rings of scap
 * and rcap slots, and posts the receives it holds to nqp again, in order.
 * Returns 0, and the caller destroys the old ibv_qp, then, when *old_rq
 * is set (the old receive ring, which held receives and now drops their
 * completions), buries it in the old receive CQ and puts it; or an errno
 * (EINVAL: more receives posted than rlimit, the receives asked for, or
 * with more SGEs than max_rsge; EBUSY: not in INIT or a send outstanding),
 * and the QP is unchanged; the caller destroys nqp, then, when *new_rq is
 * set (receives were posted to nqp before the failure), buries it in
 * nqp's receive CQ and puts it. */
int gd_qp_rebuild(struct gd_qp *q, struct ibv_qp *nqp, int scap, int rcap, int rlimit, int max_ssge,
		  int max_rsge, struct gd_ring **old_rq, struct gd_ring **new_rq);
struct gd_cq;
/* gd_qp_set_cqs records the QP's CQs and whether requests posted to it in
 * Error are completed as flushed by the backend (synth). */
void gd_qp_set_cqs(struct gd_qp *q, int synth, struct gd_cq *scq, struct gd_cq *rcq);
/* gd_qp_kill destroys the QP: its rings stop delivering completions and are
 * buried in the CQs that may hold some. */
int gd_qp_kill(struct gd_qp *q, struct gd_cq *scq, struct gd_cq *rcq);
/* gd_qp_take returns and clears the QP's pending notes (GD_NOTE_*). */
uint32_t gd_qp_take(struct gd_qp *q);
/* gd_post_mark posts the marker whose completion ends a graceful drain. */
int gd_post_mark(struct gd_qp *q);
void gd_qp_note(struct gd_qp *q, uint32_t bits);
void gd_qp_set_state(struct gd_qp *q, int st);
int gd_qp_state(struct gd_qp *q);
int gd_qp_dead(struct gd_qp *q);
void gd_qp_drain(struct gd_qp *q, int on);
void gd_ring_put(struct gd_ring *r);
int gd_modify_state(struct ibv_qp *qp, enum ibv_qp_state st);
int gd_query_state(struct ibv_qp *qp);
/* gd_query_timeouts reads the transport timeout and retry counts (tests, logs). */
int gd_query_timeouts(struct ibv_qp *qp, int *timeout, int *retry, int *rnr);

/* ---- shared receive queues (srq.c) ---- */

struct gd_srq {
	struct ibv_srq *srq;
	struct gd_pool *pool;
	pthread_mutex_t lock;   /* the post scratch */
	struct ibv_recv_wr wr;
	struct ibv_sge *sge;
	int max_sge;
	uint32_t dead;
};

struct gd_srq *gd_srq_new(struct ibv_srq *srq, int max_wr, int max_sge);
int gd_post_srq_recv(struct gd_srq *s, uint64_t wr_id, const struct ibv_sge *sgl, int nsge);
/* gd_srq_held is the receives posted and not yet completed through Poll. */
uint32_t gd_srq_held(struct gd_srq *s);
int gd_srq_resize(struct gd_srq *s, uint32_t max);
/* gd_srq_kill destroys the SRQ; its slots stay until the CQs let go. */
int gd_srq_kill(struct gd_srq *s);
int gd_destroy_srq_raw(struct ibv_srq *s);
void gd_pool_put(struct gd_pool *p);
void gd_srq_free(struct gd_srq *s);

/* ---- completion queues (cq.c) ---- */

struct gd_grave {
	void *owner; /* gd_ring or gd_pool */
	uint8_t kind;
	uint32_t qpn; /* the destroyed QP */
};

/* A gd_cq's memory is never freed but kept for the next gd_cq_new: the
 * export layer's C dequeue may call gd_cq_quiet on a CQ destroyed since
 * it read its address. gen tells one life from the next. */
struct gd_cq {
	pthread_mutex_t lock; /* polls, arms, graves, stash, gen */
	struct ibv_cq *cq;
	uint32_t dead;
	uint64_t gen; /* bumped as the CQ is freed: a stale watch's no longer matches */
	struct ibv_wc wc[32];
	struct gd_grave *graves;
	int ngraves, capgraves;
	struct gd_wc *stash; /* completions polled by the backend for the consumer */
	uint32_t sh, sn, scap;
	/* Rings holding requests posted in Error that Poll completes as
	 * flushed, each referenced, in the order they came. */
	struct gd_ring **synth;
	int nsynth, capsynth;
};
/* gd_cq_synth_add lists r among the rings whose requests posted in Error
 * Poll completes (once). */
void gd_cq_synth_add(struct gd_cq *c, struct gd_ring *r);

struct gd_cq *gd_cq_new(struct ibv_cq *cq);
int gd_cq_poll(struct gd_cq *c, struct gd_wc *out, int n);
/* gd_cq_poll_go is gd_cq_poll as Go calls it (see gd_post_send_go). */
static inline int gd_cq_poll_go(uintptr_t c, struct gd_wc *out, int n)
{
	return gd_cq_poll((struct gd_cq *)c, out, n);
}
int gd_cq_arm(struct gd_cq *c, int solicited);
int gd_cq_bury(struct gd_cq *c, void *owner, int kind, uint32_t qpn);
/* gd_cq_bury_ring buries a ring retired by a reset. */
int gd_cq_bury_ring(struct gd_cq *c, struct gd_ring *r);
/* gd_cq_pump moves completions into the stash (graceful disconnects). */
int gd_cq_pump(struct gd_cq *c);
int gd_cq_destroy(struct gd_cq *c);
int gd_cq_resize(struct gd_cq *c, int depth);
void gd_cq_free(struct gd_cq *c);
int gd_cq_destroy_raw(struct ibv_cq *cq);
/* gd_cq_quiet is the CQ's probe for the export layer's empty dequeue
 * (rdma.QuietWatch): 1 while the CQ of life gen is empty; 0 when it is
 * not (what it polled is stashed, for the next gd_cq_poll), busy, gone, or
 * has no stash. Never blocks. gd_cq_quiet_fn is its address;
 * gd_cq_stash_ready makes the stash it needs (0, or -1 without memory). */
int gd_cq_quiet(uint64_t arg, uint64_t gen);
uint64_t gd_cq_quiet_fn(void);
int gd_cq_stash_ready(struct gd_cq *c);
enum { offsetof_gd_wc_status = offsetof(struct gd_wc, status) };

/* ---- completion channels (chan.c) ---- */

struct gd_ch {
	struct ibv_comp_channel *cc;
	int kick;       /* eventfd: ends the poller's sleep (Wake, Destroy) */
	int note;       /* eventfd: set by a notification, reset by Seq */
	int ep;         /* epoll over the channel fd and note: the Fd */
	uint32_t seq;   /* the generation count (Seq) */
	uint32_t gen;   /* futex word of the sleepers */
	uint32_t poller, sleepers, noted, closed, inside;
};

struct gd_ch *gd_ch_new(struct ibv_context *ctx, char *msg, int n);
int gd_ch_wait(struct gd_ch *ch, uint32_t seq, int64_t ns);
void gd_ch_wake(struct gd_ch *ch);
void gd_ch_reset_note(struct gd_ch *ch);
uint32_t gd_ch_seq(struct gd_ch *ch);
/* gd_ch_close ends every wait and refuses new ones; gd_ch_free frees. */
void gd_ch_close(struct gd_ch *ch);
int gd_ch_inside(struct gd_ch *ch);
int gd_ch_destroy(struct gd_ch *ch);
void gd_ch_free(struct gd_ch *ch);

/* ---- connection manager (cm.c) ---- */

/* gd_cmev is one CM event, copied out before it is acked. */
struct gd_cmev {
	int event;
	int status;
	struct rdma_cm_id *id;
	uint64_t handle;        /* id->context */
	uint64_t listen_handle; /* listen_id->context */
	uint8_t pdata[256];
	int plen;
	uint8_t initiator_depth, responder_resources;
	struct sockaddr_storage local, peer; /* of id, for requests */
};

int gd_cm_next(struct rdma_event_channel *ch, struct gd_cmev *ev);
int gd_cm_connect(struct rdma_cm_id *id, uint32_t qpn, int srq, const void *priv, int plen,
		  int resp_res, int init_depth);
int gd_cm_accept(struct rdma_cm_id *id, uint32_t qpn, int srq, const void *priv, int plen,
		 int resp_res, int init_depth);
/* gd_cm_ready moves qp through INIT (update), RTR and RTS with the
 * attributes the CM computed for id; resp_res and init_depth override when
 * >= 0. */
int gd_cm_ready(struct rdma_cm_id *id, struct ibv_qp *qp, int resp_res, int init_depth, int ib);
int gd_qp_init(struct rdma_cm_id *anchor, struct ibv_qp *qp);
void gd_id_addrs(struct rdma_cm_id *id, struct sockaddr_storage *local, struct sockaddr_storage *peer);
int gd_id_port(struct rdma_cm_id *id);

/* The transport's ack timeout exponent (4.096 us << 16 = 268 ms) and retry
 * count: a silent peer breaks a connection within about 2 s (cm.c). */
#define GD_ACK_TIMEOUT 16
#define GD_RETRY_COUNT 6

/* ---- asynchronous events (async.c) ---- */

struct gd_aev {
	int type;
	uint64_t handle; /* the QP's, CQ's or SRQ's context */
	int port;
};

int gd_async_next(struct ibv_context *ctx, struct gd_aev *ev);

/* ---- thin wrappers for Go (wrap.c) ---- */

struct ibv_context *gd_open_device(struct rdma_cm_id *anchor);
int gd_close_device(struct ibv_context *c);
const char *gd_device_name(struct ibv_context *c);
int gd_transport(struct ibv_context *c);
int gd_query_device(struct ibv_context *c, struct ibv_device_attr *a);
struct ibv_pd *gd_alloc_pd(struct ibv_context *c);
int gd_dealloc_pd(struct ibv_pd *p);
struct ibv_mr *gd_reg_mr(struct ibv_pd *p, uint64_t addr, uint64_t len, int access);
int gd_dereg_mr(struct ibv_mr *m);
struct ibv_cq *gd_create_cq(struct ibv_context *c, int cqe, uint64_t handle, struct gd_ch *ch);
struct ibv_qp *gd_create_qp(struct ibv_pd *p, struct ibv_qp_init_attr *a, uint64_t handle);
int gd_destroy_qp(struct ibv_qp *q);
struct ibv_srq *gd_create_srq(struct ibv_pd *p, struct ibv_srq_init_attr *a, uint64_t handle);
int gd_modify_srq(struct ibv_srq *s, uint32_t max_wr, uint32_t limit, int mask);
int gd_query_srq(struct ibv_srq *s, struct ibv_srq_attr *a);
struct rdma_event_channel *gd_cm_channel(void);
void gd_cm_channel_destroy(struct rdma_event_channel *ch);
int gd_cm_create_id(struct rdma_event_channel *ch, uint64_t handle, struct rdma_cm_id **id);
int gd_cm_destroy_id(struct rdma_cm_id *id);
void gd_id_set_handle(struct rdma_cm_id *id, uint64_t handle);
int gd_cm_bind(struct rdma_cm_id *id, struct sockaddr *sa);
int gd_cm_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst, int ms);
int gd_cm_resolve_route(struct rdma_cm_id *id, int ms);
int gd_cm_listen(struct rdma_cm_id *id, int backlog);
int gd_cm_reject(struct rdma_cm_id *id, const void *p, int n);
int gd_cm_disconnect(struct rdma_cm_id *id);
int gd_cm_establish(struct rdma_cm_id *id);
int gd_cm_notify(struct rdma_cm_id *id, int ev);
int gd_id_port_num(struct rdma_cm_id *id);
int gd_probe(struct sockaddr *sa, char *name, int n, int *port, int *active);
int gd_probe_inline(struct ibv_context *c);
int gd_noop(void);
int gd_pingpong(struct gd_qp *qa, struct gd_cq *ca, struct gd_qp *qb, struct gd_cq *cb, uint64_t abuf,
		uint32_t alkey, uint64_t bbuf, uint32_t blkey, int n);

#endif
