/*
 * udat.h - the DAT 1.2 user-level API (uDAPL).  Programs include this.
 *
 * It pulls in the configuration (udat_config.h), the platform types
 * (dat_platform_specific.h), the common API (dat.h, which in turn includes
 * dat_error.h) and the vendor hooks.  Provider-side declarations are in
 * dat_registry.h and the redirection headers.
 */
#ifndef _DAT_UDAT_H_
#define _DAT_UDAT_H_

#include <dat/udat_config.h>
#include <dat/dat_platform_specific.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * User-level types that dat.h refers to; they are defined before dat.h is
 * included.
 */

/* How the region given to dat_lmr_create() is described. */
typedef enum dat_mem_type {
	DAT_MEM_TYPE_VIRTUAL		= 0x0,
	DAT_MEM_TYPE_LMR		= 0x1,
	DAT_MEM_TYPE_SHARED_VIRTUAL	= 0x2,
	/* strong-ordered virtual memory (extension from the illumos headers) */
	DAT_MEM_TYPE_SO_VIRTUAL		= 0x3
} DAT_MEM_TYPE;

/* Result of dat_get_handle_type(). */
typedef enum dat_handle_type {
	DAT_HANDLE_TYPE_CR		= 0x0,
	DAT_HANDLE_TYPE_EP		= 0x1,
	DAT_HANDLE_TYPE_EVD		= 0x2,
	DAT_HANDLE_TYPE_IA		= 0x3,
	DAT_HANDLE_TYPE_LMR		= 0x4,
	DAT_HANDLE_TYPE_PSP		= 0x5,
	DAT_HANDLE_TYPE_PZ		= 0x6,
	DAT_HANDLE_TYPE_RMR		= 0x7,
	DAT_HANDLE_TYPE_RSP		= 0x8,
	DAT_HANDLE_TYPE_CNO		= 0x9,
	DAT_HANDLE_TYPE_SRQ		= 0xa
} DAT_HANDLE_TYPE;

typedef enum dat_evd_state {
	DAT_EVD_STATE_ENABLED		= 0x01,
	DAT_EVD_STATE_DISABLED		= 0x02,
	DAT_EVD_STATE_WAITABLE		= 0x04,
	DAT_EVD_STATE_UNWAITABLE	= 0x08,
	DAT_EVD_STATE_CONFIG_NOTIFY	= 0x10,
	DAT_EVD_STATE_CONFIG_SOLICITED	= 0x20,
	DAT_EVD_STATE_CONFIG_THRESHOLD	= 0x30
} DAT_EVD_STATE;

typedef enum dat_evd_param_mask {
	DAT_EVD_FIELD_IA_HANDLE		= 0x01,
	DAT_EVD_FIELD_EVD_QLEN		= 0x02,
	DAT_EVD_FIELD_EVD_STATE		= 0x04,
	DAT_EVD_FIELD_CNO		= 0x08,
	DAT_EVD_FIELD_EVD_FLAGS		= 0x10,
	DAT_EVD_FIELD_ALL		= 0x1f
} DAT_EVD_PARAM_MASK;

/* dat_ia_query() mask: one bit per DAT_PROVIDER_ATTR field. */
typedef DAT_UINT64	DAT_PROVIDER_ATTR_MASK;

#ifdef __cplusplus
}
#endif

#include <dat/dat.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Event Dispatchers and Consumer Notification Objects                 */
/* ------------------------------------------------------------------ */

typedef DAT_HANDLE	DAT_CNO_HANDLE;

/*
 * Special values for the async_evd argument of dat_ia_open(): the IA
 * already has an async EVD, or the consumer wants none.
 */
#define DAT_EVD_ASYNC_EXISTS	((DAT_EVD_HANDLE) 0x1)
#define DAT_EVD_OUT_OF_SCOPE	((DAT_EVD_HANDLE) 0x2)

struct dat_evd_param {
	DAT_IA_HANDLE		ia_handle;
	DAT_COUNT		evd_qlen;
	DAT_EVD_STATE		evd_state;
	DAT_CNO_HANDLE		cno_handle;
	DAT_EVD_FLAGS		evd_flags;
};

/* Called by a CNO when it triggers, with the EVD that caused it. */
typedef void (*DAT_AGENT_FUNC)(
	DAT_PVOID instance_data,
	DAT_EVD_HANDLE Event_Dispatcher);

typedef struct dat_os_wait_proxy_agent {
	DAT_PVOID		instance_data;
	DAT_AGENT_FUNC		proxy_agent_func;
} DAT_OS_WAIT_PROXY_AGENT;

/*
 * "No proxy agent": an agent value with both members null, usable as an
 * argument (dat_cno_create, dat_cno_modify_agent) or as an initializer.
 */
#ifdef __cplusplus
#define DAT_OS_WAIT_PROXY_AGENT_NULL	(DAT_OS_WAIT_PROXY_AGENT())
#else
#define DAT_OS_WAIT_PROXY_AGENT_NULL \
	((DAT_OS_WAIT_PROXY_AGENT) { (DAT_PVOID) 0, (DAT_AGENT_FUNC) 0 })
#endif

typedef enum dat_cno_param_mask {
	DAT_CNO_FIELD_IA_HANDLE		= 0x1,
	DAT_CNO_FIELD_AGENT		= 0x2,
	DAT_CNO_FIELD_ALL		= 0x3
} DAT_CNO_PARAM_MASK;

typedef struct dat_cno_param {
	DAT_IA_HANDLE			ia_handle;
	DAT_OS_WAIT_PROXY_AGENT		agent;
} DAT_CNO_PARAM;

/* ------------------------------------------------------------------ */
/* Local Memory Regions                                                */
/* ------------------------------------------------------------------ */

/* Identifies a shared memory region (DAT_MEM_TYPE_SHARED_VIRTUAL). */
#define DAT_LMR_COOKIE_SIZE	40
typedef char (*DAT_LMR_COOKIE)[DAT_LMR_COOKIE_SIZE];

typedef struct dat_shared_memory {
	DAT_PVOID		virtual_address;
	DAT_LMR_COOKIE		shared_memory_id;
} DAT_SHARED_MEMORY;

/* The region to register; which member is used depends on DAT_MEM_TYPE. */
typedef union dat_region_description {
	DAT_PVOID		for_va;
	DAT_LMR_HANDLE		for_lmr_handle;
	DAT_SHARED_MEMORY	for_shared_memory;
} DAT_REGION_DESCRIPTION;

struct dat_lmr_param {
	DAT_IA_HANDLE		ia_handle;
	DAT_MEM_TYPE		mem_type;
	DAT_REGION_DESCRIPTION	region_desc;
	DAT_VLEN		length;
	DAT_PZ_HANDLE		pz_handle;
	DAT_MEM_PRIV_FLAGS	mem_priv;
	DAT_LMR_CONTEXT		lmr_context;
	DAT_RMR_CONTEXT		rmr_context;
	DAT_VLEN		registered_size;
	DAT_VADDR		registered_address;
};

/* ------------------------------------------------------------------ */
/* Provider attributes                                                 */
/* ------------------------------------------------------------------ */

typedef enum dat_pz_support {
	DAT_PZ_UNIQUE			= 0x0,
	DAT_PZ_SHAREABLE		= 0x1
} DAT_PZ_SUPPORT;

#define DAT_PROVIDER_FIELD_PROVIDER_NAME		UINT64_C(0x0000001)
#define DAT_PROVIDER_FIELD_PROVIDER_VERSION_MAJOR	UINT64_C(0x0000002)
#define DAT_PROVIDER_FIELD_PROVIDER_VERSION_MINOR	UINT64_C(0x0000004)
#define DAT_PROVIDER_FIELD_DAPL_VERSION_MAJOR		UINT64_C(0x0000008)
#define DAT_PROVIDER_FIELD_DAPL_VERSION_MINOR		UINT64_C(0x0000010)
#define DAT_PROVIDER_FIELD_LMR_MEM_TYPE_SUPPORTED	UINT64_C(0x0000020)
#define DAT_PROVIDER_FIELD_IOV_OWNERSHIP		UINT64_C(0x0000040)
#define DAT_PROVIDER_FIELD_DAT_QOS_SUPPORTED		UINT64_C(0x0000080)
#define DAT_PROVIDER_FIELD_COMPLETION_FLAGS_SUPPORTED	UINT64_C(0x0000100)
#define DAT_PROVIDER_FIELD_IS_THREAD_SAFE		UINT64_C(0x0000200)
#define DAT_PROVIDER_FIELD_MAX_PRIVATE_DATA_SIZE	UINT64_C(0x0000400)
#define DAT_PROVIDER_FIELD_SUPPORTS_MULTIPATH		UINT64_C(0x0000800)
#define DAT_PROVIDER_FIELD_EP_CREATOR			UINT64_C(0x0001000)
#define DAT_PROVIDER_FIELD_PZ_SUPPORT			UINT64_C(0x0002000)
#define DAT_PROVIDER_FIELD_OPTIMAL_BUFFER_ALIGNMENT	UINT64_C(0x0004000)
#define DAT_PROVIDER_FIELD_EVD_STREAM_MERGING_SUPPORTED	UINT64_C(0x0008000)
#define DAT_PROVIDER_FIELD_SRQ_SUPPORTED		UINT64_C(0x0010000)
#define DAT_PROVIDER_FIELD_SRQ_WATERMARKS_SUPPORTED	UINT64_C(0x0020000)
#define DAT_PROVIDER_FIELD_SRQ_EP_PZ_DIFFERENCE_SUPPORTED \
							UINT64_C(0x0040000)
#define DAT_PROVIDER_FIELD_SRQ_INFO_SUPPORTED		UINT64_C(0x0080000)
#define DAT_PROVIDER_FIELD_EP_RECV_INFO_SUPPORTED	UINT64_C(0x0100000)
#define DAT_PROVIDER_FIELD_LMR_SYNC_REQ			UINT64_C(0x0200000)
#define DAT_PROVIDER_FIELD_DTO_ASYNC_RETURN_GUARANTEED	UINT64_C(0x0400000)
#define DAT_PROVIDER_FIELD_RDMA_WRITE_FOR_RDMA_READ_REQ	UINT64_C(0x0800000)
#define DAT_PROVIDER_FIELD_NUM_PROVIDER_SPECIFIC_ATTR	UINT64_C(0x1000000)
#define DAT_PROVIDER_FIELD_PROVIDER_SPECIFIC_ATTR	UINT64_C(0x2000000)
#define DAT_PROVIDER_FIELD_ALL				UINT64_C(0x3ffffff)
#define DAT_PROVIDER_FIELD_NONE				UINT64_C(0x0000000)

struct dat_provider_attr {
	char			provider_name[DAT_NAME_MAX_LENGTH];
	DAT_UINT32		provider_version_major;
	DAT_UINT32		provider_version_minor;
	DAT_UINT32		dapl_version_major;
	DAT_UINT32		dapl_version_minor;
	DAT_MEM_TYPE		lmr_mem_types_supported;
	DAT_IOV_OWNERSHIP	iov_ownership_on_return;
	DAT_QOS			dat_qos_supported;
	DAT_COMPLETION_FLAGS	completion_flags_supported;
	DAT_BOOLEAN		is_thread_safe;
	DAT_COUNT		max_private_data_size;
	DAT_BOOLEAN		supports_multipath;
	DAT_EP_CREATOR_FOR_PSP	ep_creator;
	DAT_PZ_SUPPORT		pz_support;
	DAT_UINT32		optimal_buffer_alignment;
	/*
	 * Which pairs of event streams one EVD may merge; rows and columns
	 * are the six DAT_EVD_FLAGS streams (software, CR, DTO, connection,
	 * RMR bind, async).  The member is const in C, as in the reference
	 * headers; C++ drops the qualifier so the struct stays
	 * default-constructible.
	 */
#ifdef __cplusplus
	DAT_BOOLEAN		evd_stream_merging_supported[6][6];
#else
	const DAT_BOOLEAN	evd_stream_merging_supported[6][6];
#endif
	DAT_BOOLEAN		srq_supported;
	DAT_COUNT		srq_watermarks_supported;
	DAT_BOOLEAN		srq_ep_pz_difference_supported;
	DAT_COUNT		srq_info_supported;
	DAT_COUNT		ep_recv_info_supported;
	DAT_BOOLEAN		lmr_sync_req;
	DAT_BOOLEAN		dto_async_return_guaranteed;
	DAT_BOOLEAN		rdma_write_for_rdma_read_req;
	DAT_COUNT		num_provider_specific_attr;
	DAT_NAMED_ATTR		*provider_specific_attr;
};

/* ------------------------------------------------------------------ */
/* User-level functions                                                */
/* ------------------------------------------------------------------ */

extern DAT_RETURN dat_lmr_create(
	DAT_IA_HANDLE ia_handle,
	DAT_MEM_TYPE mem_type,
	DAT_REGION_DESCRIPTION region_description,
	DAT_VLEN length,
	DAT_PZ_HANDLE pz_handle,
	DAT_MEM_PRIV_FLAGS privileges,
	DAT_LMR_HANDLE *lmr_handle,
	DAT_LMR_CONTEXT *lmr_context,
	DAT_RMR_CONTEXT *rmr_context,
	DAT_VLEN *registered_length,
	DAT_VADDR *registered_address);

extern DAT_RETURN dat_evd_create(
	DAT_IA_HANDLE ia_handle,
	DAT_COUNT evd_min_qlen,
	DAT_CNO_HANDLE cno_handle,
	DAT_EVD_FLAGS evd_flags,
	DAT_EVD_HANDLE *evd_handle);

extern DAT_RETURN dat_evd_modify_cno(
	DAT_EVD_HANDLE evd_handle,
	DAT_CNO_HANDLE cno_handle);

extern DAT_RETURN dat_cno_create(
	DAT_IA_HANDLE ia_handle,
	DAT_OS_WAIT_PROXY_AGENT agent,
	DAT_CNO_HANDLE *cno_handle);

extern DAT_RETURN dat_cno_modify_agent(
	DAT_CNO_HANDLE cno_handle,
	DAT_OS_WAIT_PROXY_AGENT agent);

extern DAT_RETURN dat_cno_query(
	DAT_CNO_HANDLE cno_handle,
	DAT_CNO_PARAM_MASK cno_param_mask,
	DAT_CNO_PARAM *cno_param);

extern DAT_RETURN dat_cno_free(
	DAT_CNO_HANDLE cno_handle);

extern DAT_RETURN dat_cno_wait(
	DAT_CNO_HANDLE cno_handle,
	DAT_TIMEOUT timeout,
	DAT_EVD_HANDLE *evd_handle);

extern DAT_RETURN dat_evd_enable(
	DAT_EVD_HANDLE evd_handle);

extern DAT_RETURN dat_evd_wait(
	DAT_EVD_HANDLE evd_handle,
	DAT_TIMEOUT Timeout,
	DAT_COUNT Threshold,
	DAT_EVENT *event,
	DAT_COUNT *n_more_events);

extern DAT_RETURN dat_evd_disable(
	DAT_EVD_HANDLE evd_handle);

extern DAT_RETURN dat_evd_set_unwaitable(
	DAT_EVD_HANDLE evd_handle);

extern DAT_RETURN dat_evd_clear_unwaitable(
	DAT_EVD_HANDLE evd_handle);

#ifdef __cplusplus
}
#endif

#include <dat/udat_vendor_specific.h>

#endif /* _DAT_UDAT_H_ */
