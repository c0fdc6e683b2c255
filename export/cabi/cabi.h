// C declarations of the layer every DAT library built from core shares
// (package cabi): the fork flag, the handle stub and the handle region.
// The ABI packages include this header beside their own DAT headers.
#ifndef GODAT_CABI_H
#define GODAT_CABI_H

#include <stddef.h>
#include <stdint.h>

// Set in a forked child: the Go runtime did not survive the fork. Each
// ABI's entry points test it before entering Go (GODAT_GUARD in the ABI's
// header), since what they return is the ABI's own code.
extern volatile int godat_forked;

// What a handle points at. The first word is the ABI's provider table
// (DAT requires it so the redirection macros work); the ABI package gives
// it to the handle table, which never reads it.
typedef struct godat_stub {
	const void *provider;
	uint32_t slot;
	uint32_t gen;
} godat_stub;

// A handle as Go receives it: an integer, never a pointer. Consumers pass
// garbage, DAT_HANDLE_NULL and the sentinels 0x1/0x2 where handles go; held
// in a pointer-typed Go variable such a value makes the Go runtime abort the
// process ("invalid pointer found on stack") when the stack is copied.
typedef uintptr_t godat_handle;

void *godat_handle_region(size_t bytes, unsigned views);

#endif
