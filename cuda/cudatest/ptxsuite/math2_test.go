package ptxsuite_test

import (
	"math"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
)

const special32Src = `
extern "C" __global__ void special32(const float *x, float *y, int *ex, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	float v = x[i], s, c;
	float *o = y + 20 * i;
	o[0] = erff(v - 2.0f);
	o[1] = erfcf(v - 1.0f);
	o[2] = lgammaf(v);
	o[3] = tgammaf(v);
	o[4] = expm1f(v - 2.0f);
	o[5] = log1pf(v - 0.05f);
	sincospif(v, &s, &c);
	o[6] = s;
	o[7] = c;
	o[8] = rsqrtf(v);
	o[9] = cbrtf(v - 2.0f);
	o[10] = hypotf(v, 1.5f);
	o[11] = fmodf(v * 7.0f, 1.3f);
	o[12] = remainderf(v * 7.0f, 1.3f);
	o[13] = frexpf(v * 100.0f, &ex[i]);
	o[14] = ldexpf(v, i % 20 - 10);
	o[15] = nextafterf(v, 0.0f);
	o[16] = __fdividef(v, 1.7f);
	o[17] = __expf(v - 2.0f);
	o[18] = __logf(v);
	o[19] = tanhf(v - 2.0f);
}
extern "C" __global__ void fast32(const float *x, float *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	float v = x[i];
	y[4 * i + 0] = tanhf(v - 2.0f);
	y[4 * i + 1] = powf(v, 1.7f);
	y[4 * i + 2] = exp10f(v - 2.0f);
	y[4 * i + 3] = log2f(v) + log10f(v);
}`

const special64Src = `
extern "C" __global__ void special64(const double *x, double *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	double v = x[i], s, c, ip;
	double *o = y + 24 * i;
	o[0] = erf(v - 2.0);
	o[1] = erfc(v - 1.0);
	o[2] = lgamma(v);
	o[3] = tgamma(v);
	o[4] = expm1(v - 2.0);
	o[5] = log1p(v - 0.05);
	sincospi(v, &s, &c);
	o[6] = s;
	o[7] = c;
	o[8] = rsqrt(v);
	o[9] = cbrt(v - 2.0);
	o[10] = hypot(v, 1.5);
	o[11] = fmod(v * 7.0, 1.3);
	o[12] = remainder(v * 7.0, 1.3);
	int e;
	o[13] = frexp(v * 100.0, &e) + e;
	o[14] = ldexp(v, i % 40 - 20);
	o[15] = nextafter(v, 10.0);
	o[16] = asinh(v) + acosh(v + 1.0) + atanh(v / 5.0);
	o[17] = pow(v, -2.3) + exp2(v) + log2(v) + log10(v);
	o[18] = erfinv(v / 4.5 - 0.44);
	o[19] = normcdf(v - 2.0);
	o[20] = j0(v) + y0(v);
	o[21] = modf(v * 3.0, &ip) + ip * 100.0 + rint(v * 10.0) + round(v * 10.0) * 1000.0;
	o[22] = fdim(v, 2.0) + fmax(v, 2.0) * 10.0 + fmin(v, 2.0) * 100.0 + copysign(1.0, 2.0 - v) * 1000.0;
	o[23] = (double)ilogb(v * 1000.0) + logb(v * 0.01) * 100.0 + scalbn(v, 3) * 1000.0;
}`

// The single- and double-precision special functions of the maths
// library, the exact ones (fmod, remainder, frexp, ldexp, nextafter,
// modf, rint) compared exactly, the others within a few of their
// documented ulps, and the approximate ones of --use_fast_math
// (tanh.approx on sm_75 and later) within theirs.
func TestSpecialFunctions(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 500
		x := make([]float32, n)
		r := rng(149)
		for i := range x {
			x[i] = 0.1 + 3.9*r.float()
		}
		x[0], x[1], x[2] = 1, 2, 0.5
		want := make([]float32, 20*n)
		wantE := make([]int32, n)
		for i, v32 := range x {
			v := float64(v32)
			lg, _ := math.Lgamma(v)
			s, c := sincospi(v)
			fr, ex := math.Frexp(float64(v32 * 100))
			wantE[i] = int32(ex)
			m7 := float64(v32 * 7)
			for j, w := range []float64{math.Erf(v - 2), math.Erfc(v - 1), lg, math.Gamma(v), math.Expm1(v - 2), math.Log1p(float64(v32 - 0.05)), s, c,
				1 / math.Sqrt(v), math.Cbrt(v - 2), math.Hypot(v, 1.5), math.Mod(m7, float64(float32(1.3))), math.Remainder(m7, float64(float32(1.3))), fr,
				math.Ldexp(v, i%20-10), float64(math.Nextafter32(v32, 0)), v / 1.7, math.Exp(v - 2), math.Log(v), math.Tanh(v - 2)} {
				want[20*i+j] = float32(w)
			}
		}
		k := e.kernel(special32Src, "special32")
		dx, dy, de := up(e, x), zeros[float32](e, 20*n), zeros[int32](e, n)
		e.launch(k, cuda.Linear(n, 64), dx, dy, de, int32(n))
		got := down(e, dy)
		for j := range 20 {
			tol := 2e-6 // a few ulps of float, relative to max(1, |want|)
			switch j {
			case 11, 12, 13, 14, 15:
				tol = 0
			case 2, 3:
				tol = 8e-6 // lgammaf and tgammaf: up to 6 and 5 ulps
			}
			same(e, "special32 "+specialNames32[j], column(got, j, 20), column(want, j, 20), tol)
		}
		same(e, "frexpf exponent", down(e, de), wantE, 0)

		kf := e.kernel(special32Src, "fast32", nvrtc.WithOptions("--use_fast_math"))
		dyf := zeros[float32](e, 4*n)
		e.launch(kf, cuda.Linear(n, 64), dx, dyf, int32(n))
		wantF := make([]float32, 4*n)
		for i, v32 := range x {
			v := float64(v32)
			wantF[4*i], wantF[4*i+1], wantF[4*i+2], wantF[4*i+3] = float32(math.Tanh(v-2)), float32(math.Pow(v, 1.7)), float32(math.Pow(10, v-2)), float32(math.Log2(v)+math.Log10(v))
		}
		// tanh.approx.f32's relative error is up to 2^-10.99; the fast
		// power and logarithms are within a few 2^-22.
		gotF := down(e, dyf)
		same(e, "fast tanhf", column(gotF, 0, 4), column(wantF, 0, 4), 6e-4)
		for j := 1; j < 4; j++ {
			same(e, "fast pow/exp10/log", column(gotF, j, 4), column(wantF, j, 4), 2e-5)
		}

		xd := make([]float64, n)
		wantD := make([]float64, 24*n)
		for i, v32 := range x {
			v := float64(v32) + 1e-9*float64(i)
			xd[i] = v
			lg, _ := math.Lgamma(v)
			s, c := sincospi(v)
			fr, ex := math.Frexp(v * 100)
			m7 := v * 7
			ip, fp := math.Modf(v * 3)
			cs := 1.0
			if 2-v < 0 {
				cs = -1
			}
			for j, w := range []float64{math.Erf(v - 2), math.Erfc(v - 1), lg, math.Gamma(v), math.Expm1(v - 2), math.Log1p(v - 0.05), s, c,
				1 / math.Sqrt(v), math.Cbrt(v - 2), math.Hypot(v, 1.5), math.Mod(m7, 1.3), math.Remainder(m7, 1.3), fr + float64(ex),
				math.Ldexp(v, i%40-20), math.Nextafter(v, 10), math.Asinh(v) + math.Acosh(v+1) + math.Atanh(v/5),
				math.Pow(v, -2.3) + math.Exp2(v) + math.Log2(v) + math.Log10(v), math.Erfinv(v/4.5 - 0.44), 0.5 * math.Erfc(-(v-2)/math.Sqrt2),
				math.J0(v) + math.Y0(v), fp + ip*100 + math.RoundToEven(v*10) + math.Round(v*10)*1000,
				math.Max(v-2, 0) + math.Max(v, 2)*10 + math.Min(v, 2)*100 + cs*1000,
				float64(math.Ilogb(v*1000)) + math.Logb(v*0.01)*100 + math.Ldexp(v, 3)*1000} {
				wantD[24*i+j] = w
			}
		}
		kd := e.kernel(special64Src, "special64")
		dxd, dyd := up(e, xd), zeros[float64](e, 24*n)
		e.launch(kd, cuda.Linear(n, 64), dxd, dyd, int32(n))
		gotD := down(e, dyd)
		for j := range 24 {
			tol := 4e-15
			switch j {
			case 11, 12, 13, 14, 15:
				tol = 0
			case 21, 22, 23:
				tol = 1e-12 // exact terms summed with fma contraction, some cancelling
			case 2, 3, 17, 18, 19:
				tol = 3e-14 // up to 10 ulps (tgamma), and sums of several
			case 20:
				tol = 2e-11 // j0 and y0: absolute errors near their zeros
			}
			same(e, "special64 "+specialNames64[j], column(gotD, j, 24), column(wantD, j, 24), tol)
		}
	})
}

var specialNames32 = []string{"erff", "erfcf", "lgammaf", "tgammaf", "expm1f", "log1pf", "sinpi", "cospi", "rsqrtf", "cbrtf",
	"hypotf", "fmodf", "remainderf", "frexpf", "ldexpf", "nextafterf", "__fdividef", "__expf", "__logf", "tanhf"}

var specialNames64 = []string{"erf", "erfc", "lgamma", "tgamma", "expm1", "log1p", "sinpi", "cospi", "rsqrt", "cbrt",
	"hypot", "fmod", "remainder", "frexp", "ldexp", "nextafter", "asinh+acosh+atanh", "pow+exp2+log2+log10", "erfinv", "normcdf",
	"j0+y0", "modf+rint+round", "fdim+fmax+fmin+copysign", "ilogb+logb+scalbn"}

// sincospi is sin(πx) and cos(πx), reduced exactly first.
func sincospi(x float64) (float64, float64) {
	r := math.Remainder(x, 2) // in [-1, 1]
	return math.Sin(math.Pi * r), math.Cos(math.Pi * r)
}

func column[T any](x []T, j, stride int) []T {
	out := make([]T, 0, len(x)/stride)
	for i := j; i < len(x); i += stride {
		out = append(out, x[i])
	}
	return out
}
