//go:build cgotest

package main

/*
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
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

// One connection's life between two EPs of one IA through its own PSP,
// over 127.0.0.1: connect, accept, established at both ends, a graceful
// disconnect, disconnected at both ends, both EPs freed. The objects it
// needs are made once (godat_test_churn_open).
struct godat_churn {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, dto, cconn, sconn, cr;
	DAT_PZ_HANDLE pz;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL q;
};

static DAT_RETURN godat_test_churn_open(struct godat_churn *c, char *name)
{
	DAT_RETURN r;
	c->async = DAT_HANDLE_NULL;
	if ((r = dat_ia_open(name, 8, &c->async, &c->ia)) != DAT_SUCCESS)
		return r;
	if ((r = dat_pz_create(c->ia, &c->pz)) != DAT_SUCCESS ||
	    (r = dat_evd_create(c->ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &c->dto)) != DAT_SUCCESS ||
	    (r = dat_evd_create(c->ia, 16, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &c->cconn)) != DAT_SUCCESS ||
	    (r = dat_evd_create(c->ia, 16, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &c->sconn)) != DAT_SUCCESS ||
	    (r = dat_evd_create(c->ia, 16, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &c->cr)) != DAT_SUCCESS ||
	    (r = dat_psp_create_any(c->ia, &c->q, c->cr, DAT_PSP_CONSUMER_FLAG, &c->psp)) != DAT_SUCCESS)
		dat_ia_close(c->ia, DAT_CLOSE_ABRUPT_FLAG);
	return r;
}

// The next event of evd must be num (within 10 s); else a failure code.
static DAT_RETURN godat_test_expect(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER num, DAT_EVENT *ev)
{
	DAT_COUNT n;
	DAT_RETURN r = dat_evd_wait(evd, 10000000, 1, ev, &n);
	if (r != DAT_SUCCESS)
		return r;
	return ev->event_number == num ? DAT_SUCCESS : DAT_INTERNAL_ERROR;
}

static DAT_RETURN godat_test_churn_cycle(struct godat_churn *c, int *step)
{
	DAT_EP_HANDLE ce, se;
	DAT_EVENT ev;
	DAT_RETURN r;
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*step = 0;
	if ((r = dat_ep_create(c->ia, c->pz, c->dto, c->dto, c->cconn, NULL, &ce)) != DAT_SUCCESS)
		return r;
	*step = 1;
	if ((r = dat_ep_create(c->ia, c->pz, c->dto, c->dto, c->sconn, NULL, &se)) != DAT_SUCCESS)
		return r;
	*step = 2;
	if ((r = dat_ep_connect(ce, (DAT_IA_ADDRESS_PTR)&sa, c->q, 10000000, 0, NULL, DAT_QOS_BEST_EFFORT,
				DAT_CONNECT_DEFAULT_FLAG)) != DAT_SUCCESS)
		return r;
	*step = 3;
	if ((r = godat_test_expect(c->cr, DAT_CONNECTION_REQUEST_EVENT, &ev)) != DAT_SUCCESS)
		return r;
	*step = 4;
	if ((r = dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle, se, 0, NULL)) != DAT_SUCCESS)
		return r;
	*step = 5;
	if ((r = godat_test_expect(c->cconn, DAT_CONNECTION_EVENT_ESTABLISHED, &ev)) != DAT_SUCCESS)
		return r;
	*step = 6;
	if ((r = godat_test_expect(c->sconn, DAT_CONNECTION_EVENT_ESTABLISHED, &ev)) != DAT_SUCCESS)
		return r;
	*step = 7;
	if ((r = dat_ep_disconnect(ce, DAT_CLOSE_GRACEFUL_FLAG)) != DAT_SUCCESS)
		return r;
	*step = 8;
	if ((r = godat_test_expect(c->cconn, DAT_CONNECTION_EVENT_DISCONNECTED, &ev)) != DAT_SUCCESS)
		return r;
	*step = 9;
	if ((r = godat_test_expect(c->sconn, DAT_CONNECTION_EVENT_DISCONNECTED, &ev)) != DAT_SUCCESS)
		return r;
	*step = 10;
	if ((r = dat_ep_free(ce)) != DAT_SUCCESS)
		return r;
	*step = 11;
	return dat_ep_free(se);
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

// churn is an IA with the objects connection cycles need.
type churn struct{ c *C.struct_godat_churn }

// openChurn opens the IA called name for connection cycles.
func openChurn(name string) (*churn, uint32) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	c := (*C.struct_godat_churn)(C.calloc(1, C.sizeof_struct_godat_churn))
	if r := C.godat_test_churn_open(c, cs); r != C.DAT_SUCCESS {
		C.free(unsafe.Pointer(c))
		return nil, uint32(r)
	}
	return &churn{c}, 0
}

// cycle lives one connection (godat_test_churn_cycle); step names the
// step that failed when ret is not DAT_SUCCESS.
func (ch *churn) cycle() (ret uint32, step int) {
	var s C.int
	r := C.godat_test_churn_cycle(ch.c, &s)
	return uint32(r), int(s)
}

// close closes the IA and everything on it.
func (ch *churn) close() uint32 {
	r := C.dat_ia_close(ch.c.ia, C.DAT_CLOSE_ABRUPT_FLAG)
	C.free(unsafe.Pointer(ch.c))
	return uint32(r)
}
