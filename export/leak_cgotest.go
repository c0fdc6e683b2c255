//go:build cgotest

package main

/*
#include <stdlib.h>
#include <dat/udat.h>

// One IA's life as a C program lives it, through the library's own C
// entry points: open, a PZ, an EVD, an EP and a listening PSP (a listener
// goroutine and socket), then an abrupt close that frees them all. The
// first failing step's code is returned, its number in *step.
static DAT_RETURN godat_test_ia_cycle(char *name, int *step)
{
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, evd, cr;
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
	DAT_RETURN r;
	*step = 0;
	if ((r = dat_ia_open(name, 8, &async, &ia)) != DAT_SUCCESS)
		return r;
	*step = 1;
	if ((r = dat_pz_create(ia, &pz)) != DAT_SUCCESS)
		goto out;
	*step = 2;
	if ((r = dat_evd_create(ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG, &evd)) != DAT_SUCCESS)
		goto out;
	*step = 3;
	if ((r = dat_evd_create(ia, 16, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr)) != DAT_SUCCESS)
		goto out;
	*step = 4;
	if ((r = dat_ep_create(ia, pz, evd, evd, evd, NULL, &ep)) != DAT_SUCCESS)
		goto out;
	*step = 5;
	if ((r = dat_psp_create_any(ia, &q, cr, DAT_PSP_CONSUMER_FLAG, &psp)) != DAT_SUCCESS)
		goto out;
	*step = 6;
out:;
	DAT_RETURN c = dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
	return r != DAT_SUCCESS ? r : c;
}
*/
import "C"

import "unsafe"

// iaCycle lives one IA's life on the IA called name (godat_test_ia_cycle);
// step names the step that failed when ret is not DAT_SUCCESS.
func iaCycle(name string) (ret uint32, step int) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var s C.int
	r := C.godat_test_ia_cycle(cs, &s)
	return uint32(r), int(s)
}
