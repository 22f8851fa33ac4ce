package ptxsuite_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

const scanSharedSrc = `
extern "C" __global__ void scan_block(const int *in, int *out, int n) {
	extern __shared__ int tmp[];
	int *a = tmp, *b = tmp + blockDim.x;
	int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
	a[t] = i < n ? in[i] : 0;
	__syncthreads();
	for (int off = 1; off < blockDim.x; off <<= 1) {
		b[t] = t >= off ? a[t] + a[t - off] : a[t];
		__syncthreads();
		int *c = a; a = b; b = c;
	}
	if (i < n) out[i] = a[t];
}`

// An inclusive scan per block (Hillis and Steele), double-buffered in
// dynamic shared memory.
func TestScanSharedDynamic(t *testing.T) {
	forArchs(t, func(e *env) {
		n, block := 3000, 512
		in := make([]int32, n)
		for i := range in {
			in[i] = int32(i%13) - 6
		}
		want := make([]int32, n)
		for i := range in {
			if i%block == 0 {
				want[i] = in[i]
			} else {
				want[i] = want[i-1] + in[i]
			}
		}
		k := e.kernel(scanSharedSrc, "scan_block")
		din, out := up(e, in), zeros[int32](e, n)
		cfg := cuda.Linear(n, block)
		cfg.SharedMemBytes = uint32(2 * block * 4)
		e.launch(k, cfg, din, out, int32(n))
		same(e, "scan", down(e, out), want, 0)
	})
}

const scanWarpSrc = `
extern "C" __global__ void scan_warp(const unsigned *in, unsigned *out) {
	unsigned lane = threadIdx.x & 31, v = in[blockIdx.x * blockDim.x + threadIdx.x];
	for (int d = 1; d < 32; d <<= 1) {
		unsigned u = __shfl_up_sync(0xffffffffu, v, d);
		if (lane >= d) v += u;
	}
	out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}`

// An inclusive scan per warp with __shfl_up_sync.
func TestScanWarpShuffleUp(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 4096
		in := ints(n, 7, 1000)
		want := make([]uint32, n)
		for i := range in {
			want[i] = in[i]
			if i%32 != 0 {
				want[i] += want[i-1]
			}
		}
		k := e.kernel(scanWarpSrc, "scan_warp")
		din, out := up(e, in), zeros[uint32](e, n)
		e.launch(k, cuda.Linear(n, 128), din, out)
		same(e, "scan", down(e, out), want, 0)
	})
}
