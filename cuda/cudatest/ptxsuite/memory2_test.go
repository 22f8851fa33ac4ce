package ptxsuite_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

const hintsSrc = `
__device__ __noinline__ int bump(int *p, int k) {
	// A generic pointer: which space it points into is found at run time.
	int where = __isShared(p) ? 1 : __isGlobal(p) ? 2 : __isLocal(p) ? 3 : 0;
	*p += k;
	return where;
}
__constant__ int table[4] = {10, 20, 30, 40};
extern "C" __global__ void hints(const int *in, int *out, int *gen, int n) {
	__shared__ int sh[64];
	int i = blockIdx.x * blockDim.x + threadIdx.x, t = threadIdx.x;
	int loc[8];
	for (int j = 0; j < 8; j++) loc[j] = j * t;
	if (i >= n) return;
	int a = __ldg(in + i) + __ldcg(in + (i + 1) % n) + __ldca(in + (i + 2) % n) + __ldcs(in + (i + 3) % n)
		+ __ldlu(in + (i + 4) % n) + __ldcv(in + (i + 5) % n);
	__stwb(out + 4 * i, a);
	__stcg(out + 4 * i + 1, a * 2);
	__stcs(out + 4 * i + 2, a * 3);
	__stwt(out + 4 * i + 3, table[t & 3]);
	sh[t] = t;
	int w = bump(&sh[t], 5) * 100 + bump(&gen[2 * i], 7) * 10 + bump(&loc[in[i] & 7], 9);
	unsigned s = (unsigned)__cvta_generic_to_shared(&sh[t]), s0 = (unsigned)__cvta_generic_to_shared(&sh[0]);
	gen[2 * i + 1] = w + (int)(s - s0) * 1000 + (sh[t] - t) * 100000 + loc[in[i] & 7] * 1000000 + __isConstant(table) * 100000000;
}`

// The cache-hinted loads and stores (ld.global.nc, .cg, .ca, .cs, .lu,
// .cv; st.global.wb, .cg, .cs, .wt), a generic pointer into shared,
// global and local memory passed to a function that asks where it points
// (isspacep), cvta to the shared window, constant memory, and a local
// array indexed at run time.
func TestCacheHintsAndGenericPointers(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 200
		in := make([]int32, n)
		r := rng(151)
		for i := range in {
			in[i] = int32(r.next() % 1000)
		}
		want := make([]int32, 4*n)
		wantG := make([]int32, 2*n)
		for i := range n {
			t := i % 64
			var a int32
			for k := range 6 {
				a += in[(i+k)%n]
			}
			want[4*i], want[4*i+1], want[4*i+2], want[4*i+3] = a, 2*a, 3*a, int32(10*(t%4+1))
			j := int(in[i] & 7)
			wantG[2*i] = 7
			wantG[2*i+1] = 100 + 20 + 3 + int32(4*t)*1000 + 5*100000 + int32(j*t+9)*1000000 + 100000000
		}
		k := e.kernel(hintsSrc, "hints")
		din, out, gen := up(e, in), zeros[int32](e, 4*n), zeros[int32](e, 2*n)
		e.launch(k, cuda.Linear(n, 64), din, out, gen, int32(n))
		same(e, "hinted", down(e, out), want, 0)
		same(e, "generic", down(e, gen), wantG, 0)
	})
}

const cpAsyncSrc = `
#define T 16
// A tiled GEMM whose next tiles are copied into shared memory while the
// current ones are multiplied: cp.async on sm_80 and later, plain loads
// before.
__device__ __forceinline__ void copy16(float *dst, const float *src, bool full) {
#if __CUDA_ARCH__ >= 800
	unsigned d = (unsigned)__cvta_generic_to_shared(dst);
	if (full)
		asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(d), "l"(src) : "memory");
	else
		asm volatile("cp.async.cg.shared.global [%0], [%1], 16, 0;" :: "r"(d), "l"(src) : "memory");
#else
	for (int k = 0; k < 4; k++) dst[k] = full ? src[k] : 0.0f;
#endif
}
__device__ __forceinline__ void copy4(float *dst, const float *src) {
#if __CUDA_ARCH__ >= 800
	asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src) : "memory");
#else
	*dst = *src;
#endif
}
__device__ __forceinline__ void commit() {
#if __CUDA_ARCH__ >= 800
	asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_one() {
#if __CUDA_ARCH__ >= 800
	asm volatile("cp.async.wait_group 1;" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_all() {
#if __CUDA_ARCH__ >= 800
	asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}
// a is m×k, b is k×n, both row-major with k and n multiples of 4; the
// block is T×(T/4): each thread copies 4 floats of each tile.
extern "C" __global__ void gemm_async(const float *a, const float *b, float *c, int m, int n, int k) {
	__shared__ __align__(16) float as[2][T][T], bs[2][T][T];
	int tx = threadIdx.x, ty = threadIdx.y; // tx < T/4, ty < T
	int row = blockIdx.y * T + ty, col0 = blockIdx.x * T;
	float acc[4] = {0, 0, 0, 0};
	int tiles = (k + T - 1) / T;
	auto load = [&](int s, int tile) {
		int ka = tile * T + 4 * tx;
		copy16(&as[s][ty][4 * tx], a + (size_t)min(row, m - 1) * k + min(ka, k - 4), row < m && ka < k);
		int kb = tile * T + ty;
		for (int q = 0; q < 4; q++) {
			int cb = col0 + 4 * tx + q;
			if (kb < k && cb < n) copy4(&bs[s][ty][4 * tx + q], b + (size_t)kb * n + cb);
			else bs[s][ty][4 * tx + q] = 0.0f;
		}
		commit();
	};
	load(0, 0);
	for (int tile = 0; tile < tiles; tile++) {
		int s = tile & 1;
		if (tile + 1 < tiles) {
			load(s ^ 1, tile + 1);
			wait_one();
		} else {
			wait_all();
		}
		__syncthreads();
		for (int kk = 0; kk < T; kk++)
			for (int q = 0; q < 4; q++) acc[q] += as[s][ty][kk] * bs[s][kk][4 * tx + q];
		__syncthreads();
	}
	for (int q = 0; q < 4; q++) {
		int cc = col0 + 4 * tx + q;
		if (row < m && cc < n) c[(size_t)row * n + cc] = acc[q];
	}
}`

// A double-buffered tiled GEMM whose tiles arrive through cp.async
// (.cg with 16 bytes and zero fill, .ca with 4), commit_group,
// wait_group and wait_all on compute_90; the same kernel with plain
// loads on compute_75, where cp.async does not exist.
func TestCpAsyncDoubleBufferedGEMM(t *testing.T) {
	forArchs(t, func(e *env) {
		m, n, k := 37, 44, 52
		a, b := floats(m*k, 157), floats(k*n, 163)
		want := make([]float32, m*n)
		for i := range m {
			for j := range n {
				var s float64
				for q := range k {
					s += float64(a[i*k+q]) * float64(b[q*n+j])
				}
				want[i*n+j] = float32(s)
			}
		}
		kern := e.kernel(cpAsyncSrc, "gemm_async")
		da, db, dc := up(e, a), up(e, b), zeros[float32](e, m*n)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32((n + 15) / 16), Y: uint32((m + 15) / 16), Z: 1}, Block: cuda.Dim3{X: 4, Y: 16, Z: 1}}
		e.launch(kern, cfg, da, db, dc, int32(m), int32(n), int32(k))
		same(e, "product", down(e, dc), want, 1e-5)
	})
}

const mallocSrc = `
extern "C" __global__ void scratch(const int *x, int *out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	int len = 1 + x[i] % 16;
	int *buf = (int *)malloc(len * sizeof(int));
	if (buf == nullptr) { out[i] = -1; return; }
	for (int j = 0; j < len; j++) buf[j] = x[i] + j;
	int s = 0;
	for (int j = len - 1; j >= 0; j--) s += buf[j] * (j + 1);
	free(buf);
	out[i] = s;
}`

// Device-side malloc and free, a buffer of its own size per thread.
func TestDeviceMalloc(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 300
		x := make([]int32, n)
		want := make([]int32, n)
		r := rng(167)
		for i := range x {
			x[i] = int32(r.next() % 1000)
			for j := range 1 + x[i]%16 {
				want[i] += (x[i] + j) * (j + 1)
			}
		}
		k := e.kernel(mallocSrc, "scratch")
		dx, out := up(e, x), zeros[int32](e, n)
		e.launch(k, cuda.Linear(n, 64), dx, out, int32(n))
		same(e, "sums", down(e, out), want, 0)
	})
}

const gridStrideSrc = `
extern "C" __global__ void axpy64(double a, const double *x, double *y, size_t n, size_t stride) {
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		y[i * stride % n] += a * x[i];
}`

// A grid-stride loop with 64-bit indices and a 64-bit index computation.
func TestGridStride64(t *testing.T) {
	forArchs(t, func(e *env) {
		n, stride := 10007, 7919
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i], y[i] = float64(i), float64(2*i)
		}
		want := append([]float64(nil), y...)
		for i := range n {
			want[i*stride%n] += 0.5 * x[i]
		}
		k := e.kernel(gridStrideSrc, "axpy64")
		dx, dy := up(e, x), up(e, y)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 7}, Block: cuda.Dim3{X: 96}}, 0.5, dx, dy, uint64(n), uint64(stride))
		same(e, "y", down(e, dy), want, 0)
	})
}
