// The DAT_PROVIDER table of the built-in provider. Every handle libdat
// returns points at a stub whose first word is &godat_provider, so consumers
// built with the DAT redirection macros (DAT_HANDLE_TO_PROVIDER) reach the
// same entry points as direct calls.

#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include "godat.h"

volatile int godat_forked;

static void godat_atfork_child(void) { godat_forked = 1; }

__attribute__((constructor)) static void godat_init(void)
{
	pthread_atfork(NULL, NULL, godat_atfork_child);
}

// The 1.2 redirection table has a 4-argument ia_open slot; it opens with
// the version numbers this library implements.
static DAT_RETURN godat_ia_open_compat(const DAT_NAME_PTR name, DAT_COUNT qlen,
				       DAT_EVD_HANDLE *async_evd, DAT_IA_HANDLE *ia)
{
	return dat_ia_openv(name, qlen, async_evd, ia, DAT_VERSION_MAJOR,
			    DAT_VERSION_MINOR, DAT_THREADSAFE);
}

DAT_PROVIDER godat_provider = {
	.device_name = "godat",
	.extension = NULL,
	.ia_open_func = godat_ia_open_compat,
	.ia_query_func = dat_ia_query,
	.ia_close_func = dat_ia_close,
	.set_consumer_context_func = dat_set_consumer_context,
	.get_consumer_context_func = dat_get_consumer_context,
	.get_handle_type_func = dat_get_handle_type,
	.cno_create_func = dat_cno_create,
	.cno_modify_agent_func = dat_cno_modify_agent,
	.cno_query_func = dat_cno_query,
	.cno_free_func = dat_cno_free,
	.cno_wait_func = dat_cno_wait,
	.cr_query_func = dat_cr_query,
	.cr_accept_func = dat_cr_accept,
	.cr_reject_func = dat_cr_reject,
	.cr_handoff_func = dat_cr_handoff,
	.evd_create_func = dat_evd_create,
	.evd_query_func = dat_evd_query,
	.evd_modify_cno_func = dat_evd_modify_cno,
	.evd_enable_func = dat_evd_enable,
	.evd_disable_func = dat_evd_disable,
	.evd_wait_func = dat_evd_wait,
	.evd_resize_func = dat_evd_resize,
	.evd_post_se_func = dat_evd_post_se,
	.evd_dequeue_func = dat_evd_dequeue,
	.evd_free_func = dat_evd_free,
	.ep_create_func = dat_ep_create,
	.ep_query_func = dat_ep_query,
	.ep_modify_func = dat_ep_modify,
	.ep_connect_func = dat_ep_connect,
	.ep_dup_connect_func = dat_ep_dup_connect,
	.ep_disconnect_func = dat_ep_disconnect,
	.ep_post_send_func = dat_ep_post_send,
	.ep_post_recv_func = dat_ep_post_recv,
	.ep_post_rdma_read_func = dat_ep_post_rdma_read,
	.ep_post_rdma_write_func = dat_ep_post_rdma_write,
	.ep_get_status_func = dat_ep_get_status,
	.ep_free_func = dat_ep_free,
	.lmr_create_func = dat_lmr_create,
	.lmr_query_func = dat_lmr_query,
	.lmr_free_func = dat_lmr_free,
	.rmr_create_func = dat_rmr_create,
	.rmr_query_func = dat_rmr_query,
	.rmr_bind_func = dat_rmr_bind,
	.rmr_free_func = dat_rmr_free,
	.psp_create_func = dat_psp_create,
	.psp_query_func = dat_psp_query,
	.psp_free_func = dat_psp_free,
	.rsp_create_func = dat_rsp_create,
	.rsp_query_func = dat_rsp_query,
	.rsp_free_func = dat_rsp_free,
	.pz_create_func = dat_pz_create,
	.pz_query_func = dat_pz_query,
	.pz_free_func = dat_pz_free,
	.psp_create_any_func = dat_psp_create_any,
	.ep_reset_func = dat_ep_reset,
	.evd_set_unwaitable_func = dat_evd_set_unwaitable,
	.evd_clear_unwaitable_func = dat_evd_clear_unwaitable,
	.lmr_sync_rdma_read_func = dat_lmr_sync_rdma_read,
	.lmr_sync_rdma_write_func = dat_lmr_sync_rdma_write,
	.ep_create_with_srq_func = dat_ep_create_with_srq,
	.ep_recv_query_func = dat_ep_recv_query,
	.ep_set_watermark_func = dat_ep_set_watermark,
	.srq_create_func = dat_srq_create,
	.srq_free_func = dat_srq_free,
	.srq_post_recv_func = dat_srq_post_recv,
	.srq_query_func = dat_srq_query,
	.srq_resize_func = dat_srq_resize,
	.srq_set_lw_func = dat_srq_set_lw,
};

// godat_handle_region maps `views` consecutive aliases of one shared stub
// array of `bytes` bytes. A handle's address encodes its slot and, through
// the view it lies in, its generation; every alias shows the same stub.
void *godat_handle_region(size_t bytes, unsigned views)
{
	int fd = memfd_create("godat-handles", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)bytes) != 0) {
		close(fd);
		return NULL;
	}
	char *base = mmap(NULL, bytes * views, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	for (unsigned v = 0; v < views; v++) {
		void *p = mmap(base + (size_t)v * bytes, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
		if (p == MAP_FAILED) {
			munmap(base, bytes * views);
			close(fd);
			return NULL;
		}
	}
	close(fd);
	return base;
}
