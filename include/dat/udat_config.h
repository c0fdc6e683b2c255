/*
 * udat_config.h - compile-time configuration of the DAT 1.2 user API.
 *
 * dat_ia_open() (a macro in dat.h) passes these values to dat_ia_openv()
 * so the library can check that the consumer was built against a
 * compatible API version and threading model.
 */
#ifndef _DAT_UDAT_CONFIG_H_
#define _DAT_UDAT_CONFIG_H_

/* DAT API version implemented by these headers. */
#define DAT_VERSION_MAJOR	1
#define DAT_VERSION_MINOR	2

/*
 * Threading model requested by dat_ia_open(): 0 (DAT_FALSE) asks for any
 * provider, 1 (DAT_TRUE) for a thread-safe one.  A consumer may define it
 * before including <dat/udat.h>.
 */
#ifndef DAT_THREADSAFE
#define DAT_THREADSAFE		0
#endif

#endif /* _DAT_UDAT_CONFIG_H_ */
