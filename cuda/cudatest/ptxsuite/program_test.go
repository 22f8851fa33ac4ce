package ptxsuite_test

import (
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

const funcPtrSrc = `
typedef float (*unary)(float, int);
__device__ __noinline__ float twice(float x, int k) { return 2.0f * x + k; }
__device__ __noinline__ float square(float x, int k) { return x * x - k; }
__device__ __noinline__ float negate(float x, int k) { return -x * k; }
__device__ unary table[3] = {twice, square, negate};
__device__ __noinline__ float apply(unary f, float x, int k) { return f(x, k); }
extern "C" __global__ void dispatch(const float *x, const int *which, float *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	unary f = table[which[i] % 3];
	y[2 * i] = f(x[i], i % 5);
	y[2 * i + 1] = apply(which[i] & 4 ? twice : negate, x[i], 3);
}`

// Calls through function pointers: a table of device functions in
// global memory, indexed per thread (lanes of one warp call different
// functions), and a pointer passed to another function.
func TestFunctionPointers(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 300
		x := floats(n, 173)
		which := make([]int32, n)
		r := rng(179)
		for i := range which {
			which[i] = int32(r.next() % 8)
		}
		fns := []func(float32, int32) float32{
			func(v float32, k int32) float32 { return 2*v + float32(k) },
			func(v float32, k int32) float32 { return v*v - float32(k) },
			func(v float32, k int32) float32 { return -v * float32(k) },
		}
		want := make([]float32, 2*n)
		for i := range n {
			want[2*i] = fns[which[i]%3](x[i], int32(i%5))
			if which[i]&4 != 0 {
				want[2*i+1] = fns[0](x[i], 3)
			} else {
				want[2*i+1] = fns[2](x[i], 3)
			}
		}
		k := e.kernel(funcPtrSrc, "dispatch", fmadOff)
		dx, dw, dy := up(e, x), up(e, which), zeros[float32](e, 2*n)
		e.launch(k, cuda.Linear(n, 64), dx, dw, dy, int32(n))
		same(e, "dispatched", down(e, dy), want, 0)
	})
}

const templSrc = `
template <typename T, int K>
struct Poly {
	__device__ static T eval(T x) {
		T r = 0;
		for (int i = K; i >= 0; i--) r = r * x + (T)(i + 1);
		return r;
	}
};
template <typename T, int K>
__global__ void poly(const T *x, T *y, int n) {
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		y[i] = Poly<T, K>::eval(x[i]);
}`

// One template kernel instantiated for several types and degrees, each
// reached through its name expression.
func TestTemplateInstantiations(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 257
		xf := floats(n, 181)
		xi := make([]int32, n)
		xl := make([]int64, n)
		xd := make([]float64, n)
		for i := range n {
			xi[i] = int32(i%13) - 6
			xl[i] = int64(i%29) - 14
			xd[i] = float64(xf[i])
		}
		cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: 3}, Block: cuda.Dim3{X: 32}}
		{
			k := e.kernel(templSrc, "poly<float, 3>", fmadOff)
			dx, dy := up(e, xf), zeros[float32](e, n)
			e.launch(k, cfg, dx, dy, int32(n))
			want := make([]float32, n)
			for i, v := range xf {
				var r float32
				for j := 3; j >= 0; j-- {
					r = float32(r*v) + float32(j+1)
				}
				want[i] = r
			}
			same(e, "float", down(e, dy), want, 0)
		}
		{
			k := e.kernel(templSrc, "poly<int, 5>")
			dx, dy := up(e, xi), zeros[int32](e, n)
			e.launch(k, cfg, dx, dy, int32(n))
			want := make([]int32, n)
			for i, v := range xi {
				var r int32
				for j := 5; j >= 0; j-- {
					r = r*v + int32(j+1)
				}
				want[i] = r
			}
			same(e, "int", down(e, dy), want, 0)
		}
		{
			k := e.kernel(templSrc, "poly<long long, 9>")
			dx, dy := up(e, xl), zeros[int64](e, n)
			e.launch(k, cfg, dx, dy, int32(n))
			want := make([]int64, n)
			for i, v := range xl {
				var r int64
				for j := 9; j >= 0; j-- {
					r = r*v + int64(j+1)
				}
				want[i] = r
			}
			same(e, "long long", down(e, dy), want, 0)
		}
		{
			k := e.kernel(templSrc, "poly<double, 4>", fmadOff)
			dx, dy := up(e, xd), zeros[float64](e, n)
			e.launch(k, cfg, dx, dy, int32(n))
			want := make([]float64, n)
			for i, v := range xd {
				var r float64
				for j := 4; j >= 0; j-- {
					r = r*v + float64(j+1)
				}
				want[i] = r
			}
			same(e, "double", down(e, dy), want, 0)
		}
	})
}

const manyParamsSrc = `
struct Big {
	double weights[16];
	float bias;
	int count;
	char tag[12];
	unsigned long long mask;
};
struct Ptrs { const float *in[4]; float *out[2]; };
extern "C" __global__ void many(Big big, Ptrs p, int a0, char c1, short s2, long long l3, float f4, double d5,
		unsigned char u6, int a7, const int *idx, float f8, unsigned long long m9, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	double s = 0;
	for (int k = 0; k < 4; k++) s += big.weights[(idx[i] + k) % big.count] * p.in[k][i];
	s += big.bias + a0 + c1 + s2 + (double)l3 + f4 + d5 + u6 + a7 + f8 + big.tag[i % 12];
	p.out[0][i] = (float)s;
	p.out[1][i] = (float)((big.mask ^ m9) >> (i % 64) & 1);
}`

// Big is the kernel's struct of 176 bytes, passed by value.
type Big struct {
	Weights [16]float64
	Bias    float32
	Count   int32
	Tag     [12]int8
	_       [4]byte
	Mask    uint64
}

// Ptrs is a struct of device pointers, passed by value.
type Ptrs struct {
	In  [4]uint64
	Out [2]uint64
}

// A kernel of fourteen parameters of every size: a large struct by
// value, a struct of pointer arrays, and scalars packed with padding
// between them.
func TestManyParameters(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 150
		var big Big
		for i := range big.Weights {
			big.Weights[i] = float64(i)*0.25 - 1
		}
		big.Bias, big.Count, big.Mask = 0.5, 13, 0xf0f0_1234_5678_9abc
		for i := range big.Tag {
			big.Tag[i] = int8(i*3 - 7)
		}
		ins := make([][]float32, 4)
		var p Ptrs
		for k := range ins {
			ins[k] = floats(n, uint64(191+k))
			p.In[k] = uint64(up(e, ins[k]).Ptr())
		}
		o0, o1 := zeros[float32](e, n), zeros[float32](e, n)
		p.Out[0], p.Out[1] = uint64(o0.Ptr()), uint64(o1.Ptr())
		idx := make([]int32, n)
		for i := range idx {
			idx[i] = int32(i * 7 % 31)
		}
		const m9 = 0x0123_4567_89ab_cdef
		want0, want1 := make([]float32, n), make([]float32, n)
		for i := range n {
			var s float64
			for k := range 4 {
				s += big.Weights[(int(idx[i])+k)%int(big.Count)] * float64(ins[k][i])
			}
			s += float64(big.Bias) + 3 + -4 + 500 + float64(int64(1)<<40) + float64(float32(0.125)) + 2.5 + 200 + -9 + float64(float32(1.5)) + float64(big.Tag[i%12])
			want0[i] = float32(s)
			want1[i] = float32((uint64(big.Mask) ^ m9) >> (i % 64) & 1)
		}
		k := e.kernel(manyParamsSrc, "many", fmadOff)
		e.launch(k, cuda.Linear(n, 64), big, p, int32(3), int8(-4), int16(500), int64(1)<<40, float32(0.125), 2.5,
			uint8(200), int32(-9), up(e, idx), float32(1.5), uint64(m9), int32(n))
		same(e, "sums", down(e, o0), want0, 1e-6)
		same(e, "mask bits", down(e, o1), want1, 0)
	})
}

const deepSrc = `
struct Node { int depth; float acc; };
__device__ __noinline__ float descend(int d, float x, float *trace) {
	float local[6];
	for (int k = 0; k < 6; k++) local[k] = x * (k + 1) + d;
	if (d == 0) return local[5];
	float below = descend(d - 1, local[d % 6] * 0.5f, trace);
	trace[d] = below;
	return below + local[(d * 7) % 6] * 0.001f;
}
__device__ __noinline__ int ackermann(int m, int n) {
	if (m == 0) return n + 1;
	if (n == 0) return ackermann(m - 1, 1);
	return ackermann(m - 1, ackermann(m, n - 1));
}
extern "C" __global__ void deep(const int *depth, float *out, float *traces, int *ack) {
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	out[t] = descend(depth[t], (float)t * 0.01f, traces + 16 * t);
	ack[t] = ackermann(2, t % 6);
}`

// Recursion up to ten frames deep (a GPU thread's stack is 1 KiB unless
// raised), each frame with a local array, lanes of a warp at different
// depths, and Ackermann's function.
func TestRecursionFramesAndAckermann(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 64
		depth := make([]int32, n)
		for i := range depth {
			depth[i] = int32(i * 37 % 11)
		}
		want := make([]float32, n)
		wantT := make([]float32, 16*n)
		wantA := make([]int32, n)
		var descend func(d int, x float32, trace []float32) float32
		descend = func(d int, x float32, trace []float32) float32 {
			var local [6]float32
			for k := range local {
				local[k] = float32(x*float32(k+1)) + float32(d)
			}
			if d == 0 {
				return local[5]
			}
			below := descend(d-1, float32(local[d%6]*0.5), trace)
			trace[d] = below
			return below + float32(local[d*7%6]*0.001)
		}
		for i := range n {
			want[i] = descend(int(depth[i]), float32(i)*0.01, wantT[16*i:])
			wantA[i] = int32(2*(i%6) + 3)
		}
		k := e.kernel(deepSrc, "deep", fmadOff)
		dd, out, traces, ack := up(e, depth), zeros[float32](e, n), zeros[float32](e, 16*n), zeros[int32](e, n)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 2}, Block: cuda.Dim3{X: 32}}, dd, out, traces, ack)
		same(e, "results", down(e, out), want, 0)
		same(e, "traces", down(e, traces), wantT, 0)
		same(e, "ackermann", down(e, ack), wantA, 0)
	})
}
