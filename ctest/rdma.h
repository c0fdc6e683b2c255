/* Whether this host can open a verbs IA, for the tests whose expectations
 * differ (the shipped dat.conf's godat-verbs and its OFED aliases): an RDMA
 * device in /sys/class/infiniband, and rdma-core's libraries not hidden by
 * tools/nordma.sh (GODAT_NORDMA=hidden; ctest/run.sh runs the suite so). */
#ifndef GODAT_CTEST_RDMA_H
#define GODAT_CTEST_RDMA_H

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static inline int rdma_libs_hidden(void)
{
	const char *h = getenv("GODAT_NORDMA");
	return h != NULL && (strcmp(h, "hidden") == 0 || strcmp(h, "absent") == 0);
}

/* rdma_devices counts the kernel's RDMA devices. */
static inline int rdma_devices(void)
{
	DIR *d = opendir("/sys/class/infiniband");
	int n = 0;
	if (d == NULL)
		return 0;
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* verbs_usable: a transport=verbs entry can open here. */
static inline int verbs_usable(void)
{
	return !rdma_libs_hidden() && rdma_devices() > 0;
}

/* What the library's log says is missing when it cannot. */
static inline const char *verbs_missing(void)
{
	return rdma_libs_hidden() ? "cannot load libibverbs.so.1" : "no RDMA device";
}

#endif
