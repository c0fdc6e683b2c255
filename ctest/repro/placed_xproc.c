/* Repro, two processes: the parent accepts and sends one 64-byte message;
 * the child (the active side) has a receive posted, takes its completion,
 * and disconnects at once (graceful; "abrupt" as 3rd arg), then waits for
 * DISCONNECTED and exits. The parent's send, which the child placed, must
 * complete DAT_DTO_SUCCESS. usage: placed_xproc IA N [abrupt] */
#include <dat/udat.h>
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
#define OK(x) do { DAT_RETURN r_ = (x); if (r_ != DAT_SUCCESS) { fprintf(stderr, "%s: 0x%x\n", #x, r_); exit(1);} } while (0)

static DAT_EVENT next(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;
	DAT_COUNT n;
	OK(dat_evd_wait(evd, 5000000, 1, &ev, &n));
	return ev;
}

struct side {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, dto, conn, cr;
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep;
	DAT_LMR_TRIPLET t;
	char buf[64];
};

static void side_open(struct side *s, const char *name)
{
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lc;
	DAT_RMR_CONTEXT rc;
	DAT_VLEN rl;
	DAT_VADDR rv;
	s->async = DAT_HANDLE_NULL;
	OK(dat_ia_open((char *)name, 16, &s->async, &s->ia));
	OK(dat_evd_create(s->ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->dto));
	OK(dat_evd_create(s->ia, 64, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &s->conn));
	OK(dat_evd_create(s->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &s->cr));
	OK(dat_pz_create(s->ia, &s->pz));
	OK(dat_ep_create(s->ia, s->pz, s->dto, s->dto, s->conn, NULL, &s->ep));
	DAT_REGION_DESCRIPTION rd = {.for_va = s->buf};
	OK(dat_lmr_create(s->ia, DAT_MEM_TYPE_VIRTUAL, rd, 64, s->pz, DAT_MEM_PRIV_ALL_FLAG, &lmr, &lc, &rc, &rl, &rv));
	s->t = (DAT_LMR_TRIPLET){.lmr_context = lc, .virtual_address = (DAT_VADDR)(uintptr_t)s->buf, .segment_length = 64};
}

static int child(const char *name, DAT_CONN_QUAL q, DAT_CLOSE_FLAGS how)
{
	struct side s;
	side_open(&s, name);
	DAT_DTO_COOKIE c = {.as_64 = 1};
	OK(dat_ep_post_recv(s.ep, 1, &s.t, c, DAT_COMPLETION_DEFAULT_FLAG));
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	OK(dat_ep_connect(s.ep, (DAT_IA_ADDRESS_PTR)&sa, q, 5000000, 0, NULL, DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	if (next(s.conn).event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
		return 2;
	DAT_EVENT ev = next(s.dto);
	if (ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS)
		return 3;
	OK(dat_ep_disconnect(s.ep, how));
	next(s.conn);
	OK(dat_ia_close(s.ia, DAT_CLOSE_ABRUPT_FLAG));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "child") == 0)
		return child(argv[2], strtoull(argv[3], NULL, 0), atoi(argv[4]) ? DAT_CLOSE_ABRUPT_FLAG : DAT_CLOSE_GRACEFUL_FLAG);
	const char *name = argc > 1 ? argv[1] : "godat-shm";
	int n = argc > 2 ? atoi(argv[2]) : 50, abrupt = argc > 3, bad = 0;
	for (int i = 0; i < n; i++) {
		struct side s;
		side_open(&s, name);
		DAT_PSP_HANDLE psp;
		DAT_CONN_QUAL q;
		OK(dat_psp_create_any(s.ia, &q, s.cr, DAT_PSP_CONSUMER_FLAG, &psp));
		char qs[32], ab[4];
		snprintf(qs, sizeof qs, "%" PRIu64, (uint64_t)q);
		snprintf(ab, sizeof ab, "%d", abrupt);
		char *av[] = {argv[0], "child", (char *)name, qs, ab, NULL};
		pid_t pid;
		if (posix_spawn(&pid, argv[0], NULL, NULL, av, environ) != 0)
			exit(1);
		DAT_EVENT ev = next(s.cr);
		OK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, s.ep, 0, NULL));
		if (next(s.conn).event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
			exit(2);
		DAT_DTO_COOKIE c = {.as_64 = 2};
		OK(dat_ep_post_send(s.ep, 1, &s.t, c, DAT_COMPLETION_DEFAULT_FLAG));
		ev = next(s.dto);
		int st;
		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "child failed: 0x%x\n", st);
			exit(1);
		}
		if (ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS && bad++ == 0)
			fprintf(stderr, "round %d: the send the peer placed completed with status %d\n", i,
				ev.event_data.dto_completion_event_data.status);
		OK(dat_ia_close(s.ia, DAT_CLOSE_ABRUPT_FLAG));
	}
	printf("%s, %s disconnect by the receiver: %d of %d placed sends not successful\n", name,
	       abrupt ? "abrupt" : "graceful", bad, n);
	return bad != 0;
}
