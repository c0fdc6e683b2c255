/* noroute.h: whether an address is unreachable here, for the cases that
 * need a connect to fail with DAT_CONNECTION_EVENT_UNREACHABLE. */
#ifndef GODAT_CTEST_NOROUTE_H
#define GODAT_CTEST_NOROUTE_H

#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/* True when this network namespace has no route to a (IPv4, network
 * order): a UDP connect only looks the route up. ctest/run.sh gives the
 * suite a namespace of its own with loopback alone when it can (root), so
 * that 192.0.2.1 (TEST-NET-1) is unreachable on every machine; elsewhere a
 * default route may lead it to a gateway that answers, and the case cannot
 * be provoked. */
static inline int no_route_to(in_addr_t a)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(9)};
	sa.sin_addr.s_addr = a;
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		return 0;
	int r = connect(s, (struct sockaddr *)&sa, sizeof sa), e = errno;
	close(s);
	return r != 0 && (e == ENETUNREACH || e == EHOSTUNREACH);
}

#endif
