package ptxsuite_test

import (
	"sort"
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

const radixSrc = `
#define N 512
// One block sorts N keys, a bit at a time (LSD, stable): each key's rank
// among the zeros or ones comes from its warp's ballot and the counts of
// the warps before it.
extern "C" __global__ void radix_sort(unsigned *keys, int bitsToSort) {
	__shared__ unsigned a[N], b[N];
	__shared__ unsigned zeros[N / 32 + 1], ones[N / 32 + 1];
	unsigned *src = a, *dst = b;
	int t = threadIdx.x, lane = t & 31, w = t >> 5, nw = blockDim.x >> 5;
	a[t] = keys[blockIdx.x * N + t];
	__syncthreads();
	for (int bit = 0; bit < bitsToSort; bit++) {
		unsigned k = src[t], one = (k >> bit) & 1;
		unsigned ball = __ballot_sync(0xffffffffu, one);
		unsigned below = ball & ((1u << lane) - 1);
		if (lane == 0) { ones[w] = __popc(ball); zeros[w] = 32 - __popc(ball); }
		__syncthreads();
		if (t == 0) {
			unsigned z = 0, o = 0;
			for (int i = 0; i < nw; i++) { unsigned zi = zeros[i]; zeros[i] = z; z += zi; }
			for (int i = 0; i < nw; i++) { unsigned oi = ones[i]; ones[i] = z + o; o += oi; }
		}
		__syncthreads();
		unsigned pos = one ? ones[w] + __popc(below) : zeros[w] + (lane - __popc(below));
		dst[pos] = k;
		__syncthreads();
		unsigned *x = src; src = dst; dst = x;
	}
	keys[blockIdx.x * N + t] = src[t];
}`

// A radix sort of 512 keys per block, one bit per pass, ranks from
// ballots and popcounts.
func TestRadixSortBlock(t *testing.T) {
	forArchs(t, func(e *env) {
		blocks := 3
		keys := ints(512*blocks, 229, 1<<20)
		want := append([]uint32(nil), keys...)
		for b := range blocks {
			s := want[512*b : 512*b+512]
			sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		}
		k := e.kernel(radixSrc, "radix_sort")
		dk := up(e, keys)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(blocks)}, Block: cuda.Dim3{X: 512}}, dk, int32(20))
		same(e, "sorted", down(e, dk), want, 0)
	})
}

const convSrc = `
#define R 3
__constant__ float filt[2 * R + 1][2 * R + 1] = {
	{0, 1, 2, 3, 2, 1, 0}, {1, 2, 3, 4, 3, 2, 1}, {2, 3, 4, 5, 4, 3, 2}, {3, 4, 5, 6, 5, 4, 3},
	{2, 3, 4, 5, 4, 3, 2}, {1, 2, 3, 4, 3, 2, 1}, {0, 1, 2, 3, 2, 1, 0}};
__constant__ float filt_scale = 1.0f / 196.0f;
extern "C" __global__ void conv2d(const float *in, float *out, int w, int h) {
	int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x >= w || y >= h) return;
	float s = 0;
#pragma unroll
	for (int j = -R; j <= R; j++)
#pragma unroll
		for (int i = -R; i <= R; i++) {
			int xx = x + i, yy = y + j;
			float v = (xx >= 0 && xx < w && yy >= 0 && yy < h) ? in[yy * w + xx] : 0.0f;
			s += filt[j + R][i + R] * v;
		}
	out[y * w + x] = s * filt_scale;
}`

// A 7×7 convolution whose filter lies in constant memory (ld.const),
// with zero padding at the edges.
func TestConvolutionConstantMemory(t *testing.T) {
	forArchs(t, func(e *env) {
		w, h := 45, 29
		in := floats(w*h, 233)
		filt := [7][7]float32{{0, 1, 2, 3, 2, 1, 0}, {1, 2, 3, 4, 3, 2, 1}, {2, 3, 4, 5, 4, 3, 2}, {3, 4, 5, 6, 5, 4, 3},
			{2, 3, 4, 5, 4, 3, 2}, {1, 2, 3, 4, 3, 2, 1}, {0, 1, 2, 3, 2, 1, 0}}
		want := make([]float32, w*h)
		for y := range h {
			for x := range w {
				var s float64
				for j := -3; j <= 3; j++ {
					for i := -3; i <= 3; i++ {
						if xx, yy := x+i, y+j; xx >= 0 && xx < w && yy >= 0 && yy < h {
							s += float64(filt[j+3][i+3]) * float64(in[yy*w+xx])
						}
					}
				}
				want[y*w+x] = float32(s / 196)
			}
		}
		k := e.kernel(convSrc, "conv2d")
		din, dout := up(e, in), zeros[float32](e, w*h)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32((w + 15) / 16), Y: uint32((h + 7) / 8), Z: 1}, Block: cuda.Dim3{X: 16, Y: 8, Z: 1}}
		e.launch(k, cfg, din, dout, int32(w), int32(h))
		same(e, "convolved", down(e, dout), want, 1e-5)
	})
}

const blellochSrc = `
// An exclusive scan of 2 * blockDim.x elements per block (Blelloch's
// up-sweep and down-sweep), with the block totals written for a second
// pass that adds them back.
#define PAD(i) ((i) + ((i) >> 5))
extern "C" __global__ void blelloch(const unsigned *in, unsigned *out, unsigned *sums, int n) {
	extern __shared__ unsigned s[];
	int t = threadIdx.x, m = 2 * blockDim.x, base = blockIdx.x * m;
	int ai = t, bi = t + blockDim.x;
	s[PAD(ai)] = base + ai < n ? in[base + ai] : 0;
	s[PAD(bi)] = base + bi < n ? in[base + bi] : 0;
	int off = 1;
	for (int d = m >> 1; d > 0; d >>= 1) {
		__syncthreads();
		if (t < d) {
			int x = off * (2 * t + 1) - 1, y = off * (2 * t + 2) - 1;
			s[PAD(y)] += s[PAD(x)];
		}
		off <<= 1;
	}
	if (t == 0) {
		sums[blockIdx.x] = s[PAD(m - 1)];
		s[PAD(m - 1)] = 0;
	}
	for (int d = 1; d < m; d <<= 1) {
		off >>= 1;
		__syncthreads();
		if (t < d) {
			int x = off * (2 * t + 1) - 1, y = off * (2 * t + 2) - 1;
			unsigned v = s[PAD(x)];
			s[PAD(x)] = s[PAD(y)];
			s[PAD(y)] += v;
		}
	}
	__syncthreads();
	if (base + ai < n) out[base + ai] = s[PAD(ai)];
	if (base + bi < n) out[base + bi] = s[PAD(bi)];
}
extern "C" __global__ void add_sums(unsigned *out, const unsigned *sums, int n) {
	__shared__ unsigned prefix;
	if (threadIdx.x == 0) {
		unsigned p = 0;
		for (int b = 0; b < blockIdx.x; b++) p += sums[b];
		prefix = p;
	}
	__syncthreads();
	int m = 2 * blockDim.x, base = blockIdx.x * m;
	for (int i = threadIdx.x; i < m; i += blockDim.x)
		if (base + i < n) out[base + i] += prefix;
}`

// A work-efficient exclusive scan (Blelloch) in padded dynamic shared
// memory, then a second kernel adding each block's predecessors' totals.
func TestBlellochScan(t *testing.T) {
	forArchs(t, func(e *env) {
		n, block := 5000, 256
		in := ints(n, 239, 100)
		want := make([]uint32, n)
		var acc uint32
		for i, v := range in {
			want[i] = acc
			acc += v
		}
		blocks := (n + 2*block - 1) / (2 * block)
		k1, k2 := e.kernel(blellochSrc, "blelloch"), e.kernel(blellochSrc, "add_sums")
		din, dout, sums := up(e, in), zeros[uint32](e, n), zeros[uint32](e, blocks)
		smem := 4 * (2*block + 2*block/32 + 1)
		e.launch(k1, cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(blocks)}, Block: cuda.Dim3{X: uint32(block)}, SharedMemBytes: uint32(smem)}, din, dout, sums, int32(n))
		e.launch(k2, cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(blocks)}, Block: cuda.Dim3{X: uint32(block)}}, dout, sums, int32(n))
		same(e, "scanned", down(e, dout), want, 0)
	})
}
