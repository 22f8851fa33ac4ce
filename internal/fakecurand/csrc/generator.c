// Generators: creation, destruction, options, the version, and the
// delivery of numbers to the user's memory in stream order.
//
// The numbers of a call are made on the calling thread as it calls (the
// engine runs on the host), into a buffer that a copy queued on the
// generator's stream moves to the user's memory: so the copy, not a host
// function, touches device memory, the fake driver checks the pointer
// (outside every allocation: CURAND_STATUS_LAUNCH_FAILURE, as the
// kernel's fault) and its race detector sees the write. The buffer is
// page-locked for the copy's time (cuMemHostRegister) and freed by a host
// function queued after it. A stream being captured is refused: a graph
// would replay the copy of a buffer already freed.
#include "fakecurand.h"
#include "driver.h" // internal/fakelib

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---- the fake CUDA driver ----

struct cuda {
	int (*host_register)(void *, size_t, unsigned);
	int (*host_unregister)(void *);
	int (*copy_htod)(unsigned long long, const void *, size_t, cudaStream_t);
	int (*launch_host_func)(cudaStream_t, void (*)(void *), void *);
	int (*stream_is_capturing)(cudaStream_t, int *);
	int (*mem_get_info)(size_t *, size_t *);
	const char *err;
};

static struct cuda g_cuda;
static pthread_once_t g_cuda_once = PTHREAD_ONCE_INIT;

// resolve finds the entry points of the fake driver that the fake uses.
static void resolve(void) {
	void *h = fake_driver("the fake cuRAND", &g_cuda.err);
	if (h == NULL)
		return;
	*(void **)&g_cuda.host_register = dlsym(h, "cuMemHostRegister_v2");
	*(void **)&g_cuda.host_unregister = dlsym(h, "cuMemHostUnregister");
	*(void **)&g_cuda.copy_htod = dlsym(h, "cuMemcpyHtoDAsync_v2");
	*(void **)&g_cuda.launch_host_func = dlsym(h, "cuLaunchHostFunc");
	*(void **)&g_cuda.stream_is_capturing = dlsym(h, "cuStreamIsCapturing");
	*(void **)&g_cuda.mem_get_info = dlsym(h, "cuMemGetInfo_v2");
	if (!g_cuda.host_register || !g_cuda.host_unregister || !g_cuda.copy_htod || !g_cuda.launch_host_func || !g_cuda.stream_is_capturing || !g_cuda.mem_get_info)
		g_cuda.err = "the fake CUDA driver lacks an entry point the fake cuRAND needs";
}

static const struct cuda *cuda(void) {
	pthread_once(&g_cuda_once, resolve);
	return &g_cuda;
}

void note(const char *fn, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "fakecurand: %s: ", fn);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

// ---- the table of generators ----

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct gen *g_gens;

// fakecurand_marker tells Is that a library is this one.
EXPORT int fakecurand_marker(void) { return 1; }

// fakecurand_live is the number of generators not destroyed.
EXPORT long fakecurand_live(void) {
	long n = 0;
	pthread_mutex_lock(&g_mu);
	for (struct gen *p = g_gens; p != NULL; p = p->next)
		n++;
	pthread_mutex_unlock(&g_mu);
	return n;
}

curandStatus_t gen_get(struct gen *g) {
	pthread_mutex_lock(&g_mu);
	for (struct gen *p = g_gens; p != NULL; p = p->next)
		if (p == g)
			return CURAND_STATUS_SUCCESS;
	pthread_mutex_unlock(&g_mu);
	return CURAND_STATUS_NOT_INITIALIZED;
}

void gen_put(struct gen *g) {
	(void)g;
	pthread_mutex_unlock(&g_mu);
}

struct engine *gen_engine(struct gen *g) {
	if (g->fresh) {
		engine_start(&g->e, g->type, g->seed, g->offset);
		g->fresh = 0;
	}
	return &g->e;
}

// resolve_type maps a curandRngType_t to an engine, or 0 where the fake
// has none.
static int resolve_type(int t) {
	switch (t) {
	case RNG_PSEUDO_DEFAULT:
	case RNG_PSEUDO_XORWOW:
		return RNG_PSEUDO_XORWOW;
	case RNG_PSEUDO_MRG32K3A:
	case RNG_PSEUDO_MT19937:
	case RNG_PSEUDO_PHILOX4_32_10:
		return t;
	}
	return 0;
}

// The default seed, as cuRAND documents it.
#define DEFAULT_SEED 0ull

static curandStatus_t create(const char *fn, struct gen **out, int t, int host) {
	if (out == NULL)
		return CURAND_STATUS_NOT_INITIALIZED;
	int type = resolve_type(t);
	if (type == 0) {
		if (t == RNG_PSEUDO_MTGP32 || (t >= RNG_QUASI_DEFAULT && t <= RNG_QUASI_SCRAMBLED_SOBOL64))
			note(fn, "generator type %d is not modeled by the fake cuRAND (Philox, XORWOW, MRG32k3a and MT19937 are)", t);
		return CURAND_STATUS_TYPE_ERROR;
	}
	if (!host && cuda()->err != NULL) {
		note(fn, "%s", cuda()->err);
		return CURAND_STATUS_INITIALIZATION_FAILED;
	}
	struct gen *g = calloc(1, sizeof *g);
	if (g == NULL)
		return CURAND_STATUS_ALLOCATION_FAILED;
	g->type = type;
	g->host = host;
	g->seed = DEFAULT_SEED;
	g->ordering = ORDERING_PSEUDO_DEFAULT;
	g->fresh = 1;
	pthread_mutex_lock(&g_mu);
	g->next = g_gens;
	g_gens = g;
	pthread_mutex_unlock(&g_mu);
	*out = g;
	return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandCreateGenerator(curandGenerator_t *out, int type) {
	return create("curandCreateGenerator", out, type, 0);
}

EXPORT curandStatus_t curandCreateGeneratorHost(curandGenerator_t *out, int type) {
	return create("curandCreateGeneratorHost", out, type, 1);
}

EXPORT curandStatus_t curandDestroyGenerator(curandGenerator_t g) {
	curandStatus_t r = gen_get(g);
	if (r != CURAND_STATUS_SUCCESS)
		return r;
	for (struct gen **p = &g_gens; *p != NULL; p = &(*p)->next)
		if (*p == g) {
			*p = g->next;
			break;
		}
	gen_put(g);
	free(g);
	return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandSetStream(curandGenerator_t g, cudaStream_t s) {
	curandStatus_t r = gen_get(g);
	if (r != CURAND_STATUS_SUCCESS)
		return r;
	g->stream = s;
	gen_put(g);
	return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandSetPseudoRandomGeneratorSeed(curandGenerator_t g, unsigned long long seed) {
	curandStatus_t r = gen_get(g);
	if (r != CURAND_STATUS_SUCCESS)
		return r;
	g->seed = seed;
	g->fresh = 1;
	gen_put(g);
	return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandSetGeneratorOffset(curandGenerator_t g, unsigned long long offset) {
	curandStatus_t r = gen_get(g);
	if (r != CURAND_STATUS_SUCCESS)
		return r;
	if (!engine_has_offset(g->type))
		r = CURAND_STATUS_TYPE_ERROR;
	else {
		g->offset = offset;
		g->fresh = 1;
	}
	gen_put(g);
	return r;
}

EXPORT curandStatus_t curandSetGeneratorOrdering(curandGenerator_t g, int order) {
	curandStatus_t r = gen_get(g);
	if (r != CURAND_STATUS_SUCCESS)
		return r;
	// Every pseudo-random ordering gives the one order the fake has.
	if (order < ORDERING_PSEUDO_BEST || order > ORDERING_PSEUDO_DYNAMIC)
		r = CURAND_STATUS_OUT_OF_RANGE;
	else {
		g->ordering = order;
		g->fresh = 1;
	}
	gen_put(g);
	return r;
}

EXPORT curandStatus_t curandSetQuasiRandomGeneratorDimensions(curandGenerator_t g, unsigned num) {
	(void)num;
	curandStatus_t r = gen_get(g);
	if (r != CURAND_STATUS_SUCCESS)
		return r;
	gen_put(g);
	return CURAND_STATUS_TYPE_ERROR; // every generator of the fake is pseudo-random
}

EXPORT curandStatus_t curandGenerateSeeds(curandGenerator_t g) {
	curandStatus_t r = gen_get(g);
	if (r != CURAND_STATUS_SUCCESS)
		return r;
	gen_engine(g);
	gen_put(g);
	return CURAND_STATUS_SUCCESS;
}

// ---- the version ----

// fake_version is FAKECURAND_VERSION, 10400 (cuRAND 10.4.0, of CUDA 13.0)
// when unset.
static int fake_version(void) {
	const char *v = getenv("FAKECURAND_VERSION");
	int n = v != NULL ? atoi(v) : 0;
	return n > 0 ? n : 10400;
}

EXPORT curandStatus_t curandGetVersion(int *version) {
	if (version == NULL)
		return CURAND_STATUS_OUT_OF_RANGE;
	*version = fake_version();
	return CURAND_STATUS_SUCCESS;
}

EXPORT curandStatus_t curandGetProperty(int type, int *value) {
	int v = fake_version();
	if (value == NULL)
		return CURAND_STATUS_OUT_OF_RANGE;
	switch (type) {
	case PROP_MAJOR:
		*value = v / 1000;
		break;
	case PROP_MINOR:
		*value = v % 1000 / 100;
		break;
	case PROP_PATCH:
		*value = v % 100;
		break;
	default:
		return CURAND_STATUS_OUT_OF_RANGE;
	}
	return CURAND_STATUS_SUCCESS;
}

// ---- delivery ----

size_t device_memory(void) {
	size_t free_b = 0, total = 0;
	if (cuda()->err != NULL || cuda()->mem_get_info(&free_b, &total) != 0)
		return SIZE_MAX;
	return total;
}

static void release(void *buf) { free(buf); }

curandStatus_t output(struct gen *g, const char *fn, void *out, void *buf, size_t bytes) {
	if (g->host) {
		memcpy(out, buf, bytes);
		free(buf);
		return CURAND_STATUS_SUCCESS;
	}
	const struct cuda *cu = cuda();
	int capturing = 0;
	if (cu->stream_is_capturing(g->stream, &capturing) != 0) {
		free(buf);
		return CURAND_STATUS_LAUNCH_FAILURE;
	}
	if (capturing) {
		note(fn, "generating into a stream being captured is not modeled by the fake cuRAND");
		free(buf);
		return CURAND_STATUS_LAUNCH_FAILURE;
	}
	if (cu->host_register(buf, bytes, 0) != 0) {
		free(buf);
		return CURAND_STATUS_LAUNCH_FAILURE;
	}
	int cr = cu->copy_htod((unsigned long long)(uintptr_t)out, buf, bytes, g->stream);
	// The queued copy keeps the registration it needs until it has run.
	cu->host_unregister(buf);
	if (cr != 0) {
		free(buf);
		return CURAND_STATUS_LAUNCH_FAILURE;
	}
	if (cu->launch_host_func(g->stream, release, buf) != 0)
		return CURAND_STATUS_LAUNCH_FAILURE; // the buffer leaks rather than go under a queued copy
	return CURAND_STATUS_SUCCESS;
}
