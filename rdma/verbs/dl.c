// The libraries are opened on the first device open, never at load time:
// libdat.so.1 must load and serve the software transports on machines
// without rdma-core.

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "shim.h"

struct gd_fns gd;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static int loaded; /* 1 ok, -1 failed (the message is kept) */
static char load_msg[512];

static void *sym(void *lib, const char *libname, const char *name)
{
	void *p = dlsym(lib, name);

	if (!p && !load_msg[0])
		snprintf(load_msg, sizeof load_msg, "%s has no symbol %s (rdma-core too old?)", libname, name);
	return p;
}

static int load(void)
{
	void *ibv, *cm;

	// RTLD_GLOBAL is not needed: the provider plugins libibverbs loads
	// name libibverbs.so.1 themselves and get this copy.
	ibv = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!ibv) {
		snprintf(load_msg, sizeof load_msg,
			 "cannot load libibverbs.so.1 (install rdma-core's libibverbs1 and a provider, e.g. ibverbs-providers): %s",
			 dlerror());
		return -1;
	}
	cm = dlopen("librdmacm.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!cm) {
		snprintf(load_msg, sizeof load_msg, "cannot load librdmacm.so.1 (install rdma-core's librdmacm1): %s",
			 dlerror());
		dlclose(ibv);
		return -1;
	}
#define GD_IBV_SYM(n) gd.n = (__typeof__(gd.n))sym(ibv, "libibverbs.so.1", "ibv_" #n);
#define GD_CM_SYM(n) gd.cm_##n = (__typeof__(gd.cm_##n))sym(cm, "librdmacm.so.1", "rdma_" #n);
	GD_IBV_FNS(GD_IBV_SYM)
	GD_CM_FNS(GD_CM_SYM)
#undef GD_IBV_SYM
#undef GD_CM_SYM
	if (load_msg[0]) {
		memset(&gd, 0, sizeof gd);
		return -1;
	}
	return 0;
}

int gd_load(char *msg, int n)
{
	pthread_mutex_lock(&load_lock);
	if (!loaded)
		loaded = load() == 0 ? 1 : -1;
	pthread_mutex_unlock(&load_lock);
	if (loaded < 0) {
		snprintf(msg, n, "%s", load_msg);
		return -1;
	}
	return 0;
}
