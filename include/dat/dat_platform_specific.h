/*
 * dat_platform_specific.h - basic scalar types of the DAT 1.2 API.
 *
 * Part of godat, a reimplementation of the uDAPL / DAT 1.2 user library.
 * The layout of every type follows the DAT 1.2 ABI as shipped on
 * x86_64 Linux; only standard C and POSIX headers are used.
 */
#ifndef _DAT_PLATFORM_SPECIFIC_H_
#define _DAT_PLATFORM_SPECIFIC_H_

#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

/*
 * Parameter annotations: the reference headers mark the parameters of the
 * DAT prototypes with them, and programs use them in their own prototypes.
 * They expand to nothing; a definition made before these headers wins.
 */
#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif
#ifndef INOUT
#define INOUT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Fixed-width integers.  <stdint.h> names are used (rather than the BSD
 * u_int32_t / u_int64_t spellings) so that the headers also work in strict
 * ISO C modes; on glibc both spellings name the same types.
 */
typedef uint32_t		DAT_UINT32;
typedef uint64_t		DAT_UINT64;
typedef unsigned long long	DAT_UVERYLONG;

typedef void *			DAT_PVOID;
typedef int			DAT_COUNT;
typedef DAT_UINT64		DAT_PADDR;

/* Socket addresses are the host's own sockaddr types. */
typedef struct sockaddr		DAT_SOCK_ADDR;
typedef struct sockaddr_in6	DAT_SOCK_ADDR6;

#define DAT_AF_INET		AF_INET
#define DAT_AF_INET6		AF_INET6

/* Buffer alignment (bytes) giving the best DTO performance. */
#define DAT_OPTIMAL_ALIGNMENT	256

#ifdef __cplusplus
}
#endif

#endif /* _DAT_PLATFORM_SPECIFIC_H_ */
