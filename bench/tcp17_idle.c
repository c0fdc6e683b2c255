/*
 * tcp17_idle: issue 17 item 4, measured by hand (not part of `make bench`):
 * the threads godat runs and the CPU the process burns while idle with N
 * connections (one process, N endpoints connected to the IA's own PSP, a
 * receive posted on each). Prints, per N:
 *     tcp17_idle N threads T sleep_cpu% S wait_cpu% W dequeue_ns D
 * S: CPU of the whole process (all threads) over IDLE_S seconds while the
 * application sleeps in nanosleep, as % of one core; W: the same while it
 * sleeps in dat_evd_wait on the empty EVD; D: an empty dat_evd_dequeue.
 *
 * Usage: tcp17_idle [ia-name] [N...]   (default godat-tcp; 100)
 */
#include "common.h"

#include <dat/udat.h>
#include <sys/resource.h>

#define IDLE_S 5
#define TMO 20000000 /* 20 s (us) */
#define QUAL 0x5ca1e

static void die(const char *what, DAT_RETURN r)
{
	const char *maj = "?", *min = "?";
	dat_strerror(r, &maj, &min);
	fprintf(stderr, "tcp17_idle: %s: %s %s\n", what, maj, min);
	exit(1);
}

#define CHECK(call)                              \
	do {                                     \
		DAT_RETURN r_ = (call);          \
		if (r_ != DAT_SUCCESS)           \
			die(#call, r_);          \
	} while (0)

static void expect(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want, DAT_EVENT *ev, const char *what)
{
	DAT_COUNT n;
	CHECK(dat_evd_wait(evd, TMO, 1, ev, &n));
	if (ev->event_number != want) {
		fprintf(stderr, "tcp17_idle: %s: event 0x%x, want 0x%x\n", what, ev->event_number, want);
		exit(1);
	}
}

/* Nanoseconds per empty dequeue on evd: the median of the windows. */
static double measure(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;
	unsigned nw = bench_windows();
	double t = bench_time() / nw, v[64];
	if (nw > 64)
		nw = 64;
	for (unsigned w = 0; w < nw; w++) {
		uint64_t calls = 0;
		double t0 = now_s(), t1;
		do {
			for (int i = 0; i < 1000; i++) {
				DAT_RETURN r = dat_evd_dequeue(evd, &ev);
				if (DAT_GET_TYPE(r) != DAT_QUEUE_EMPTY)
					die("dat_evd_dequeue on an idle EVD", r);
			}
			calls += 1000;
			t1 = now_s();
		} while (t1 - t0 < t);
		v[w] = (t1 - t0) * 1e9 / calls;
	}
	for (unsigned i = 1; i < nw; i++) /* insertion sort: a few windows */
		for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	return v[nw / 2];
}

static double cpu_s(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static void run(char *ia_name, int n)
{
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, evd, conn, cr, srv;
	DAT_PZ_HANDLE pz;
	DAT_PSP_HANDLE psp;
	DAT_IA_ATTR ia_attr;
	DAT_EVENT ev;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_VLEN len;
	DAT_VADDR va;
	DAT_EP_HANDLE *cli = calloc(n, sizeof *cli), *acc = calloc(n, sizeof *acc);
	char *buf = alloc_buf((size_t)n * 64);
	if (!cli || !acc)
		die("calloc", DAT_INSUFFICIENT_RESOURCES);

	CHECK(dat_ia_open(ia_name, 8, &async, &ia));
	CHECK(dat_ia_query(ia, NULL, DAT_IA_FIELD_IA_ADDRESS_PTR, &ia_attr, 0, NULL));
	CHECK(dat_pz_create(ia, &pz));
	CHECK(dat_evd_create(ia, 2 * n + 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &evd));
	CHECK(dat_evd_create(ia, 4 * n + 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &srv));
	CHECK(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &conn));
	CHECK(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr));
	CHECK(dat_psp_create(ia, QUAL, cr, DAT_PSP_CONSUMER_FLAG, &psp));
	DAT_REGION_DESCRIPTION rd = {.for_va = buf};
	CHECK(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, (DAT_VLEN)n * 64, pz, DAT_MEM_PRIV_ALL_FLAG, &lmr, &lctx,
			     &rctx, &len, &va));
	for (int i = 0; i < n; i++) {
		DAT_CR_HANDLE crh;
		CHECK(dat_ep_create(ia, pz, evd, evd, conn, NULL, &cli[i]));
		DAT_LMR_TRIPLET seg = {.lmr_context = lctx, .virtual_address = (DAT_VADDR)(uintptr_t)(buf + 64 * i),
				       .segment_length = 64};
		CHECK(dat_ep_post_recv(cli[i], 1, &seg, (DAT_DTO_COOKIE){.as_index = i}, DAT_COMPLETION_DEFAULT_FLAG));
		CHECK(dat_ep_connect(cli[i], ia_attr.ia_address_ptr, QUAL, TMO, 0, NULL, DAT_QOS_BEST_EFFORT,
				     DAT_CONNECT_DEFAULT_FLAG));
		expect(cr, DAT_CONNECTION_REQUEST_EVENT, &ev, "connection request");
		crh = ev.event_data.cr_arrival_event_data.cr_handle;
		CHECK(dat_ep_create(ia, pz, srv, srv, srv, NULL, &acc[i]));
		CHECK(dat_cr_accept(crh, acc[i], 0, NULL));
		expect(srv, DAT_CONNECTION_EVENT_ESTABLISHED, &ev, "established (passive)");
		expect(conn, DAT_CONNECTION_EVENT_ESTABLISHED, &ev, "established (active)");
	}
	sleep(1); /* the handshakes' goroutines end */
	int threads = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Threads: %d", &threads) == 1)
			break;
	if (f)
		fclose(f);
	double c0 = cpu_s(), t0 = now_s();
	sleep(IDLE_S);
	double sleep_pct = (cpu_s() - c0) / (now_s() - t0) * 100;
	c0 = cpu_s(), t0 = now_s();
	DAT_COUNT nev;
	DAT_RETURN r = dat_evd_wait(evd, IDLE_S * 1000000, 1, &ev, &nev);
	if (DAT_GET_TYPE(r) != DAT_TIMEOUT_EXPIRED)
		die("dat_evd_wait on an idle EVD", r);
	double wait_pct = (cpu_s() - c0) / (now_s() - t0) * 100;
	printf("tcp17_idle %d threads %d sleep_cpu%% %.3f wait_cpu%% %.3f dequeue_ns %.1f\n", n, threads, sleep_pct,
	       wait_pct, measure(evd));
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		CHECK(dat_ep_disconnect(cli[i], DAT_CLOSE_ABRUPT_FLAG));
		CHECK(dat_ep_disconnect(acc[i], DAT_CLOSE_ABRUPT_FLAG));
	}
	/* The IA's close frees whatever the disconnects left behind. */
	CHECK(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	free(cli);
	free(acc);
	free(buf);
}

int main(int argc, char **argv)
{
	char *ia_name = argc > 1 ? argv[1] : "godat-tcp";
	bench_pin(0);
	if (argc > 2) {
		for (int i = 2; i < argc; i++)
			run(ia_name, atoi(argv[i]));
		return 0;
	}
	run(ia_name, 100);
	return 0;
}
