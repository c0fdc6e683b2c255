// Internal declarations shared by the C files of the DAT 1.2 library.
#ifndef GODAT_EXPORT_H
#define GODAT_EXPORT_H

#include <stdint.h>
#include <stdlib.h>
#include <dat/udat.h>
#include <dat/udat_redirection.h>
#include "cabi.h"

// Every entry point starts with this: in a forked child (godat_forked, set
// by package cabi) the Go runtime did not survive the fork, so the call
// returns DAT_INTERNAL_ERROR at once instead of entering Go. Then the
// call counts towards the thread's scheduling tick (godat_tick, cabi.h).
#define GODAT_GUARD                                         \
	do {                                                \
		if (__builtin_expect(godat_forked, 0))      \
			return DAT_INTERNAL_ERROR;          \
		godat_tick();                               \
	} while (0)

// Every entry point returns through this: a call that found nothing (an
// empty dequeue, a wait that timed out) is where the thread yields when
// its scheduling tick says so (godat_tick_idle, cabi.h).
static inline DAT_RETURN godat_return(DAT_RETURN r)
{
	DAT_UINT32 type = DAT_GET_TYPE(r);
	if (type == DAT_QUEUE_EMPTY || type == DAT_TIMEOUT_EXPIRED)
		godat_tick_idle();
	return r;
}

// The polling consumer's dequeue (tools/apigen: eventCalls) returns
// through this: a dequeue that returns an event is where the thread
// yields when its yield is overdue (godat_tick_event, cabi.h).
static inline DAT_RETURN godat_return_event(DAT_RETURN r)
{
	if (r == DAT_SUCCESS) {
		godat_tick_event();
		return r;
	}
	return godat_return(r);
}

// The C fast paths (tools/apigen: fastPaths). Each returns 1 with the
// call's result in *ret when it answered the call, 0 when Go must.

// An empty dequeue of a DTO EVD whose last dequeue found it empty, and
// nothing it watches has moved since (godat_quiet_empty, cabi.h).
static inline int godat_fast_dat_evd_dequeue(DAT_RETURN *ret, DAT_EVD_HANDLE evd_handle, DAT_EVENT *event)
{
	if (!godat_quiet_empty((godat_handle)evd_handle, event))
		return 0;
	*ret = DAT_ERROR(DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE); // as the Go wrapper's (calls_test.go)
	return 1;
}

// The provider table every handle's stub starts with.
extern DAT_PROVIDER godat_provider;

#endif
