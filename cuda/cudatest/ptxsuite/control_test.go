package ptxsuite_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

const collatzSrc = `
extern "C" __global__ void collatz(const unsigned long long *start, unsigned *steps, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	unsigned long long v = start[i];
	unsigned k = 0;
	while (v != 1) {
		if (v & 1) v = 3 * v + 1; else v >>= 1;
		k++;
	}
	steps[i] = k;
}`

// Loops whose trip counts differ thread by thread in a warp.
func TestDivergentLoops(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 2000
		start := make([]uint64, n)
		want := make([]uint32, n)
		for i := range start {
			start[i] = uint64(i*7919 + 1)
			v, k := start[i], uint32(0)
			for v != 1 {
				if v&1 == 1 {
					v = 3*v + 1
				} else {
					v >>= 1
				}
				k++
			}
			want[i] = k
		}
		k := e.kernel(collatzSrc, "collatz")
		ds, dst := up(e, start), zeros[uint32](e, n)
		e.launch(k, cuda.Linear(n, 96), ds, dst, int32(n))
		same(e, "steps", down(e, dst), want, 0)
	})
}

const structSrc = `
struct Affine { float scale; int shift; double offset; short tag; };
extern "C" __global__ void affine(Affine p, const int *x, double *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = (double)(p.scale * (float)(x[i] + p.shift)) + p.offset + p.tag;
}`

// Affine is the kernel's struct, field for field, as Launch passes it by
// value.
type Affine struct {
	Scale  float32
	Shift  int32
	Offset float64
	Tag    int16
	_      [6]byte
}

// A struct passed by value, with padding between and after its fields.
func TestStructByValue(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 300
		x := make([]int32, n)
		want := make([]float64, n)
		p := Affine{Scale: 0.5, Shift: -7, Offset: 1e9, Tag: 3}
		for i := range x {
			x[i] = int32(i * 3)
			want[i] = float64(p.Scale*float32(x[i]+p.Shift)) + p.Offset + float64(p.Tag)
		}
		k := e.kernel(structSrc, "affine")
		dx, dy := up(e, x), zeros[float64](e, n)
		e.launch(k, cuda.Linear(n, 64), p, dx, dy, int32(n))
		same(e, "y", down(e, dy), want, 0)
	})
}

const recursionSrc = `
__device__ __noinline__ unsigned long long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__device__ __noinline__ int depth_sum(int n, int *trail) { trail[n] = n; return n == 0 ? 0 : n + depth_sum(n - 1, trail); }
extern "C" __global__ void recurse(unsigned long long *f, int *sums) {
	int t = threadIdx.x;
	int trail[40];
	f[t] = fib(t % 20);
	sums[t] = depth_sum(t % 40, trail) + trail[t % 40];
}`

// Recursive device functions: separate frames per call, and a local
// array whose address a callee takes.
func TestRecursion(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 64
		wantF, wantS := make([]uint64, n), make([]int32, n)
		var fib func(int) uint64
		fib = func(k int) uint64 {
			if k < 2 {
				return uint64(k)
			}
			return fib(k-1) + fib(k-2)
		}
		for i := range n {
			wantF[i] = fib(i % 20)
			d := i % 40
			wantS[i] = int32(d*(d+1)/2 + d)
		}
		k := e.kernel(recursionSrc, "recurse")
		df, ds := zeros[uint64](e, n), zeros[int32](e, n)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: uint32(n)}}, df, ds)
		same(e, "fib", down(e, df), wantF, 0)
		same(e, "sums", down(e, ds), wantS, 0)
	})
}

const localArraySrc = `
extern "C" __global__ void sort_local(const int *in, int *out, int n) {
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= n) return;
	int v[16];
	for (int i = 0; i < 16; i++) v[i] = in[t * 16 + i];
	for (int i = 1; i < 16; i++) {
		int x = v[i], j = i - 1;
		while (j >= 0 && v[j] > x) { v[j + 1] = v[j]; j--; }
		v[j + 1] = x;
	}
	for (int i = 0; i < 16; i++) out[t * 16 + i] = v[i];
}`

// A per-thread array indexed at run time: local memory.
func TestLocalArray(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 100
		in := make([]int32, 16*n)
		r := rng(29)
		for i := range in {
			in[i] = int32(r.next()%1000) - 500
		}
		want := append([]int32(nil), in...)
		for t := range n {
			s := want[16*t : 16*t+16]
			for i := 1; i < 16; i++ {
				for j := i; j > 0 && s[j] < s[j-1]; j-- {
					s[j], s[j-1] = s[j-1], s[j]
				}
			}
		}
		k := e.kernel(localArraySrc, "sort_local")
		din, dout := up(e, in), zeros[int32](e, 16*n)
		e.launch(k, cuda.Linear(n, 32), din, dout, int32(n))
		same(e, "sorted", down(e, dout), want, 0)
	})
}

const grid3dSrc = `
extern "C" __global__ void index3d(unsigned *out, int nx, int ny, int nz) {
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	int z = blockIdx.z * blockDim.z + threadIdx.z;
	if (x < nx && y < ny && z < nz)
		out[(z * ny + y) * nx + x] = (x << 20) | (y << 10) | z | (gridDim.z == 3 ? 0x80000000u : 0u);
}`

// A three-dimensional grid of three-dimensional blocks.
func TestGrid3D(t *testing.T) {
	forArchs(t, func(e *env) {
		nx, ny, nz := 20, 9, 11
		want := make([]uint32, nx*ny*nz)
		for z := range nz {
			for y := range ny {
				for x := range nx {
					want[(z*ny+y)*nx+x] = uint32(x<<20|y<<10|z) | 0x80000000
				}
			}
		}
		k := e.kernel(grid3dSrc, "index3d")
		out := zeros[uint32](e, nx*ny*nz)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: 3, Y: 3, Z: 3}, Block: cuda.Dim3{X: 8, Y: 4, Z: 4}}
		e.launch(k, cfg, out, int32(nx), int32(ny), int32(nz))
		same(e, "indices", down(e, out), want, 0)
	})
}
