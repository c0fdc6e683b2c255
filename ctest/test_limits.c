/* Limits: 100 IAs of one name open at once; 100 PZs, CNOs, EVDs, EPs,
 * RSPs and PSPs on one IA; 100 receives on an unconnected EP; LMRs up to
 * 1 GiB; everything freed cleanly (a graceful close then succeeds). The
 * limits dat_ia_query reports are honest and usable: objects at the limits
 * work, one past them is refused. */
#define _GNU_SOURCE
#include "pattern.h"
#include <sys/mman.h>

#define N 100
#define GiB (1ull << 30)

static void test_100_ias(void **state)
{
	(void)state;
	DAT_IA_HANDLE ia[N];
	DAT_EVD_HANDLE async[N];
	DAT_PZ_HANDLE pz[N];
	for (int i = 0; i < N; i++) {
		async[i] = DAT_HANDLE_NULL;
		check_ok(dat_ia_open(TEST_IA, 4, &async[i], &ia[i]));
		assert_non_null(async[i]); /* created by the open */
		check_ok(dat_pz_create(ia[i], &pz[i]));
	}
	for (int i = 0; i < N; i++)
		for (int j = 0; j < i; j++) {
			assert_ptr_not_equal(ia[i], ia[j]);
			assert_ptr_not_equal(async[i], async[j]);
		}
	/* Each IA is its own: freeing in one leaves the others. */
	for (int i = 0; i < N; i += 2)
		check_ok(dat_pz_free(pz[i]));
	for (int i = 0; i < N; i++) {
		if (i % 2)
			check_type(dat_ia_close(ia[i], DAT_CLOSE_GRACEFUL_FLAG), DAT_INVALID_STATE);
		else
			check_ok(dat_ia_close(ia[i], DAT_CLOSE_GRACEFUL_FLAG));
	}
	for (int i = 1; i < N; i += 2)
		check_ok(dat_ia_close(ia[i], DAT_CLOSE_ABRUPT_FLAG));
	/* The async EVDs the opens created went with their IAs. */
	DAT_HANDLE_TYPE t;
	check_type(dat_get_handle_type(async[0], &t), DAT_INVALID_HANDLE);
	check_type(dat_get_handle_type(pz[1], &t), DAT_INVALID_HANDLE);
}

static void test_100_objects(void **state)
{
	(void)state;
	DAT_EVD_HANDLE async;
	DAT_IA_HANDLE ia = open_ia(&async);
	static DAT_PZ_HANDLE pz[N];
	static DAT_CNO_HANDLE cno[N];
	static DAT_EVD_HANDLE evd[N], cr[N];
	static DAT_EP_HANDLE ep[N];
	static DAT_RSP_HANDLE rsp[N];
	static DAT_PSP_HANDLE psp[N];
	static DAT_CONN_QUAL q[N];
	for (int i = 0; i < N; i++) {
		check_ok(dat_pz_create(ia, &pz[i]));
		check_ok(dat_cno_create(ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno[i]));
		check_ok(dat_evd_create(ia, 8, cno[i], DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &evd[i]));
		check_ok(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr[i]));
		check_ok(dat_ep_create(ia, pz[i], evd[i], evd[i], evd[i], NULL, &ep[i]));
		/* 64-bit qualifiers: 0xAFF5B1E + n for the RSPs, any for PSPs. */
		check_ok(dat_rsp_create(ia, 0xAFF5B1Eull + i, ep[i], cr[i], &rsp[i]));
		check_ok(dat_psp_create_any(ia, &q[i], cr[i], DAT_PSP_CONSUMER_FLAG, &psp[i]));
	}
	for (int i = 0; i < N; i++) {
		DAT_PSP_PARAM pp;
		DAT_RSP_PARAM rp;
		DAT_EP_STATE st;
		check_ok(dat_psp_query(psp[i], DAT_PSP_FIELD_ALL, &pp));
		assert_int_equal(pp.conn_qual, q[i]);
		for (int j = 0; j < i; j++)
			assert_int_not_equal(q[i], q[j]);
		check_ok(dat_rsp_query(rsp[i], DAT_RSP_FIELD_ALL, &rp));
		assert_int_equal(rp.conn_qual, 0xAFF5B1Eull + i);
		assert_ptr_equal(rp.ep_handle, ep[i]);
		check_ok(dat_ep_get_status(ep[i], &st, NULL, NULL));
		assert_int_equal(st, DAT_EP_STATE_RESERVED);
	}
	/* Every qualifier is in use now. */
	DAT_PSP_HANDLE dup;
	check_type(dat_psp_create(ia, q[N - 1], cr[0], DAT_PSP_CONSUMER_FLAG, &dup), DAT_CONN_QUAL_IN_USE);
	check_type(dat_psp_create(ia, 0xAFF5B1Eull + 5, cr[0], DAT_PSP_CONSUMER_FLAG, &dup), DAT_CONN_QUAL_IN_USE);
	/* In use: the IA, PZs, EVDs and CNOs refuse to go. */
	check_type(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG), DAT_INVALID_STATE);
	check_type(dat_pz_free(pz[0]), DAT_INVALID_STATE);
	check_type(dat_evd_free(evd[0]), DAT_INVALID_STATE);
	check_type(dat_cno_free(cno[0]), DAT_INVALID_STATE);
	check_type(dat_ep_free(ep[0]), DAT_INVALID_STATE); /* reserved by its RSP */
	for (int i = 0; i < N; i++) {
		check_ok(dat_psp_free(psp[i]));
		check_ok(dat_rsp_free(rsp[i]));
		check_ok(dat_ep_free(ep[i]));
		check_ok(dat_evd_free(evd[i]));
		check_ok(dat_evd_free(cr[i]));
		check_ok(dat_cno_free(cno[i]));
		check_ok(dat_pz_free(pz[i]));
	}
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

static void test_100_receives_unconnected(void **state)
{
	(void)state;
	DAT_EVD_HANDLE async, evd;
	DAT_IA_HANDLE ia = open_ia(&async);
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep;
	struct mem m;
	check_ok(dat_pz_create(ia, &pz));
	check_ok(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &evd));
	check_ok(dat_ep_create(ia, pz, evd, evd, evd, NULL, &ep));
	DAT_EP_PARAM p;
	check_ok(dat_ep_query(ep, DAT_EP_FIELD_ALL, &p));
	assert_true(p.ep_attr.max_recv_dtos >= N);
	mem_create(&m, ia, pz, N * 64);
	for (int i = 0; i < N; i++) {
		DAT_LMR_TRIPLET t = mem_seg(&m, (size_t)i * 64, 64);
		check_ok(dat_ep_post_recv(ep, 1, &t, cookie(i), DAT_COMPLETION_DEFAULT_FLAG));
	}
	DAT_BOOLEAN ri, qi;
	DAT_EP_STATE st;
	check_ok(dat_ep_get_status(ep, &st, &ri, &qi));
	assert_int_equal(st, DAT_EP_STATE_UNCONNECTED);
	assert_int_equal(ri, DAT_FALSE);
	assert_int_equal(qi, DAT_TRUE);
	/* Nothing completes on an unconnected EP; reset leaves them posted. */
	expect_empty(evd, "receives on an unconnected EP");
	check_ok(dat_ep_reset(ep));
	check_ok(dat_ep_get_status(ep, &st, &ri, &qi));
	assert_int_equal(ri, DAT_FALSE);
	/* Up to the EP's receive depth, then the queue is full. */
	int extra = 0;
	DAT_RETURN r;
	for (;;) {
		DAT_LMR_TRIPLET t = mem_seg(&m, 0, 64);
		r = dat_ep_post_recv(ep, 1, &t, cookie(1000 + extra), DAT_COMPLETION_DEFAULT_FLAG);
		if (r != DAT_SUCCESS)
			break;
		extra++;
		assert_true(extra <= p.ep_attr.max_recv_dtos);
	}
	assert_int_equal(N + extra, p.ep_attr.max_recv_dtos);
	assert_true(DAT_GET_TYPE(r) == DAT_INSUFFICIENT_RESOURCES || DAT_GET_TYPE(r) == DAT_QUEUE_FULL);
	/* Free with receives posted. */
	check_ok(dat_ep_free(ep));
	mem_free(&m);
	check_ok(dat_evd_free(evd));
	check_ok(dat_pz_free(pz));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* dat_ia_query: honest limits, usable as reported. */
static void test_ia_query_limits(void **state)
{
	(void)state;
	DAT_EVD_HANDLE async, got;
	DAT_IA_HANDLE ia = open_ia(&async);
	DAT_IA_ATTR a;
	DAT_PROVIDER_ATTR pa;
	check_ok(dat_ia_query(ia, &got, DAT_IA_ALL, &a, DAT_PROVIDER_FIELD_ALL, &pa));
	assert_ptr_equal(got, async);
	print_message("limits: eps %d dto/ep %d evds %d evd_qlen %d iov %d lmrs %d lmr_block %" PRIu64
		      " pzs %d msg %" PRIu64 " rdma %" PRIu64 " rmrs %d private %d reads in/out %d/%d\n",
		      a.max_eps, a.max_dto_per_ep, a.max_evds, a.max_evd_qlen, a.max_iov_segments_per_dto, a.max_lmrs,
		      (uint64_t)a.max_lmr_block_size, a.max_pzs, (uint64_t)a.max_message_size, (uint64_t)a.max_rdma_size,
		      a.max_rmrs, pa.max_private_data_size, a.max_rdma_read_per_ep_in, a.max_rdma_read_per_ep_out);
	assert_true(a.max_eps >= N);
	assert_true(a.max_dto_per_ep >= N);
	assert_true(a.max_evds >= N);
	assert_true(a.max_evd_qlen >= N);
	assert_true(a.max_iov_segments_per_dto >= 4);
	assert_true(a.max_iov_segments_per_rdma_read >= 4);
	assert_true(a.max_iov_segments_per_rdma_write >= 4);
	assert_true(a.max_lmrs >= N);
	assert_true(a.max_lmr_block_size >= GiB);
	assert_true(a.max_pzs >= N);
	assert_true(a.max_message_size >= 65536);
	assert_true(a.max_rdma_size >= 65536);
	assert_true(a.max_rmrs >= N);
	assert_true(a.max_rdma_read_per_ep_in >= 1 && a.max_rdma_read_per_ep_out >= 1);
	assert_true(pa.max_private_data_size >= 64);
	assert_non_null(a.ia_address_ptr);
	assert_int_equal(a.ia_address_ptr->sa_family, AF_INET);

	/* An EP at every per-EP limit can be created and queried back. */
	DAT_PZ_HANDLE pz;
	DAT_EVD_HANDLE evd;
	DAT_EP_HANDLE ep;
	check_ok(dat_pz_create(ia, &pz));
	check_ok(dat_evd_create(ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &evd));
	DAT_EP_ATTR ea;
	memset(&ea, 0, sizeof ea);
	ea.service_type = DAT_SERVICE_TYPE_RC;
	ea.max_message_size = a.max_message_size;
	ea.max_rdma_size = a.max_rdma_size;
	ea.qos = DAT_QOS_BEST_EFFORT;
	ea.max_recv_dtos = a.max_dto_per_ep;
	ea.max_request_dtos = a.max_dto_per_ep;
	ea.max_recv_iov = a.max_iov_segments_per_dto;
	ea.max_request_iov = a.max_iov_segments_per_dto;
	ea.max_rdma_read_in = a.max_rdma_read_per_ep_in;
	ea.max_rdma_read_out = a.max_rdma_read_per_ep_out;
	ea.max_rdma_read_iov = a.max_iov_segments_per_rdma_read;
	ea.max_rdma_write_iov = a.max_iov_segments_per_rdma_write;
	ea.srq_soft_hw = DAT_HW_DEFAULT;
	check_ok(dat_ep_create(ia, pz, evd, evd, evd, &ea, &ep));
	DAT_EP_PARAM p;
	check_ok(dat_ep_query(ep, DAT_EP_FIELD_ALL, &p));
	assert_int_equal(p.ep_attr.max_request_iov, a.max_iov_segments_per_dto);
	assert_int_equal(p.ep_attr.max_recv_dtos, a.max_dto_per_ep);
	check_ok(dat_ep_free(ep));
	/* One past a limit is refused. */
	ea.max_request_iov = a.max_iov_segments_per_dto + 1;
	check_type(dat_ep_create(ia, pz, evd, evd, evd, &ea, &ep), DAT_INVALID_PARAMETER);
	ea.max_request_iov = a.max_iov_segments_per_dto;
	ea.max_recv_dtos = a.max_dto_per_ep + 1;
	check_type(dat_ep_create(ia, pz, evd, evd, evd, &ea, &ep), DAT_INVALID_PARAMETER);
	DAT_EVD_HANDLE big;
	check_ok(dat_evd_create(ia, a.max_evd_qlen, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &big));
	DAT_EVD_PARAM evp;
	check_ok(dat_evd_query(big, DAT_EVD_FIELD_ALL, &evp));
	assert_int_equal(evp.evd_qlen, a.max_evd_qlen);
	check_ok(dat_evd_free(big));
	check_type(dat_evd_create(ia, a.max_evd_qlen + 1, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &big), DAT_INVALID_PARAMETER);
	check_ok(dat_evd_free(evd));
	check_ok(dat_pz_free(pz));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* Two connected EPs of two IAs in this process. */
struct pair {
	DAT_IA_HANDLE ia[2];
	DAT_EVD_HANDLE async[2], evd[2], cr;
	DAT_PZ_HANDLE pz[2];
	DAT_EP_HANDLE ep[2];
	DAT_PSP_HANDLE psp;
	struct waiter w;
};

static void pair_open(struct pair *p, DAT_EP_ATTR *attr, const void *pd, DAT_COUNT pdlen)
{
	for (int i = 0; i < 2; i++) {
		p->ia[i] = open_ia(&p->async[i]);
		check_ok(dat_pz_create(p->ia[i], &p->pz[i]));
		check_ok(dat_evd_create(p->ia[i], 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG,
					&p->evd[i]));
		check_ok(dat_ep_create(p->ia[i], p->pz[i], p->evd[i], p->evd[i], p->evd[i], attr, &p->ep[i]));
	}
	p->w.mode = MODE_WAIT;
	p->w.cno = DAT_HANDLE_NULL;
	DAT_CONN_QUAL q;
	check_ok(dat_evd_create(p->ia[1], 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &p->cr));
	check_ok(dat_psp_create_any(p->ia[1], &q, p->cr, DAT_PSP_CONSUMER_FLAG, &p->psp));
	connect_ep(p->ep[0], q, PAT_TMO, pd, pdlen);
	DAT_EVENT ev = expect_event(&p->w, p->cr, DAT_CONNECTION_REQUEST_EVENT, "request");
	DAT_CR_PARAM crp;
	check_ok(dat_cr_query(ev.event_data.cr_arrival_event_data.cr_handle, DAT_CR_FIELD_ALL, &crp));
	assert_int_equal(crp.private_data_size, pdlen);
	if (pdlen > 0)
		assert_memory_equal(crp.private_data, pd, pdlen);
	check_ok(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, p->ep[1], pdlen, (DAT_PVOID)pd));
	ev = expect_event(&p->w, p->evd[1], DAT_CONNECTION_EVENT_ESTABLISHED, "accept");
	ev = expect_event(&p->w, p->evd[0], DAT_CONNECTION_EVENT_ESTABLISHED, "connect");
	assert_int_equal(ev.event_data.connect_event_data.private_data_size, pdlen);
	if (pdlen > 0)
		assert_memory_equal(ev.event_data.connect_event_data.private_data, pd, pdlen);
}

static void pair_close(struct pair *p)
{
	check_ok(dat_psp_free(p->psp));
	for (int i = 0; i < 2; i++)
		check_ok(dat_ia_close(p->ia[i], DAT_CLOSE_ABRUPT_FLAG));
}

/* The reported maxima work end to end: the most private data, a send and
 * an RDMA write with the most segments. */
static void test_limits_usable(void **state)
{
	(void)state;
	DAT_EVD_HANDLE async;
	DAT_IA_HANDLE ia = open_ia(&async);
	DAT_IA_ATTR a;
	DAT_PROVIDER_ATTR pa;
	check_ok(dat_ia_query(ia, NULL, DAT_IA_ALL, &a, DAT_PROVIDER_FIELD_ALL, &pa));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
	int nseg = a.max_iov_segments_per_dto;
	DAT_COUNT pdlen = pa.max_private_data_size;
	char *pd = malloc((size_t)pdlen + 1);
	for (int i = 0; i < pdlen + 1; i++)
		pd[i] = (char)(i * 3 + 1);
	struct pair p;
	pair_open(&p, NULL, pd, pdlen);
	/* One byte more than the maximum is refused. */
	DAT_EP_HANDLE extra;
	check_ok(dat_ep_create(p.ia[0], p.pz[0], p.evd[0], p.evd[0], p.evd[0], NULL, &extra));
	struct sockaddr_in sa = loopback_addr();
	check_type(dat_ep_connect(extra, (DAT_IA_ADDRESS_PTR)&sa, 1, PAT_TMO, pdlen + 1, pd, DAT_QOS_BEST_EFFORT,
				  DAT_CONNECT_DEFAULT_FLAG),
		   DAT_INVALID_PARAMETER);
	check_ok(dat_ep_free(extra));
	free(pd);

	DAT_EP_PARAM epp;
	check_ok(dat_ep_query(p.ep[0], DAT_EP_FIELD_ALL, &epp));
	if (epp.ep_attr.max_request_iov < nseg)
		nseg = epp.ep_attr.max_request_iov;
	struct mem m[2];
	mem_create(&m[0], p.ia[0], p.pz[0], 65536);
	mem_create(&m[1], p.ia[1], p.pz[1], 65536);
	DAT_LMR_TRIPLET segs[64], rseg = mem_seg(&m[1], 0, 65536);
	assert_true(nseg <= 64);
	for (int i = 0; i < nseg; i++) {
		segs[i] = mem_seg(&m[0], (size_t)i * 1000, 100 + i);
		memset(m[0].buf + i * 1000, 'a' + i, 100 + i);
	}
	check_ok(dat_ep_post_recv(p.ep[1], 1, &rseg, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(p.ep[0], nseg, segs, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
	size_t total = 0;
	for (int i = 0; i < nseg; i++)
		total += 100 + i;
	expect_dto(&p.w, p.evd[0], p.ep[0], (long)total, "send of the most segments");
	expect_dto(&p.w, p.evd[1], p.ep[1], (long)total, "its receive");
	size_t off = 0;
	for (int i = 0; i < nseg; i++)
		for (int k = 0; k < 100 + i; k++, off++)
			assert_int_equal(m[1].buf[off], 'a' + i);
	DAT_RMR_TRIPLET rt = rmr_seg(m[1].rctx, (uint64_t)(uintptr_t)(m[1].buf + 32768), total);
	check_ok(dat_ep_post_rdma_write(p.ep[0], nseg, segs, cookie(3), &rt, DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(&p.w, p.evd[0], p.ep[0], (long)total, "RDMA write of the most segments");
	assert_memory_equal(m[1].buf + 32768, m[1].buf, total);
	/* One segment more than the EP takes is refused. */
	segs[nseg] = segs[0];
	check_type(dat_ep_post_send(p.ep[0], nseg + 1, segs, cookie(4), DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_PARAMETER);
	mem_free(&m[0]);
	mem_free(&m[1]);
	pair_close(&p);
}

/* LMRs of 1 MiB to 1 GiB register (registration pins nothing); the 1 GiB
 * one is usable at its far end. Skipped when the address space cannot be
 * had. */
static void test_lmr_1gib(void **state)
{
	(void)state;
	char *big = mmap(NULL, GiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (big == MAP_FAILED) {
		print_message("skipped: cannot map 1 GiB: %s\n", strerror(errno));
		skip();
	}
	struct pair p;
	pair_open(&p, NULL, NULL, 0);
	DAT_LMR_HANDLE lmr[4];
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_VLEN rlen;
	DAT_VADDR rva;
	DAT_REGION_DESCRIPTION rd = {.for_va = big};
	const DAT_VLEN sizes[4] = {1 << 20, 64 << 20, 256 << 20, GiB};
	for (int i = 0; i < 4; i++) {
		check_ok(dat_lmr_create(p.ia[1], DAT_MEM_TYPE_VIRTUAL, rd, sizes[i], p.pz[1], DAT_MEM_PRIV_ALL_FLAG, &lmr[i],
					&lctx, &rctx, &rlen, &rva));
		assert_true(rlen >= sizes[i]);
		DAT_LMR_PARAM lp;
		check_ok(dat_lmr_query(lmr[i], DAT_LMR_FIELD_ALL, &lp));
		assert_int_equal(lp.length, sizes[i]);
	}
	/* RDMA write into the last bytes of the 1 GiB LMR, read back. */
	struct mem m;
	mem_create(&m, p.ia[0], p.pz[0], 8192);
	memset(m.buf, 0x5A, 4096);
	DAT_LMR_TRIPLET src = mem_seg(&m, 0, 4096), dst = mem_seg(&m, 4096, 4096);
	DAT_RMR_TRIPLET far = rmr_seg(rctx, (uint64_t)(uintptr_t)(big + GiB - 4096), 4096);
	check_ok(dat_ep_post_rdma_write(p.ep[0], 1, &src, cookie(1), &far, DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(&p.w, p.evd[0], p.ep[0], 4096, "write at the end of 1 GiB");
	assert_int_equal((unsigned char)big[GiB - 1], 0x5A);
	check_ok(dat_ep_post_rdma_read(p.ep[0], 1, &dst, cookie(2), &far, DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(&p.w, p.evd[0], p.ep[0], 4096, "read at the end of 1 GiB");
	assert_memory_equal(m.buf + 4096, m.buf, 4096);
	/* One byte past the end is a remote access error, and writes nothing. */
	far.segment_length = 4096;
	far.target_address += 1;
	big[GiB - 4096] = 0;
	check_ok(dat_ep_post_rdma_write(p.ep[0], 1, &src, cookie(3), &far, DAT_COMPLETION_DEFAULT_FLAG));
	DAT_EVENT ev = expect_event(&p.w, p.evd[0], DAT_DTO_COMPLETION_EVENT, "write past the end");
	assert_int_equal(ev.event_data.dto_completion_event_data.status, DAT_DTO_ERR_REMOTE_ACCESS);
	assert_int_equal(big[GiB - 4096], 0);
	mem_free(&m);
	for (int i = 0; i < 4; i++)
		check_ok(dat_lmr_free(lmr[i]));
	pair_close(&p);
	munmap(big, GiB);
}

int main(void)
{
	alarm(250);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_100_ias),
		cmocka_unit_test(test_100_objects),
		cmocka_unit_test(test_100_receives_unconnected),
		cmocka_unit_test(test_ia_query_limits),
		cmocka_unit_test(test_limits_usable),
		cmocka_unit_test(test_lmr_1gib),
	};
	return cmocka_run_group_tests_name("limits", tests, NULL, NULL);
}
