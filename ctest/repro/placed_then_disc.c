/* Repro: a send the receiver has placed (its receive completed) completes
 * FLUSHED at the sender when the receiver disconnects right after taking
 * the receive completion. Expected (verbs, and the contract: a send
 * completes once placed): DAT_DTO_SUCCESS. usage: placed_then_disc IA N
 * [abrupt] */
#include <dat/udat.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK(x) do { DAT_RETURN r_ = (x); if (r_ != DAT_SUCCESS) { fprintf(stderr, "%s: 0x%x\n", #x, r_); exit(1);} } while (0)

static DAT_EVENT next(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;
	DAT_COUNT n;
	OK(dat_evd_wait(evd, 5000000, 1, &ev, &n));
	return ev;
}

int main(int argc, char **argv)
{
	const char *ia_name = argc > 1 ? argv[1] : "godat-shm";
	int n = argc > 2 ? atoi(argv[2]) : 200, bad = 0;
	DAT_CLOSE_FLAGS how = argc > 3 ? DAT_CLOSE_ABRUPT_FLAG : DAT_CLOSE_GRACEFUL_FLAG;
	static char buf[2][64];
	for (int i = 0; i < n; i++) {
		DAT_IA_HANDLE ia[2];
		DAT_EVD_HANDLE async[2], dto[2], conn[2], cr;
		DAT_PZ_HANDLE pz[2];
		DAT_EP_HANDLE ep[2];
		DAT_LMR_HANDLE lmr[2];
		DAT_LMR_CONTEXT lc[2];
		DAT_RMR_CONTEXT rc;
		DAT_VLEN rl;
		DAT_VADDR rv;
		for (int k = 0; k < 2; k++) {
			async[k] = DAT_HANDLE_NULL;
			OK(dat_ia_open((char *)ia_name, 16, &async[k], &ia[k]));
			OK(dat_evd_create(ia[k], 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &dto[k]));
			OK(dat_evd_create(ia[k], 64, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &conn[k]));
			OK(dat_pz_create(ia[k], &pz[k]));
			OK(dat_ep_create(ia[k], pz[k], dto[k], dto[k], conn[k], NULL, &ep[k]));
			DAT_REGION_DESCRIPTION rd = {.for_va = buf[k]};
			OK(dat_lmr_create(ia[k], DAT_MEM_TYPE_VIRTUAL, rd, 64, pz[k], DAT_MEM_PRIV_ALL_FLAG, &lmr[k], &lc[k],
					  &rc, &rl, &rv));
		}
		OK(dat_evd_create(ia[1], 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr));
		DAT_PSP_HANDLE psp;
		DAT_CONN_QUAL q;
		OK(dat_psp_create_any(ia[1], &q, cr, DAT_PSP_CONSUMER_FLAG, &psp));
		DAT_LMR_TRIPLET t1 = {.lmr_context = lc[1], .virtual_address = (DAT_VADDR)(uintptr_t)buf[1], .segment_length = 64};
		DAT_DTO_COOKIE c = {.as_64 = 1};
		OK(dat_ep_post_recv(ep[1], 1, &t1, c, DAT_COMPLETION_DEFAULT_FLAG));
		struct sockaddr_in sa;
		memset(&sa, 0, sizeof sa);
		sa.sin_family = AF_INET;
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		OK(dat_ep_connect(ep[0], (DAT_IA_ADDRESS_PTR)&sa, q, 5000000, 0, NULL, DAT_QOS_BEST_EFFORT,
				  DAT_CONNECT_DEFAULT_FLAG));
		DAT_EVENT ev = next(cr);
		OK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, ep[1], 0, NULL));
		if (next(conn[1]).event_number != DAT_CONNECTION_EVENT_ESTABLISHED || next(conn[0]).event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
			exit(2);
		DAT_LMR_TRIPLET t0 = {.lmr_context = lc[0], .virtual_address = (DAT_VADDR)(uintptr_t)buf[0], .segment_length = 64};
		c.as_64 = 2;
		OK(dat_ep_post_send(ep[0], 1, &t0, c, DAT_COMPLETION_DEFAULT_FLAG));
		ev = next(dto[1]); /* the receive: the message is placed */
		if (ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS)
			exit(3);
		OK(dat_ep_disconnect(ep[1], how));
		ev = next(dto[0]);
		if (ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS) {
			bad++;
			if (bad == 1)
				fprintf(stderr, "round %d: the placed send completed with status %d\n", i,
					ev.event_data.dto_completion_event_data.status);
		}
		OK(dat_ia_close(ia[0], DAT_CLOSE_ABRUPT_FLAG));
		OK(dat_ia_close(ia[1], DAT_CLOSE_ABRUPT_FLAG));
	}
	printf("%s, %s disconnect: %d of %d placed sends not successful\n", ia_name,
	       how == DAT_CLOSE_ABRUPT_FLAG ? "abrupt" : "graceful", bad, n);
	return bad != 0;
}
