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
// returns DAT_INTERNAL_ERROR at once instead of entering Go.
#define GODAT_GUARD                                         \
	do {                                                \
		if (__builtin_expect(godat_forked, 0))      \
			return DAT_INTERNAL_ERROR;          \
	} while (0)

// The provider table every handle's stub starts with.
extern DAT_PROVIDER godat_provider;

#endif
