// C baseline for the gocuda benchmarks: the same driver calls as the Go and
// Python versions, with the driver loaded the way package cu loads it
// (dlopen libcuda.so.1, entry points from cuGetProcAddress).
//
//	gcc -O2 -o bench bench.c -ldl && ./bench ../kernels/empty.ptx
//
// Each line: RESULT impl=c op=NAME value=V unit=ns/op|GB/s
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUstream, *CUevent, *CUmodule, *CUfunction;
typedef unsigned long long CUdeviceptr;

static CUresult (*pInit)(unsigned);
static CUresult (*pDeviceGet)(CUdevice *, int);
static CUresult (*pPrimaryRetain)(CUcontext *, CUdevice);
static CUresult (*pCtxSetCurrent)(CUcontext);
static CUresult (*pCtxGetCurrent)(CUcontext *);
static CUresult (*pStreamCreate)(CUstream *, unsigned);
static CUresult (*pStreamDestroy)(CUstream);
static CUresult (*pStreamSynchronize)(CUstream);
static CUresult (*pEventCreate)(CUevent *, unsigned);
static CUresult (*pEventRecord)(CUevent, CUstream);
static CUresult (*pEventQuery)(CUevent);
static CUresult (*pModuleLoadData)(CUmodule *, const void *);
static CUresult (*pModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*pLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **);
static CUresult (*pMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*pMemFree)(CUdeviceptr);
static CUresult (*pMemAllocHost)(void **, size_t);
static CUresult (*pMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
static CUresult (*pMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);

#define CHECK(x) do { CUresult r_ = (x); if (r_) { fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_); exit(1); } } while (0)

static void *lib;
static CUresult (*getProc)(const char *, void **, int, uint64_t, int *);

static void resolve(void **fn, const char *name) {
	int status = 0;
	if (getProc(name, fn, 12040, 1, &status) != 0 || status != 0 || !*fn) {
		fprintf(stderr, "cannot resolve %s\n", name);
		exit(1);
	}
}

static double now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void report(const char *op, double v, const char *unit) {
	printf("RESULT impl=c op=%s value=%.3f unit=%s\n", op, v, unit);
	fflush(stdout);
}

int main(int argc, char **argv) {
	if (argc < 2) { fprintf(stderr, "usage: bench empty.ptx\n"); return 2; }
	lib = dlopen(getenv("GOCUDA_LIBCUDA") ? getenv("GOCUDA_LIBCUDA") : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
	getProc = (CUresult (*)(const char *, void **, int, uint64_t, int *))dlsym(lib, "cuGetProcAddress_v2");
	if (!getProc) { fprintf(stderr, "no cuGetProcAddress_v2\n"); return 1; }
	resolve((void **)&pInit, "cuInit");
	resolve((void **)&pDeviceGet, "cuDeviceGet");
	resolve((void **)&pPrimaryRetain, "cuDevicePrimaryCtxRetain");
	resolve((void **)&pCtxSetCurrent, "cuCtxSetCurrent");
	resolve((void **)&pCtxGetCurrent, "cuCtxGetCurrent");
	resolve((void **)&pStreamCreate, "cuStreamCreate");
	resolve((void **)&pStreamDestroy, "cuStreamDestroy");
	resolve((void **)&pStreamSynchronize, "cuStreamSynchronize");
	resolve((void **)&pEventCreate, "cuEventCreate");
	resolve((void **)&pEventRecord, "cuEventRecord");
	resolve((void **)&pEventQuery, "cuEventQuery");
	resolve((void **)&pModuleLoadData, "cuModuleLoadData");
	resolve((void **)&pModuleGetFunction, "cuModuleGetFunction");
	resolve((void **)&pLaunchKernel, "cuLaunchKernel");
	resolve((void **)&pMemAlloc, "cuMemAlloc");
	resolve((void **)&pMemFree, "cuMemFree");
	resolve((void **)&pMemAllocHost, "cuMemAllocHost");
	resolve((void **)&pMemcpyHtoDAsync, "cuMemcpyHtoDAsync");
	resolve((void **)&pMemcpyDtoHAsync, "cuMemcpyDtoHAsync");

	FILE *f = fopen(argv[1], "rb");
	if (!f) { perror(argv[1]); return 1; }
	static char ptx[1 << 16];
	size_t n = fread(ptx, 1, sizeof ptx - 1, f);
	ptx[n] = 0;
	fclose(f);

	CUdevice dev;
	CUcontext ctx, cur;
	CUstream s;
	CUevent ev;
	CUmodule mod;
	CUfunction k1, k16;
	CHECK(pInit(0));
	CHECK(pDeviceGet(&dev, 0));
	CHECK(pPrimaryRetain(&ctx, dev));
	CHECK(pCtxSetCurrent(ctx));
	CHECK(pStreamCreate(&s, 1));
	CHECK(pEventCreate(&ev, 2)); // CU_EVENT_DISABLE_TIMING
	CHECK(pModuleLoadData(&mod, ptx));
	CHECK(pModuleGetFunction(&k1, mod, "empty1"));
	CHECK(pModuleGetFunction(&k16, mod, "empty16"));

	int N = 1000000;
	double t = now_ns();
	for (int i = 0; i < N; i++) CHECK(pCtxGetCurrent(&cur));
	report("ctx_get_current", (now_ns() - t) / N, "ns/op");

	N = 200000;
	t = now_ns();
	for (int i = 0; i < N; i++) CHECK(pEventRecord(ev, s));
	report("event_record", (now_ns() - t) / N, "ns/op");
	CHECK(pStreamSynchronize(s));
	t = now_ns();
	for (int i = 0; i < N; i++) CHECK(pEventQuery(ev));
	report("event_query", (now_ns() - t) / N, "ns/op");

	uint64_t args[16] = {0};
	void *params[16];
	for (int i = 0; i < 16; i++) params[i] = &args[i];
	N = 100000;
	t = now_ns();
	for (int i = 0; i < N; i++) CHECK(pLaunchKernel(k1, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
	CHECK(pStreamSynchronize(s));
	report("launch_1arg", (now_ns() - t) / N, "ns/op");
	t = now_ns();
	for (int i = 0; i < N; i++) CHECK(pLaunchKernel(k16, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
	CHECK(pStreamSynchronize(s));
	report("launch_16arg", (now_ns() - t) / N, "ns/op");

	N = 20000;
	t = now_ns();
	for (int i = 0; i < N; i++) {
		CHECK(pLaunchKernel(k1, 1, 1, 1, 1, 1, 1, 0, s, params, NULL));
		CHECK(pStreamSynchronize(s));
	}
	report("launch_sync", (now_ns() - t) / N, "ns/op");

	N = 20000;
	t = now_ns();
	for (int i = 0; i < N; i++) {
		CUstream x;
		CHECK(pStreamCreate(&x, 1));
		CHECK(pStreamDestroy(x));
	}
	report("stream_create_destroy", (now_ns() - t) / N, "ns/op");

	N = 2000;
	t = now_ns();
	for (int i = 0; i < N; i++) {
		CUdeviceptr p;
		CHECK(pMemAlloc(&p, 1 << 20));
		CHECK(pMemFree(p));
	}
	report("alloc_free_1mib", (now_ns() - t) / N, "ns/op");

	size_t size = 64 << 20;
	void *host;
	CUdeviceptr dptr;
	CHECK(pMemAllocHost(&host, size));
	CHECK(pMemAlloc(&dptr, size));
	memset(host, 1, size);
	N = 50;
	CHECK(pMemcpyHtoDAsync(dptr, host, size, s));
	CHECK(pStreamSynchronize(s));
	t = now_ns();
	for (int i = 0; i < N; i++) CHECK(pMemcpyHtoDAsync(dptr, host, size, s));
	CHECK(pStreamSynchronize(s));
	report("h2d_64mib", (double)size * N / (now_ns() - t), "GB/s");
	t = now_ns();
	for (int i = 0; i < N; i++) CHECK(pMemcpyDtoHAsync(host, dptr, size, s));
	CHECK(pStreamSynchronize(s));
	report("d2h_64mib", (double)size * N / (now_ns() - t), "GB/s");
	return 0;
}
