package ptxsuite_test

import (
	"math"
	"math/big"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
)

const half2Src = `
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void pairs(const float *x, float *y, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	float a = x[2 * i], b = x[2 * i + 1];
	__half2 h = __floats2half2_rn(a, b), g = __floats2half2_rn(b, 0.75f);
	__half2 s = __hadd2(h, g), d = __hsub2(h, g), p = __hmul2(h, g), f = __hfma2(h, g, s);
	__half2 q = __h2div(h, __floats2half2_rn(1.5f, -2.5f)), ng = __hneg2(h), ab = __habs2(d);
	__nv_bfloat162 bh = __floats2bfloat162_rn(a, b), bg = __floats2bfloat162_rn(b, 0.75f);
	__nv_bfloat162 bs = __hadd2(bh, bg), bp = __hmul2(bh, bg);
#if __CUDA_ARCH__ >= 800
	__nv_bfloat162 bf = __hfma2(bh, bg, bs);
#else
	__nv_bfloat162 bf = __floats2bfloat162_rn(fmaf(__low2float(bh), __low2float(bg), __low2float(bs)),
		fmaf(__high2float(bh), __high2float(bg), __high2float(bs)));
#endif
	float2 hf = __half22float2(p);
	float *o = y + 20 * i;
	o[0] = __low2float(s); o[1] = __high2float(s);
	o[2] = __low2float(d); o[3] = __high2float(d);
	o[4] = hf.x; o[5] = hf.y;
	o[6] = __low2float(f); o[7] = __high2float(f);
	o[8] = __low2float(q); o[9] = __high2float(q);
	o[10] = __low2float(ng); o[11] = __high2float(ab);
	o[12] = __low2float(bs); o[13] = __high2float(bs);
	o[14] = __low2float(bp); o[15] = __high2float(bp);
	o[16] = __low2float(bf); o[17] = __high2float(bf);
	o[18] = __hbeq2(h, g) ? 1.0f : 0.0f;
	o[19] = __low2float(__hmul2_sat(h, __floats2half2_rn(4.0f, 4.0f)));
}`

// __half2 and __nv_bfloat162 arithmetic: add, sub, mul, fma, division,
// neg, abs, comparison and saturation, paired.
func TestHalf2AndBFloat162(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 400
		x := floats(2*n, 137)
		want := make([]float32, 20*n)
		for i := range n {
			a, b := float64(x[2*i]), float64(x[2*i+1])
			h0, h1, g0, g1 := f16(a), f16(b), f16(b), 0.75
			s0, s1 := f16(h0+g0), f16(h1+g1)
			d0, d1 := f16(h0-g0), f16(h1-g1)
			p0, p1 := f16(h0*g0), f16(h1*g1)
			b0, b1, c0, c1 := bf16(a), bf16(b), bf16(b), 0.75
			bs0, bs1 := bf16(b0+c0), bf16(b1+c1)
			eq := 0.0
			if h0 == g0 && h1 == g1 {
				eq = 1
			}
			for j, w := range []float64{s0, s1, d0, d1, p0, p1, f16(h0*g0 + s0), f16(h1*g1 + s1), f16(h0 / 1.5), f16(h1 / -2.5),
				-h0, math.Abs(d1), bs0, bs1, bf16(b0 * c0), bf16(b1 * c1), bf16(b0*c0 + bs0), bf16(b1*c1 + bs1), eq, math.Min(math.Max(f16(h0*4), 0), 1)} {
				want[20*i+j] = float32(w)
			}
		}
		k := e.kernel(half2Src, "pairs", nvrtc.WithToolkitHeaders())
		dx, dy := up(e, x), zeros[float32](e, 20*n)
		e.launch(k, cuda.Linear(n, 64), dx, dy, int32(n))
		got := down(e, dy)
		for i := range got {
			// Division is within one half ulp-ish step; bfloat16's fma
			// may round twice on architectures without it (through a
			// float fma).
			tol := 0.0
			switch i % 20 {
			case 8, 9:
				tol = 1.0 / 1024
			case 16, 17:
				tol = 1.0 / 128
			}
			d := math.Abs(float64(got[i]) - float64(want[i]))
			if d > tol*math.Max(1, math.Abs(float64(want[i]))) {
				e.t.Errorf("thread %d result %d = %v, want %v", i/20, i%20, got[i], want[i])
				if d > 0 && tol == 0 {
					break
				}
			}
		}
	})
}

const convertSrc = `
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void conversions(const float *x, const double *xd, const int *xi, const long long *xl, unsigned *o, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	float v = x[i];
	double w = xd[i];
	int k = xi[i];
	long long l = xl[i];
	unsigned *r = o + 32 * i;
	r[0] = __half_as_ushort(__float2half_rn(v));
	r[1] = __half_as_ushort(__float2half_rz(v));
	r[2] = __half_as_ushort(__float2half_rd(v));
	r[3] = __half_as_ushort(__float2half_ru(v));
	r[4] = __float_as_uint(__double2float_rn(w));
	r[5] = __float_as_uint(__double2float_rz(w));
	r[6] = __float_as_uint(__double2float_rd(w));
	r[7] = __float_as_uint(__double2float_ru(w));
	r[8] = __bfloat16_as_ushort(__float2bfloat16_rn(v));
	r[9] = __bfloat16_as_ushort(__float2bfloat16_rz(v));
	r[10] = __bfloat16_as_ushort(__float2bfloat16_rd(v));
	r[11] = __bfloat16_as_ushort(__float2bfloat16_ru(v));
	r[12] = __float_as_uint(__int2float_rn(k));
	r[13] = __float_as_uint(__int2float_rz(k));
	r[14] = __float_as_uint(__int2float_rd(k));
	r[15] = __float_as_uint(__int2float_ru(k));
	r[16] = __float2int_rn(v);
	r[17] = __float2int_rz(v);
	r[18] = __float2int_rd(v);
	r[19] = __float2int_ru(v);
	r[20] = __float_as_uint(__ll2float_rd(l));
	r[21] = __float_as_uint(__ll2float_ru(l));
	r[22] = (unsigned)(__double2ll_rd(w * 1e12) >> 8);
	r[23] = __double2uint_ru(fabs(w) * 1e6);
	r[24] = __half2int_rz(__float2half_rn(v));
	r[25] = __half_as_ushort(__int2half_rd(k >> 17));
	r[26] = __half_as_ushort(__ushort2half_ru((unsigned short)k));
	r[27] = __double2hiint(w);
	r[28] = __double2loint(w);
	r[29] = __float_as_uint((float)__hiloint2double((k & 0xfffff) | 0x40000000, (int)l));
	r[30] = __half_as_ushort(__double2half(w));
	r[31] = __float_as_uint(__ull2float_rz((unsigned long long)l));
}`

// Conversions with each rounding: float to half and bfloat16, double to
// float, integers of 32 and 64 bits to float and back, and the bit
// reinterpretations between them.
func TestConversionRounding(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 600
		r := rng(139)
		x, xd, xi, xl := make([]float32, n), make([]float64, n), make([]int32, n), make([]int64, n)
		for i := range n {
			x[i] = (r.float()*2 - 1) * 1000
			if math.Abs(float64(x[i])) < 0.01 {
				x[i] = 0.5
			}
			xd[i] = math.Float64frombits(r.next()>>12|0x3ff0000000000000) * float64(1-2*int(r.next()&1)) * 1.5
			xi[i] = int32(r.next())
			xl[i] = int64(r.next())
		}
		x[1], x[2], x[3] = 2.5, -2.5, 1001.7
		want := make([]uint32, 32*n)
		for i := range n {
			v, w, k, l := float64(x[i]), xd[i], xi[i], xl[i]
			o := want[32*i : 32*i+32]
			for j, m := range []big.RoundingMode{big.ToNearestEven, big.ToZero, big.ToNegativeInf, big.ToPositiveInf} {
				o[j] = halfBits(roundBig(new(big.Float).SetFloat64(v), 11, m))
				o[4+j] = math.Float32bits(float32(roundBig(new(big.Float).SetFloat64(w), 24, m)))
				o[8+j] = math.Float32bits(float32(roundBig(new(big.Float).SetFloat64(v), 8, m))) >> 16
				o[12+j] = math.Float32bits(float32(roundBig(new(big.Float).SetInt64(int64(k)), 24, m)))
			}
			o[16] = uint32(int32(math.RoundToEven(v)))
			o[17] = uint32(int32(math.Trunc(v)))
			o[18] = uint32(int32(math.Floor(v)))
			o[19] = uint32(int32(math.Ceil(v)))
			o[20] = math.Float32bits(float32(roundBig(new(big.Float).SetInt64(l), 24, big.ToNegativeInf)))
			o[21] = math.Float32bits(float32(roundBig(new(big.Float).SetInt64(l), 24, big.ToPositiveInf)))
			o[22] = uint32(int64(math.Floor(w*1e12)) >> 8)
			o[23] = uint32(math.Ceil(math.Abs(w) * 1e6))
			o[24] = uint32(int32(math.Trunc(f16(v))))
			o[25] = halfBits(roundBig(new(big.Float).SetInt64(int64(k>>17)), 11, big.ToNegativeInf))
			o[26] = halfBits(roundBig(new(big.Float).SetInt64(int64(uint16(k))), 11, big.ToPositiveInf))
			o[27] = uint32(math.Float64bits(w) >> 32)
			o[28] = uint32(math.Float64bits(w))
			o[29] = math.Float32bits(float32(math.Float64frombits(uint64(uint32(k)&0xfffff|0x40000000)<<32 | uint64(uint32(l)))))
			o[30] = halfBits(roundBig(new(big.Float).SetFloat64(w), 11, big.ToNearestEven))
			o[31] = math.Float32bits(float32(roundBig(new(big.Float).SetUint64(uint64(l)), 24, big.ToZero)))
		}
		k := e.kernel(convertSrc, "conversions", nvrtc.WithToolkitHeaders())
		dx, dxd, dxi, dxl, out := up(e, x), up(e, xd), up(e, xi), up(e, xl), zeros[uint32](e, 32*n)
		e.launch(k, cuda.Linear(n, 64), dx, dxd, dxi, dxl, out, int32(n))
		got := down(e, out)
		bad := 0
		for i := range got {
			if got[i] != want[i] && bad < 10 {
				e.t.Errorf("thread %d conversion %d = %#x, want %#x (x %v, xd %v, xi %d, xl %d)", i/32, i%32, got[i], want[i], x[i/32], xd[i/32], xi[i/32], xl[i/32])
				bad++
			}
		}
	})
}

// roundBig rounds x to prec significant bits in mode, as a float64 (exact
// for the precisions used: 24 bits and fewer, in the normal range).
func roundBig(x *big.Float, prec uint, mode big.RoundingMode) float64 {
	f, _ := new(big.Float).SetMode(mode).SetPrec(prec).Set(x).Float64()
	return f
}

// halfBits encodes x, already a half's value (normal, or zero), as IEEE
// binary16.
func halfBits(x float64) uint32 {
	var sign uint32
	if math.Signbit(x) {
		sign, x = 0x8000, -x
	}
	if x == 0 {
		return sign
	}
	if math.IsInf(x, 0) || x >= 65520 {
		return sign | 0x7c00
	}
	fr, exp := math.Frexp(x) // x = fr * 2^exp, fr in [0.5, 1)
	if exp-1 < -14 {
		return sign | uint32(math.RoundToEven(x*0x1p24))
	}
	return sign | uint32(exp-1+15)<<10 | uint32(fr*2048)&0x3ff
}
