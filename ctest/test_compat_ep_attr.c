/* Program pattern: endpoint attributes left zero (issue 13, item 1), over
 * godat-shm and godat-tcp. Programs commonly zero a DAT_EP_ATTR, fill in
 * the queue depths and IOV counts, and create their EPs with it, leaving
 * max_message_size, max_rdma_size, max_rdma_read_iov, max_rdma_write_iov
 * and the RDMA read depths at 0. The references check requested values
 * against the IA's limits when the EP is created or modified, and at post
 * time enforce only the transport's real limits: segment counts against
 * the request and receive IOV depths, lengths against the IA's maxima. */
#include "conn.h"

#define BIG (64 * 1024)

/* The attributes such a program passes: depths and IOV counts, the rest 0. */
static DAT_EP_ATTR zeroed_attr(void)
{
	DAT_EP_ATTR a;
	memset(&a, 0, sizeof a);
	a.service_type = DAT_SERVICE_TYPE_RC;
	a.max_recv_dtos = 8;
	a.max_request_dtos = 8;
	a.max_recv_iov = 2;
	a.max_request_iov = 2;
	return a;
}

static void open_zeroed(struct pair *x, void **state)
{
	DAT_EP_ATTR a = zeroed_attr();
	pair_open_ia(x, *state, &a);
	pair_connect(x);
}

/* A 4-byte send and a large one, with max_message_size 0. */
static void send_with_zero_message_size(void **state)
{
	struct pair x;
	struct mem s, r;
	open_zeroed(&x, state);
	mem_reg(&s, x.a.ia, x.a.pz, BIG, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&r, x.p.ia, x.p.pz, BIG, DAT_MEM_PRIV_ALL_FLAG);
	memcpy(s.buf, "ping", 4);
	DAT_LMR_TRIPLET si = iov_at(&s, 0, 4), ri = iov_at(&r, 0, BIG);
	check_ok(dat_ep_post_recv(x.p.ep, 1, &ri, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(x.a.ep, 1, &si, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
	assert_int_equal(expect_dto(x.a.req, x.a.ep, 2, DAT_DTO_SUCCESS), 4);
	assert_int_equal(expect_dto(x.p.recv, x.p.ep, 1, DAT_DTO_SUCCESS), 4);
	assert_memory_equal(r.buf, "ping", 4);
	/* Two segments (the request IOV depth), 64 KiB in all. */
	for (int i = 0; i < BIG; i++)
		s.buf[i] = (unsigned char)(i * 7);
	DAT_LMR_TRIPLET two[2] = {iov_at(&s, 0, BIG / 2), iov_at(&s, BIG / 2, BIG / 2)};
	check_ok(dat_ep_post_recv(x.p.ep, 1, &ri, cookie(3), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(x.a.ep, 2, two, cookie(4), DAT_COMPLETION_DEFAULT_FLAG));
	/* The receiver places a large send (its side makes that progress). */
	assert_int_equal(expect_dto(x.p.recv, x.p.ep, 3, DAT_DTO_SUCCESS), BIG);
	assert_int_equal(expect_dto(x.a.req, x.a.ep, 4, DAT_DTO_SUCCESS), BIG);
	assert_memory_equal(r.buf, s.buf, BIG);
	/* Three segments are more than the EP's request IOV depth. */
	DAT_LMR_TRIPLET three[3] = {si, si, si};
	check_ret(dat_ep_post_send(x.a.ep, 3, three, cookie(5), DAT_COMPLETION_DEFAULT_FLAG), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG2);
	expect_empty(x.a.req);
	mem_free(&s, 0);
	mem_free(&r, 0);
	pair_close(&x);
}

/* RDMA write and read with max_rdma_size and max_rdma_*_iov 0: up to the
 * request IOV depth in segments, of any length up to the IA's maximum. */
static void rdma_with_zero_rdma_attributes(void **state)
{
	struct pair x;
	struct mem l, r;
	open_zeroed(&x, state);
	mem_reg(&l, x.a.ia, x.a.pz, BIG, DAT_MEM_PRIV_ALL_FLAG);
	mem_reg(&r, x.p.ia, x.p.pz, BIG, DAT_MEM_PRIV_ALL_FLAG);
	for (int i = 0; i < BIG; i++)
		l.buf[i] = (unsigned char)(i * 3 + 1);
	DAT_LMR_TRIPLET two[2] = {iov_at(&l, 0, BIG / 2), iov_at(&l, BIG / 2, BIG / 2)};
	DAT_RMR_TRIPLET rb = rmr_at(&r, 0, BIG);
	check_ok(dat_ep_post_rdma_write(x.a.ep, 2, two, cookie(1), &rb, DAT_COMPLETION_DEFAULT_FLAG));
	assert_int_equal(expect_dto(x.a.req, x.a.ep, 1, DAT_DTO_SUCCESS), BIG);
	assert_memory_equal(r.buf, l.buf, BIG);
	memset(l.buf, 0, BIG);
	check_ok(dat_ep_post_rdma_read(x.a.ep, 2, two, cookie(2), &rb, DAT_COMPLETION_DEFAULT_FLAG));
	assert_int_equal(expect_dto(x.a.req, x.a.ep, 2, DAT_DTO_SUCCESS), BIG);
	assert_memory_equal(l.buf, r.buf, BIG);
	DAT_LMR_TRIPLET small = iov_at(&l, 0, 4), three[3] = {small, small, small};
	DAT_RMR_TRIPLET rs = rmr_at(&r, 0, 12);
	check_ret(dat_ep_post_rdma_write(x.a.ep, 3, three, cookie(3), &rs, DAT_COMPLETION_DEFAULT_FLAG),
		  DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ret(dat_ep_post_rdma_read(x.a.ep, 3, three, cookie(4), &rs, DAT_COMPLETION_DEFAULT_FLAG),
		  DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	expect_empty(x.a.req);
	mem_free(&l, 0);
	mem_free(&r, 0);
	pair_close(&x);
}

/* dat_ep_query reports what the EP allows: the values the program gave,
 * and for each size or IOV depth left 0 the value the EP really has (the
 * IA's maximum message and RDMA sizes; RDMA IOVs as deep as the request
 * IOV). RDMA read depths of 0 stay 0: "If the Consumer does not care about
 * posting RDMA Read operations or remote RDMA Read operations on the
 * connection, it can set the two outstanding RDMA Read attribute values to
 * 0" (dat_cr_accept(3DAT)). dat_ep_modify of an unrelated field keeps that
 * so. */
static void query_reports_effective_values(void **state)
{
	struct pair x;
	open_zeroed(&x, state);
	DAT_IA_ATTR ia = ia_attr(x.a.ia);
	DAT_EP_ATTR e = ep_attr_of(&x.a);
	assert_int_equal(e.max_recv_dtos, 8);
	assert_int_equal(e.max_request_dtos, 8);
	assert_int_equal(e.max_recv_iov, 2);
	assert_int_equal(e.max_request_iov, 2);
	assert_true(e.max_message_size > 0);
	assert_int_equal(e.max_message_size, ia.max_message_size);
	assert_int_equal(e.max_rdma_size, ia.max_rdma_size);
	assert_int_equal(e.max_rdma_read_iov, 2);
	assert_int_equal(e.max_rdma_write_iov, 2);
	assert_int_equal(e.max_rdma_read_in, 0);
	assert_int_equal(e.max_rdma_read_out, 0);

	/* Values the program did give are reported as given. */
	DAT_EP_ATTR a = zeroed_attr();
	a.max_message_size = 4096;
	a.max_rdma_write_iov = 1;
	struct end n;
	end_open_ia(&n, *state, &a);
	DAT_EP_ATTR g = ep_attr_of(&n);
	assert_int_equal(g.max_message_size, 4096);
	assert_int_equal(g.max_rdma_write_iov, 1);
	assert_int_equal(g.max_rdma_read_iov, 2);
	assert_int_equal(g.max_rdma_size, ia.max_rdma_size);

	/* An unconnected zeroed EP, modified in one field. */
	struct end z;
	DAT_EP_ATTR za = zeroed_attr();
	end_open_ia(&z, *state, &za);
	DAT_EP_PARAM p;
	memset(&p, 0, sizeof p);
	p.ep_attr.max_request_dtos = 4;
	check_ok(dat_ep_modify(z.ep, DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS, &p));
	DAT_EP_ATTR m = ep_attr_of(&z);
	assert_int_equal(m.max_request_dtos, 4);
	assert_int_equal(m.max_message_size, ia.max_message_size);
	assert_int_equal(m.max_rdma_read_iov, 2);
	/* A requested value past the IA's limit is still refused. */
	p.ep_attr.max_message_size = ia.max_message_size + 1;
	check_ret(dat_ep_modify(z.ep, DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE, &p), DAT_INVALID_PARAMETER,
		  DAT_INVALID_ARG3);
	end_close(&z);
	end_close(&n);
	pair_close(&x);
}

#define BOTH(f) cmocka_unit_test_prestate(f, (void *)"godat-shm"), cmocka_unit_test_prestate(f, (void *)"godat-tcp")

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(send_with_zero_message_size),
		BOTH(rdma_with_zero_rdma_attributes),
		BOTH(query_reports_effective_values),
	};
	return cmocka_run_group_tests_name("compat ep attributes", tests, NULL, NULL);
}
