// Work in stream order: every computation is a job that runs as a host
// function of the fake CUDA driver on the caller's stream, reading and
// writing device memory directly (the fake's device memory is host
// memory). The driver is the one package cu loaded; the fake refuses to
// run on any other, where those reads would fault.
#include "fakecublas.h"
#include "driver.h" // internal/fakelib

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static __thread char t_err[512];

cublasStatus_t set_error(cublasStatus_t r, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t_err, sizeof t_err, fmt, ap);
	va_end(ap);
	const char *v = getenv("FAKECUBLAS_VERBOSE");
	if (v != NULL && *v != 0)
		fprintf(stderr, "fakecublas: %s\n", t_err);
	return r;
}

cublasStatus_t not_supported(const char *fn, const char *what) {
	return set_error(CUBLAS_STATUS_NOT_SUPPORTED, "%s: %s: not modeled by the fake cuBLAS", fn, what);
}

// fakecublas_last_error is the message of the calling thread's last call
// that failed, "" when none has.
EXPORT const char *fakecublas_last_error(void) { return t_err; }

// fakecublas_marker tells the fake from the real library (Is).
EXPORT int fakecublas_marker(void) { return 1; }

int fake_version(void) {
	const char *v = getenv("FAKECUBLAS_VERSION");
	if (v == NULL || *v == 0)
		return 130000;
	return atoi(v);
}

static struct cuda g_cuda;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void resolve(void) {
	void *h = fake_driver("the fake cuBLAS", &g_cuda.err);
	if (h == NULL)
		return;
	*(void **)&g_cuda.launch_host_func = dlsym(h, "cuLaunchHostFunc");
	*(void **)&g_cuda.stream_synchronize = dlsym(h, "cuStreamSynchronize");
	*(void **)&g_cuda.stream_is_capturing = dlsym(h, "cuStreamIsCapturing");
	*(void **)&g_cuda.range_valid = dlsym(h, "fakecuda_range_valid");
	*(void **)&g_cuda.note_access = dlsym(h, "fakecuda_hostfn_access");
	if (!g_cuda.launch_host_func || !g_cuda.stream_synchronize || !g_cuda.stream_is_capturing)
		g_cuda.err = "the fake CUDA driver lacks an entry point the fake cuBLAS needs";
}

const struct cuda *cuda(void) {
	pthread_once(&g_once, resolve);
	return &g_cuda;
}

static void trampoline(void *arg) {
	struct job *j = arg;
	j->run(j);
	if (!j->keep)
		j->destroy(j);
}

cublasStatus_t enqueue(const char *fn, cudaStream_t s, struct job *j) {
	const struct cuda *cu = cuda();
	if (cu->err != NULL) {
		j->destroy(j);
		return set_error(CUBLAS_STATUS_EXECUTION_FAILED, "%s: %s", fn, cu->err);
	}
	int capturing = 0;
	if (cu->stream_is_capturing(s, &capturing) != 0) {
		j->destroy(j);
		return set_error(CUBLAS_STATUS_EXECUTION_FAILED, "%s: cuStreamIsCapturing of the handle's stream failed", fn);
	}
	j->keep = capturing != 0;
	if (cu->launch_host_func(s, trampoline, j) != 0) {
		j->destroy(j);
		return set_error(CUBLAS_STATUS_EXECUTION_FAILED, "%s: cuLaunchHostFunc on the handle's stream failed", fn);
	}
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t check_range(const char *fn, const char *name, const void *p, size_t bytes) {
	if (bytes == 0)
		return CUBLAS_STATUS_SUCCESS;
	if (p == NULL)
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: %s is NULL", fn, name);
	const struct cuda *cu = cuda();
	if (cu->range_valid != NULL && !cu->range_valid((unsigned long long)(uintptr_t)p, bytes))
		return set_error(CUBLAS_STATUS_INVALID_VALUE, "%s: %s (%p, %zu bytes) is not in one allocation of the fake driver", fn, name, p, bytes);
	return CUBLAS_STATUS_SUCCESS;
}

void note(const void *p, size_t bytes, int write) {
	const struct cuda *cu = cuda();
	if (cu->note_access != NULL && bytes > 0)
		cu->note_access((unsigned long long)(uintptr_t)p, bytes, write);
}

cublasStatus_t sync_stream(const char *fn, cudaStream_t s) {
	if (cuda()->stream_synchronize(s) != 0)
		return set_error(CUBLAS_STATUS_EXECUTION_FAILED, "%s: cuStreamSynchronize failed", fn);
	return CUBLAS_STATUS_SUCCESS;
}
