/*
 * dat_vendor_specific.h - vendor extensions to the common DAT API.
 *
 * Included at the end of dat.h.  This is the place for vendor-defined
 * constants and types; godat defines none, so the header only exists for
 * programs that include it by name.
 */
#ifndef _DAT_VENDOR_SPECIFIC_H_
#define _DAT_VENDOR_SPECIFIC_H_

#ifdef __cplusplus
extern "C" {
#endif

/* (no vendor extensions) */

#ifdef __cplusplus
}
#endif

#endif /* _DAT_VENDOR_SPECIFIC_H_ */
