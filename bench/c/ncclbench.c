// ncclbench.c: the in-place float32 all-reduce of bench/ncclbench from a
// C program of its own, one process driving every GPU with the
// communicators of ncclCommInitAll, timed with CUDA events; nccl-tests'
// bus bandwidth. Built on the GPU machine against its NCCL and runtime:
//
//	gcc -O2 -o ncclbench bench/c/ncclbench.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64 -lnccl -lcudart
//	./ncclbench [min_mib max_mib iters]
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK_CUDA(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); exit(1); } } while (0)
#define CHECK_NCCL(x) do { ncclResult_t r = (x); if (r != ncclSuccess) { fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, ncclGetErrorString(r)); exit(1); } } while (0)

int main(int argc, char **argv) {
	size_t min_mib = argc > 1 ? strtoul(argv[1], 0, 10) : 8;
	size_t max_mib = argc > 2 ? strtoul(argv[2], 0, 10) : 1024;
	int iters = argc > 3 ? atoi(argv[3]) : 20;
	int n;
	CHECK_CUDA(cudaGetDeviceCount(&n));
	if (n < 2) {
		fprintf(stderr, "ncclbench: %d GPU: the benchmark needs two\n", n);
		return 1;
	}
	int version;
	CHECK_NCCL(ncclGetVersion(&version));
	printf("# NCCL %d, %d GPUs, one process, ncclCommInitAll (C)\n", version, n);
	ncclComm_t *comms = calloc(n, sizeof *comms);
	cudaStream_t *streams = calloc(n, sizeof *streams);
	float **bufs = calloc(n, sizeof *bufs);
	cudaEvent_t start, stop;
	CHECK_NCCL(ncclCommInitAll(comms, n, NULL));
	for (int i = 0; i < n; i++) {
		CHECK_CUDA(cudaSetDevice(i));
		CHECK_CUDA(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
		CHECK_CUDA(cudaMalloc((void **)&bufs[i], max_mib << 20));
		CHECK_CUDA(cudaMemset(bufs[i], 0, max_mib << 20));
	}
	CHECK_CUDA(cudaSetDevice(0));
	CHECK_CUDA(cudaEventCreate(&start));
	CHECK_CUDA(cudaEventCreate(&stop));
	printf("%12s %12s %14s\n", "bytes", "us", "busbw GB/s");
	for (size_t size = min_mib << 20; size <= max_mib << 20; size *= 2) {
		size_t count = size / sizeof(float);
		for (int pass = 0; pass < 2; pass++) { // a warm-up, then the timed pass
			int k = pass ? iters : 3;
			CHECK_CUDA(cudaEventRecord(start, streams[0]));
			for (int it = 0; it < k; it++) {
				CHECK_NCCL(ncclGroupStart());
				for (int i = 0; i < n; i++)
					CHECK_NCCL(ncclAllReduce(bufs[i], bufs[i], count, ncclFloat32, ncclSum, comms[i], streams[i]));
				CHECK_NCCL(ncclGroupEnd());
			}
			CHECK_CUDA(cudaEventRecord(stop, streams[0]));
			for (int i = 0; i < n; i++)
				CHECK_CUDA(cudaStreamSynchronize(streams[i]));
			if (pass) {
				float ms;
				CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
				double sec = ms / 1e3 / iters;
				printf("RESULT nccl-allreduce impl=c-standalone bytes=%zu us=%.1f busbw_gbs=%.2f\n", size, sec * 1e6,
				       (double)size * 2 * (n - 1) / n / sec / 1e9);
			}
		}
	}
	for (int i = 0; i < n; i++) {
		CHECK_CUDA(cudaSetDevice(i));
		CHECK_CUDA(cudaFree(bufs[i]));
		CHECK_NCCL(ncclCommDestroy(comms[i]));
	}
	return 0;
}
