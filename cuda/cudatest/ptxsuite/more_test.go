package ptxsuite_test

import (
	"sort"
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

const stencilSrc = `
#define R 2
#define B 16
extern "C" __global__ void blur(const float *in, float *out, int w, int h) {
	__shared__ float tile[B + 2 * R][B + 2 * R];
	int x = blockIdx.x * B + threadIdx.x, y = blockIdx.y * B + threadIdx.y;
	for (int dy = threadIdx.y; dy < B + 2 * R; dy += B)
		for (int dx = threadIdx.x; dx < B + 2 * R; dx += B) {
			int gx = min(max((int)(blockIdx.x * B) + dx - R, 0), w - 1);
			int gy = min(max((int)(blockIdx.y * B) + dy - R, 0), h - 1);
			tile[dy][dx] = in[gy * w + gx];
		}
	__syncthreads();
	if (x >= w || y >= h) return;
	float s = 0;
	for (int j = -R; j <= R; j++)
		for (int i = -R; i <= R; i++) s += tile[threadIdx.y + R + j][threadIdx.x + R + i];
	out[y * w + x] = s / ((2 * R + 1) * (2 * R + 1));
}`

// A 5×5 box blur of an image, its tile and halo loaded into shared memory
// with clamped edges.
func TestStencilSharedHalo(t *testing.T) {
	forArchs(t, func(e *env) {
		w, h := 53, 37
		in := floats(w*h, 71)
		want := make([]float32, w*h)
		clamp := func(v, lo, hi int) int { return min(max(v, lo), hi) }
		for y := range h {
			for x := range w {
				var s float32
				for j := -2; j <= 2; j++ {
					for i := -2; i <= 2; i++ {
						s += in[clamp(y+j, 0, h-1)*w+clamp(x+i, 0, w-1)]
					}
				}
				want[y*w+x] = s / 25
			}
		}
		k := e.kernel(stencilSrc, "blur")
		din, dout := up(e, in), zeros[float32](e, w*h)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32((w + 15) / 16), Y: uint32((h + 15) / 16), Z: 1}, Block: cuda.Dim3{X: 16, Y: 16, Z: 1}}
		e.launch(k, cfg, din, dout, int32(w), int32(h))
		same(e, "blurred", down(e, dout), want, 1e-5)
	})
}

const vectorSrc = `
extern "C" __global__ void scale4(const float4 *x, float4 *y, double2 *d, int n4) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n4) return;
	float4 v = x[i];
	y[i] = make_float4(v.w * 2, v.z * 3, v.y * 4, v.x * 5);
	d[i] = make_double2((double)v.x + v.y, (double)v.z * v.w);
}`

// Vector loads and stores (ld.global.v4.f32, st.global.v2.f64).
func TestVectorLoadsAndStores(t *testing.T) {
	forArchs(t, func(e *env) {
		n4 := 700
		x := floats(4*n4, 73)
		want := make([]float32, 4*n4)
		wantD := make([]float64, 2*n4)
		for i := range n4 {
			v := x[4*i : 4*i+4]
			want[4*i], want[4*i+1], want[4*i+2], want[4*i+3] = v[3]*2, v[2]*3, v[1]*4, v[0]*5
			wantD[2*i], wantD[2*i+1] = float64(v[0])+float64(v[1]), float64(v[2])*float64(v[3])
		}
		k := e.kernel(vectorSrc, "scale4")
		dx, dy, dd := up(e, x), zeros[float32](e, 4*n4), zeros[float64](e, 2*n4)
		e.launch(k, cuda.Linear(n4, 128), dx, dy, dd, int32(n4))
		same(e, "scaled", down(e, dy), want, 0)
		same(e, "doubles", down(e, dd), wantD, 0)
	})
}

const bitonicSrc = `
extern "C" __global__ void bitonic(unsigned *data) {
	__shared__ unsigned s[1024];
	unsigned t = threadIdx.x, base = blockIdx.x * 1024;
	s[t] = data[base + t];
	s[t + 512] = data[base + t + 512];
	__syncthreads();
	for (unsigned k = 2; k <= 1024; k <<= 1)
		for (unsigned j = k >> 1; j > 0; j >>= 1) {
			unsigned i = 2 * t - (t & (j - 1)), l = i + j;
			bool up = (i & k) == 0;
			if ((s[i] > s[l]) == up) { unsigned x = s[i]; s[i] = s[l]; s[l] = x; }
			__syncthreads();
		}
	data[base + t] = s[t];
	data[base + t + 512] = s[t + 512];
}`

// A bitonic sort of 1024 keys per block in shared memory: barriers in
// nested loops, 512 threads.
func TestBitonicSortShared(t *testing.T) {
	forArchs(t, func(e *env) {
		blocks := 3
		data := ints(1024*blocks, 79, 1<<30)
		want := append([]uint32(nil), data...)
		for b := range blocks {
			s := want[1024*b : 1024*b+1024]
			sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		}
		k := e.kernel(bitonicSrc, "bitonic")
		dd := up(e, data)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(blocks)}, Block: cuda.Dim3{X: 512}}, dd)
		same(e, "sorted", down(e, dd), want, 0)
	})
}

const mandelSrc = `
extern "C" __global__ void mandel(unsigned char *img, int w, int h, int maxit) {
	int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y * blockDim.y + threadIdx.y;
	if (px >= w || py >= h) return;
	float cx = -2.0f + 2.5f * px / w, cy = -1.25f + 2.5f * py / h;
	float x = 0, y = 0;
	int it = 0;
	while (x * x + y * y <= 4.0f && it < maxit) {
		float xt = x * x - y * y + cx;
		y = 2 * x * y + cy;
		x = xt;
		it++;
	}
	img[py * w + px] = (unsigned char)it;
}`

// The Mandelbrot set: a loop whose trip count differs pixel by pixel,
// in float arithmetic that must round as the GPU rounds (no contraction
// into fma, which the host reference below does not do either).
func TestMandelbrotDivergent(t *testing.T) {
	forArchs(t, func(e *env) {
		w, h, maxit := 64, 48, 200
		want := make([]uint8, w*h)
		for py := range h {
			for px := range w {
				cx := -2.0 + 2.5*float32(px)/float32(w)
				cy := -1.25 + 2.5*float32(py)/float32(h)
				var x, y float32
				it := 0
				for x*x+y*y <= 4 && it < maxit {
					xt := float32(x*x) - float32(y*y) + cx
					y = float32(2*x*y) + cy
					x = xt
					it++
				}
				want[py*w+px] = uint8(it)
			}
		}
		k := e.kernel(mandelSrc, "mandel", fmadOff)
		img := zeros[uint8](e, w*h)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(w / 16), Y: uint32(h / 16), Z: 1}, Block: cuda.Dim3{X: 16, Y: 16, Z: 1}}
		e.launch(k, cfg, img, int32(w), int32(h), int32(maxit))
		same(e, "iterations", down(e, img), want, 0)
	})
}
