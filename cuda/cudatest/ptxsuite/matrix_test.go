package ptxsuite_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

const transposeSrc = `
#define TILE 32
extern "C" __global__ void transpose(const float *in, float *out, int rows, int cols) {
	__shared__ float tile[TILE][TILE + 1];
	int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
	for (int j = 0; j < TILE; j += blockDim.y)
		if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
	__syncthreads();
	x = blockIdx.y * TILE + threadIdx.x;
	y = blockIdx.x * TILE + threadIdx.y;
	for (int j = 0; j < TILE; j += blockDim.y)
		if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}`

// A transpose through a padded shared tile, on a two-dimensional grid
// of 32×8 blocks, with ragged edges.
func TestTransposeTiled(t *testing.T) {
	forArchs(t, func(e *env) {
		rows, cols := 70, 45
		in := floats(rows*cols, 9)
		want := make([]float32, rows*cols)
		for r := range rows {
			for c := range cols {
				want[c*rows+r] = in[r*cols+c]
			}
		}
		k := e.kernel(transposeSrc, "transpose")
		din, out := up(e, in), zeros[float32](e, rows*cols)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32((cols + 31) / 32), Y: uint32((rows + 31) / 32), Z: 1}, Block: cuda.Dim3{X: 32, Y: 8, Z: 1}}
		e.launch(k, cfg, din, out, int32(rows), int32(cols))
		same(e, "transposed", down(e, out), want, 0)
	})
}

const gemmSrc = `
#define T 16
template <typename F>
__global__ void gemm(const F *a, const F *b, F *c, int m, int n, int k) {
	__shared__ F as[T][T], bs[T][T];
	int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
	F acc = 0;
	for (int t0 = 0; t0 < k; t0 += T) {
		as[threadIdx.y][threadIdx.x] = row < m && t0 + threadIdx.x < k ? a[row * k + t0 + threadIdx.x] : F(0);
		bs[threadIdx.y][threadIdx.x] = col < n && t0 + threadIdx.y < k ? b[(t0 + threadIdx.y) * n + col] : F(0);
		__syncthreads();
		#pragma unroll
		for (int i = 0; i < T; i++) acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
		__syncthreads();
	}
	if (row < m && col < n) c[row * n + col] = acc;
}
template __global__ void gemm<float>(const float *, const float *, float *, int, int, int);
template __global__ void gemm<double>(const double *, const double *, double *, int, int, int);
`

// A tiled GEMM, templated, each instantiation found by its name
// expression.
func TestGEMMTiledTemplate(t *testing.T) {
	forArchs(t, func(e *env) {
		m, n, kk := 37, 29, 50
		a, b := floats(m*kk, 11), floats(kk*n, 12)
		want := make([]float64, m*n)
		for i := range m {
			for j := range n {
				var s float64
				for p := range kk {
					s += float64(a[i*kk+p]) * float64(b[p*n+j])
				}
				want[i*n+j] = s
			}
		}
		cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32((n + 15) / 16), Y: uint32((m + 15) / 16), Z: 1}, Block: cuda.Dim3{X: 16, Y: 16, Z: 1}}
		k := e.kernel(gemmSrc, "gemm<float>")
		da, db, dc := up(e, a), up(e, b), zeros[float32](e, m*n)
		e.launch(k, cfg, da, db, dc, int32(m), int32(n), int32(kk))
		w32 := make([]float32, len(want))
		for i := range want {
			w32[i] = float32(want[i])
		}
		same(e, "c (float)", down(e, dc), w32, 1e-5)

		a64, b64 := make([]float64, len(a)), make([]float64, len(b))
		for i := range a {
			a64[i] = float64(a[i])
		}
		for i := range b {
			b64[i] = float64(b[i])
		}
		k64 := e.kernel(gemmSrc, "gemm<double>")
		da64, db64, dc64 := up(e, a64), up(e, b64), zeros[float64](e, m*n)
		e.launch(k64, cfg, da64, db64, dc64, int32(m), int32(n), int32(kk))
		same(e, "c (double)", down(e, dc64), want, 1e-12)
	})
}
