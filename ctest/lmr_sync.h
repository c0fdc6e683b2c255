/* The argument checks that dat_lmr_sync_rdma_read(3DAT) and
 * dat_lmr_sync_rdma_write(3DAT) share word for word; each page's test file
 * runs them against its own call. */
#ifndef GODAT_CTEST_LMR_SYNC_H
#define GODAT_CTEST_LMR_SYNC_H

#include "pages.h"

typedef DAT_RETURN (*lmr_sync_fn)(DAT_IA_HANDLE, const DAT_LMR_TRIPLET *, DAT_VLEN);

/* DAT_INVALID_HANDLE: "The DAT handle is invalid": NULL, closed, a PZ
 * (DAT_INVALID_HANDLE_IA). */
static inline void lmr_sync_invalid_handle(lmr_sync_fn sync)
{
	static char a[16];
	DAT_IA_HANDLE ia = open_ia(NULL), closed = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia);
	struct lmr l = make_lmr(ia, pz, a, sizeof a, DAT_MEM_PRIV_ALL_FLAG);
	DAT_LMR_TRIPLET t = triplet(&l, a, sizeof a);
	check_ok(dat_ia_close(closed, DAT_CLOSE_ABRUPT_FLAG));
	check_ret(sync(DAT_HANDLE_NULL, &t, 1), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	check_ret(sync(closed, &t, 1), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	check_ret(sync(pz, &t, 1), DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* DAT_INVALID_PARAMETER: "the address range for a local segment fell
 * outside the boundaries of the corresponding Local Memory Region or the
 * LMR handle was invalid": past the end, before the start, an unknown or
 * freed lmr_context, an LMR of another IA; and a NULL array. All are
 * argument 2. */
static inline void lmr_sync_invalid_parameter(lmr_sync_fn sync)
{
	static char a[64];
	DAT_IA_HANDLE ia = open_ia(NULL), ia2 = open_ia(NULL);
	DAT_PZ_HANDLE pz = make_pz(ia), pz2 = make_pz(ia2);
	struct lmr l = make_lmr(ia, pz + 0, a + 8, 32, DAT_MEM_PRIV_ALL_FLAG);
	struct lmr gone = make_lmr(ia, pz, a, sizeof a, DAT_MEM_PRIV_ALL_FLAG);
	struct lmr other = make_lmr(ia2, pz2, a, sizeof a, DAT_MEM_PRIV_ALL_FLAG);
	check_ok(dat_lmr_free(gone.h));
	DAT_LMR_TRIPLET bad[] = {
		triplet(&l, a + 8, 33),   /* one byte past the end */
		triplet(&l, a + 7, 2),    /* starts before the region */
		triplet(&gone, a, 8),     /* freed LMR */
		triplet(&other, a, 8),    /* another IA's LMR */
	};
	bad[3].lmr_context = other.lctx ^ 0x40000000u;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		DAT_LMR_TRIPLET two[2] = {triplet(&l, a + 8, 32), bad[i]};
		check_ret(sync(ia, two, 2), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	check_ret(sync(ia, NULL, 1), DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	check_ok(dat_ia_close(ia2, DAT_CLOSE_ABRUPT_FLAG));
	check_ok(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
}

#endif
