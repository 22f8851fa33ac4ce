// Handles, the version, and work in stream order: every computation is a
// job that runs as a host function of the fake CUDA driver on the
// handle's stream, reading and writing device memory directly (the fake's
// device memory is host memory) and telling the driver's race detector
// what it touched. The driver is the one package cu loaded; the fake
// refuses to run on any other, where those reads would fault.
#include "fakecusolver.h"
#include "driver.h" // internal/fakelib

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

struct cuda {
	int (*launch_host_func)(cudaStream_t, void (*)(void *), void *);
	int (*stream_synchronize)(cudaStream_t);
	int (*stream_is_capturing)(cudaStream_t, int *);
	// Optional controls of the fake driver: NULL where it lacks them.
	int (*range_valid)(unsigned long long, size_t);
	void (*note_access)(unsigned long long, size_t, int);
	const char *err;
};

static struct cuda g_cuda;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void resolve(void) {
	void *h = fake_driver("the fake cuSOLVER", &g_cuda.err);
	if (h == NULL)
		return;
	*(void **)&g_cuda.launch_host_func = dlsym(h, "cuLaunchHostFunc");
	*(void **)&g_cuda.stream_synchronize = dlsym(h, "cuStreamSynchronize");
	*(void **)&g_cuda.stream_is_capturing = dlsym(h, "cuStreamIsCapturing");
	*(void **)&g_cuda.range_valid = dlsym(h, "fakecuda_range_valid");
	*(void **)&g_cuda.note_access = dlsym(h, "fakecuda_hostfn_access");
	if (!g_cuda.launch_host_func || !g_cuda.stream_synchronize || !g_cuda.stream_is_capturing)
		g_cuda.err = "the fake CUDA driver lacks an entry point the fake cuSOLVER needs";
}

static const struct cuda *cuda(void) {
	pthread_once(&g_once, resolve);
	return &g_cuda;
}

void say(const char *fn, const char *fmt, ...) {
	const char *v = getenv("FAKECUSOLVER_VERBOSE");
	if (v == NULL || *v == 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "fakecusolver: %s: ", fn);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

// ---- handles ----

struct entry {
	struct handle *h;
	struct entry *next;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct entry *g_live;

// fakecusolver_marker tells the fake from the real library (Is).
EXPORT int fakecusolver_marker(void) { return 1; }

// fakecusolver_live is the number of handles not destroyed.
EXPORT long fakecusolver_live(void) {
	long n = 0;
	pthread_mutex_lock(&g_mu);
	for (struct entry *e = g_live; e != NULL; e = e->next)
		n++;
	pthread_mutex_unlock(&g_mu);
	return n;
}

int handle_live(cusolverDnHandle_t h) {
	if (h == NULL)
		return 0;
	pthread_mutex_lock(&g_mu);
	struct entry *e = g_live;
	while (e != NULL && e->h != h)
		e = e->next;
	pthread_mutex_unlock(&g_mu);
	return e != NULL;
}

EXPORT cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t *out) {
	if (out == NULL)
		return CUSOLVER_STATUS_INVALID_VALUE;
	if (cuda()->err != NULL) {
		say("cusolverDnCreate", "%s", cuda()->err);
		return CUSOLVER_STATUS_NOT_INITIALIZED;
	}
	struct handle *h = calloc(1, sizeof *h);
	struct entry *e = malloc(sizeof *e);
	if (h == NULL || e == NULL) {
		free(h);
		free(e);
		return CUSOLVER_STATUS_ALLOC_FAILED;
	}
	pthread_mutex_lock(&g_mu);
	*e = (struct entry){h, g_live};
	g_live = e;
	pthread_mutex_unlock(&g_mu);
	*out = h;
	return CUSOLVER_STATUS_SUCCESS;
}

// cusolverDnDestroy waits for the handle's stream, as the library waits
// for the device's work before it frees what that work may use.
EXPORT cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t h) {
	struct entry *gone = NULL;
	pthread_mutex_lock(&g_mu);
	for (struct entry **p = &g_live; *p != NULL; p = &(*p)->next)
		if ((*p)->h == h) {
			gone = *p;
			*p = gone->next;
			break;
		}
	pthread_mutex_unlock(&g_mu);
	if (gone == NULL)
		return CUSOLVER_STATUS_NOT_INITIALIZED;
	(void)cuda()->stream_synchronize(h->stream);
	free(gone);
	free(h);
	return CUSOLVER_STATUS_SUCCESS;
}

EXPORT cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t h, cudaStream_t s) {
	if (!handle_live(h))
		return CUSOLVER_STATUS_NOT_INITIALIZED;
	h->stream = s;
	return CUSOLVER_STATUS_SUCCESS;
}

EXPORT cusolverStatus_t cusolverDnGetStream(cusolverDnHandle_t h, cudaStream_t *s) {
	if (!handle_live(h))
		return CUSOLVER_STATUS_NOT_INITIALIZED;
	if (s == NULL)
		return CUSOLVER_STATUS_INVALID_VALUE;
	*s = h->stream;
	return CUSOLVER_STATUS_SUCCESS;
}

// ---- the version ----

// fake_version is FAKECUSOLVER_VERSION, 1000*major + 100*minor + patch,
// 12000 (cuSOLVER 12.0.0) when unset.
static int fake_version(void) {
	const char *v = getenv("FAKECUSOLVER_VERSION");
	int n = v != NULL ? atoi(v) : 0;
	return n > 0 ? n : 12000;
}

EXPORT cusolverStatus_t cusolverGetVersion(int *version) {
	if (version == NULL)
		return CUSOLVER_STATUS_INVALID_VALUE;
	*version = fake_version();
	return CUSOLVER_STATUS_SUCCESS;
}

EXPORT cusolverStatus_t cusolverGetProperty(int type, int *value) {
	int v = fake_version();
	if (value == NULL)
		return CUSOLVER_STATUS_INVALID_VALUE;
	switch (type) {
	case MAJOR_VERSION:
		*value = v / 1000;
		break;
	case MINOR_VERSION:
		*value = v % 1000 / 100;
		break;
	case PATCH_LEVEL:
		*value = v % 100;
		break;
	default:
		return CUSOLVER_STATUS_INVALID_VALUE;
	}
	return CUSOLVER_STATUS_SUCCESS;
}

// ---- the queue ----

static void trampoline(void *arg) {
	struct job *j = arg;
	j->run(j);
	free(j);
}

cusolverStatus_t enqueue(const char *fn, cudaStream_t s, struct job *j) {
	const struct cuda *cu = cuda();
	if (cu->err != NULL) {
		free(j);
		say(fn, "%s", cu->err);
		return CUSOLVER_STATUS_EXECUTION_FAILED;
	}
	int capturing = 0;
	if (cu->stream_is_capturing(s, &capturing) != 0) {
		free(j);
		return CUSOLVER_STATUS_EXECUTION_FAILED;
	}
	if (capturing) {
		// A graph would run the job again after it was freed.
		free(j);
		say(fn, "work on a stream being captured is not modeled by the fake cuSOLVER");
		return CUSOLVER_STATUS_NOT_SUPPORTED;
	}
	if (cu->launch_host_func(s, trampoline, j) != 0) {
		free(j);
		return CUSOLVER_STATUS_EXECUTION_FAILED;
	}
	return CUSOLVER_STATUS_SUCCESS;
}

int in_memory(const void *p, size_t bytes) {
	if (bytes == 0)
		return 1;
	if (p == NULL)
		return 0;
	const struct cuda *cu = cuda();
	return cu->range_valid == NULL || cu->range_valid((unsigned long long)(uintptr_t)p, bytes);
}

void note(const void *p, size_t bytes, int write) {
	const struct cuda *cu = cuda();
	if (cu->note_access != NULL && bytes > 0)
		cu->note_access((unsigned long long)(uintptr_t)p, bytes, write);
}
