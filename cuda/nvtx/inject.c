//go:build linux && cgo

// The application side of NVTX v3, its attaching half: the function-pointer
// tables a tool fills through the export table, and the loading of the
// tool named by NVTX_INJECTION64_PATH. Every layout here is NVTX's ABI,
// for LP64.

#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"
#include "slots.h"

// Export table ids a tool asks for.
enum {
	ETID_CALLBACKS = 1,
	ETID_VERSIONINFO = 3,
};

// The slots a tool fills, and the tables it is given: entry i points at
// slot i; entry 0 and the one past the last are NULL, so a tool that reads
// beyond the size it was told finds NULL rather than another module's slot.
slot gonvtx_core[CORE_SIZE], gonvtx_core2[CORE2_SIZE];
static slot cuda[CUDA_SIZE], opencl[OPENCL_SIZE];
static slot cudart[CUDART_SIZE], sync_[SYNC_SIZE];
static slot *core_tab[CORE_SIZE + 1], *cuda_tab[CUDA_SIZE + 1];
static slot *opencl_tab[OPENCL_SIZE + 1], *cudart_tab[CUDART_SIZE + 1];
static slot *core2_tab[CORE2_SIZE + 1], *sync_tab[SYNC_SIZE + 1];

static const struct {
	slot *slots;
	slot **tab;
	unsigned size;
} modules[MOD_COUNT] = {
	[MOD_CORE] = {gonvtx_core, core_tab, CORE_SIZE},
	[MOD_CUDA] = {cuda, cuda_tab, CUDA_SIZE},
	[MOD_OPENCL] = {opencl, opencl_tab, OPENCL_SIZE},
	[MOD_CUDART] = {cudart, cudart_tab, CUDART_SIZE},
	[MOD_CORE2] = {gonvtx_core2, core2_tab, CORE2_SIZE},
	[MOD_SYNC] = {sync_, sync_tab, SYNC_SIZE},
};

static int get_module_function_table(int module, slot ***out_table, unsigned *out_size) {
	if (module <= 0 || module >= MOD_COUNT)
		return 0;
	if (out_table != NULL)
		*out_table = modules[module].tab;
	if (out_size != NULL)
		*out_size = modules[module].size;
	return 1;
}

static void set_injection_version(uint32_t version) {
	(void)version;
}

static const struct {
	size_t struct_size;
	int (*get_module_function_table)(int, slot ***, unsigned *);
} callbacks_table = {sizeof callbacks_table, get_module_function_table};

static const struct {
	size_t struct_size;
	uint32_t version;
	uint32_t reserved0;
	void (*set_injection_version)(uint32_t);
} version_table = {sizeof version_table, GONVTX_NVTX_VERSION, 0, set_injection_version};

static const void *get_export_table(uint32_t id) {
	switch (id) {
	case ETID_CALLBACKS:
		return &callbacks_table;
	case ETID_VERSIONINFO:
		return &version_table;
	}
	return NULL;
}

static void clear_slots(void) {
	for (int m = 1; m < MOD_COUNT; m++)
		memset(modules[m].slots, 0, modules[m].size * sizeof(slot));
}

static void copy_error(char *err, size_t errlen, const char *msg) {
	if (errlen == 0)
		return;
	if (msg == NULL)
		msg = "";
	strncpy(err, msg, errlen - 1);
	err[errlen - 1] = 0;
}

typedef int (*init_fn)(const void *(*)(uint32_t));

// gonvtx_load runs once per process, before any other call here (package
// nvtx's sync.Once); the slots are read only after Go publishes its
// result, which orders the tool's writes before them.
int gonvtx_load(const char *path, char *err, size_t errlen) {
	for (int m = 1; m < MOD_COUNT; m++) {
		modules[m].tab[0] = NULL;
		for (unsigned i = 1; i < modules[m].size; i++)
			modules[m].tab[i] = &modules[m].slots[i];
		modules[m].tab[modules[m].size] = NULL;
	}
	void *lib = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (lib == NULL) {
		copy_error(err, errlen, dlerror());
		return GONVTX_NO_LIBRARY;
	}
	dlerror();
	init_fn init = (init_fn)dlsym(lib, "InitializeInjectionNvtx2");
	if (init == NULL) {
		copy_error(err, errlen, dlerror());
		dlclose(lib);
		return GONVTX_NO_ENTRY;
	}
	if (init(get_export_table) == 0) {
		// A tool that refuses may have filled slots already: none of
		// them may be called.
		clear_slots();
		copy_error(err, errlen, "InitializeInjectionNvtx2 returned 0");
		dlclose(lib);
		return GONVTX_INIT_FAILED;
	}
	return GONVTX_ATTACHED;
}
