package ptxsuite_test

import (
	"math/bits"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
)

const intrinSrc = `
extern "C" __global__ void intrin(const unsigned *x, const unsigned *y, const long long *a, const long long *b,
		unsigned *o, unsigned long long *o64, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	unsigned u = x[i], v = y[i];
	int s = (int)u, w = (int)v;
	long long p = a[i], q = b[i];
	unsigned prmt;
	asm("prmt.b32 %0, %1, %2, %3;" : "=r"(prmt) : "r"(u), "r"(v), "r"(v >> 3));
	unsigned *r = o + 24 * i;
	r[0] = __funnelshift_r(u, v, i & 63);
	r[1] = __funnelshift_lc(u, v, i & 63);
	r[2] = __funnelshift_rc(u, v, i & 63);
	r[3] = __byte_perm(u, v, v & 0x7777);
	r[4] = prmt;
	r[5] = __brev(u);
	r[6] = __clzll(p);
	r[7] = __ffsll(p);
	r[8] = __popcll(q);
	r[9] = __sad(s, w, 5u);
	r[10] = __usad(u, v, 7u);
	r[11] = __dp4a(s, w, 100);
	r[12] = __dp4a(u, v, 3u);
	r[13] = __dp2a_lo(s, w, -7);
	r[14] = __dp2a_hi(u, v, 9u);
	int s24 = s << 9 >> 9, w24 = w << 9 >> 9;
	r[15] = __mul24(s24, w24);
	r[16] = __umul24(u & 0xffffff, v & 0xffffff);
	r[17] = __mulhi(s, w);
	r[18] = __hadd(s, w);
	r[19] = __rhadd(s, w);
	r[20] = __uhadd(u, v);
	r[21] = __urhadd(u, v);
	r[22] = __fns(u, i & 31, (i % 7) - 3);
	r[23] = __ffs(s) + 64 * __clz(s);
	unsigned long long *r64 = o64 + 8 * i;
	r64[0] = __mul64hi(p, q);
	r64[1] = __umul64hi(p, q);
	r64[2] = q ? p / q : 0;
	r64[3] = q ? p % q : 0;
	r64[4] = q ? (unsigned long long)p / ((unsigned long long)q >> (i & 15)) : 0;
	r64[5] = q ? (unsigned long long)p % ((unsigned long long)q >> (i & 15)) : 0;
	r64[6] = __brevll(p);
	r64[7] = p >> (i & 63);
}`

// Bit, byte, SIMD-dot and multiply-high intrinsics, funnel shifts that
// wrap and clamp, __fns, and 64-bit division and remainder, signed and
// unsigned.
func TestIntegerIntrinsics(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 500
		x, y := ints(n, 109, 1<<31), ints(n, 113, 1<<31)
		a, b := make([]int64, n), make([]int64, n)
		r := rng(127)
		for i := range x {
			x[i] |= uint32(r.next()) & 0x80000000
			y[i] ^= uint32(r.next()) & 0x80000000
			a[i] = int64(r.next())
			b[i] = int64(r.next()) >> (r.next() % 60)
		}
		x[0], a[0], b[1], a[2] = 0, 0, 0, -1<<63
		b[2] = 3
		want := make([]uint32, 24*n)
		want64 := make([]uint64, 8*n)
		for i := range n {
			u, v := x[i], y[i]
			s, w := int32(u), int32(v)
			p, q := a[i], b[i]
			o := want[24*i : 24*i+24]
			wide := uint64(v)<<32 | uint64(u)
			o[0] = uint32(wide >> (uint(i) & 31))
			c := min(uint(i&63), 32)
			o[1] = uint32(wide << c >> 32)
			o[2] = uint32(wide >> c)
			o[3] = perm(u, v, v&0x7777)
			o[4] = perm(u, v, v>>3)
			o[5] = bits.Reverse32(u)
			o[6] = uint32(bits.LeadingZeros64(uint64(p)))
			if p != 0 {
				o[7] = uint32(bits.TrailingZeros64(uint64(p))) + 1
			}
			o[8] = uint32(bits.OnesCount64(uint64(q)))
			o[9] = uint32(absDiff(int64(s), int64(w))) + 5
			o[10] = uint32(absDiff(int64(u), int64(v))) + 7
			var d4s int32 = 100
			var d4u uint32 = 3
			for k := range 4 {
				d4s += int32(int8(u>>(8*k))) * int32(int8(v>>(8*k)))
				d4u += (u >> (8 * k) & 0xff) * (v >> (8 * k) & 0xff)
			}
			o[11], o[12] = uint32(d4s), d4u
			o[13] = uint32(-7 + int32(int16(u))*int32(int8(v)) + int32(int16(u>>16))*int32(int8(v>>8)))
			o[14] = 9 + (u&0xffff)*(v>>16&0xff) + (u>>16)*(v>>24)
			s24, w24 := s<<9>>9, w<<9>>9
			o[15] = uint32(s24 * w24)
			o[16] = (u & 0xffffff) * (v & 0xffffff)
			o[17] = uint32((int64(s) * int64(w)) >> 32)
			o[18] = uint32((int64(s) + int64(w)) >> 1)
			o[19] = uint32((int64(s) + int64(w) + 1) >> 1)
			o[20] = uint32((uint64(u) + uint64(v)) >> 1)
			o[21] = uint32((uint64(u) + uint64(v) + 1) >> 1)
			o[22] = fns(u, uint32(i&31), int32(i%7)-3)
			ffs := uint32(0)
			if s != 0 {
				ffs = uint32(bits.TrailingZeros32(u)) + 1
			}
			o[23] = ffs + 64*uint32(bits.LeadingZeros32(u))
			o64 := want64[8*i : 8*i+8]
			hi, _ := bits.Mul64(uint64(p), uint64(q))
			shi := int64(hi)
			if p < 0 {
				shi -= q
			}
			if q < 0 {
				shi -= p
			}
			o64[0], o64[1] = uint64(shi), hi
			if q != 0 {
				if !(p == -1<<63 && q == -1) {
					o64[2], o64[3] = uint64(p/q), uint64(p%q)
				} else {
					o64[2], o64[3] = uint64(p), 0
				}
				dq := uint64(q) >> (i & 15)
				if dq == 0 {
					o64[4], o64[5] = ^uint64(0), uint64(p)
				} else {
					o64[4], o64[5] = uint64(p)/dq, uint64(p)%dq
				}
			}
			o64[6] = bits.Reverse64(uint64(p))
			o64[7] = uint64(p >> (i & 63))
		}
		k := e.kernel(intrinSrc, "intrin")
		dx, dy, da, db := up(e, x), up(e, y), up(e, a), up(e, b)
		o, o64 := zeros[uint32](e, 24*n), zeros[uint64](e, 8*n)
		e.launch(k, cuda.Linear(n, 64), dx, dy, da, db, o, o64, int32(n))
		got := down(e, o)
		bad := 0
		for i := range got {
			if got[i] != want[i] && bad < 8 {
				e.t.Errorf("thread %d result %d = %#x, want %#x (x %#x y %#x)", i/24, i%24, got[i], want[i], x[i/24], y[i/24])
				bad++
			}
		}
		got64 := down(e, o64)
		for i := range got64 {
			// Division by a zero quotient (q >> k == 0) is undefined in
			// C++: its results are not compared.
			if (i%8 == 4 || i%8 == 5) && uint64(b[i/8])>>(i/8&15) == 0 {
				continue
			}
			if got64[i] != want64[i] && bad < 16 {
				e.t.Errorf("thread %d 64-bit result %d = %#x, want %#x (a %#x b %#x)", i/8, i%8, got64[i], want64[i], a[i/8], b[i/8])
				bad++
			}
		}
	})
}

// perm is prmt.b32's default mode: each selector nibble picks one of the
// eight bytes of b:a, its top bit replicating that byte's sign instead.
func perm(a, b, sel uint32) uint32 {
	bs := uint64(b)<<32 | uint64(a)
	var out uint32
	for k := range 4 {
		nib := sel >> (4 * k) & 0xf
		by := uint32(bs >> (8 * (nib & 7)) & 0xff)
		if nib&8 != 0 {
			if by&0x80 != 0 {
				by = 0xff
			} else {
				by = 0
			}
		}
		out |= by << (8 * k)
	}
	return out
}

func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}

// fns finds the position of the n-th set bit of mask from base, upward
// for a positive n and downward for a negative one (n == 0 is base
// itself when set), or 0xffffffff.
func fns(mask, base uint32, offset int32) uint32 {
	if offset == 0 {
		if mask>>base&1 != 0 {
			return base
		}
		return ^uint32(0)
	}
	step, need := int32(1), offset
	if offset < 0 {
		step, need = -1, -offset
	}
	for p := int32(base); p >= 0 && p < 32; p += step {
		if mask>>p&1 != 0 {
			need--
			if need == 0 {
				return uint32(p)
			}
		}
	}
	return ^uint32(0)
}

const wideSrc = `
extern "C" __global__ void wide(const unsigned long long *a, const unsigned long long *b, unsigned long long *out, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n) return;
	unsigned long long al = a[2 * i], ah = a[2 * i + 1], bl = b[2 * i], bh = b[2 * i + 1];
	unsigned long long sl, sh, dl, dh;
	asm("add.cc.u64 %0, %2, %4;\n\taddc.u64 %1, %3, %5;" : "=l"(sl), "=l"(sh) : "l"(al), "l"(ah), "l"(bl), "l"(bh));
	asm("sub.cc.u64 %0, %2, %4;\n\tsubc.u64 %1, %3, %5;" : "=l"(dl), "=l"(dh) : "l"(al), "l"(ah), "l"(bl), "l"(bh));
	// A 64×64 → 128-bit product in 32-bit limbs with carry chains.
	unsigned a0 = (unsigned)al, a1 = (unsigned)(al >> 32), b0 = (unsigned)bl, b1 = (unsigned)(bl >> 32);
	unsigned p0, p1, p2, p3;
	asm("{\n\t"
		"mul.lo.u32 %0, %4, %6;\n\t"
		"mul.hi.u32 %1, %4, %6;\n\t"
		"mad.lo.cc.u32 %1, %5, %6, %1;\n\t"
		"madc.hi.u32 %2, %5, %6, 0;\n\t"
		"mad.lo.cc.u32 %1, %4, %7, %1;\n\t"
		"madc.hi.cc.u32 %2, %4, %7, %2;\n\t"
		"addc.u32 %3, 0, 0;\n\t"
		"mad.lo.cc.u32 %2, %5, %7, %2;\n\t"
		"madc.hi.u32 %3, %5, %7, %3;\n\t"
		"}" : "=r"(p0), "=&r"(p1), "=&r"(p2), "=&r"(p3) : "r"(a0), "r"(a1), "r"(b0), "r"(b1));
	unsigned __int128 x = ((unsigned __int128)ah << 64) | al, y = ((unsigned __int128)bh << 64) | bl;
	unsigned __int128 prod = x * y, quo = y ? x / (y >> 70 | 1) : 0, rem = y ? x % (y >> 70 | 1) : 0;
	__int128 sx = (__int128)x >> 3;
	out[12 * i + 0] = sl;
	out[12 * i + 1] = sh;
	out[12 * i + 2] = dl;
	out[12 * i + 3] = dh;
	out[12 * i + 4] = (unsigned long long)p1 << 32 | p0;
	out[12 * i + 5] = (unsigned long long)p3 << 32 | p2;
	out[12 * i + 6] = (unsigned long long)prod;
	out[12 * i + 7] = (unsigned long long)(prod >> 64);
	out[12 * i + 8] = (unsigned long long)quo;
	out[12 * i + 9] = (unsigned long long)rem;
	out[12 * i + 10] = (unsigned long long)sx;
	out[12 * i + 11] = (unsigned long long)(sx >> 64);
}`

// 128-bit arithmetic: add.cc/addc and sub.cc/subc chains, a multi-limb
// multiply with mad.cc/madc, and unsigned __int128 multiply, divide and
// shift as NVRTC compiles them.
func TestWideArithmetic(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 300
		r := rng(131)
		a, b := make([]uint64, 2*n), make([]uint64, 2*n)
		for i := range a {
			a[i], b[i] = r.next(), r.next()
		}
		b[1] = 0
		want := make([]uint64, 12*n)
		for i := range n {
			al, ah, bl, bh := a[2*i], a[2*i+1], b[2*i], b[2*i+1]
			o := want[12*i : 12*i+12]
			var c uint64
			o[0], c = bits.Add64(al, bl, 0)
			o[1], _ = bits.Add64(ah, bh, c)
			o[2], c = bits.Sub64(al, bl, 0)
			o[3], _ = bits.Sub64(ah, bh, c)
			o[5], o[4] = bits.Mul64(al, bl)
			// (ah:al)*(bh:bl) mod 2^128.
			h, l := bits.Mul64(al, bl)
			h += ah*bl + al*bh
			o[6], o[7] = l, h
			d := bh>>6 | 1 // y >> 70 | 1, which fits 64 bits
			if bh == 0 && bl == 0 {
				o[8], o[9] = 0, 0
			} else {
				qh := ah / d
				ql, rem := bits.Div64(ah%d, al, d)
				_ = qh
				o[8], o[9] = ql, rem
			}
			o[10] = ah<<61 | al>>3
			o[11] = uint64(int64(ah) >> 3)
		}
		k := e.kernel(wideSrc, "wide", nvrtc.WithOptions("--device-int128"))
		da, db, out := up(e, a), up(e, b), zeros[uint64](e, 12*n)
		e.launch(k, cuda.Linear(n, 64), da, db, out, int32(n))
		got := down(e, out)
		bad := 0
		for i := range got {
			if got[i] != want[i] && bad < 8 {
				e.t.Errorf("thread %d result %d = %#x, want %#x", i/12, i%12, got[i], want[i])
				bad++
			}
		}
	})
}
