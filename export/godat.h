// Internal declarations shared by the C files of the export layer.
#ifndef GODAT_EXPORT_H
#define GODAT_EXPORT_H

#include <stdint.h>
#include <stdlib.h>
#include <dat/udat.h>
#include <dat/udat_redirection.h>

// Set in a forked child: the Go runtime did not survive the fork.
extern volatile int godat_forked;

#define GODAT_GUARD                                         \
	do {                                                \
		if (__builtin_expect(godat_forked, 0))      \
			return DAT_INTERNAL_ERROR;          \
	} while (0)

// What a handle points at: the provider table first, as DAT requires.
typedef struct godat_stub {
	DAT_PROVIDER *provider;
	uint32_t slot;
	uint32_t gen;
} godat_stub;

// A handle as Go receives it: an integer, never a pointer. Consumers pass
// garbage, DAT_HANDLE_NULL and the sentinels 0x1/0x2 where handles go; held
// in a pointer-typed Go variable such a value makes the Go runtime abort the
// process ("invalid pointer found on stack") when the stack is copied.
typedef uintptr_t godat_handle;

extern DAT_PROVIDER godat_provider;
void *godat_handle_region(size_t bytes, unsigned views);

#endif
