// Kernels without code: the fake has no modules, so its functions are made
// by a control (fakecuda_function_new) with the resources a test gives
// them. cuFuncGetAttribute, cuFuncSetAttribute and
// cuOccupancyMaxActiveBlocksPerMultiprocessor answer from those, with an
// H100's limits, and cuLaunchKernelEx checks a launch as the driver does
// (function, shape, stream, dynamic shared memory, the attributes: cluster
// dimensions against the grid and the portable limit, a cooperative grid
// against what can be resident at once) and records it for
// fakecuda_last_launch, parameters included, without running anything.
#include "fake.h"

#include <stdlib.h>
#include <string.h>

// The CUfunction_attribute values the fake knows.
enum {
	FA_MAX_THREADS_PER_BLOCK = 0,
	FA_SHARED_SIZE_BYTES = 1,
	FA_NUM_REGS = 4,
	FA_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
	FA_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
};

// The CUlaunchAttributeID values it checks; others are recorded as given.
enum {
	LA_IGNORE = 0,
	LA_COOPERATIVE = 2,
	LA_CLUSTER_DIMENSION = 4,
	LA_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
	LA_PRIORITY = 8,
};

// An H100's limits (see device.c).
enum {
	SM_COUNT = 132,
	SM_THREADS = 2048,
	SM_BLOCKS = 32,
	SM_REGS = 65536,
	SM_SHARED = 233472,
	BLOCK_RESERVED_SHARED = 1024,
	BLOCK_SHARED_OPTIN = 232448,
	BLOCK_SHARED_DEFAULT = 49152,
	PORTABLE_CLUSTER = 8,
	NON_PORTABLE_CLUSTER = 16,
	MAX_PARAMS = 32,
	MAX_ATTRS = 32,
};

struct func {
	uint64_t h;
	int regs;            // per thread
	int static_shared;   // bytes per block
	int max_dyn_shared;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
	int nonportable;     // CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
	unsigned nparams;
	unsigned psize[MAX_PARAMS];
};

// cuda.h's CUlaunchAttribute and CUlaunchConfig (LP64).
typedef struct {
	int id;
	char pad[4];
	union {
		char bytes[64];
		int i;
		unsigned dim[3];
	} value;
} launch_attr;

typedef struct {
	unsigned grid[3], block[3], shmem;
	CUstream stream;
	launch_attr *attrs;
	unsigned nattrs;
} launch_config;

_Static_assert(sizeof(launch_attr) == 72, "CUlaunchAttribute is 72 bytes");
_Static_assert(offsetof(launch_config, stream) == 32 && offsetof(launch_config, attrs) == 40 &&
		offsetof(launch_config, nattrs) == 48 && sizeof(launch_config) == 56,
	"CUlaunchConfig's layout");

// What fakecuda_last_launch reports: the last launch cuLaunchKernelEx
// accepted. Keep in step with fakeLaunch in launch.go.
struct fakecuda_launch {
	uint64_t func, stream;
	unsigned grid[3], block[3], shmem;
	unsigned nattrs, nparams;
	int attr_ids[MAX_ATTRS];
	unsigned char attr_values[MAX_ATTRS][64];
	uint64_t params[MAX_PARAMS];
};

static struct fakecuda_launch g_last; // under g_mu
static long g_launches;               // launches accepted, under g_mu

// fakecuda_function_new makes a function using regs registers per thread
// and static_shared bytes of static shared memory per block, with nparams
// parameters of the sizes given (at most 32, each 1 to 8 bytes; the
// launch record keeps their values). It returns its handle, or 0 for bad
// arguments.
EXPORT uint64_t fakecuda_function_new(int regs, int static_shared, unsigned nparams, const unsigned *sizes) {
	if (regs < 0 || regs > 255 || static_shared < 0 || static_shared > BLOCK_SHARED_OPTIN || nparams > MAX_PARAMS ||
		(nparams > 0 && sizes == NULL))
		return 0;
	struct func *f = calloc(1, sizeof *f);
	if (f == NULL)
		abort();
	f->regs = regs;
	f->static_shared = static_shared;
	f->max_dyn_shared = BLOCK_SHARED_DEFAULT - static_shared;
	if (f->max_dyn_shared < 0)
		f->max_dyn_shared = 0;
	f->nparams = nparams;
	for (unsigned i = 0; i < nparams; i++) {
		if (sizes[i] < 1 || sizes[i] > 8) {
			free(f);
			return 0;
		}
		f->psize[i] = sizes[i];
	}
	lock();
	f->h = handle_new(K_FUNC, f);
	unlock();
	return f->h;
}

// fakecuda_function_free frees a function of fakecuda_function_new; it
// returns 0, or -1 for a handle that is none.
EXPORT int fakecuda_function_free(uint64_t h) {
	lock();
	struct func *f = handle_get(h, K_FUNC);
	if (f != NULL)
		handle_free(h);
	unlock();
	free(f);
	return f != NULL ? 0 : -1;
}

// fakecuda_last_launch copies the last accepted launch to out and returns
// how many launches cuLaunchKernelEx accepted so far (0: out untouched).
EXPORT long fakecuda_last_launch(struct fakecuda_launch *out) {
	lock();
	long n = g_launches;
	if (n > 0 && out != NULL)
		*out = g_last;
	unlock();
	return n;
}

// locked_func is the prologue of the function calls: initialized, f a
// function; on success the lock is held.
static CUresult locked_func(uint64_t h, struct func **f) {
	return locked_handle(h, K_FUNC, CUDA_ERROR_INVALID_HANDLE, (void **)f);
}

EXPORT CUresult cuFuncGetAttribute(int *value, int attrib, uint64_t hfunc) {
	ENTER(cuFuncGetAttribute);
	if (value == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct func *f;
	CUresult r = locked_func(hfunc, &f);
	if (r != CUDA_SUCCESS)
		return r;
	switch (attrib) {
	case FA_MAX_THREADS_PER_BLOCK:
		*value = 1024;
		break;
	case FA_SHARED_SIZE_BYTES:
		*value = f->static_shared;
		break;
	case FA_NUM_REGS:
		*value = f->regs;
		break;
	case FA_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		*value = f->max_dyn_shared;
		break;
	case FA_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
		*value = f->nonportable;
		break;
	default:
		r = CUDA_ERROR_INVALID_VALUE; // the fake models no other
	}
	unlock();
	return r;
}

EXPORT CUresult cuFuncSetAttribute(uint64_t hfunc, int attrib, int value) {
	ENTER(cuFuncSetAttribute);
	struct func *f;
	CUresult r = locked_func(hfunc, &f);
	if (r != CUDA_SUCCESS)
		return r;
	switch (attrib) {
	case FA_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		if (value < 0 || value > BLOCK_SHARED_OPTIN - f->static_shared)
			r = CUDA_ERROR_INVALID_VALUE;
		else
			f->max_dyn_shared = value;
		break;
	case FA_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
		if (value != 0 && value != 1)
			r = CUDA_ERROR_INVALID_VALUE;
		else
			f->nonportable = value;
		break;
	default:
		r = CUDA_ERROR_INVALID_VALUE;
	}
	unlock();
	return r;
}

static int min_int(int a, int b) { return a < b ? a : b; }

// occupancy is how many blocks of f fit on a multiprocessor: the least of
// the limits of blocks, threads (whole warps), registers and shared
// memory, without the driver's allocation granularities. Under the lock.
static int occupancy(const struct func *f, int threads, size_t dyn) {
	if (threads < 1 || threads > 1024 || dyn > (size_t)f->max_dyn_shared)
		return 0;
	int warps = (threads + 31) / 32;
	int n = min_int(SM_BLOCKS, SM_THREADS / (warps * 32));
	if (f->regs > 0)
		n = min_int(n, SM_REGS / (f->regs * warps * 32));
	n = min_int(n, SM_SHARED / (f->static_shared + (int)dyn + BLOCK_RESERVED_SHARED));
	return n;
}

// cuOccupancyMaxActiveBlocksPerMultiprocessor, like the driver, needs a
// current context (its device's limits are the ones used).
EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, uint64_t hfunc, int blockSize, size_t dynamicSMemSize) {
	ENTER(cuOccupancyMaxActiveBlocksPerMultiprocessor);
	if (numBlocks == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct func *f;
	CUresult r = locked_func(hfunc, &f);
	if (r != CUDA_SUCCESS)
		return r;
	struct ctx *c;
	r = current_ctx(&c);
	if (r == CUDA_SUCCESS)
		*numBlocks = occupancy(f, blockSize, dynamicSMemSize);
	unlock();
	return r;
}

// check_attrs checks the launch attributes of cfg for f. Under the lock.
static CUresult check_attrs(const struct func *f, const launch_config *cfg) {
	if (cfg->nattrs > MAX_ATTRS || (cfg->nattrs > 0 && cfg->attrs == NULL))
		return CUDA_ERROR_INVALID_VALUE;
	int cooperative = 0;
	for (unsigned i = 0; i < cfg->nattrs; i++) {
		const launch_attr *a = &cfg->attrs[i];
		for (unsigned j = 0; j < i; j++)
			if (a->id != LA_IGNORE && cfg->attrs[j].id == a->id)
				return CUDA_ERROR_INVALID_VALUE;
		switch (a->id) {
		case LA_COOPERATIVE:
			cooperative = a->value.i != 0;
			break;
		case LA_CLUSTER_DIMENSION: {
			unsigned blocks = 1;
			for (int d = 0; d < 3; d++) {
				unsigned c = a->value.dim[d];
				if (c == 0 || cfg->grid[d] % c != 0)
					return CUDA_ERROR_INVALID_CLUSTER_SIZE;
				blocks *= c;
			}
			if (blocks > (f->nonportable ? NON_PORTABLE_CLUSTER : PORTABLE_CLUSTER))
				return CUDA_ERROR_INVALID_CLUSTER_SIZE;
			break;
		}
		case LA_PROGRAMMATIC_STREAM_SERIALIZATION:
			if (a->value.i != 0 && a->value.i != 1)
				return CUDA_ERROR_INVALID_VALUE;
			break;
		default: // LA_PRIORITY (clamped by the driver) and the rest: as given
			break;
		}
	}
	if (cooperative) {
		uint64_t blocks = (uint64_t)cfg->grid[0] * cfg->grid[1] * cfg->grid[2];
		int per_sm = occupancy(f, (int)(cfg->block[0] * cfg->block[1] * cfg->block[2]), cfg->shmem);
		if (blocks > (uint64_t)per_sm * SM_COUNT)
			return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
	}
	return CUDA_SUCCESS;
}

// cuLaunchKernelEx checks the launch and records it. The fake cannot
// capture a launch into a graph: in a capturing stream it fails and
// invalidates the capture.
EXPORT CUresult cuLaunchKernelEx(const launch_config *cfg, uint64_t hfunc, void **params, void **extra) {
	ENTER(cuLaunchKernelEx);
	if (cfg == NULL || extra != NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct func *f;
	CUresult r = locked_func(hfunc, &f);
	if (r != CUDA_SUCCESS)
		return r;
	static const unsigned max_block[3] = {1024, 1024, 64};
	static const unsigned max_grid[3] = {2147483647u, 65535, 65535};
	for (int d = 0; d < 3; d++)
		if (cfg->grid[d] == 0 || cfg->grid[d] > max_grid[d] || cfg->block[d] == 0 || cfg->block[d] > max_block[d])
			r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && (uint64_t)cfg->block[0] * cfg->block[1] * cfg->block[2] > 1024)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && cfg->shmem > (unsigned)f->max_dyn_shared)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && f->nparams > 0 && params == NULL)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		r = check_attrs(f, cfg);
	struct stream *s = NULL;
	if (r == CUDA_SUCCESS)
		r = stream_of(cfg->stream, &s);
	if (r == CUDA_SUCCESS && s->cap != NULL) {
		capture_invalidate(s);
		r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	if (r == CUDA_SUCCESS) {
		struct fakecuda_launch *l = &g_last;
		memset(l, 0, sizeof *l);
		l->func = hfunc;
		l->stream = (uint64_t)(uintptr_t)cfg->stream;
		memcpy(l->grid, cfg->grid, sizeof l->grid);
		memcpy(l->block, cfg->block, sizeof l->block);
		l->shmem = cfg->shmem;
		l->nattrs = cfg->nattrs;
		for (unsigned i = 0; i < cfg->nattrs; i++) {
			l->attr_ids[i] = cfg->attrs[i].id;
			memcpy(l->attr_values[i], cfg->attrs[i].value.bytes, 64);
		}
		l->nparams = f->nparams;
		for (unsigned i = 0; i < f->nparams; i++)
			memcpy(&l->params[i], params[i], f->psize[i]);
		g_launches++;
	}
	unlock();
	return r;
}
