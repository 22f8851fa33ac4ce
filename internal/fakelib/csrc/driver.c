#include "driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static char g_msg[200];

void *fake_driver(const char *who, const char **err) {
	const char *path = getenv("GOCUDA_LIBCUDA");
	if (path == NULL || *path == 0)
		path = "libcuda.so.1";
	void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (h == NULL)
		h = dlopen(path, RTLD_NOW);
	if (h == NULL) {
		snprintf(g_msg, sizeof g_msg, "%s cannot open the CUDA driver (GOCUDA_LIBCUDA)", who);
		*err = g_msg;
		return NULL;
	}
	if (dlsym(h, "fakecuda_live") == NULL) {
		snprintf(g_msg, sizeof g_msg, "%s runs only on the fake CUDA driver (internal/fakecuda)", who);
		*err = g_msg;
		return NULL;
	}
	return h;
}
