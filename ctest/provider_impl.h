/* A provider implemented by the test program itself, for the
 * dat_provider_init(3DAT) and dat_provider_fini(3DAT) pages: "An
 * application that explicitly loads a Provider on its own can choose to use
 * dat_provider_init() just as the Registry would have done for an
 * auto-loaded Provider." Its table is the built-in provider's (reached
 * through an IA handle, whose first word is its DAT_PROVIDER), so it
 * dispatches to real functions. */
#ifndef GODAT_CTEST_PROVIDER_IMPL_H
#define GODAT_CTEST_PROVIDER_IMPL_H

#include "pages.h"
#include <dat/dat_registry.h>

static DAT_PROVIDER test_provider;
static int init_calls, fini_calls;
static char init_instance[64];
static DAT_RETURN init_result = DAT_SUCCESS, fini_result = DAT_SUCCESS;

void dat_provider_init(const DAT_PROVIDER_INFO *provider_info, const char *instance_data)
{
	init_calls++;
	snprintf(init_instance, sizeof init_instance, "%s", instance_data ? instance_data : "");
	/* "must call dat_registry_add_provider(3DAT), using the IA name in
	 * the provider_info.ia_name field"; "If this method fails, it should
	 * ensure that it does not leave its entry in the Dynamic Registry"
	 * (add_provider leaves nothing behind when it fails). */
	init_result = dat_registry_add_provider(&test_provider, provider_info);
}

void dat_provider_fini(const DAT_PROVIDER_INFO *provider_info)
{
	fini_calls++;
	fini_result = dat_registry_remove_provider(&test_provider, provider_info);
}

/* Copies the built-in provider's dispatch table. */
static inline void test_provider_setup(void)
{
	DAT_IA_HANDLE ia = open_ia(NULL);
	test_provider = *DAT_HANDLE_TO_PROVIDER(ia);
	test_provider.device_name = "ctest-provider";
	check_ok(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG));
}

static inline DAT_PROVIDER_INFO provider_info_named(const char *name)
{
	DAT_PROVIDER_INFO i;
	memset(&i, 0, sizeof i);
	snprintf(i.ia_name, sizeof i.ia_name, "%s", name);
	i.dapl_version_major = DAT_VERSION_MAJOR;
	i.dapl_version_minor = DAT_VERSION_MINOR;
	i.is_thread_safe = DAT_THREADSAFE;
	return i;
}

/* The dynamic and static registry entries named name. */
static inline int count_listed(const char *name)
{
	DAT_COUNT n = 0, m = 0;
	dat_registry_list_providers(0, &n, NULL);
	DAT_PROVIDER_INFO *infos = calloc((size_t)n + 1, sizeof *infos), **p = calloc((size_t)n + 1, sizeof *p);
	assert_non_null(infos);
	assert_non_null(p);
	for (DAT_COUNT i = 0; i <= n; i++)
		p[i] = &infos[i];
	check_ok(dat_registry_list_providers(n + 1, &m, p));
	int found = 0;
	for (DAT_COUNT i = 0; i < m; i++)
		found += strcmp(infos[i].ia_name, name) == 0;
	free(p);
	free(infos);
	return found;
}

static inline DAT_COUNT registry_count(void)
{
	DAT_COUNT n = 0;
	dat_registry_list_providers(0, &n, NULL);
	return n;
}

#endif
