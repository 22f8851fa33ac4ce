// Kernel functions and launches. A function is either an entry of a
// loaded module or library (module.c), whose launches run the Go function
// registered under its name on the stream's worker, or one made by a
// control (fakecuda_function_new) with the resources a test gives it,
// whose launches are only checked and recorded. cuFuncGetAttribute,
// cuFuncSetAttribute and cuOccupancyMaxActiveBlocksPerMultiprocessor
// answer from those, with an H100's limits, and cuLaunchKernel,
// cuLaunchKernelEx and cuLaunchCooperativeKernel check a launch as the
// driver does (function, shape, stream, dynamic shared memory, the
// attributes: cluster dimensions against the grid and the portable limit,
// a cooperative grid against what can be resident at once) and record it
// for fakecuda_last_launch, parameters included.
#include "fake.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The CUfunction_attribute values the fake knows.
enum {
	FA_MAX_THREADS_PER_BLOCK = 0,
	FA_SHARED_SIZE_BYTES = 1,
	FA_CONST_SIZE_BYTES = 2,
	FA_LOCAL_SIZE_BYTES = 3,
	FA_NUM_REGS = 4,
	FA_PTX_VERSION = 5,
	FA_BINARY_VERSION = 6,
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

static struct fakecuda_launch g_last; // under g_mu
static long g_launches;               // launches accepted, under g_mu

// func_layout gives f the parameters of the sizes given, each at a
// multiple of its alignment: aligns[i] where given (a PTX entry's .param
// list declares them), else what C gives a struct of them, the size (a
// power of two up to 8; larger parameters 8), as PTX's .param list does
// for scalars. It returns -1 for a size of 0.
int func_layout(struct func *f, unsigned n, const unsigned *sizes, const unsigned *aligns) {
	f->nparams = n;
	f->psize = calloc(n ? n : 1, sizeof *f->psize);
	f->poff = calloc(n ? n : 1, sizeof *f->poff);
	if (f->psize == NULL || f->poff == NULL)
		abort();
	unsigned off = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned s = sizes[i], align = 8;
		if (s == 0)
			return -1;
		if (aligns != NULL)
			align = aligns[i] ? aligns[i] : 1;
		else if (s < 8 && (s & (s - 1)) == 0)
			align = s;
		off = (off + align - 1) / align * align;
		f->psize[i] = s;
		f->poff[i] = off;
		off += s;
	}
	f->params_known = 1;
	return 0;
}

void func_unref(struct func *f) {
	if (--f->refs > 0)
		return;
	free(f->psize);
	free(f->poff);
	free(f->name);
	if (f->ptx != NULL)
		ptx_text_unref(f->ptx);
	free(f);
}

struct func *func_new(void) {
	struct func *f = calloc(1, sizeof *f);
	if (f == NULL)
		abort();
	f->max_dyn_shared = BLOCK_SHARED_DEFAULT;
	f->refs = 1;
	return f;
}

// max_threads is f's CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: the device's
// 1024, or fewer where a block of them would need more registers than a
// multiprocessor has (a warp's registers taken in units of 256, as the
// driver allocates them), as the driver lowers it. Under the lock.
static int max_threads(const struct func *f) {
	if (f->regs <= 0)
		return 1024;
	int warps = SM_REGS / ((f->regs * 32 + 255) / 256 * 256);
	return warps * 32 < 1024 ? warps * 32 : 1024;
}

// fakecuda_function_new makes a function using regs registers per thread
// and static_shared bytes of static shared memory per block, with nparams
// parameters of the sizes given (at most 32, each 1 to 8 bytes; the
// launch record keeps their values). It returns its handle, or 0 for bad
// arguments.
EXPORT uint64_t fakecuda_function_new(int regs, int static_shared, unsigned nparams, const unsigned *sizes) {
	if (regs < 0 || regs > 255 || static_shared < 0 || static_shared > BLOCK_SHARED_OPTIN || nparams > MAX_PARAMS ||
		(nparams > 0 && sizes == NULL))
		return 0;
	for (unsigned i = 0; i < nparams; i++)
		if (sizes[i] < 1 || sizes[i] > 8)
			return 0;
	struct func *f = func_new();
	f->regs = regs;
	f->static_shared = static_shared;
	f->max_dyn_shared = BLOCK_SHARED_DEFAULT - static_shared;
	if (f->max_dyn_shared < 0)
		f->max_dyn_shared = 0;
	func_layout(f, nparams, sizes, NULL);
	lock();
	f->h = handle_new(K_FUNC, f);
	unlock();
	return f->h;
}

// fakecuda_function_free frees a function of fakecuda_function_new; it
// returns 0, or -1 for a handle that is none (or a module's).
EXPORT int fakecuda_function_free(uint64_t h) {
	lock();
	struct func *f = handle_get(h, K_FUNC);
	if (f != NULL && f->go)
		f = NULL;
	if (f != NULL) {
		handle_free(h);
		func_unref(f);
	}
	unlock();
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
		*value = max_threads(f);
		break;
	case FA_SHARED_SIZE_BYTES:
		*value = f->static_shared;
		break;
	case FA_NUM_REGS:
		*value = f->regs;
		break;
	case FA_CONST_SIZE_BYTES:
	case FA_LOCAL_SIZE_BYTES:
		*value = 0;
		break;
	case FA_PTX_VERSION:
		*value = f->ptx_version;
		break;
	case FA_BINARY_VERSION:
		*value = 90; // an H100's sm_90
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
	if (threads < 1 || threads > max_threads(f) || dyn > (size_t)f->max_dyn_shared)
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

// cuOccupancyMaxPotentialBlockSize picks the block size, a multiple of a
// warp up to blockSizeLimit (0: 1024), with the most resident threads per
// multiprocessor, the larger on a tie; the dynamic shared memory is
// b2d(block size) when b2d is given. minGridSize is the grid that fills
// every multiprocessor with blocks of that size.
EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, uint64_t hfunc, size_t (*b2d)(int),
	size_t dynamicSMemSize, int blockSizeLimit) {
	ENTER(cuOccupancyMaxPotentialBlockSize);
	if (minGridSize == NULL || blockSize == NULL || blockSizeLimit < 0)
		return CUDA_ERROR_INVALID_VALUE;
	struct func *f;
	CUresult r = locked_func(hfunc, &f);
	if (r != CUDA_SUCCESS)
		return r;
	struct ctx *c;
	r = current_ctx(&c);
	if (r == CUDA_SUCCESS) {
		int limit = blockSizeLimit > 0 && blockSizeLimit < 1024 ? blockSizeLimit : 1024;
		int best = 0, best_threads = 0;
		for (int b = limit / 32 * 32; b >= 32; b -= 32) {
			int n = occupancy(f, b, b2d != NULL ? b2d(b) : dynamicSMemSize);
			if (n * b > best_threads) {
				best_threads = n * b;
				best = b;
			}
		}
		*blockSize = best;
		*minGridSize = best > 0 ? best_threads / best * SM_COUNT : 0;
	}
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

// extra_buffer reads cuLaunchKernel's extra list: the parameters in one
// buffer (CU_LAUNCH_PARAM_BUFFER_POINTER, CU_LAUNCH_PARAM_BUFFER_SIZE),
// ended by CU_LAUNCH_PARAM_END.
static CUresult extra_buffer(void **extra, const unsigned char **buf, size_t *n) {
	int have_size = 0;
	*buf = NULL;
	for (int i = 0; extra[i] != NULL; i += 2) {
		if (i >= 16)
			return CUDA_ERROR_INVALID_VALUE;
		switch ((uintptr_t)extra[i]) {
		case 1:
			*buf = extra[i + 1];
			break;
		case 2:
			if (extra[i + 1] == NULL)
				return CUDA_ERROR_INVALID_VALUE;
			*n = *(size_t *)extra[i + 1];
			have_size = 1;
			break;
		default:
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	return *buf != NULL && have_size ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

// Launches no longer referenced, for klaunch_new to reuse (under the
// lock), each with the room for parameters it was made with: at least
// LAUNCH_MIN_PARAMS, so that any kept launch serves the usual kernel.
// Launches with more room than the driver's limit of parameters (32764
// bytes) are not kept.
enum { FREE_LAUNCHES_MAX = 64, LAUNCH_MIN_PARAMS = 256, LAUNCH_KEEP_PARAMS = 32764 };
static struct klaunch *g_free_launches;
static int g_nfree_launches;

// klaunch_get returns a launch with room for bytes of parameters: a kept
// one with room enough, or a new one.
static struct klaunch *klaunch_get(size_t bytes) {
	for (struct klaunch **p = &g_free_launches; *p != NULL; p = &(*p)->next_free) {
		struct klaunch *k = *p;
		if (k->cap >= bytes) {
			*p = k->next_free;
			g_nfree_launches--;
			return k;
		}
	}
	if (g_free_launches != NULL && g_nfree_launches == FREE_LAUNCHES_MAX) {
		// A full list of launches too small: one makes way, so that the
		// new one is kept when it is dropped.
		struct klaunch *old = g_free_launches;
		g_free_launches = old->next_free;
		g_nfree_launches--;
		free(old);
	}
	size_t cap = bytes > LAUNCH_MIN_PARAMS ? bytes : LAUNCH_MIN_PARAMS;
	struct klaunch *k = malloc(sizeof *k + cap);
	if (k == NULL)
		abort();
	k->cap = cap;
	return k;
}

// klaunch_new copies a launch of f: its shape and its parameters, from
// kernelParams through f's layout or from extra's buffer, as the driver
// copies them before cuLaunchKernel returns. Under the lock.
static CUresult klaunch_new(struct func *f, const launch_config *cfg, struct ctx *c, void **params, void **extra,
	struct klaunch **out) {
	const unsigned char *xbuf = NULL;
	size_t xbytes = 0;
	if (extra != NULL) {
		if (params != NULL || extra_buffer(extra, &xbuf, &xbytes) != CUDA_SUCCESS)
			return CUDA_ERROR_INVALID_VALUE;
	}
	size_t need = 0;
	if (f->params_known && f->nparams > 0)
		need = (size_t)f->poff[f->nparams - 1] + f->psize[f->nparams - 1];
	if (extra == NULL && !f->params_known && params != NULL) {
		fprintf(stderr, "fakecuda: cuLaunchKernel: the parameters of kernel %s are unknown (its image is a cubin or fatbin, "
			"whose parameter lists the fake does not read): register it with its parameter sizes, or pass them "
			"in one buffer (extra)\n", f->name);
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (extra != NULL && xbytes < need)
		return CUDA_ERROR_INVALID_VALUE;
	size_t bytes = extra != NULL ? xbytes : need;
	struct klaunch *k = klaunch_get(bytes);
	k->refs = 1;
	k->f = f;
	f->refs++;
	k->ctx = c;
	k->stream = (uint64_t)(uintptr_t)cfg->stream;
	memcpy(k->grid, cfg->grid, sizeof k->grid);
	memcpy(k->block, cfg->block, sizeof k->block);
	k->shmem = cfg->shmem;
	k->cooperative = 0;
	for (unsigned i = 0; i < cfg->nattrs; i++)
		if (cfg->attrs[i].id == LA_COOPERATIVE && cfg->attrs[i].value.i != 0)
			k->cooperative = 1;
	k->params_known = f->params_known;
	k->nparams = f->nparams;
	unsigned n = f->params_known ? f->nparams : 0;
	k->bytes = bytes;
	if (extra != NULL) {
		memcpy(k->params, xbuf, xbytes);
	} else {
		memset(k->params, 0, bytes); // the padding between parameters
		for (unsigned i = 0; i < n; i++)
			memcpy(k->params + f->poff[i], params[i], f->psize[i]);
	}
	*out = k;
	return CUDA_SUCCESS;
}

void klaunch_unref(struct klaunch *k) {
	if (k == NULL || --k->refs > 0)
		return;
	func_unref(k->f);
	k->f = NULL;
	if (g_nfree_launches == FREE_LAUNCHES_MAX || k->cap > LAUNCH_KEEP_PARAMS) {
		free(k);
		return;
	}
	k->next_free = g_free_launches;
	g_free_launches = k;
	g_nfree_launches++;
}

// record keeps the launch for fakecuda_last_launch. Under the lock.
static void record(uint64_t hfunc, const struct func *f, const launch_config *cfg, void **params) {
	struct fakecuda_launch *l = &g_last;
	memset(l, 0, sizeof *l);
	l->function = hfunc;
	l->stream = (uint64_t)(uintptr_t)cfg->stream;
	memcpy(l->grid, cfg->grid, sizeof l->grid);
	memcpy(l->block, cfg->block, sizeof l->block);
	l->shmem = cfg->shmem;
	l->nattrs = cfg->nattrs;
	for (unsigned i = 0; i < cfg->nattrs; i++) {
		l->attr_ids[i] = cfg->attrs[i].id;
		memcpy(l->attr_values[i], cfg->attrs[i].value.bytes, 64);
	}
	if (params != NULL && f->params_known) {
		l->nparams = f->nparams < MAX_PARAMS ? f->nparams : MAX_PARAMS;
		for (unsigned i = 0; i < l->nparams; i++)
			memcpy(&l->params[i], params[i], f->psize[i] < 8 ? f->psize[i] : 8);
	}
	g_launches++;
}

// launch checks a launch and records it; a function of a module's is
// queued to run its Go kernel in stream order (or captured, on a
// capturing stream). A function without code cannot be captured: in a
// capturing stream it fails and invalidates the capture.
// launch_check checks a launch's shape, parameters and attributes.
static CUresult launch_check(struct func *f, const launch_config *cfg, void **params, void **extra) {
	CUresult r = CUDA_SUCCESS;
	static const unsigned max_block[3] = {1024, 1024, 64};
	static const unsigned max_grid[3] = {2147483647u, 65535, 65535};
	for (int d = 0; d < 3; d++)
		if (cfg->grid[d] == 0 || cfg->grid[d] > max_grid[d] || cfg->block[d] == 0 || cfg->block[d] > max_block[d])
			r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && (uint64_t)cfg->block[0] * cfg->block[1] * cfg->block[2] > (uint64_t)max_threads(f))
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && cfg->shmem > (unsigned)f->max_dyn_shared)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && !f->go && extra != NULL)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS && f->params_known && f->nparams > 0 && params == NULL && extra == NULL)
		r = CUDA_ERROR_INVALID_VALUE;
	if (r == CUDA_SUCCESS)
		r = check_attrs(f, cfg);
	return r;
}

static CUresult launch(const launch_config *cfg, uint64_t hfunc, void **params, void **extra) {
	if (cfg == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	// An entry the Go side cannot run fails here, leaving the context
	// usable, as the driver refuses a function not built for the device.
	CUresult r = func_ready(hfunc);
	if (r != CUDA_SUCCESS)
		return r;
	struct func *f;
	r = locked_func(hfunc, &f);
	if (r != CUDA_SUCCESS)
		return r;
	r = launch_check(f, cfg, params, extra);
	struct stream *s = NULL;
	if (r == CUDA_SUCCESS)
		r = stream_of(cfg->stream, &s);
	if (r == CUDA_SUCCESS && s->ctx->sticky != CUDA_SUCCESS)
		r = s->ctx->sticky;
	if (r == CUDA_SUCCESS && !f->go && s->cap != NULL) {
		capture_invalidate(s);
		r = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	}
	struct klaunch *k = NULL;
	if (r == CUDA_SUCCESS && f->go)
		r = klaunch_new(f, cfg, s->ctx, params, extra, &k);
	if (r == CUDA_SUCCESS)
		record(hfunc, f, cfg, params);
	if (r == CUDA_SUCCESS && k != NULL) {
		struct op *op = op_new(OP_KERNEL);
		op->k = k;
		r = enqueue(s, op, 0);
	}
	unlock();
	return r;
}

EXPORT CUresult cuLaunchKernelEx(const launch_config *cfg, uint64_t hfunc, void **params, void **extra) {
	ENTER(cuLaunchKernelEx);
	return launch(cfg, hfunc, params, extra);
}

EXPORT CUresult cuLaunchKernel(uint64_t hfunc, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
	unsigned bz, unsigned shmem, CUstream hs, void **params, void **extra) {
	ENTER(cuLaunchKernel);
	launch_config cfg = {{gx, gy, gz}, {bx, by, bz}, shmem, hs, NULL, 0};
	return launch(&cfg, hfunc, params, extra);
}

EXPORT CUresult cuLaunchCooperativeKernel(uint64_t hfunc, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
	unsigned by, unsigned bz, unsigned shmem, CUstream hs, void **params) {
	ENTER(cuLaunchCooperativeKernel);
	launch_attr coop = {.id = LA_COOPERATIVE, .value.i = 1};
	launch_config cfg = {{gx, gy, gz}, {bx, by, bz}, shmem, hs, &coop, 1};
	return launch(&cfg, hfunc, params, NULL);
}

// cuFuncGetParamInfo reports a parameter's offset and size in the
// parameter buffer; past the last parameter it is CUDA_ERROR_INVALID_VALUE,
// as with the driver. A function whose layout the fake does not know (an
// entry of a cubin registered without sizes) gives CUDA_ERROR_NOT_SUPPORTED.
EXPORT CUresult cuFuncGetParamInfo(uint64_t hfunc, size_t index, size_t *offset, size_t *size) {
	ENTER(cuFuncGetParamInfo);
	if (offset == NULL && size == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct func *f;
	CUresult r = locked_func(hfunc, &f);
	if (r != CUDA_SUCCESS)
		return r;
	if (!f->params_known)
		r = CUDA_ERROR_NOT_SUPPORTED;
	else if (index >= f->nparams)
		r = CUDA_ERROR_INVALID_VALUE;
	else {
		if (offset != NULL)
			*offset = f->poff[index];
		if (size != NULL)
			*size = f->psize[index];
	}
	unlock();
	return r;
}

// cuFuncGetName gives the entry's name, valid while the function is; a
// function of fakecuda_function_new is "fakecuda_function".
EXPORT CUresult cuFuncGetName(const char **name, uint64_t hfunc) {
	ENTER(cuFuncGetName);
	if (name == NULL)
		return CUDA_ERROR_INVALID_VALUE;
	struct func *f;
	CUresult r = locked_func(hfunc, &f);
	if (r != CUDA_SUCCESS)
		return r;
	*name = f->name != NULL ? f->name : "fakecuda_function";
	unlock();
	return CUDA_SUCCESS;
}

// graph_klaunch checks and copies the launch of a kernel node in context c,
// as a launch on a stream does. Only functions with Go code run in a
// graph. Under the lock.
CUresult graph_klaunch(uint64_t hfunc, const unsigned grid[3], const unsigned block[3], unsigned shmem, void **params,
	void **extra, struct ctx *c, struct klaunch **out) {
	struct func *f = handle_get(hfunc, K_FUNC);
	if (f == NULL)
		return CUDA_ERROR_INVALID_HANDLE;
	launch_config cfg;
	memset(&cfg, 0, sizeof cfg);
	memcpy(cfg.grid, grid, sizeof cfg.grid);
	memcpy(cfg.block, block, sizeof cfg.block);
	cfg.shmem = shmem;
	CUresult r = launch_check(f, &cfg, params, extra);
	if (r == CUDA_SUCCESS && !f->go)
		r = CUDA_ERROR_NOT_SUPPORTED;
	if (r == CUDA_SUCCESS)
		r = klaunch_new(f, &cfg, c, params, extra, out);
	return r;
}
