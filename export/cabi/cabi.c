// The C half of package cabi: the fork flag and the handle region.

#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include "cabi.h"

volatile int godat_forked;

static void godat_atfork_child(void) { godat_forked = 1; }

__attribute__((constructor)) static void godat_init(void)
{
	pthread_atfork(NULL, NULL, godat_atfork_child);
}

// godat_handle_region maps `views` consecutive aliases of one shared stub
// array of `bytes` bytes. A handle's address encodes its slot and, through
// the view it lies in, its generation; every alias shows the same stub.
void *godat_handle_region(size_t bytes, unsigned views)
{
	int fd = memfd_create("godat-handles", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)bytes) != 0) {
		close(fd);
		return NULL;
	}
	char *base = mmap(NULL, bytes * views, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	for (unsigned v = 0; v < views; v++) {
		void *p = mmap(base + (size_t)v * bytes, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
		if (p == MAP_FAILED) {
			munmap(base, bytes * views);
			close(fd);
			return NULL;
		}
	}
	close(fd);
	return base;
}
