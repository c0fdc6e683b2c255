/*
 * dat_redirection.h - provider dispatch for the DAT 1.2 API.
 *
 * Every DAT handle points at an object whose first word is a pointer to
 * the DAT_PROVIDER dispatch table of the provider that created it.  The
 * DAT_xxx() macros below call straight through that table; the dat_xxx()
 * library functions do the same after validating the handle.  The
 * user-level slots and the table itself are in udat_redirection.h.
 */
#ifndef _DAT_REDIRECTION_H_
#define _DAT_REDIRECTION_H_

#include <dat/udat.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dat_provider	DAT_PROVIDER;

/* The provider dispatch table of the object a handle refers to. */
#define DAT_HANDLE_TO_PROVIDER(handle)	(*(DAT_PROVIDER **) (handle))

/* ------------------------------------------------------------------ */
/* Calls through the dispatch table                                    */
/* ------------------------------------------------------------------ */

#define DAT_IA_QUERY(ia, evd, ia_msk, ia_ptr, p_msk, p_ptr) \
	(*DAT_HANDLE_TO_PROVIDER(ia)->ia_query_func)( \
	    (ia), (evd), (ia_msk), (ia_ptr), (p_msk), (p_ptr))

#define DAT_SET_CONSUMER_CONTEXT(handle, context) \
	(*DAT_HANDLE_TO_PROVIDER(handle)->set_consumer_context_func)( \
	    (handle), (context))

#define DAT_GET_CONSUMER_CONTEXT(handle, context) \
	(*DAT_HANDLE_TO_PROVIDER(handle)->get_consumer_context_func)( \
	    (handle), (context))

#define DAT_GET_HANDLE_TYPE(handle, handle_type) \
	(*DAT_HANDLE_TO_PROVIDER(handle)->get_handle_type_func)( \
	    (handle), (handle_type))

#define DAT_CR_QUERY(cr, mask, param) \
	(*DAT_HANDLE_TO_PROVIDER(cr)->cr_query_func)((cr), (mask), (param))

#define DAT_CR_ACCEPT(cr, ep, size, pdata) \
	(*DAT_HANDLE_TO_PROVIDER(cr)->cr_accept_func)( \
	    (cr), (ep), (size), (pdata))

#define DAT_CR_REJECT(cr) \
	(*DAT_HANDLE_TO_PROVIDER(cr)->cr_reject_func)((cr))

#define DAT_CR_HANDOFF(cr, qual) \
	(*DAT_HANDLE_TO_PROVIDER(cr)->cr_handoff_func)((cr), (qual))

#define DAT_EVD_QUERY(evd, mask, param) \
	(*DAT_HANDLE_TO_PROVIDER(evd)->evd_query_func)((evd), (mask), (param))

#define DAT_EVD_RESIZE(evd, qsize) \
	(*DAT_HANDLE_TO_PROVIDER(evd)->evd_resize_func)((evd), (qsize))

#define DAT_EVD_POST_SE(evd, event) \
	(*DAT_HANDLE_TO_PROVIDER(evd)->evd_post_se_func)((evd), (event))

#define DAT_EVD_DEQUEUE(evd, event) \
	(*DAT_HANDLE_TO_PROVIDER(evd)->evd_dequeue_func)((evd), (event))

#define DAT_EVD_FREE(evd) \
	(*DAT_HANDLE_TO_PROVIDER(evd)->evd_free_func)((evd))

#define DAT_EP_CREATE(ia, pz, in_evd, out_evd, connect_evd, attr, ep) \
	(*DAT_HANDLE_TO_PROVIDER(ia)->ep_create_func)( \
	    (ia), (pz), (in_evd), (out_evd), (connect_evd), (attr), (ep))

#define DAT_EP_CREATE_WITH_SRQ(ia, pz, in_evd, out_evd, connect_evd, srq, \
    attr, ep) \
	(*DAT_HANDLE_TO_PROVIDER(ia)->ep_create_with_srq_func)( \
	    (ia), (pz), (in_evd), (out_evd), (connect_evd), (srq), \
	    (attr), (ep))

#define DAT_EP_QUERY(ep, mask, param) \
	(*DAT_HANDLE_TO_PROVIDER(ep)->ep_query_func)((ep), (mask), (param))

#define DAT_EP_MODIFY(ep, mask, param) \
	(*DAT_HANDLE_TO_PROVIDER(ep)->ep_modify_func)((ep), (mask), (param))

#define DAT_EP_CONNECT(ep, ia_addr, conn_qual, timeout, psize, pdata, qos, \
    flags) \
	(*DAT_HANDLE_TO_PROVIDER(ep)->ep_connect_func)( \
	    (ep), (ia_addr), (conn_qual), (timeout), (psize), (pdata), \
	    (qos), (flags))

#define DAT_EP_DUP_CONNECT(ep, dup, timeout, psize, pdata, qos) \
	(*DAT_HANDLE_TO_PROVIDER(ep)->ep_dup_connect_func)( \
	    (ep), (dup), (timeout), (psize), (pdata), (qos))

#define DAT_EP_DISCONNECT(ep, flags) \
	(*DAT_HANDLE_TO_PROVIDER(ep)->ep_disconnect_func)((ep), (flags))

#define DAT_EP_POST_SEND(ep, size, lbuf, cookie, flags) \
	(*DAT_HANDLE_TO_PROVIDER(ep)->ep_post_send_func)( \
	    (ep), (size), (lbuf), (cookie), (flags))

#define DAT_EP_POST_RECV(ep, size, lbuf, cookie, flags) \
	(*DAT_HANDLE_TO_PROVIDER(ep)->ep_post_recv_func)( \
	    (ep), (size), (lbuf), (cookie), (flags))

#define DAT_EP_POST_RDMA_READ(ep, size, lbuf, cookie, rbuf, flags) \
	(*DAT_HANDLE_TO_PROVIDER(ep)->ep_post_rdma_read_func)( \
	    (ep), (size), (lbuf), (cookie), (rbuf), (flags))

#define DAT_EP_POST_RDMA_WRITE(ep, size, lbuf, cookie, rbuf, flags) \
	(*DAT_HANDLE_TO_PROVIDER(ep)->ep_post_rdma_write_func)( \
	    (ep), (size), (lbuf), (cookie), (rbuf), (flags))

#define DAT_EP_GET_STATUS(ep, ep_state, recv_idle, request_idle) \
	(*DAT_HANDLE_TO_PROVIDER(ep)->ep_get_status_func)( \
	    (ep), (ep_state), (recv_idle), (request_idle))

#define DAT_EP_FREE(ep) \
	(*DAT_HANDLE_TO_PROVIDER(ep)->ep_free_func)((ep))

#define DAT_EP_RESET(ep) \
	(*DAT_HANDLE_TO_PROVIDER(ep)->ep_reset_func)((ep))

#define DAT_EP_RECV_QUERY(ep, nbuf_alloc, buf_span) \
	(*DAT_HANDLE_TO_PROVIDER(ep)->ep_recv_query_func)( \
	    (ep), (nbuf_alloc), (buf_span))

#define DAT_EP_SET_WATERMARK(ep, soft_wm, hard_wm) \
	(*DAT_HANDLE_TO_PROVIDER(ep)->ep_set_watermark_func)( \
	    (ep), (soft_wm), (hard_wm))

#define DAT_LMR_QUERY(lmr, mask, param) \
	(*DAT_HANDLE_TO_PROVIDER(lmr)->lmr_query_func)((lmr), (mask), (param))

#define DAT_LMR_FREE(lmr) \
	(*DAT_HANDLE_TO_PROVIDER(lmr)->lmr_free_func)((lmr))

#define DAT_LMR_SYNC_RDMA_READ(ia, lbuf, size) \
	(*DAT_HANDLE_TO_PROVIDER(ia)->lmr_sync_rdma_read_func)( \
	    (ia), (lbuf), (size))

#define DAT_LMR_SYNC_RDMA_WRITE(ia, lbuf, size) \
	(*DAT_HANDLE_TO_PROVIDER(ia)->lmr_sync_rdma_write_func)( \
	    (ia), (lbuf), (size))

#define DAT_RMR_CREATE(pz, rmr) \
	(*DAT_HANDLE_TO_PROVIDER(pz)->rmr_create_func)((pz), (rmr))

#define DAT_RMR_QUERY(rmr, mask, param) \
	(*DAT_HANDLE_TO_PROVIDER(rmr)->rmr_query_func)((rmr), (mask), (param))

#define DAT_RMR_BIND(rmr, lmr, mem_priv, ep, cookie, flags, context) \
	(*DAT_HANDLE_TO_PROVIDER(rmr)->rmr_bind_func)( \
	    (rmr), (lmr), (mem_priv), (ep), (cookie), (flags), (context))

#define DAT_RMR_FREE(rmr) \
	(*DAT_HANDLE_TO_PROVIDER(rmr)->rmr_free_func)((rmr))

#define DAT_PSP_CREATE(ia, conn_qual, evd, flags, handle) \
	(*DAT_HANDLE_TO_PROVIDER(ia)->psp_create_func)( \
	    (ia), (conn_qual), (evd), (flags), (handle))

#define DAT_PSP_CREATE_ANY(ia, conn_qual, evd, flags, handle) \
	(*DAT_HANDLE_TO_PROVIDER(ia)->psp_create_any_func)( \
	    (ia), (conn_qual), (evd), (flags), (handle))

#define DAT_PSP_QUERY(psp, mask, param) \
	(*DAT_HANDLE_TO_PROVIDER(psp)->psp_query_func)((psp), (mask), (param))

#define DAT_PSP_FREE(psp) \
	(*DAT_HANDLE_TO_PROVIDER(psp)->psp_free_func)((psp))

#define DAT_RSP_CREATE(ia, conn_qual, ep, evd, handle) \
	(*DAT_HANDLE_TO_PROVIDER(ia)->rsp_create_func)( \
	    (ia), (conn_qual), (ep), (evd), (handle))

#define DAT_RSP_QUERY(rsp, mask, param) \
	(*DAT_HANDLE_TO_PROVIDER(rsp)->rsp_query_func)((rsp), (mask), (param))

#define DAT_RSP_FREE(rsp) \
	(*DAT_HANDLE_TO_PROVIDER(rsp)->rsp_free_func)((rsp))

#define DAT_PZ_CREATE(ia, pz) \
	(*DAT_HANDLE_TO_PROVIDER(ia)->pz_create_func)((ia), (pz))

#define DAT_PZ_QUERY(pz, mask, param) \
	(*DAT_HANDLE_TO_PROVIDER(pz)->pz_query_func)((pz), (mask), (param))

#define DAT_PZ_FREE(pz) \
	(*DAT_HANDLE_TO_PROVIDER(pz)->pz_free_func)((pz))

#define DAT_SRQ_CREATE(ia, pz, attr, srq) \
	(*DAT_HANDLE_TO_PROVIDER(ia)->srq_create_func)( \
	    (ia), (pz), (attr), (srq))

#define DAT_SRQ_SET_LW(srq, lw) \
	(*DAT_HANDLE_TO_PROVIDER(srq)->srq_set_lw_func)((srq), (lw))

#define DAT_SRQ_FREE(srq) \
	(*DAT_HANDLE_TO_PROVIDER(srq)->srq_free_func)((srq))

#define DAT_SRQ_QUERY(srq, mask, param) \
	(*DAT_HANDLE_TO_PROVIDER(srq)->srq_query_func)((srq), (mask), (param))

#define DAT_SRQ_RESIZE(srq, qsize) \
	(*DAT_HANDLE_TO_PROVIDER(srq)->srq_resize_func)((srq), (qsize))

#define DAT_SRQ_POST_RECV(srq, size, lbuf, cookie) \
	(*DAT_HANDLE_TO_PROVIDER(srq)->srq_post_recv_func)( \
	    (srq), (size), (lbuf), (cookie))

/* ------------------------------------------------------------------ */
/* Dispatch table slot types                                           */
/* ------------------------------------------------------------------ */

typedef DAT_RETURN (*DAT_IA_OPEN_FUNC)(
	const DAT_NAME_PTR provider,
	DAT_COUNT asynch_evd_min_qlen,
	DAT_EVD_HANDLE *asynch_evd_handle,
	DAT_IA_HANDLE *ia_handle);

typedef DAT_RETURN (*DAT_IA_OPENV_FUNC)(
	const DAT_NAME_PTR provider,
	DAT_COUNT asynch_evd_min_qlen,
	DAT_EVD_HANDLE *asynch_evd_handle,
	DAT_IA_HANDLE *ia_handle,
	DAT_UINT32 dat_major_version_number,
	DAT_UINT32 dat_minor_version_number,
	DAT_BOOLEAN dat_thread_safety);

typedef DAT_RETURN (*DAT_IA_CLOSE_FUNC)(
	DAT_IA_HANDLE ia_handle,
	DAT_CLOSE_FLAGS close_flags);

typedef DAT_RETURN (*DAT_IA_QUERY_FUNC)(
	DAT_IA_HANDLE ia_handle,
	DAT_EVD_HANDLE *async_evd_handle,
	DAT_IA_ATTR_MASK ia_attr_mask,
	DAT_IA_ATTR *ia_attr,
	DAT_PROVIDER_ATTR_MASK provider_attr_mask,
	DAT_PROVIDER_ATTR *provider_attr);

typedef DAT_RETURN (*DAT_SET_CONSUMER_CONTEXT_FUNC)(
	DAT_HANDLE dat_handle,
	DAT_CONTEXT context);

typedef DAT_RETURN (*DAT_GET_CONSUMER_CONTEXT_FUNC)(
	DAT_HANDLE dat_handle,
	DAT_CONTEXT *context);

typedef DAT_RETURN (*DAT_GET_HANDLE_TYPE_FUNC)(
	DAT_HANDLE dat_handle,
	DAT_HANDLE_TYPE *dat_handle_type);

typedef DAT_RETURN (*DAT_CR_QUERY_FUNC)(
	DAT_CR_HANDLE cr_handle,
	DAT_CR_PARAM_MASK cr_param_mask,
	DAT_CR_PARAM *cr_param);

typedef DAT_RETURN (*DAT_CR_ACCEPT_FUNC)(
	DAT_CR_HANDLE cr_handle,
	DAT_EP_HANDLE ep_handle,
	DAT_COUNT private_data_size,
	const DAT_PVOID private_data);

typedef DAT_RETURN (*DAT_CR_REJECT_FUNC)(
	DAT_CR_HANDLE cr_handle);

typedef DAT_RETURN (*DAT_CR_HANDOFF_FUNC)(
	DAT_CR_HANDLE cr_handle,
	DAT_CONN_QUAL handoff);

typedef DAT_RETURN (*DAT_EVD_RESIZE_FUNC)(
	DAT_EVD_HANDLE evd_handle,
	DAT_COUNT evd_min_qlen);

typedef DAT_RETURN (*DAT_EVD_POST_SE_FUNC)(
	DAT_EVD_HANDLE evd_handle,
	const DAT_EVENT *event);

typedef DAT_RETURN (*DAT_EVD_DEQUEUE_FUNC)(
	DAT_EVD_HANDLE evd_handle,
	DAT_EVENT *event);

typedef DAT_RETURN (*DAT_EVD_FREE_FUNC)(
	DAT_EVD_HANDLE evd_handle);

typedef DAT_RETURN (*DAT_EVD_QUERY_FUNC)(
	DAT_EVD_HANDLE evd_handle,
	DAT_EVD_PARAM_MASK evd_param_mask,
	DAT_EVD_PARAM *evd_param);

typedef DAT_RETURN (*DAT_EP_CREATE_FUNC)(
	DAT_IA_HANDLE ia_handle,
	DAT_PZ_HANDLE pz_handle,
	DAT_EVD_HANDLE recv_completion_evd_handle,
	DAT_EVD_HANDLE request_completion_evd_handle,
	DAT_EVD_HANDLE connect_evd_handle,
	const DAT_EP_ATTR *ep_attributes,
	DAT_EP_HANDLE *ep_handle);

typedef DAT_RETURN (*DAT_EP_CREATE_WITH_SRQ_FUNC)(
	DAT_IA_HANDLE ia_handle,
	DAT_PZ_HANDLE pz_handle,
	DAT_EVD_HANDLE recv_completion_evd_handle,
	DAT_EVD_HANDLE request_completion_evd_handle,
	DAT_EVD_HANDLE connect_evd_handle,
	DAT_SRQ_HANDLE srq_handle,
	const DAT_EP_ATTR *ep_attributes,
	DAT_EP_HANDLE *ep_handle);

typedef DAT_RETURN (*DAT_EP_QUERY_FUNC)(
	DAT_EP_HANDLE ep_handle,
	DAT_EP_PARAM_MASK ep_param_mask,
	DAT_EP_PARAM *ep_param);

typedef DAT_RETURN (*DAT_EP_MODIFY_FUNC)(
	DAT_EP_HANDLE ep_handle,
	DAT_EP_PARAM_MASK ep_param_mask,
	const DAT_EP_PARAM *ep_param);

typedef DAT_RETURN (*DAT_EP_CONNECT_FUNC)(
	DAT_EP_HANDLE ep_handle,
	DAT_IA_ADDRESS_PTR remote_ia_address,
	DAT_CONN_QUAL remote_conn_qual,
	DAT_TIMEOUT timeout,
	DAT_COUNT private_data_size,
	const DAT_PVOID private_data,
	DAT_QOS quality_of_service,
	DAT_CONNECT_FLAGS connect_flags);

typedef DAT_RETURN (*DAT_EP_DUP_CONNECT_FUNC)(
	DAT_EP_HANDLE ep_handle,
	DAT_EP_HANDLE ep_dup_handle,
	DAT_TIMEOUT timeout,
	DAT_COUNT private_data_size,
	const DAT_PVOID private_data,
	DAT_QOS quality_of_service);

typedef DAT_RETURN (*DAT_EP_DISCONNECT_FUNC)(
	DAT_EP_HANDLE ep_handle,
	DAT_CLOSE_FLAGS close_flags);

typedef DAT_RETURN (*DAT_EP_POST_SEND_FUNC)(
	DAT_EP_HANDLE ep_handle,
	DAT_COUNT num_segments,
	DAT_LMR_TRIPLET *local_iov,
	DAT_DTO_COOKIE user_cookie,
	DAT_COMPLETION_FLAGS completion_flags);

typedef DAT_RETURN (*DAT_EP_POST_RECV_FUNC)(
	DAT_EP_HANDLE ep_handle,
	DAT_COUNT num_segments,
	DAT_LMR_TRIPLET *local_iov,
	DAT_DTO_COOKIE user_cookie,
	DAT_COMPLETION_FLAGS completion_flags);

typedef DAT_RETURN (*DAT_EP_POST_RDMA_READ_FUNC)(
	DAT_EP_HANDLE ep_handle,
	DAT_COUNT num_segments,
	DAT_LMR_TRIPLET *local_iov,
	DAT_DTO_COOKIE user_cookie,
	const DAT_RMR_TRIPLET *remote_iov,
	DAT_COMPLETION_FLAGS completion_flags);

typedef DAT_RETURN (*DAT_EP_POST_RDMA_WRITE_FUNC)(
	DAT_EP_HANDLE ep_handle,
	DAT_COUNT num_segments,
	DAT_LMR_TRIPLET *local_iov,
	DAT_DTO_COOKIE user_cookie,
	const DAT_RMR_TRIPLET *remote_iov,
	DAT_COMPLETION_FLAGS completion_flags);

typedef DAT_RETURN (*DAT_EP_GET_STATUS_FUNC)(
	DAT_EP_HANDLE ep_handle,
	DAT_EP_STATE *ep_state,
	DAT_BOOLEAN *recv_idle,
	DAT_BOOLEAN *request_idle);

typedef DAT_RETURN (*DAT_EP_FREE_FUNC)(
	DAT_EP_HANDLE ep_handle);

typedef DAT_RETURN (*DAT_EP_RESET_FUNC)(
	DAT_EP_HANDLE ep_handle);

typedef DAT_RETURN (*DAT_EP_RECV_QUERY_FUNC)(
	DAT_EP_HANDLE ep_handle,
	DAT_COUNT *nbufs_allocated,
	DAT_COUNT *bufs_alloc_span);

typedef DAT_RETURN (*DAT_EP_SET_WATERMARK_FUNC)(
	DAT_EP_HANDLE ep_handle,
	DAT_COUNT ep_soft_high_watermark,
	DAT_COUNT ep_hard_high_watermark);

typedef DAT_RETURN (*DAT_LMR_FREE_FUNC)(
	DAT_LMR_HANDLE lmr_handle);

typedef DAT_RETURN (*DAT_LMR_QUERY_FUNC)(
	DAT_LMR_HANDLE lmr_handle,
	DAT_LMR_PARAM_MASK lmr_param_mask,
	DAT_LMR_PARAM *lmr_param);

typedef DAT_RETURN (*DAT_LMR_SYNC_RDMA_READ_FUNC)(
	DAT_IA_HANDLE ia_handle,
	const DAT_LMR_TRIPLET *local_segments,
	DAT_VLEN num_segments);

typedef DAT_RETURN (*DAT_LMR_SYNC_RDMA_WRITE_FUNC)(
	DAT_IA_HANDLE ia_handle,
	const DAT_LMR_TRIPLET *local_segments,
	DAT_VLEN num_segments);

typedef DAT_RETURN (*DAT_RMR_CREATE_FUNC)(
	DAT_PZ_HANDLE pz_handle,
	DAT_RMR_HANDLE *rmr_handle);

typedef DAT_RETURN (*DAT_RMR_QUERY_FUNC)(
	DAT_RMR_HANDLE rmr_handle,
	DAT_RMR_PARAM_MASK rmr_param_mask,
	DAT_RMR_PARAM *rmr_param);

typedef DAT_RETURN (*DAT_RMR_BIND_FUNC)(
	DAT_RMR_HANDLE rmr_handle,
	const DAT_LMR_TRIPLET *lmr_triplet,
	DAT_MEM_PRIV_FLAGS mem_priv,
	DAT_EP_HANDLE ep_handle,
	DAT_RMR_COOKIE user_cookie,
	DAT_COMPLETION_FLAGS completion_flags,
	DAT_RMR_CONTEXT *context);

typedef DAT_RETURN (*DAT_RMR_FREE_FUNC)(
	DAT_RMR_HANDLE rmr_handle);

typedef DAT_RETURN (*DAT_PSP_CREATE_FUNC)(
	DAT_IA_HANDLE ia_handle,
	DAT_CONN_QUAL conn_qual,
	DAT_EVD_HANDLE evd_handle,
	DAT_PSP_FLAGS psp_flags,
	DAT_PSP_HANDLE *psp_handle);

typedef DAT_RETURN (*DAT_PSP_CREATE_ANY_FUNC)(
	DAT_IA_HANDLE ia_handle,
	DAT_CONN_QUAL *conn_qual,
	DAT_EVD_HANDLE evd_handle,
	DAT_PSP_FLAGS psp_flags,
	DAT_PSP_HANDLE *psp_handle);

typedef DAT_RETURN (*DAT_PSP_QUERY_FUNC)(
	DAT_PSP_HANDLE psp_handle,
	DAT_PSP_PARAM_MASK psp_param_mask,
	DAT_PSP_PARAM *psp_param);

typedef DAT_RETURN (*DAT_PSP_FREE_FUNC)(
	DAT_PSP_HANDLE psp_handle);

typedef DAT_RETURN (*DAT_RSP_CREATE_FUNC)(
	DAT_IA_HANDLE ia_handle,
	DAT_CONN_QUAL conn_qual,
	DAT_EP_HANDLE ep_handle,
	DAT_EVD_HANDLE evd_handle,
	DAT_RSP_HANDLE *rsp_handle);

typedef DAT_RETURN (*DAT_RSP_QUERY_FUNC)(
	DAT_RSP_HANDLE rsp_handle,
	DAT_RSP_PARAM_MASK rsp_param_mask,
	DAT_RSP_PARAM *rsp_param);

typedef DAT_RETURN (*DAT_RSP_FREE_FUNC)(
	DAT_RSP_HANDLE rsp_handle);

typedef DAT_RETURN (*DAT_PZ_CREATE_FUNC)(
	DAT_IA_HANDLE ia_handle,
	DAT_PZ_HANDLE *pz_handle);

typedef DAT_RETURN (*DAT_PZ_QUERY_FUNC)(
	DAT_PZ_HANDLE pz_handle,
	DAT_PZ_PARAM_MASK pz_param_mask,
	DAT_PZ_PARAM *pz_param);

typedef DAT_RETURN (*DAT_PZ_FREE_FUNC)(
	DAT_PZ_HANDLE pz_handle);

typedef DAT_RETURN (*DAT_SRQ_CREATE_FUNC)(
	DAT_IA_HANDLE ia_handle,
	DAT_PZ_HANDLE pz_handle,
	DAT_SRQ_ATTR *srq_attributes,
	DAT_SRQ_HANDLE *srq_handle);

typedef DAT_RETURN (*DAT_SRQ_SET_LW_FUNC)(
	DAT_SRQ_HANDLE srq_handle,
	DAT_COUNT srq_low_watermark);

typedef DAT_RETURN (*DAT_SRQ_FREE_FUNC)(
	DAT_SRQ_HANDLE srq_handle);

typedef DAT_RETURN (*DAT_SRQ_QUERY_FUNC)(
	DAT_SRQ_HANDLE srq_handle,
	DAT_SRQ_PARAM_MASK srq_param_mask,
	DAT_SRQ_PARAM *srq_param);

typedef DAT_RETURN (*DAT_SRQ_RESIZE_FUNC)(
	DAT_SRQ_HANDLE srq_handle,
	DAT_COUNT srq_queue_length);

typedef DAT_RETURN (*DAT_SRQ_POST_RECV_FUNC)(
	DAT_SRQ_HANDLE srq_handle,
	DAT_COUNT num_segments,
	DAT_LMR_TRIPLET *local_iov,
	DAT_DTO_COOKIE user_cookie);

/*
 * Translates an IA handle returned by dat_ia_open() into the handle of the
 * provider's own IA object (stored in *ia_handle_ptr).
 */
extern DAT_RETURN dats_get_ia_handle(
	DAT_IA_HANDLE ia_handle,
	DAT_IA_HANDLE *ia_handle_ptr);

#ifdef __cplusplus
}
#endif

#endif /* _DAT_REDIRECTION_H_ */
