package ptxsuite_test

import (
	"math"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
)

const mathSrc = `
extern "C" __global__ void mathf(const float *x, float *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	float v = x[i];
	y[8 * i + 0] = sinf(v);
	y[8 * i + 1] = expf(v);
	y[8 * i + 2] = logf(v + 2.0f);
	y[8 * i + 3] = sqrtf(v + 1.5f);
	y[8 * i + 4] = powf(v + 1.5f, 2.5f);
	y[8 * i + 5] = tanhf(v);
	y[8 * i + 6] = erff(v);
	y[8 * i + 7] = atan2f(v, 0.75f);
}
extern "C" __global__ void mathd(const double *x, double *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	double v = x[i];
	y[4 * i + 0] = sin(v);
	y[4 * i + 1] = exp(v);
	y[4 * i + 2] = log(v + 2.0);
	y[4 * i + 3] = cbrt(v);
}`

// The single- and double-precision maths library, as NVRTC inlines it:
// long instruction sequences of integer and floating-point operations.
func TestMathLibrary(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 1000
		x := floats(n, 31)
		for i := range x {
			x[i] *= 1.4
		}
		want := make([]float32, 8*n)
		for i, v := range x {
			d := float64(v)
			for j, w := range []float64{math.Sin(d), math.Exp(d), math.Log(d + 2), math.Sqrt(d + 1.5), math.Pow(d+1.5, 2.5), math.Tanh(d), math.Erf(d), math.Atan2(d, 0.75)} {
				want[8*i+j] = float32(w)
			}
		}
		k := e.kernel(mathSrc, "mathf")
		dx, dy := up(e, x), zeros[float32](e, 8*n)
		e.launch(k, cuda.Linear(n, 128), dx, dy, int32(n))
		same(e, "float maths", down(e, dy), want, 4e-6)

		xd := make([]float64, n)
		wd := make([]float64, 4*n)
		for i, v := range x {
			xd[i] = float64(v)
			wd[4*i], wd[4*i+1], wd[4*i+2], wd[4*i+3] = math.Sin(xd[i]), math.Exp(xd[i]), math.Log(xd[i]+2), math.Cbrt(xd[i])
		}
		kd := e.kernel(mathSrc, "mathd")
		dxd, dyd := up(e, xd), zeros[float64](e, 4*n)
		e.launch(kd, cuda.Linear(n, 128), dxd, dyd, int32(n))
		same(e, "double maths", down(e, dyd), wd, 1e-14)
	})
}

const intrinsicsSrc = `
extern "C" __global__ void fast(const float *x, float *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	float v = x[i];
	y[6 * i + 0] = __expf(v);
	y[6 * i + 1] = __sinf(v);
	y[6 * i + 2] = __logf(v + 2.0f);
	y[6 * i + 3] = __fdividef(v, 3.0f);
	y[6 * i + 4] = rsqrtf(v + 2.0f);
	y[6 * i + 5] = __saturatef(v * 2.0f);
}`

// The approximate intrinsics (ex2.approx, sin.approx, lg2.approx,
// div.approx, rsqrt.approx), within their documented error, and .sat.
func TestFastIntrinsics(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 700
		x := floats(n, 37)
		want := make([]float32, 6*n)
		for i, v := range x {
			d := float64(v)
			sat := math.Min(math.Max(2*d, 0), 1)
			for j, w := range []float64{math.Exp(d), math.Sin(d), math.Log(d + 2), d / 3, 1 / math.Sqrt(d+2), sat} {
				want[6*i+j] = float32(w)
			}
		}
		k := e.kernel(intrinsicsSrc, "fast", nvrtc.WithOptions("--use_fast_math"))
		dx, dy := up(e, x), zeros[float32](e, 6*n)
		e.launch(k, cuda.Linear(n, 64), dx, dy, int32(n))
		same(e, "intrinsics", down(e, dy), want, 2e-6)
	})
}

const roundingSrc = `
extern "C" __global__ void rounding(const float *a, const float *b, float *y, int *r, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	float x = a[i], z = b[i];
	y[4 * i + 0] = __fadd_rz(x, z);
	y[4 * i + 1] = __fmul_ru(x, z);
	y[4 * i + 2] = __fdiv_rd(x, z);
	y[4 * i + 3] = __fmaf_rn(x, z, 1.0f);
	r[4 * i + 0] = __float2int_rn(x * 1000.0f);
	r[4 * i + 1] = __float2int_rd(x * 1000.0f);
	r[4 * i + 2] = (int)(x * 1e10f);
	r[4 * i + 3] = __float2uint_ru(x * 1000.0f);
}`

// Directed rounding of add, multiply and divide, and conversions to
// integers with each rounding and saturation.
func TestRoundingModes(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 500
		a, b := floats(n, 41), floats(n, 43)
		for i := range b {
			b[i] += 1.5
		}
		want := make([]float32, 4*n)
		wantI := make([]int32, 4*n)
		for i := range a {
			x, z := float64(a[i]), float64(b[i])
			want[4*i+0] = roundTo(x+z, 'z')
			want[4*i+1] = roundTo(x*z, 'p')
			want[4*i+2] = roundTo(x/z, 'm')
			want[4*i+3] = float32(math.FMA(x, z, 1))
			p := float64(a[i] * 1000)
			wantI[4*i+0] = int32(math.RoundToEven(p))
			wantI[4*i+1] = int32(math.Floor(p))
			big := float64(a[i] * 1e10)
			switch {
			case big >= math.MaxInt32:
				wantI[4*i+2] = math.MaxInt32
			case big <= math.MinInt32:
				wantI[4*i+2] = math.MinInt32
			default:
				wantI[4*i+2] = int32(big)
			}
			if p <= 0 {
				wantI[4*i+3] = 0
			} else {
				wantI[4*i+3] = int32(math.Ceil(p))
			}
		}
		k := e.kernel(roundingSrc, "rounding")
		da, db, dy, dr := up(e, a), up(e, b), zeros[float32](e, 4*n), zeros[int32](e, 4*n)
		e.launch(k, cuda.Linear(n, 64), da, db, dy, dr, int32(n))
		same(e, "rounded", down(e, dy), want, 0)
		same(e, "to integers", down(e, dr), wantI, 0)
	})
}

// roundTo rounds x, exact, to float32 toward zero ('z'), +inf ('p') or
// -inf ('m'); exact for the products and quotients here, whose float64
// values are either exact or far from a float32 boundary.
func roundTo(x float64, mode byte) float32 {
	f := float32(x)
	if float64(f) == x {
		return f
	}
	up := float64(f) > x
	switch {
	case mode == 'z' && math.Abs(float64(f)) > math.Abs(x), mode == 'm' && up:
		return math.Nextafter32(f, float32(math.Inf(-1))*float32(sign(x, mode)))
	case mode == 'p' && !up:
		return math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

func sign(x float64, mode byte) float64 {
	if mode == 'z' && x < 0 {
		return -1
	}
	return 1
}

const halfSrc = `
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void halves(const float *x, float *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	__half h = __float2half(x[i]), k = __float2half(0.375f);
	__half2 h2 = __halves2half2(h, k);
	__half2 p = __hmul2(h2, __floats2half2_rn(3.0f, -2.0f));
	__nv_bfloat16 b = __float2bfloat16(x[i]);
#if __CUDA_ARCH__ >= 800
	__nv_bfloat16 c = __hfma(b, __float2bfloat16(1.5f), __float2bfloat16(0.25f));
#else
	__nv_bfloat16 c = __float2bfloat16(__bfloat162float(b) * 1.5f + 0.25f);
#endif
	y[5 * i + 0] = __half2float(__hadd(h, k));
	y[5 * i + 1] = __half2float(__hmul(h, h));
	y[5 * i + 2] = __low2float(p) + 8.0f * __high2float(p);
	y[5 * i + 3] = __bfloat162float(c);
	y[5 * i + 4] = __half2float(__hgt(h, k) ? h : k);
}`

// Half and bfloat16 arithmetic, scalar and paired, and their conversions.
func TestHalfAndBFloat16(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 400
		x := floats(n, 47)
		want := make([]float32, 5*n)
		for i, v := range x {
			h := f16(float64(v))
			k := 0.375
			p0, p1 := f16(h*3), f16(k*-2)
			b := bf16(float64(v))
			c := bf16(b*1.5 + 0.25)
			big := k
			if h > k {
				big = h
			}
			for j, w := range []float64{f16(h + k), f16(h * h), p0 + 8*p1, c, big} {
				want[5*i+j] = float32(w)
			}
		}
		k := e.kernel(halfSrc, "halves", nvrtc.WithToolkitHeaders())
		dx, dy := up(e, x), zeros[float32](e, 5*n)
		e.launch(k, cuda.Linear(n, 64), dx, dy, int32(n))
		same(e, "halves", down(e, dy), want, 0)
	})
}

// f16 and bf16 round x to those types' precision, to nearest even; f16's
// subnormals are multiples of 2^-24 (bf16's lie far below these values).
func f16(x float64) float64 {
	if math.Abs(x) < 0x1p-14 {
		return math.RoundToEven(x*0x1p24) / 0x1p24
	}
	return roundBits(x, 11)
}

func bf16(x float64) float64 { return roundBits(x, 8) }

func roundBits(x float64, bits int) float64 {
	if x == 0 {
		return 0
	}
	fr, exp := math.Frexp(x)
	scale := math.Ldexp(1, bits)
	return math.Ldexp(math.RoundToEven(fr*scale)/scale, exp)
}
