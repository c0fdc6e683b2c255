/* Program patterns around memory registration that existing uDAPL programs
 * depend on (issue 13, items 2 and 4), over godat-shm and godat-tcp:
 *
 *  - a send buffer registered with DAT_MEM_PRIV_LOCAL_WRITE_FLAG only, and
 *    an RDMA write source registered with remote privileges only: verbs has
 *    no local-read permission, every reference provider lets the local side
 *    read what it registered, and programs do not ask for it;
 *  - dat_lmr_create with a zero length reports DAT_LENGTH_ERROR even when
 *    the address is NULL too (length is checked before the address). */
#include "conn.h"

static const char *ia_name(void **state)
{
	return *state;
}

/* A send whose only LMR has local write privilege (the usual registration
 * of a buffer used both ways): accepted, delivered, completed. */
static void send_from_local_write_lmr(void **state)
{
	struct pair x;
	struct mem src, dst;
	pair_open_ia(&x, ia_name(state), NULL);
	pair_connect(&x);
	mem_reg(&src, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_LOCAL_WRITE_FLAG);
	mem_reg(&dst, x.p.ia, x.p.pz, 64, DAT_MEM_PRIV_LOCAL_WRITE_FLAG);
	memcpy(src.buf, "ping", 4);
	DAT_LMR_TRIPLET s = iov_at(&src, 0, 4), r = iov_at(&dst, 0, 64);
	check_ok(dat_ep_post_recv(x.p.ep, 1, &r, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_send(x.a.ep, 1, &s, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
	assert_int_equal(expect_dto(x.a.req, x.a.ep, 2, DAT_DTO_SUCCESS), 4);
	assert_int_equal(expect_dto(x.p.recv, x.p.ep, 1, DAT_DTO_SUCCESS), 4);
	assert_memory_equal(dst.buf, "ping", 4);
	mem_free(&src, 0);
	mem_free(&dst, 0);
	pair_close(&x);
}

/* RDMA write sources registered without local read: remote read only, and
 * every privilege but local read. The local side reads them all the same.
 * (Remote write alone is refused at registration, as by verbs and the
 * references: remote write needs local write.) */
static void rdma_write_without_local_read(void **state)
{
	struct pair x;
	struct mem rr, rw, dst;
	pair_open_ia(&x, ia_name(state), NULL);
	pair_connect(&x);
	mem_reg(&rr, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_REMOTE_READ_FLAG);
	mem_reg(&rw, x.a.ia, x.a.pz, 64, DAT_MEM_PRIV_ALL_FLAG & ~DAT_MEM_PRIV_LOCAL_READ_FLAG);
	mem_reg(&dst, x.p.ia, x.p.pz, 64, DAT_MEM_PRIV_ALL_FLAG);
	memcpy(rr.buf, "from-rr.", 8);
	memcpy(rw.buf, "from-rw.", 8);
	DAT_LMR_TRIPLET a = iov_at(&rr, 0, 8), b = iov_at(&rw, 0, 8);
	DAT_RMR_TRIPLET ta = rmr_at(&dst, 0, 8), tb = rmr_at(&dst, 8, 8);
	check_ok(dat_ep_post_rdma_write(x.a.ep, 1, &a, cookie(1), &ta, DAT_COMPLETION_DEFAULT_FLAG));
	check_ok(dat_ep_post_rdma_write(x.a.ep, 1, &b, cookie(2), &tb, DAT_COMPLETION_DEFAULT_FLAG));
	assert_int_equal(expect_dto(x.a.req, x.a.ep, 1, DAT_DTO_SUCCESS), 8);
	assert_int_equal(expect_dto(x.a.req, x.a.ep, 2, DAT_DTO_SUCCESS), 8);
	assert_memory_equal(dst.buf, "from-rr.from-rw.", 16);
	/* The privileges the consumer asked for are what dat_lmr_query
	 * reports: local read is implied, not added. */
	DAT_LMR_PARAM p;
	check_ok(dat_lmr_query(rr.lmr, DAT_LMR_FIELD_MEM_PRIV, &p));
	assert_int_equal(p.mem_priv, DAT_MEM_PRIV_REMOTE_READ_FLAG);
	mem_free(&rr, 0);
	mem_free(&rw, 0);
	mem_free(&dst, 0);
	pair_close(&x);
}

/* Length 0 with a NULL address: DAT_LENGTH_ERROR, as for any address. */
static void zero_length_before_null_address(void **state)
{
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_PZ_HANDLE pz;
	DAT_REGION_DESCRIPTION rd;
	DAT_LMR_HANDLE l = DAT_HANDLE_NULL;
	DAT_LMR_CONTEXT lc;
	DAT_RMR_CONTEXT rc;
	DAT_VLEN rl;
	DAT_VADDR ra;
	char buf[16];
	check_ok(dat_ia_open((char *)ia_name(state), 8, &async, &ia));
	check_ok(dat_pz_create(ia, &pz));
	memset(&rd, 0, sizeof rd);
	rd.for_va = NULL;
	check_ret(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, 0, pz, DAT_MEM_PRIV_ALL_FLAG, &l, &lc, &rc, &rl, &ra),
		  DAT_LENGTH_ERROR, DAT_NO_SUBTYPE);
	assert_null(l);
	/* A NULL address with a length is still the address's fault. */
	check_ret(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, 16, pz, DAT_MEM_PRIV_ALL_FLAG, &l, &lc, &rc, &rl, &ra),
		  DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	rd.for_va = buf;
	check_ret(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, rd, 0, pz, DAT_MEM_PRIV_ALL_FLAG, &l, &lc, &rc, &rl, &ra),
		  DAT_LENGTH_ERROR, DAT_NO_SUBTYPE);
	assert_null(l);
	check_ok(dat_pz_free(pz));
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

#define BOTH(f) cmocka_unit_test_prestate(f, (void *)"godat-shm"), cmocka_unit_test_prestate(f, (void *)"godat-tcp")

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(send_from_local_write_lmr),
		BOTH(rdma_write_without_local_read),
		BOTH(zero_length_before_null_address),
	};
	return cmocka_run_group_tests_name("compat lmr", tests, NULL, NULL);
}
