// Work in stream order: every computation is a job that runs as a host
// function of the fake CUDA driver on the handle's stream, reading and
// writing device memory directly (the fake's device memory is host
// memory) and reporting its accesses to the driver's race detector. The
// driver is the one package cu loaded; the fake refuses to run on any
// other, where those reads would fault.
#include "fakecusparse.h"
#include "driver.h" // internal/fakelib

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

static struct cuda g_cuda;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void resolve(void) {
	void *h = fake_driver("the fake cuSPARSE", &g_cuda.err);
	if (h == NULL)
		return;
	*(void **)&g_cuda.launch_host_func = dlsym(h, "cuLaunchHostFunc");
	*(void **)&g_cuda.stream_synchronize = dlsym(h, "cuStreamSynchronize");
	*(void **)&g_cuda.stream_is_capturing = dlsym(h, "cuStreamIsCapturing");
	*(void **)&g_cuda.range_valid = dlsym(h, "fakecuda_range_valid");
	*(void **)&g_cuda.note_access = dlsym(h, "fakecuda_hostfn_access");
	if (!g_cuda.launch_host_func || !g_cuda.stream_synchronize || !g_cuda.stream_is_capturing)
		g_cuda.err = "the fake CUDA driver lacks an entry point the fake cuSPARSE needs";
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

int capturing(cudaStream_t s) {
	int c = 0;
	if (cuda()->stream_is_capturing(s, &c) != 0)
		return -1;
	return c != 0;
}

cusparseStatus_t enqueue(const char *fn, cudaStream_t s, struct job *j) {
	const struct cuda *cu = cuda();
	if (cu->err != NULL) {
		j->destroy(j);
		return fail(CUSPARSE_STATUS_EXECUTION_FAILED, "%s: %s", fn, cu->err);
	}
	int c = capturing(s);
	if (c < 0) {
		j->destroy(j);
		return fail(CUSPARSE_STATUS_EXECUTION_FAILED, "%s: cuStreamIsCapturing of the handle's stream failed", fn);
	}
	j->keep = c;
	if (cu->launch_host_func(s, trampoline, j) != 0) {
		j->destroy(j);
		return fail(CUSPARSE_STATUS_EXECUTION_FAILED, "%s: cuLaunchHostFunc on the handle's stream failed", fn);
	}
	return CUSPARSE_STATUS_SUCCESS;
}

cusparseStatus_t check_range(const char *fn, const char *name, const void *p, size_t bytes) {
	if (bytes == 0)
		return CUSPARSE_STATUS_SUCCESS;
	if (p == NULL)
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: %s is NULL", fn, name);
	const struct cuda *cu = cuda();
	if (cu->err == NULL && cu->range_valid != NULL && !cu->range_valid((unsigned long long)(uintptr_t)p, bytes))
		return fail(CUSPARSE_STATUS_INVALID_VALUE, "%s: %s (%p, %zu bytes) is not in one allocation of the fake driver", fn, name, p, bytes);
	return CUSPARSE_STATUS_SUCCESS;
}

void note(const void *p, size_t bytes, int write) {
	const struct cuda *cu = cuda();
	if (cu->note_access != NULL && bytes > 0 && p != NULL)
		cu->note_access((unsigned long long)(uintptr_t)p, bytes, write);
}

cusparseStatus_t sync_stream(const char *fn, cudaStream_t s) {
	if (cuda()->err != NULL)
		return fail(CUSPARSE_STATUS_EXECUTION_FAILED, "%s: %s", fn, cuda()->err);
	if (cuda()->stream_synchronize(s) != 0)
		return fail(CUSPARSE_STATUS_EXECUTION_FAILED, "%s: cuStreamSynchronize failed", fn);
	return CUSPARSE_STATUS_SUCCESS;
}
