package ptxsuite_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

const histSrc = `
extern "C" __global__ void histogram(const unsigned char *data, int n, unsigned *bins) {
	__shared__ unsigned local[256];
	for (int i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
	__syncthreads();
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		atomicAdd(&local[data[i]], 1u);
	__syncthreads();
	for (int i = threadIdx.x; i < 256; i += blockDim.x)
		if (local[i]) atomicAdd(&bins[i], local[i]);
}`

// A histogram with shared-memory atomics, merged with global ones.
func TestHistogramAtomics(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 200000
		data := make([]uint8, n)
		r := rng(13)
		want := make([]uint32, 256)
		for i := range data {
			data[i] = uint8(r.next() % 97 * 3)
			want[data[i]]++
		}
		k := e.kernel(histSrc, "histogram")
		dd, bins := up(e, data), zeros[uint32](e, 256)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 24}, Block: cuda.Dim3{X: 192}}, dd, int32(n), bins)
		same(e, "bins", down(e, bins), want, 0)
	})
}

const atomicOpsSrc = `
__device__ float atomic_max_float(float *addr, float v) {
	int *p = (int *)addr, old = *p, assumed;
	do {
		assumed = old;
		if (__int_as_float(assumed) >= v) break;
		old = atomicCAS(p, assumed, __float_as_int(v));
	} while (assumed != old);
	return __int_as_float(old);
}
extern "C" __global__ void atomics(const int *x, int n, int *out, float *fmax, unsigned long long *u64) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	int v = x[i];
	atomicMin(&out[0], v);
	atomicMax(&out[1], v);
	atomicAnd(&out[2], v | 0xffff0000);
	atomicOr(&out[3], v & 0xff);
	atomicXor(&out[4], v);
	atomicSub(&out[5], v);
	atomicInc((unsigned *)&out[6], 1000u);
	atomicExch(&out[7], 7);
	atomic_max_float(fmax, (float)v * 0.5f);
	atomicAdd(u64, (unsigned long long)v * 1000000007ull);
}`

// The integer atomics, a float maximum built on atomicCAS, and a 64-bit
// add.
func TestAtomicOperations(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 5000
		x := make([]int32, n)
		r := rng(17)
		for i := range x {
			x[i] = int32(r.next()%200001) - 100000
		}
		want := []int32{1 << 30, -1 << 30, -1, 0, 0, 0, 0, 7}
		var wmax float32 = -1e30
		var w64 uint64
		for _, v := range x {
			want[0] = min(want[0], v)
			want[1] = max(want[1], v)
			want[2] &= v | -65536
			want[3] |= v & 0xff
			want[4] ^= v
			want[5] -= v
			wmax = max(wmax, float32(v)*0.5)
			w64 += uint64(int64(v)) * 1000000007
		}
		want[6] = int32(n % 1001)
		k := e.kernel(atomicOpsSrc, "atomics")
		init := []int32{1 << 30, -1 << 30, -1, 0, 0, 0, 0, 0}
		dx, out, fm, u := up(e, x), up(e, init), up(e, []float32{-1e30}), zeros[uint64](e, 1)
		e.launch(k, cuda.Linear(n, 128), dx, int32(n), out, fm, u)
		same(e, "int atomics", down(e, out), want, 0)
		same(e, "float max", down(e, fm), []float32{wmax}, 0)
		if got := down(e, u)[0]; got != w64 {
			e.t.Errorf("64-bit sum = %d, want %d", got, w64)
		}
	})
}
