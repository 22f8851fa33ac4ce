package ptxsuite_test

import (
	"math/bits"
	"testing"

	"github.com/gocuda/gocuda/cuda"
)

const warpRedSrc = `
extern "C" __global__ void warpred(const int *x, int *out) {
	int t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
	int v = x[t];
	unsigned u = (unsigned)v;
	int *o = out + 12 * t;
#if __CUDA_ARCH__ >= 800
	o[0] = __reduce_add_sync(0xffffffffu, v);
	o[1] = __reduce_min_sync(0xffffffffu, v);
	o[2] = __reduce_max_sync(0xffffffffu, u);
	o[3] = __reduce_or_sync(0xffffffffu, u);
	o[4] = __reduce_and_sync(0xffffffffu, u | 0xff000000u);
	o[5] = __reduce_xor_sync(0xffffffffu, u);
#else
	int s = v, mn = v; unsigned mx = u, orr = u, an = u | 0xff000000u, xr = u;
	for (int d = 16; d > 0; d >>= 1) {
		s += __shfl_xor_sync(0xffffffffu, s, d);
		mn = min(mn, __shfl_xor_sync(0xffffffffu, mn, d));
		mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, d));
		orr |= __shfl_xor_sync(0xffffffffu, orr, d);
		an &= __shfl_xor_sync(0xffffffffu, an, d);
		xr ^= __shfl_xor_sync(0xffffffffu, xr, d);
	}
	o[0] = s; o[1] = mn; o[2] = mx; o[3] = orr; o[4] = an; o[5] = xr;
#endif
	// Sub-warp shuffles: width 8 and 16 (the c operand's segment mask).
	o[6] = __shfl_sync(0xffffffffu, v, 3, 8);
	o[7] = __shfl_up_sync(0xffffffffu, v, 2, 16);
	o[8] = __shfl_down_sync(0xffffffffu, v, 5, 16);
	o[9] = __shfl_xor_sync(0xffffffffu, v, 9, 16);
	int pred;
	o[10] = __match_all_sync(0xffffffffu, v & 0x40000000, &pred);
	o[11] = pred;
	// A shuffle and a vote among the even lanes only.
	if ((lane & 1) == 0) {
		int e = __shfl_sync(0x55555555u, v, (lane + 2) & 31);
		unsigned b = __ballot_sync(0x55555555u, e > 0);
		atomicAdd(out + 12 * gridDim.x * blockDim.x, (int)__popc(b) * (lane == 0));
	}
}`

// redux.sync (__reduce_*_sync) on sm_80 and later, the same reductions
// by shuffles before; shuffles within 8- and 16-lane segments,
// __match_all_sync, and a shuffle and a ballot among half a warp's lanes.
func TestWarpReduceAndSegments(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 128
		x := make([]int32, n)
		r := rng(197)
		for i := range x {
			x[i] = int32(r.next()%2001) - 1000
			if i >= 64 && i < 96 {
				x[i] |= 0x40000000
			}
		}
		want := make([]int32, 12*n+1)
		for w := 0; w < n; w += 32 {
			var s, mn int32 = 0, 1 << 30
			var mx, orr, an, xr uint32 = 0, 0, ^uint32(0), 0
			allSame := true
			for l := range 32 {
				v := x[w+l]
				u := uint32(v)
				s += v
				mn = min(mn, v)
				mx = max(mx, u)
				orr |= u
				an &= u | 0xff000000
				xr ^= u
				if v&0x40000000 != x[w]&0x40000000 {
					allSame = false
				}
			}
			var even uint32
			for l := 0; l < 32; l += 2 {
				if x[w+(l+2)%32] > 0 {
					even |= 1 << l
				}
			}
			want[12*n] += int32(bits.OnesCount32(even))
			for l := range 32 {
				o := want[12*(w+l) : 12*(w+l)+12]
				o[0], o[1], o[2], o[3], o[4], o[5] = s, mn, int32(mx), int32(orr), int32(an), int32(xr)
				o[6] = x[w+l&^7+3]
				if l%16 >= 2 {
					o[7] = x[w+l-2]
				} else {
					o[7] = x[w+l]
				}
				if l%16+5 < 16 {
					o[8] = x[w+l+5]
				} else {
					o[8] = x[w+l]
				}
				o[9] = x[w+(l^9)]
				if allSame {
					o[10], o[11] = -1, 1
				}
			}
		}
		k := e.kernel(warpRedSrc, "warpred")
		dx, out := up(e, x), zeros[int32](e, 12*n+1)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 2}, Block: cuda.Dim3{X: 64}}, dx, out)
		got := down(e, out)
		bad := 0
		for i := range got {
			if got[i] != want[i] && bad < 10 {
				e.t.Errorf("thread %d result %d = %d, want %d", i/12, i%12, got[i], want[i])
				bad++
			}
		}
	})
}

const simdSrc = `
extern "C" __global__ void simd(const unsigned *a, const unsigned *b, unsigned *o, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	unsigned x = a[i], y = b[i];
	unsigned *r = o + 10 * i;
	r[0] = __vadd4(x, y);
	r[1] = __vsub2(x, y);
	r[2] = __vabsdiffu4(x, y);
	r[3] = __vmaxu4(x, y);
	r[4] = __vminu2(x, y);
	r[5] = __vcmpeq4(x & 0x0f0f0f0f, y & 0x0f0f0f0f);
	r[6] = __vcmpgtu2(x, y);
	r[7] = __vavgu4(x, y);
	r[8] = __vsads4(x, y);
	r[9] = __vaddss2(x, y);
}`

// The SIMD video intrinsics on bytes and halfwords (__vadd4, __vsub2,
// __vabsdiffu4, __vmaxu4, __vminu2, __vcmpeq4, __vcmpgtu2, __vavgu4,
// __vsads4, __vaddss2).
func TestSIMDVideoIntrinsics(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 256
		a, b := ints(n, 199, 1<<31), ints(n, 211, 1<<31)
		r := rng(223)
		for i := range a {
			a[i] ^= uint32(r.next()) & 0x80808080
			b[i] ^= uint32(r.next()) & 0x80808080
		}
		a[0], b[0] = 0x7fff8000, 0x00018000
		want := make([]uint32, 10*n)
		lanes := func(x uint32, w int) []uint32 {
			out := make([]uint32, 32/w)
			for k := range out {
				out[k] = x >> (w * k) & (1<<w - 1)
			}
			return out
		}
		pack := func(v []uint32, w int) uint32 {
			var x uint32
			for k, e := range v {
				x |= (e & (1<<w - 1)) << (w * k)
			}
			return x
		}
		sx := func(v uint32, w int) int32 { return int32(v<<(32-w)) >> (32 - w) }
		for i := range n {
			x4, y4, x2, y2 := lanes(a[i], 8), lanes(b[i], 8), lanes(a[i], 16), lanes(b[i], 16)
			res := make([][]uint32, 10)
			var sads int32
			for k := range 4 {
				p, q := x4[k], y4[k]
				res[0] = append(res[0], p+q)
				res[2] = append(res[2], uint32(absDiff(int64(p), int64(q))))
				res[3] = append(res[3], max(p, q))
				eq := uint32(0)
				if p&0x0f == q&0x0f {
					eq = 0xff
				}
				res[5] = append(res[5], eq)
				res[7] = append(res[7], (p+q+1)/2)
				sads += int32(absDiff(int64(sx(p, 8)), int64(sx(q, 8))))
			}
			for k := range 2 {
				p, q := x2[k], y2[k]
				res[1] = append(res[1], p-q)
				res[4] = append(res[4], min(p, q))
				gt := uint32(0)
				if p > q {
					gt = 0xffff
				}
				res[6] = append(res[6], gt)
				s := min(max(sx(p, 16)+sx(q, 16), -32768), 32767)
				res[9] = append(res[9], uint32(s))
			}
			o := want[10*i : 10*i+10]
			for j := range 10 {
				switch j {
				case 8:
					o[j] = uint32(sads)
				case 1, 4, 6, 9:
					o[j] = pack(res[j], 16)
				default:
					o[j] = pack(res[j], 8)
				}
			}
		}
		k := e.kernel(simdSrc, "simd")
		da, db, out := up(e, a), up(e, b), zeros[uint32](e, 10*n)
		e.launch(k, cuda.Linear(n, 64), da, db, out, int32(n))
		got := down(e, out)
		bad := 0
		for i := range got {
			if got[i] != want[i] && bad < 10 {
				e.t.Errorf("thread %d result %d = %#x, want %#x (a %#x b %#x)", i/10, i%10, got[i], want[i], a[i/10], b[i/10])
				bad++
			}
		}
	})
}

const sm90Src = `
extern "C" __global__ void hopper(const float *x, unsigned *o, unsigned *cl, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
#if __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.wait;" ::: "memory");
	unsigned c[8];
	asm("mov.u32 %0, %%clusterid.x;" : "=r"(c[0]));
	asm("mov.u32 %0, %%nclusterid.x;" : "=r"(c[1]));
	asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(c[2]));
	asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(c[3]));
	asm("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(c[4]));
	asm("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(c[5]));
	// %is_explicit_cluster is a predicate: ptxas refuses it as a u32.
	asm("{\n\t.reg .pred p;\n\tmov.pred p, %%is_explicit_cluster;\n\tselp.u32 %0, 1, 0, p;\n\t}" : "=r"(c[6]));
	unsigned leader = 0, elected;
	asm volatile("{\n\t.reg .pred p;\n\telect.sync %0|p, %2;\n\tselp.u32 %1, 1, 0, p;\n\t}" : "=r"(elected), "=r"(leader) : "r"(0xffffffffu));
	c[7] = leader + 2 * elected;
	if (threadIdx.x % 32 == 0)
		for (int k = 0; k < 8; k++) cl[8 * (i / 32) + k] = c[k];
#endif
	if (i >= n) return;
	float a = x[2 * i], b = x[2 * i + 1];
#if __CUDA_ARCH__ >= 890
	unsigned short e4, e5;
	asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(e4) : "f"(b), "f"(a));
	asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(e5) : "f"(b), "f"(a));
	unsigned h4, h5;
	asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h4) : "h"(e4));
	asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(h5) : "h"(e5));
	o[4 * i + 0] = e4;
	o[4 * i + 1] = e5;
	o[4 * i + 2] = h4;
	o[4 * i + 3] = h5;
#endif
#if __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.launch_dependents;" ::);
#endif
}`

// sm_90's cluster registers (a launch without clusters is one block per
// cluster), elect.sync, griddepcontrol, and sm_89's FP8 conversions
// (cvt to e4m3x2 and e5m2x2 with satfinite, and back to f16x2). Runs on
// compute_90 only.
func TestHopperRegistersAndFP8(t *testing.T) {
	forArchs(t, func(e *env) {
		if e.arch != "compute_90" {
			e.t.Skip("sm_90 instructions")
		}
		blocks, block := 3, 64
		n := blocks * block
		x := floats(2*n, 227)
		for i := range x {
			x[i] *= 600
		}
		x[0], x[1], x[2], x[3] = 1000, -1e-9, 0.0625, 448
		want := make([]uint32, 4*n)
		for i := range n {
			a, b := x[2*i], x[2*i+1]
			ea, eb := fp8(a, 4, 3, 7, 448), fp8(b, 4, 3, 7, 448)
			fa, fb := fp8(a, 5, 2, 15, 57344), fp8(b, 5, 2, 15, 57344)
			want[4*i] = uint32(eb)<<8 | uint32(ea)
			want[4*i+1] = uint32(fb)<<8 | uint32(fa)
			want[4*i+2] = uint32(halfBits(fp8Value(eb, 4, 3, 7)))<<16 | halfBits(fp8Value(ea, 4, 3, 7))
			want[4*i+3] = uint32(halfBits(fp8Value(fb, 5, 2, 15)))<<16 | halfBits(fp8Value(fa, 5, 2, 15))
		}
		wantC := make([]uint32, 8*n/32)
		for w := range n / 32 {
			b := uint32(w * 32 / block)
			copy(wantC[8*w:], []uint32{b, uint32(blocks), 0, 1, 0, 1, 0, 1 + 2*0})
		}
		k := e.kernel(sm90Src, "hopper")
		dx, out, cl := up(e, x), zeros[uint32](e, 4*n), zeros[uint32](e, 8*n/32)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(blocks)}, Block: cuda.Dim3{X: uint32(block)}}, dx, out, cl, int32(n))
		same(e, "fp8", down(e, out), want, 0)
		same(e, "cluster registers and elect", down(e, cl), wantC, 0)
	})
}

// fp8 rounds v to nearest even in an FP8 format of ebits exponent and
// mbits mantissa bits with the given bias, saturating to ±maxv
// (satfinite), and returns its bits; NaN is not among the inputs.
func fp8(v float32, ebits, mbits, bias int, maxv float64) uint8 {
	x := float64(v)
	var sign uint8
	if x < 0 {
		sign, x = 0x80, -x
	}
	best, bestD := uint8(0), x
	for c := 0; c < 1<<(ebits+mbits); c++ {
		f := fp8Value(uint8(c), ebits, mbits, bias)
		if f != f || f > maxv {
			continue
		}
		d := f - x
		if d < 0 {
			d = -d
		}
		if d < bestD || d == bestD && c&1 == 0 {
			best, bestD = uint8(c), d
		}
	}
	if x > maxv {
		best = 0
		for c := 0; c < 1<<(ebits+mbits); c++ {
			if fp8Value(uint8(c), ebits, mbits, bias) == maxv {
				best = uint8(c)
			}
		}
	}
	return sign | best
}

// fp8Value decodes an FP8 code (NaN for e4m3's 0x7f and e5m2's
// infinities and NaNs, which the inputs never round to).
func fp8Value(c uint8, ebits, mbits, bias int) float64 {
	sign := 1.0
	if c&0x80 != 0 {
		sign = -1
	}
	e := int(c>>mbits) & (1<<ebits - 1)
	m := int(c) & (1<<mbits - 1)
	if ebits == 4 && e == 15 && m == 7 || ebits == 5 && e == 31 {
		return nan()
	}
	if e == 0 {
		return sign * float64(m) / float64(int(1)<<mbits) * pow2(1-bias)
	}
	return sign * (1 + float64(m)/float64(int(1)<<mbits)) * pow2(e-bias)
}

func pow2(e int) float64 {
	r := 1.0
	for ; e > 0; e-- {
		r *= 2
	}
	for ; e < 0; e++ {
		r /= 2
	}
	return r
}

func nan() float64 {
	z := 0.0
	return z / z
}
