package ptxsuite_test

import (
	"math"
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

const softmaxSrc = `
extern "C" __global__ void softmax(const float *x, float *y, int cols) {
	__shared__ float red[32];
	const float *row = x + blockIdx.x * cols;
	float *out = y + blockIdx.x * cols;
	float m = -__int_as_float(0x7f800000);
	for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
	for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
	if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = m;
	__syncthreads();
	m = red[0];
	for (int w = 1; w < blockDim.x / 32; w++) m = fmaxf(m, red[w]);
	__syncthreads();
	float s = 0;
	for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(row[c] - m);
	for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffff, s, o);
	if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = s;
	__syncthreads();
	s = 0;
	for (int w = 0; w < blockDim.x / 32; w++) s += red[w];
	for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(row[c] - m) / s;
}`

// A row softmax: a block per row, max and sum by butterfly shuffles.
func TestSoftmaxRows(t *testing.T) {
	forArchs(t, func(e *env) {
		rows, cols := 33, 300
		x := floats(rows*cols, 19)
		for i := range x {
			x[i] *= 8
		}
		want := make([]float32, rows*cols)
		for r := range rows {
			m := math.Inf(-1)
			for c := range cols {
				m = math.Max(m, float64(x[r*cols+c]))
			}
			var s float64
			for c := range cols {
				s += math.Exp(float64(x[r*cols+c]) - m)
			}
			for c := range cols {
				want[r*cols+c] = float32(math.Exp(float64(x[r*cols+c])-m) / s)
			}
		}
		k := e.kernel(softmaxSrc, "softmax")
		dx, dy := up(e, x), zeros[float32](e, rows*cols)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(rows)}, Block: cuda.Dim3{X: 128}}, dx, dy, int32(cols))
		same(e, "softmax", down(e, dy), want, 1e-5)
	})
}

const layernormSrc = `
extern "C" __global__ void layernorm(const float *x, const float *gamma, const float *beta, float *y, int cols, float eps) {
	__shared__ float s1[256], s2[256];
	const float *row = x + blockIdx.x * cols;
	float a = 0, b = 0;
	for (int c = threadIdx.x; c < cols; c += blockDim.x) { float v = row[c]; a += v; b += v * v; }
	s1[threadIdx.x] = a; s2[threadIdx.x] = b;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s) { s1[threadIdx.x] += s1[threadIdx.x + s]; s2[threadIdx.x] += s2[threadIdx.x + s]; }
		__syncthreads();
	}
	float mean = s1[0] / cols, var = s2[0] / cols - mean * mean;
	float inv = rsqrtf(var + eps);
	for (int c = threadIdx.x; c < cols; c += blockDim.x)
		y[blockIdx.x * cols + c] = (row[c] - mean) * inv * gamma[c] + beta[c];
}`

// A layer normalization per row, with rsqrtf.
func TestLayerNormRows(t *testing.T) {
	forArchs(t, func(e *env) {
		rows, cols := 17, 500
		x, g, b := floats(rows*cols, 23), floats(cols, 24), floats(cols, 25)
		want := make([]float32, rows*cols)
		for r := range rows {
			var a, q float64
			for c := range cols {
				v := float64(x[r*cols+c])
				a += v
				q += v * v
			}
			mean := a / float64(cols)
			inv := 1 / math.Sqrt(q/float64(cols)-mean*mean+1e-5)
			for c := range cols {
				want[r*cols+c] = float32((float64(x[r*cols+c])-mean)*inv*float64(g[c]) + float64(b[c]))
			}
		}
		k := e.kernel(layernormSrc, "layernorm")
		dx, dg, db, dy := up(e, x), up(e, g), up(e, b), zeros[float32](e, rows*cols)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(rows)}, Block: cuda.Dim3{X: 256}}, dx, dg, db, dy, int32(cols), float32(1e-5))
		same(e, "layernorm", down(e, dy), want, 1e-4)
	})
}
