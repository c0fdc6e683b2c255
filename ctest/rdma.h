/* Whether this host can open a verbs IA, for the tests whose expectations
 * differ (the shipped dat.conf's godat-verbs and its OFED aliases): an RDMA
 * device in /sys/class/infiniband, and rdma-core's libraries not hidden by
 * tools/nordma.sh (GODAT_NORDMA=hidden; ctest/run.sh runs the suite so). */
#ifndef GODAT_CTEST_RDMA_H
#define GODAT_CTEST_RDMA_H

#include "common.h"
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
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

/* The IPv4 address (network byte order) an EP of ia reports as its local
 * address, and a passive peer's EP and CR as the remote one, when the tests
 * connect to 127.0.0.1 (an active EP's remote address is the one it
 * connected to): for the software provider's IAs 127.0.0.1 itself; a verbs
 * IA (the suite's godat-verbs) listens and connects on its device's address
 * only, dat_ia_query's, which a connection to 127.0.0.1 reaches
 * (rdma/verbs/conn.go). */
static inline in_addr_t conn_addr(DAT_IA_HANDLE ia)
{
	DAT_IA_ATTR a;
	DAT_EVD_HANDLE async;
	if (strstr(TEST_IA, "verbs") == NULL)
		return htonl(INADDR_LOOPBACK);
	check_ok(dat_ia_query(ia, &async, DAT_IA_FIELD_IA_ADDRESS_PTR, &a, 0, NULL));
	assert_int_equal(a.ia_address_ptr->sa_family, AF_INET);
	return ((struct sockaddr_in *)a.ia_address_ptr)->sin_addr.s_addr;
}

#endif
