// Execution: a transform runs in stream order on the plan's stream, as
// three steps the fake driver queues: a copy of the input's memory to a
// host buffer, a host function that transforms it (transform.c), and a
// copy of the result to the output's memory. The copies, not the host
// function, touch device memory: the driver checks the pointers (outside
// every allocation: CUFFT_EXEC_FAILED) and its race detector sees the
// input read and the output written. An output whose elements leave gaps
// (strides, embeds, a real side's padding) is read first too, so that the
// gaps keep what they held: a race detector report of such a read is the
// fake's, not cuFFT's. The buffers are page-locked for the copies' time
// and freed by a host function queued last. A stream being captured is
// refused (CUFFT_NOT_SUPPORTED): a graph would replay freed buffers.
#include "fakecufft.h"
#include "driver.h" // internal/fakelib

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

struct cuda {
	int (*host_register)(void *, size_t, unsigned);
	int (*host_unregister)(void *);
	int (*copy_htod)(unsigned long long, const void *, size_t, cudaStream_t);
	int (*copy_dtoh)(void *, unsigned long long, size_t, cudaStream_t);
	int (*launch_host_func)(cudaStream_t, void (*)(void *), void *);
	int (*stream_is_capturing)(cudaStream_t, int *);
	const char *err;
};

static struct cuda g_cuda;
static pthread_once_t g_cuda_once = PTHREAD_ONCE_INIT;

// resolve finds the entry points of the fake driver that the fake uses.
static void resolve(void) {
	void *h = fake_driver("the fake cuFFT", &g_cuda.err);
	if (h == NULL)
		return;
	*(void **)&g_cuda.host_register = dlsym(h, "cuMemHostRegister_v2");
	*(void **)&g_cuda.host_unregister = dlsym(h, "cuMemHostUnregister");
	*(void **)&g_cuda.copy_htod = dlsym(h, "cuMemcpyHtoDAsync_v2");
	*(void **)&g_cuda.copy_dtoh = dlsym(h, "cuMemcpyDtoHAsync_v2");
	*(void **)&g_cuda.launch_host_func = dlsym(h, "cuLaunchHostFunc");
	*(void **)&g_cuda.stream_is_capturing = dlsym(h, "cuStreamIsCapturing");
	if (!g_cuda.host_register || !g_cuda.host_unregister || !g_cuda.copy_htod || !g_cuda.copy_dtoh || !g_cuda.launch_host_func || !g_cuda.stream_is_capturing)
		g_cuda.err = "the fake CUDA driver lacks an entry point the fake cuFFT needs";
}

static const struct cuda *cuda(void) {
	pthread_once(&g_cuda_once, resolve);
	return &g_cuda;
}

// A job is one transform in flight: a copy of its plan and its buffers.
struct job {
	struct plan p;
	int dir;
	void *ibuf, *obuf; // obuf == ibuf in place
	size_t ibytes, obytes;
	int failed;
};

static void job_run(void *arg) {
	struct job *j = arg;
	if (transform(&j->p, j->ibuf, j->obuf, j->dir) != 0)
		j->failed = 1; // out of host memory: the output keeps what it held
}

static void job_free(void *arg) {
	struct job *j = arg;
	if (j->obuf != j->ibuf)
		free(j->obuf);
	free(j->ibuf);
	free(j);
}

cufftResult exec(cufftHandle h, const char *fn, int type, void *in, void *out, int dir) {
	struct plan *pp;
	cufftResult r = plan_get(h, &pp);
	if (r != CUFFT_SUCCESS)
		return r;
	struct plan p = *pp;
	plan_put();
	int real = type != T_C2C && type != T_Z2Z;
	if (!p.made)
		return CUFFT_INVALID_PLAN;
	if (p.type != type)
		return CUFFT_INVALID_TYPE; // an Exec of another type than the plan's
	if (dir != CUFFT_FORWARD && dir != CUFFT_INVERSE)
		return CUFFT_INVALID_VALUE;
	if (in == NULL || out == NULL)
		return CUFFT_INVALID_VALUE;
	if ((uintptr_t)in % p.in.elem != 0 || (uintptr_t)out % p.out.elem != 0)
		return CUFFT_INVALID_VALUE;
	const struct cuda *cu = cuda();
	if (cu->err != NULL) {
		note(fn, "%s", cu->err);
		return CUFFT_EXEC_FAILED;
	}
	int inplace = in == out;
	if (inplace && real && p.basic) {
		// cuFFT's basic layout in place: the real side's rows padded to
		// the complex side's length.
		struct side *rs = p.in.is_complex ? &p.out : &p.in;
		long long last = p.n[p.rank - 1];
		rs->embed[p.rank - 1] = 2 * (last / 2 + 1);
		rs->dist = 1;
		for (int a = 0; a < p.rank; a++)
			rs->dist *= rs->embed[a];
	}
	int capturing = 0;
	if (cu->stream_is_capturing(p.stream, &capturing) != 0)
		return CUFFT_EXEC_FAILED;
	if (capturing) {
		note(fn, "a transform on a stream being captured is not modeled by the fake cuFFT");
		return CUFFT_NOT_SUPPORTED;
	}
	struct job *j = calloc(1, sizeof *j);
	if (j == NULL)
		return CUFFT_ALLOC_FAILED;
	j->p = p;
	j->dir = dir;
	j->ibytes = (size_t)side_extent(&p.in, p.rank, p.batch) * p.in.elem;
	j->obytes = (size_t)side_extent(&p.out, p.rank, p.batch) * p.out.elem;
	if (inplace)
		j->ibytes = j->obytes = j->ibytes > j->obytes ? j->ibytes : j->obytes;
	j->ibuf = malloc(j->ibytes);
	j->obuf = inplace ? j->ibuf : malloc(j->obytes);
	if (j->ibuf == NULL || j->obuf == NULL) {
		job_free(j);
		return CUFFT_ALLOC_FAILED;
	}
	unsigned long long di = (unsigned long long)(uintptr_t)in, dout = (unsigned long long)(uintptr_t)out;
	int regi = cu->host_register(j->ibuf, j->ibytes, 0) == 0;
	int rego = inplace ? regi : cu->host_register(j->obuf, j->obytes, 0) == 0;
	int ok = regi && rego;
	ok = ok && cu->copy_dtoh(j->ibuf, di, j->ibytes, p.stream) == 0;
	int queued = ok; // from here the buffers may be in use by queued work
	if (ok && !inplace && !side_dense(&p.out, p.rank, p.batch))
		ok = cu->copy_dtoh(j->obuf, dout, j->obytes, p.stream) == 0;
	ok = ok && cu->launch_host_func(p.stream, job_run, j) == 0;
	ok = ok && cu->copy_htod(dout, j->obuf, j->obytes, p.stream) == 0;
	// Queued copies keep the registrations they need until they have run.
	if (regi)
		cu->host_unregister(j->ibuf);
	if (rego && !inplace)
		cu->host_unregister(j->obuf);
	if (!queued) {
		job_free(j);
		return CUFFT_EXEC_FAILED;
	}
	if (cu->launch_host_func(p.stream, job_free, j) != 0)
		return CUFFT_EXEC_FAILED; // the buffers leak rather than go under queued work
	return ok ? CUFFT_SUCCESS : CUFFT_EXEC_FAILED;
}

EXPORT cufftResult cufftExecC2C(cufftHandle h, void *in, void *out, int dir) {
	return exec(h, "cufftExecC2C", T_C2C, in, out, dir);
}

EXPORT cufftResult cufftExecZ2Z(cufftHandle h, void *in, void *out, int dir) {
	return exec(h, "cufftExecZ2Z", T_Z2Z, in, out, dir);
}

EXPORT cufftResult cufftExecR2C(cufftHandle h, void *in, void *out) {
	return exec(h, "cufftExecR2C", T_R2C, in, out, CUFFT_FORWARD);
}

EXPORT cufftResult cufftExecD2Z(cufftHandle h, void *in, void *out) {
	return exec(h, "cufftExecD2Z", T_D2Z, in, out, CUFFT_FORWARD);
}

EXPORT cufftResult cufftExecC2R(cufftHandle h, void *in, void *out) {
	return exec(h, "cufftExecC2R", T_C2R, in, out, CUFFT_INVERSE);
}

EXPORT cufftResult cufftExecZ2D(cufftHandle h, void *in, void *out) {
	return exec(h, "cufftExecZ2D", T_Z2D, in, out, CUFFT_INVERSE);
}
