/* Repro: dat_ia_close(ABRUPT) of both IAs while an active connect is
 * pending (request not yet accepted) on an auto (godat) IA. */
#include <dat/udat.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK(x) do { DAT_RETURN r_ = (x); if (r_ != DAT_SUCCESS) { fprintf(stderr, "%s: 0x%x\n", #x, r_); exit(1);} } while (0)

int main(int argc, char **argv)
{
	const char *ia_name = argc > 1 ? argv[1] : "godat";
	int n = argc > 2 ? atoi(argv[2]) : 200;
	for (int i = 0; i < n; i++) {
		DAT_IA_HANDLE ia[2];
		DAT_EVD_HANDLE async[2], evd[2], cr;
		DAT_PZ_HANDLE pz[2];
		DAT_EP_HANDLE ep[2];
		for (int k = 0; k < 2; k++) {
			async[k] = DAT_HANDLE_NULL;
			OK(dat_ia_open((char *)ia_name, 16, &async[k], &ia[k]));
			OK(dat_evd_create(ia[k], 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &evd[k]));
			OK(dat_pz_create(ia[k], &pz[k]));
			OK(dat_ep_create(ia[k], pz[k], evd[k], evd[k], evd[k], NULL, &ep[k]));
		}
		OK(dat_evd_create(ia[1], 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr));
		DAT_PSP_HANDLE psp;
		DAT_CONN_QUAL q;
		OK(dat_psp_create_any(ia[1], &q, cr, DAT_PSP_CONSUMER_FLAG, &psp));
		struct sockaddr_in sa;
		memset(&sa, 0, sizeof sa);
		sa.sin_family = AF_INET;
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		OK(dat_ep_connect(ep[0], (DAT_IA_ADDRESS_PTR)&sa, q, 5000000, 0, NULL, DAT_QOS_BEST_EFFORT,
				  DAT_CONNECT_DEFAULT_FLAG));
		OK(dat_ia_close(ia[0], DAT_CLOSE_ABRUPT_FLAG));
		OK(dat_ia_close(ia[1], DAT_CLOSE_ABRUPT_FLAG));
	}
	printf("%d rounds ok\n", n);
	return 0;
}
