package ptxsuite_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

const reduceSharedSrc = `
extern "C" __global__ void reduce_shared(const float *x, float *out, int n) {
	__shared__ float buf[256];
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	buf[threadIdx.x] = i < n ? x[i] : 0.0f;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
		__syncthreads();
	}
	if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}`

// A block sums its 256 elements through shared memory, halving with a
// barrier per step.
func TestReduceShared(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 10000
		x := floats(n, 3)
		blocks := (n + 255) / 256
		want := make([]float32, blocks)
		for b := range blocks {
			// the kernel's order of additions: a tree over 256 slots
			var buf [256]float32
			for j := range 256 {
				if i := b*256 + j; i < n {
					buf[j] = x[i]
				}
			}
			for s := 128; s > 0; s >>= 1 {
				for j := range s {
					buf[j] += buf[j+s]
				}
			}
			want[b] = buf[0]
		}
		k := e.kernel(reduceSharedSrc, "reduce_shared")
		dx, out := up(e, x), zeros[float32](e, blocks)
		e.launch(k, cuda.Linear(n, 256), dx, out, int32(n))
		same(e, "sums", down(e, out), want, 0)
	})
}

const reduceShflSrc = `
__device__ float warp_sum(float v) {
	for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
	return v;
}
extern "C" __global__ void reduce_shfl(const float *x, float *total, int n) {
	__shared__ float partial[32];
	float v = 0;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i];
	v = warp_sum(v);
	int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	if (lane == 0) partial[warp] = v;
	__syncthreads();
	if (warp == 0) {
		v = lane < blockDim.x / 32 ? partial[lane] : 0;
		v = warp_sum(v);
		if (lane == 0) atomicAdd(total, v);
	}
}`

// Warp shuffles, a grid-stride loop and a global atomic sum 1 Mi values.
func TestReduceWarpShuffle(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 1 << 20
		x := make([]float32, n)
		r := rng(5)
		var want float64
		for i := range x {
			x[i] = float32(r.next()%17) - 8 // small integers: the sum is exact in any order
			want += float64(x[i])
		}
		k := e.kernel(reduceShflSrc, "reduce_shfl")
		dx, out := up(e, x), zeros[float32](e, 1)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 64}, Block: cuda.Dim3{X: 256}}, dx, out, int32(n))
		same(e, "total", down(e, out), []float32{float32(want)}, 0)
	})
}

const dotDoubleSrc = `
extern "C" __global__ void dot(const double *x, const double *y, double *out, int n) {
	__shared__ double buf[128];
	double v = 0;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += x[i] * y[i];
	buf[threadIdx.x] = v;
	__syncthreads();
	for (int s = 64; s > 0; s >>= 1) {
		if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
		__syncthreads();
	}
	if (threadIdx.x == 0) atomicAdd(out, buf[0]);
}`

// Double precision, with the double atomicAdd of sm_60 and later.
func TestDotDouble(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 50000
		x, y := make([]float64, n), make([]float64, n)
		var want float64
		for i := range x {
			x[i], y[i] = float64(i%100)/8, float64(i%7)/4
			want += x[i] * y[i]
		}
		k := e.kernel(dotDoubleSrc, "dot")
		dx, dy, out := up(e, x), up(e, y), zeros[float64](e, 1)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 16}, Block: cuda.Dim3{X: 128}}, dx, dy, out, int32(n))
		same(e, "dot", down(e, out), []float64{want}, 1e-12)
	})
}
