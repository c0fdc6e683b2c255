/*
 * dat_registry.h - the interface between the DAT registry and providers.
 *
 * The static registry (dat.conf) names, for each IA, the library that
 * implements it.  When that library is loaded the registry calls its
 * dat_provider_init(), which registers a DAT_PROVIDER dispatch table for
 * the IA name with dat_registry_add_provider(); dat_provider_fini() is
 * called before it is unloaded.
 */
#ifndef _DAT_REGISTRY_H_
#define _DAT_REGISTRY_H_

#include <dat/udat.h>
#include <dat/udat_redirection.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Dynamic registry: providers declare (and withdraw) their IAs. */
extern DAT_RETURN dat_registry_add_provider(
	const DAT_PROVIDER *provider,
	const DAT_PROVIDER_INFO *provider_info);

extern DAT_RETURN dat_registry_remove_provider(
	const DAT_PROVIDER *provider,
	const DAT_PROVIDER_INFO *provider_info);

/* Entry points a provider library exports, looked up by these names. */
typedef void (*DAT_PROVIDER_INIT_FUNC)(
	const DAT_PROVIDER_INFO *provider_info,
	const char *instance_data);

typedef void (*DAT_PROVIDER_FINI_FUNC)(
	const DAT_PROVIDER_INFO *provider_info);

#define DAT_PROVIDER_INIT_FUNC_NAME	dat_provider_init
#define DAT_PROVIDER_FINI_FUNC_NAME	dat_provider_fini

#define DAT_PROVIDER_INIT_FUNC_STR	"dat_provider_init"
#define DAT_PROVIDER_FINI_FUNC_STR	"dat_provider_fini"

/* Prototypes for providers to define (not part of the DAT library). */
extern void DAT_PROVIDER_INIT_FUNC_NAME(
	const DAT_PROVIDER_INFO *provider_info,
	const char *instance_data);

extern void DAT_PROVIDER_FINI_FUNC_NAME(
	const DAT_PROVIDER_INFO *provider_info);

#ifdef __cplusplus
}
#endif

#endif /* _DAT_REGISTRY_H_ */
