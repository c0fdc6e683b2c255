/* The address godat reports for an IA of the shipped dat.conf (README,
 * "Between hosts: TCP"; rdma/soft/params.go, hostAddr), worked out here on
 * its own from getifaddrs(3). An IA with addr= has that address; a
 * shared-memory one without, 127.0.0.1; a TCP or auto one without (the
 * shipped godat-tcp and godat) listens on every IPv4 address of the host
 * and reports the first IPv4 address, not a loopback one, of an interface
 * that is up (a link-local 169.254/16 one only when there is no other),
 * else 127.0.0.1: in a network namespace with only lo, 127.0.0.1. */
#ifndef GODAT_CTEST_IAADDR_H
#define GODAT_CTEST_IAADDR_H

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>

static inline const char *host_ia_addr(void)
{
	static char buf[INET_ADDRSTRLEN];
	char ll[INET_ADDRSTRLEN] = "";
	struct ifaddrs *all;
	strcpy(buf, "127.0.0.1");
	if (getifaddrs(&all) != 0)
		return buf;
	for (struct ifaddrs *i = all; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET)
			continue;
		if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
			continue;
		struct in_addr a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		uint32_t h = ntohl(a.s_addr);
		if (h == 0 || h >> 24 == 127)
			continue;
		if (h >> 16 == 0xa9fe) { /* 169.254/16 */
			if (ll[0] == 0)
				inet_ntop(AF_INET, &a, ll, sizeof ll);
			continue;
		}
		inet_ntop(AF_INET, &a, buf, sizeof buf);
		freeifaddrs(all);
		return buf;
	}
	freeifaddrs(all);
	if (ll[0] != 0)
		strcpy(buf, ll);
	return buf;
}

/* The address of a shipped IA; NULL for a name this header does not know. */
static inline const char *shipped_ia_addr(const char *ia)
{
	if (strcmp(ia, "godat-shm") == 0)
		return "127.0.0.1";
	if (strcmp(ia, "godat-tcp6") == 0)
		return "::1";
	if (strcmp(ia, "godat-tcp") == 0 || strcmp(ia, "godat") == 0)
		return host_ia_addr();
	return NULL;
}

#endif
