/*
 * udat_vendor_specific.h - vendor extensions to the user-level DAT API.
 *
 * Included at the end of udat.h.  This is the place for vendor-defined
 * user-level constants and types; godat defines none, so the header only
 * exists for programs that include it by name.
 */
#ifndef _DAT_UDAT_VENDOR_SPECIFIC_H_
#define _DAT_UDAT_VENDOR_SPECIFIC_H_

#include <dat/dat_vendor_specific.h>

#ifdef __cplusplus
extern "C" {
#endif

/* (no vendor extensions) */

#ifdef __cplusplus
}
#endif

#endif /* _DAT_UDAT_VENDOR_SPECIFIC_H_ */
