// C entry points of libdat. Each checks that the process is not a forked
// child before entering Go: the Go runtime does not survive fork(), so a
// child that called in would hang. Children get DAT_INTERNAL_ERROR at once
// and must exec. Unions and structs passed by value are handed to Go as a
// 64-bit word or by address.
//
// This file was first generated from the function rows of the DAT 1.2 ABI
// facts and is maintained by hand.

#include "godat.h"
#include "_cgo_export.h"

DAT_RETURN dat_ia_openv(const DAT_NAME_PTR provider, DAT_COUNT asynch_evd_min_qlen, DAT_EVD_HANDLE * asynch_evd_handle, DAT_IA_HANDLE * ia_handle, DAT_UINT32 dat_major_version_number, DAT_UINT32 dat_minor_version_number, DAT_BOOLEAN dat_thread_safety)
{
	GODAT_GUARD;
	return go_dat_ia_openv(provider, asynch_evd_min_qlen, asynch_evd_handle, ia_handle, dat_major_version_number, dat_minor_version_number, dat_thread_safety);
}

DAT_RETURN dat_ia_query(DAT_IA_HANDLE ia_handle, DAT_EVD_HANDLE * async_evd_handle, DAT_IA_ATTR_MASK ia_attr_mask, DAT_IA_ATTR * ia_attr, DAT_PROVIDER_ATTR_MASK provider_attr_mask, DAT_PROVIDER_ATTR * provider_attr)
{
	GODAT_GUARD;
	return go_dat_ia_query((godat_handle)ia_handle, async_evd_handle, ia_attr_mask, ia_attr, provider_attr_mask, provider_attr);
}

DAT_RETURN dat_ia_close(DAT_IA_HANDLE ia_handle, DAT_CLOSE_FLAGS close_flags)
{
	GODAT_GUARD;
	return go_dat_ia_close((godat_handle)ia_handle, close_flags);
}

DAT_RETURN dat_set_consumer_context(DAT_HANDLE dat_handle, DAT_CONTEXT context)
{
	GODAT_GUARD;
	return go_dat_set_consumer_context((godat_handle)dat_handle, context.as_64);
}

DAT_RETURN dat_get_consumer_context(DAT_HANDLE dat_handle, DAT_CONTEXT * context)
{
	GODAT_GUARD;
	return go_dat_get_consumer_context((godat_handle)dat_handle, context);
}

DAT_RETURN dat_get_handle_type(DAT_HANDLE dat_handle, DAT_HANDLE_TYPE * handle_type)
{
	GODAT_GUARD;
	return go_dat_get_handle_type((godat_handle)dat_handle, handle_type);
}

DAT_RETURN dat_cr_query(DAT_CR_HANDLE cr_handle, DAT_CR_PARAM_MASK cr_param_mask, DAT_CR_PARAM * cr_param)
{
	GODAT_GUARD;
	return go_dat_cr_query((godat_handle)cr_handle, cr_param_mask, cr_param);
}

DAT_RETURN dat_cr_accept(DAT_CR_HANDLE cr_handle, DAT_EP_HANDLE ep_handle, DAT_COUNT private_data_size, const DAT_PVOID private_data)
{
	GODAT_GUARD;
	return go_dat_cr_accept((godat_handle)cr_handle, (godat_handle)ep_handle, private_data_size, private_data);
}

DAT_RETURN dat_cr_reject(DAT_CR_HANDLE cr_handle)
{
	GODAT_GUARD;
	return go_dat_cr_reject((godat_handle)cr_handle);
}

DAT_RETURN dat_cr_handoff(DAT_CR_HANDLE cr_handle, DAT_CONN_QUAL handoff)
{
	GODAT_GUARD;
	return go_dat_cr_handoff((godat_handle)cr_handle, handoff);
}

DAT_RETURN dat_evd_resize(DAT_EVD_HANDLE evd_handle, DAT_COUNT evd_min_qlen)
{
	GODAT_GUARD;
	return go_dat_evd_resize((godat_handle)evd_handle, evd_min_qlen);
}

DAT_RETURN dat_evd_post_se(DAT_EVD_HANDLE evd_handle, const DAT_EVENT * event)
{
	GODAT_GUARD;
	return go_dat_evd_post_se((godat_handle)evd_handle, (DAT_EVENT *)event);
}

DAT_RETURN dat_evd_dequeue(DAT_EVD_HANDLE evd_handle, DAT_EVENT * event)
{
	GODAT_GUARD;
	return go_dat_evd_dequeue((godat_handle)evd_handle, event);
}

DAT_RETURN dat_evd_query(DAT_EVD_HANDLE evd_handle, DAT_EVD_PARAM_MASK evd_param_mask, DAT_EVD_PARAM * evd_param)
{
	GODAT_GUARD;
	return go_dat_evd_query((godat_handle)evd_handle, evd_param_mask, evd_param);
}

DAT_RETURN dat_evd_free(DAT_EVD_HANDLE evd_handle)
{
	GODAT_GUARD;
	return go_dat_evd_free((godat_handle)evd_handle);
}

DAT_RETURN dat_ep_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle, DAT_EVD_HANDLE recv_completion_evd_handle, DAT_EVD_HANDLE request_completion_evd_handle, DAT_EVD_HANDLE connect_evd_handle, const DAT_EP_ATTR * ep_attributes, DAT_EP_HANDLE * ep_handle)
{
	GODAT_GUARD;
	return go_dat_ep_create((godat_handle)ia_handle, (godat_handle)pz_handle, (godat_handle)recv_completion_evd_handle, (godat_handle)request_completion_evd_handle, (godat_handle)connect_evd_handle, (DAT_EP_ATTR *)ep_attributes, ep_handle);
}

DAT_RETURN dat_ep_query(DAT_EP_HANDLE ep_handle, DAT_EP_PARAM_MASK ep_param_mask, DAT_EP_PARAM * ep_param)
{
	GODAT_GUARD;
	return go_dat_ep_query((godat_handle)ep_handle, ep_param_mask, ep_param);
}

DAT_RETURN dat_ep_modify(DAT_EP_HANDLE ep_handle, DAT_EP_PARAM_MASK ep_param_mask, const DAT_EP_PARAM * ep_param)
{
	GODAT_GUARD;
	return go_dat_ep_modify((godat_handle)ep_handle, ep_param_mask, (DAT_EP_PARAM *)ep_param);
}

DAT_RETURN dat_ep_connect(DAT_EP_HANDLE ep_handle, DAT_IA_ADDRESS_PTR remote_ia_address, DAT_CONN_QUAL remote_conn_qual, DAT_TIMEOUT timeout, DAT_COUNT private_data_size, const DAT_PVOID private_data, DAT_QOS quality_of_service, DAT_CONNECT_FLAGS connect_flags)
{
	GODAT_GUARD;
	return go_dat_ep_connect((godat_handle)ep_handle, remote_ia_address, remote_conn_qual, timeout, private_data_size, private_data, quality_of_service, connect_flags);
}

DAT_RETURN dat_ep_dup_connect(DAT_EP_HANDLE ep_handle, DAT_EP_HANDLE ep_dup_handle, DAT_TIMEOUT timeout, DAT_COUNT private_data_size, const DAT_PVOID private_data, DAT_QOS quality_of_service)
{
	GODAT_GUARD;
	return go_dat_ep_dup_connect((godat_handle)ep_handle, (godat_handle)ep_dup_handle, timeout, private_data_size, private_data, quality_of_service);
}

DAT_RETURN dat_ep_disconnect(DAT_EP_HANDLE ep_handle, DAT_CLOSE_FLAGS close_flags)
{
	GODAT_GUARD;
	return go_dat_ep_disconnect((godat_handle)ep_handle, close_flags);
}

DAT_RETURN dat_ep_post_send(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments, DAT_LMR_TRIPLET * local_iov, DAT_DTO_COOKIE user_cookie, DAT_COMPLETION_FLAGS completion_flags)
{
	GODAT_GUARD;
	return go_dat_ep_post_send((godat_handle)ep_handle, num_segments, local_iov, user_cookie.as_64, completion_flags);
}

DAT_RETURN dat_ep_post_recv(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments, DAT_LMR_TRIPLET * local_iov, DAT_DTO_COOKIE user_cookie, DAT_COMPLETION_FLAGS completion_flags)
{
	GODAT_GUARD;
	return go_dat_ep_post_recv((godat_handle)ep_handle, num_segments, local_iov, user_cookie.as_64, completion_flags);
}

DAT_RETURN dat_ep_post_rdma_read(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments, DAT_LMR_TRIPLET * local_iov, DAT_DTO_COOKIE user_cookie, const DAT_RMR_TRIPLET * remote_iov, DAT_COMPLETION_FLAGS completion_flags)
{
	GODAT_GUARD;
	return go_dat_ep_post_rdma_read((godat_handle)ep_handle, num_segments, local_iov, user_cookie.as_64, (DAT_RMR_TRIPLET *)remote_iov, completion_flags);
}

DAT_RETURN dat_ep_post_rdma_write(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments, DAT_LMR_TRIPLET * local_iov, DAT_DTO_COOKIE user_cookie, const DAT_RMR_TRIPLET * remote_iov, DAT_COMPLETION_FLAGS completion_flags)
{
	GODAT_GUARD;
	return go_dat_ep_post_rdma_write((godat_handle)ep_handle, num_segments, local_iov, user_cookie.as_64, (DAT_RMR_TRIPLET *)remote_iov, completion_flags);
}

DAT_RETURN dat_ep_get_status(DAT_EP_HANDLE ep_handle, DAT_EP_STATE * ep_state, DAT_BOOLEAN * recv_idle, DAT_BOOLEAN * request_idle)
{
	GODAT_GUARD;
	return go_dat_ep_get_status((godat_handle)ep_handle, ep_state, recv_idle, request_idle);
}

DAT_RETURN dat_ep_free(DAT_EP_HANDLE ep_handle)
{
	GODAT_GUARD;
	return go_dat_ep_free((godat_handle)ep_handle);
}

DAT_RETURN dat_ep_reset(DAT_EP_HANDLE ep_handle)
{
	GODAT_GUARD;
	return go_dat_ep_reset((godat_handle)ep_handle);
}

DAT_RETURN dat_ep_create_with_srq(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle, DAT_EVD_HANDLE recv_evd_handle, DAT_EVD_HANDLE request_evd_handle, DAT_EVD_HANDLE connect_evd_handle, DAT_SRQ_HANDLE srq_handle, const DAT_EP_ATTR * ep_attributes, DAT_EP_HANDLE * ep_handle)
{
	GODAT_GUARD;
	return go_dat_ep_create_with_srq((godat_handle)ia_handle, (godat_handle)pz_handle, (godat_handle)recv_evd_handle, (godat_handle)request_evd_handle, (godat_handle)connect_evd_handle, (godat_handle)srq_handle, (DAT_EP_ATTR *)ep_attributes, ep_handle);
}

DAT_RETURN dat_ep_recv_query(DAT_EP_HANDLE ep_handle, DAT_COUNT * nbufs_allocated, DAT_COUNT * bufs_alloc_span)
{
	GODAT_GUARD;
	return go_dat_ep_recv_query((godat_handle)ep_handle, nbufs_allocated, bufs_alloc_span);
}

DAT_RETURN dat_ep_set_watermark(DAT_EP_HANDLE ep_handle, DAT_COUNT soft_high_watermark, DAT_COUNT hard_high_watermark)
{
	GODAT_GUARD;
	return go_dat_ep_set_watermark((godat_handle)ep_handle, soft_high_watermark, hard_high_watermark);
}

DAT_RETURN dat_lmr_query(DAT_LMR_HANDLE lmr_handle, DAT_LMR_PARAM_MASK lmr_param_mask, DAT_LMR_PARAM * lmr_param)
{
	GODAT_GUARD;
	return go_dat_lmr_query((godat_handle)lmr_handle, lmr_param_mask, lmr_param);
}

DAT_RETURN dat_lmr_free(DAT_LMR_HANDLE lmr_handle)
{
	GODAT_GUARD;
	return go_dat_lmr_free((godat_handle)lmr_handle);
}

DAT_RETURN dat_lmr_sync_rdma_read(DAT_IA_HANDLE ia_handle, const DAT_LMR_TRIPLET * local_segments, DAT_VLEN num_segments)
{
	GODAT_GUARD;
	return go_dat_lmr_sync_rdma_read((godat_handle)ia_handle, (DAT_LMR_TRIPLET *)local_segments, num_segments);
}

DAT_RETURN dat_lmr_sync_rdma_write(DAT_IA_HANDLE ia_handle, const DAT_LMR_TRIPLET * local_segments, DAT_VLEN num_segments)
{
	GODAT_GUARD;
	return go_dat_lmr_sync_rdma_write((godat_handle)ia_handle, (DAT_LMR_TRIPLET *)local_segments, num_segments);
}

DAT_RETURN dat_rmr_create(DAT_PZ_HANDLE pz_handle, DAT_RMR_HANDLE * rmr_handle)
{
	GODAT_GUARD;
	return go_dat_rmr_create((godat_handle)pz_handle, rmr_handle);
}

DAT_RETURN dat_rmr_query(DAT_RMR_HANDLE rmr_handle, DAT_RMR_PARAM_MASK rmr_param_mask, DAT_RMR_PARAM * rmr_param)
{
	GODAT_GUARD;
	return go_dat_rmr_query((godat_handle)rmr_handle, rmr_param_mask, rmr_param);
}

DAT_RETURN dat_rmr_bind(DAT_RMR_HANDLE rmr_handle, const DAT_LMR_TRIPLET * lmr_triplet, DAT_MEM_PRIV_FLAGS mem_priv, DAT_EP_HANDLE ep_handle, DAT_RMR_COOKIE user_cookie, DAT_COMPLETION_FLAGS completion_flags, DAT_RMR_CONTEXT * context)
{
	GODAT_GUARD;
	return go_dat_rmr_bind((godat_handle)rmr_handle, (DAT_LMR_TRIPLET *)lmr_triplet, mem_priv, (godat_handle)ep_handle, user_cookie.as_64, completion_flags, context);
}

DAT_RETURN dat_rmr_free(DAT_RMR_HANDLE rmr_handle)
{
	GODAT_GUARD;
	return go_dat_rmr_free((godat_handle)rmr_handle);
}

DAT_RETURN dat_psp_create(DAT_IA_HANDLE ia_handle, DAT_CONN_QUAL conn_qual, DAT_EVD_HANDLE evd_handle, DAT_PSP_FLAGS psp_flags, DAT_PSP_HANDLE * psp_handle)
{
	GODAT_GUARD;
	return go_dat_psp_create((godat_handle)ia_handle, conn_qual, (godat_handle)evd_handle, psp_flags, psp_handle);
}

DAT_RETURN dat_psp_create_any(DAT_IA_HANDLE ia_handle, DAT_CONN_QUAL * conn_qual, DAT_EVD_HANDLE evd_handle, DAT_PSP_FLAGS psp_flags, DAT_PSP_HANDLE * psp_handle)
{
	GODAT_GUARD;
	return go_dat_psp_create_any((godat_handle)ia_handle, conn_qual, (godat_handle)evd_handle, psp_flags, psp_handle);
}

DAT_RETURN dat_psp_query(DAT_PSP_HANDLE psp_handle, DAT_PSP_PARAM_MASK psp_param_mask, DAT_PSP_PARAM * psp_param)
{
	GODAT_GUARD;
	return go_dat_psp_query((godat_handle)psp_handle, psp_param_mask, psp_param);
}

DAT_RETURN dat_psp_free(DAT_PSP_HANDLE psp_handle)
{
	GODAT_GUARD;
	return go_dat_psp_free((godat_handle)psp_handle);
}

DAT_RETURN dat_rsp_create(DAT_IA_HANDLE ia_handle, DAT_CONN_QUAL conn_qual, DAT_EP_HANDLE ep_handle, DAT_EVD_HANDLE evd_handle, DAT_RSP_HANDLE * rsp_handle)
{
	GODAT_GUARD;
	return go_dat_rsp_create((godat_handle)ia_handle, conn_qual, (godat_handle)ep_handle, (godat_handle)evd_handle, rsp_handle);
}

DAT_RETURN dat_rsp_query(DAT_RSP_HANDLE rsp_handle, DAT_RSP_PARAM_MASK rsp_param_mask, DAT_RSP_PARAM * rsp_param)
{
	GODAT_GUARD;
	return go_dat_rsp_query((godat_handle)rsp_handle, rsp_param_mask, rsp_param);
}

DAT_RETURN dat_rsp_free(DAT_RSP_HANDLE rsp_handle)
{
	GODAT_GUARD;
	return go_dat_rsp_free((godat_handle)rsp_handle);
}

DAT_RETURN dat_pz_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE * pz_handle)
{
	GODAT_GUARD;
	return go_dat_pz_create((godat_handle)ia_handle, pz_handle);
}

DAT_RETURN dat_pz_query(DAT_PZ_HANDLE pz_handle, DAT_PZ_PARAM_MASK pz_param_mask, DAT_PZ_PARAM * pz_param)
{
	GODAT_GUARD;
	return go_dat_pz_query((godat_handle)pz_handle, pz_param_mask, pz_param);
}

DAT_RETURN dat_pz_free(DAT_PZ_HANDLE pz_handle)
{
	GODAT_GUARD;
	return go_dat_pz_free((godat_handle)pz_handle);
}

DAT_RETURN dat_srq_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle, DAT_SRQ_ATTR * srq_attr, DAT_SRQ_HANDLE * srq_handle)
{
	GODAT_GUARD;
	return go_dat_srq_create((godat_handle)ia_handle, (godat_handle)pz_handle, srq_attr, srq_handle);
}

DAT_RETURN dat_srq_free(DAT_SRQ_HANDLE srq_handle)
{
	GODAT_GUARD;
	return go_dat_srq_free((godat_handle)srq_handle);
}

DAT_RETURN dat_srq_post_recv(DAT_SRQ_HANDLE srq_handle, DAT_COUNT num_segments, DAT_LMR_TRIPLET * local_iov, DAT_DTO_COOKIE user_cookie)
{
	GODAT_GUARD;
	return go_dat_srq_post_recv((godat_handle)srq_handle, num_segments, local_iov, user_cookie.as_64);
}

DAT_RETURN dat_srq_query(DAT_SRQ_HANDLE srq_handle, DAT_SRQ_PARAM_MASK srq_param_mask, DAT_SRQ_PARAM * srq_param)
{
	GODAT_GUARD;
	return go_dat_srq_query((godat_handle)srq_handle, srq_param_mask, srq_param);
}

DAT_RETURN dat_srq_resize(DAT_SRQ_HANDLE srq_handle, DAT_COUNT srq_max_recv_dto)
{
	GODAT_GUARD;
	return go_dat_srq_resize((godat_handle)srq_handle, srq_max_recv_dto);
}

DAT_RETURN dat_srq_set_lw(DAT_SRQ_HANDLE srq_handle, DAT_COUNT low_watermark)
{
	GODAT_GUARD;
	return go_dat_srq_set_lw((godat_handle)srq_handle, low_watermark);
}

DAT_RETURN dat_registry_list_providers(DAT_COUNT max_to_return, DAT_COUNT * entries_returned, DAT_PROVIDER_INFO ** dat_provider_list)
{
	GODAT_GUARD;
	return go_dat_registry_list_providers(max_to_return, entries_returned, dat_provider_list);
}

DAT_RETURN dat_strerror(DAT_RETURN dat_function_return, const char ** major_message_string, const char ** minor_message_string)
{
	GODAT_GUARD;
	return go_dat_strerror(dat_function_return, (char **)major_message_string, (char **)minor_message_string);
}

DAT_RETURN dat_lmr_create(DAT_IA_HANDLE ia_handle, DAT_MEM_TYPE mem_type, DAT_REGION_DESCRIPTION region_description, DAT_VLEN length, DAT_PZ_HANDLE pz_handle, DAT_MEM_PRIV_FLAGS privileges, DAT_LMR_HANDLE * lmr_handle, DAT_LMR_CONTEXT * lmr_context, DAT_RMR_CONTEXT * rmr_context, DAT_VLEN * registered_length, DAT_VADDR * registered_address)
{
	GODAT_GUARD;
	return go_dat_lmr_create((godat_handle)ia_handle, mem_type, &region_description, length, (godat_handle)pz_handle, privileges, lmr_handle, lmr_context, rmr_context, registered_length, registered_address);
}

DAT_RETURN dat_evd_create(DAT_IA_HANDLE ia_handle, DAT_COUNT evd_min_qlen, DAT_CNO_HANDLE cno_handle, DAT_EVD_FLAGS evd_flags, DAT_EVD_HANDLE * evd_handle)
{
	GODAT_GUARD;
	return go_dat_evd_create((godat_handle)ia_handle, evd_min_qlen, (godat_handle)cno_handle, evd_flags, evd_handle);
}

DAT_RETURN dat_evd_modify_cno(DAT_EVD_HANDLE evd_handle, DAT_CNO_HANDLE cno_handle)
{
	GODAT_GUARD;
	return go_dat_evd_modify_cno((godat_handle)evd_handle, (godat_handle)cno_handle);
}

DAT_RETURN dat_cno_create(DAT_IA_HANDLE ia_handle, DAT_OS_WAIT_PROXY_AGENT agent, DAT_CNO_HANDLE * cno_handle)
{
	GODAT_GUARD;
	return go_dat_cno_create((godat_handle)ia_handle, &agent, cno_handle);
}

DAT_RETURN dat_cno_modify_agent(DAT_CNO_HANDLE cno_handle, DAT_OS_WAIT_PROXY_AGENT agent)
{
	GODAT_GUARD;
	return go_dat_cno_modify_agent((godat_handle)cno_handle, &agent);
}

DAT_RETURN dat_cno_query(DAT_CNO_HANDLE cno_handle, DAT_CNO_PARAM_MASK cno_param_mask, DAT_CNO_PARAM * cno_param)
{
	GODAT_GUARD;
	return go_dat_cno_query((godat_handle)cno_handle, cno_param_mask, cno_param);
}

DAT_RETURN dat_cno_free(DAT_CNO_HANDLE cno_handle)
{
	GODAT_GUARD;
	return go_dat_cno_free((godat_handle)cno_handle);
}

DAT_RETURN dat_cno_wait(DAT_CNO_HANDLE cno_handle, DAT_TIMEOUT timeout, DAT_EVD_HANDLE * evd_handle)
{
	GODAT_GUARD;
	return go_dat_cno_wait((godat_handle)cno_handle, timeout, evd_handle);
}

DAT_RETURN dat_evd_enable(DAT_EVD_HANDLE evd_handle)
{
	GODAT_GUARD;
	return go_dat_evd_enable((godat_handle)evd_handle);
}

DAT_RETURN dat_evd_wait(DAT_EVD_HANDLE evd_handle, DAT_TIMEOUT Timeout, DAT_COUNT Threshold, DAT_EVENT * event, DAT_COUNT * n_more_events)
{
	GODAT_GUARD;
	return go_dat_evd_wait((godat_handle)evd_handle, Timeout, Threshold, event, n_more_events);
}

DAT_RETURN dat_evd_disable(DAT_EVD_HANDLE evd_handle)
{
	GODAT_GUARD;
	return go_dat_evd_disable((godat_handle)evd_handle);
}

DAT_RETURN dat_evd_set_unwaitable(DAT_EVD_HANDLE evd_handle)
{
	GODAT_GUARD;
	return go_dat_evd_set_unwaitable((godat_handle)evd_handle);
}

DAT_RETURN dat_evd_clear_unwaitable(DAT_EVD_HANDLE evd_handle)
{
	GODAT_GUARD;
	return go_dat_evd_clear_unwaitable((godat_handle)evd_handle);
}

DAT_RETURN dat_registry_add_provider(const DAT_PROVIDER * provider, const DAT_PROVIDER_INFO * provider_info)
{
	GODAT_GUARD;
	return go_dat_registry_add_provider((DAT_PROVIDER *)provider, (DAT_PROVIDER_INFO *)provider_info);
}

DAT_RETURN dat_registry_remove_provider(const DAT_PROVIDER * provider, const DAT_PROVIDER_INFO * provider_info)
{
	GODAT_GUARD;
	return go_dat_registry_remove_provider((DAT_PROVIDER *)provider, (DAT_PROVIDER_INFO *)provider_info);
}

DAT_RETURN dats_get_ia_handle(DAT_IA_HANDLE ia_handle, DAT_IA_HANDLE * ia_handle_ptr)
{
	GODAT_GUARD;
	return go_dats_get_ia_handle((godat_handle)ia_handle, ia_handle_ptr);
}
