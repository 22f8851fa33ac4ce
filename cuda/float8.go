package cuda

import "math"

// Float8E4M3 is an 8-bit floating-point number of the OCP's E4M3 format
// (E4M3FN to LLVM, float8_e4m3fn to PyTorch): a sign, 4 exponent bits of
// bias 7 and 3 mantissa bits, laid out as CUDA's __nv_fp8_e4m3 and
// cuBLAS's CUDA_R_8F_E4M3. It has no infinities, and its only NaNs are
// S.1111.111 (0x7f and 0xff), so that its largest number is 448 (0x7e) and
// its smallest above zero 2⁻⁹. It is an Element, and follows the rules of
// Float16. Kernel.Launch and NewArgs do not take it: pass its Bits.
type Float8E4M3 struct{ bits uint8 }

// Float8E5M2 is an 8-bit floating-point number of the E5M2 format: a sign,
// 5 exponent bits of bias 15 and 2 mantissa bits, laid out as CUDA's
// __nv_fp8_e5m2 and cuBLAS's CUDA_R_8F_E5M2. It is binary16 cut to its top
// byte, with infinities (0x7c and 0xfc) and NaNs as IEEE 754 has them; its
// largest number is 57344 (0x7b), its smallest above zero 2⁻¹⁶. It is an
// Element, and follows the rules of Float16. Kernel.Launch and NewArgs do
// not take it: pass its Bits.
type Float8E5M2 struct{ bits uint8 }

// ToFloat8E4M3 returns f rounded to the nearest Float8E4M3, ties to even,
// saturating as CUDA's __nv_cvt_float_to_fp8 does with __NV_SATFINITE (the
// conversion of __nv_fp8_e4m3's constructors): magnitudes above 448,
// infinities included, become ±448; those of 2⁻¹⁰ and below zeros of f's
// sign; and a NaN becomes the NaN 0x7f, whatever its sign. PyTorch's
// float8_e4m3fn conversion differs out of range: it does not saturate, and
// makes magnitudes above 464 and infinities NaNs of their sign.
func ToFloat8E4M3(f float32) Float8E4M3 {
	return Float8E4M3{toFloat8(f, 3, -6, 0x43e00000, 0x7e)}
}

// Float8E4M3FromBits returns the Float8E4M3 whose encoding is b.
func Float8E4M3FromBits(b uint8) Float8E4M3 { return Float8E4M3{b} }

// Bits returns the encoding of h.
func (h Float8E4M3) Bits() uint8 { return h.bits }

// Float32 returns h as a float32, exactly: every Float8E4M3 is a float32.
// A NaN gives a quiet NaN of the same sign.
func (h Float8E4M3) Float32() float32 {
	b := uint32(h.bits)
	sign := b & 0x80 << 24
	switch {
	case b&0x7f == 0x7f:
		return math.Float32frombits(sign | 0x7fc00000)
	case b&0x78 == 0: // zero or subnormal: its mantissa times 2⁻⁹
		return math.Float32frombits(sign | math.Float32bits(float32(b&7)*0x1p-9))
	}
	// Rebias the exponent from 7 to 127 and move both fields into place.
	return math.Float32frombits(sign | (b&0x7f+120<<3)<<20)
}

// IsNaN reports whether h is a NaN.
func (h Float8E4M3) IsNaN() bool { return h.bits&0x7f == 0x7f }

// String formats h as the shortest decimal that reads back as h without
// saturating (448 as 448, not 450).
func (h Float8E4M3) String() string {
	return formatShort(h.Float32(), func(f float32) bool {
		return math.Abs(float64(f)) <= 448 && ToFloat8E4M3(f) == h
	})
}

// ToFloat8E5M2 returns f rounded to the nearest Float8E5M2, ties to even,
// saturating as CUDA's __nv_cvt_float_to_fp8 does with __NV_SATFINITE (the
// conversion of __nv_fp8_e5m2's constructors): magnitudes above 57344,
// infinities included, become ±57344, so that no infinity comes out; those
// of 2⁻¹⁷ and below become zeros of f's sign; and a NaN becomes the NaN
// 0x7f, whatever its sign and payload. PyTorch's float8_e5m2 conversion
// differs out of range: it does not saturate, and makes magnitudes from
// 61440 up infinities, keeps infinities, and keeps the sign of a NaN.
func ToFloat8E5M2(f float32) Float8E5M2 {
	return Float8E5M2{toFloat8(f, 2, -14, 0x47600000, 0x7b)}
}

// Float8E5M2FromBits returns the Float8E5M2 whose encoding is b: the top
// byte of a Float16's.
func Float8E5M2FromBits(b uint8) Float8E5M2 { return Float8E5M2{b} }

// Bits returns the encoding of h: the top byte of a Float16's.
func (h Float8E5M2) Bits() uint8 { return h.bits }

// Float32 returns h as a float32, exactly: every Float8E5M2 is a float32.
// A NaN stays a NaN of the same sign and payload, made quiet.
func (h Float8E5M2) Float32() float32 { return Float16FromBits(uint16(h.bits) << 8).Float32() }

// IsNaN reports whether h is a NaN.
func (h Float8E5M2) IsNaN() bool { return h.bits&0x7f > 0x7c }

// String formats h as the shortest decimal that reads back as h without
// saturating (57344 as 57000, not 60000).
func (h Float8E5M2) String() string {
	return formatShort(h.Float32(), func(f float32) bool {
		return math.Abs(float64(f)) <= 57344 && ToFloat8E5M2(f) == h
	})
}

// toFloat8 rounds f to the 8-bit format of man mantissa bits whose
// smallest normal exponent is emin, ties to even, as ToFloat8E4M3 and
// ToFloat8E5M2 say: magnitudes above the largest number, whose float32
// encoding is limit and whose own is max, become it.
func toFloat8(f float32, man, emin int, limit uint32, max uint8) uint8 {
	b := math.Float32bits(f)
	sign := uint8(b>>24) & 0x80
	a := b &^ 0x80000000
	switch {
	case a > 0x7f800000: // NaN
		return 0x7f
	case a > limit:
		return sign | max
	}
	// e is f's exponent (wrong for float32 subnormals, which round to zero
	// either way).
	if e := int(a>>23) - 127; e < emin {
		// A subnormal: count units of 2^(emin-man) in the significand,
		// implicit bit included. A count of 1<<man is the smallest normal
		// number's encoding.
		return sign | uint8(roundShift(a&0x7fffff|0x800000, 23+emin-man-e))
	}
	// A normal number: rebias the exponent (to e-emin+1) and drop
	// mantissa bits; a carry out of the mantissa goes into the exponent.
	return sign | uint8(roundShift(a-uint32(127+emin-1)<<23, 23-man))
}

// roundShift returns x / 2^shift (shift > 0) rounded to the nearest
// integer, ties to even.
func roundShift(x uint32, shift int) uint32 {
	if shift > 25 { // x < 2²⁴, below half a unit
		return 0
	}
	q, rem, half := x>>shift, x&(1<<shift-1), uint32(1)<<(shift-1)
	if rem > half || rem == half && q&1 == 1 {
		q++
	}
	return q
}

// ToFloat8E4M3s returns src rounded to Float8E4M3s, each as ToFloat8E4M3
// does.
func ToFloat8E4M3s(src []float32) []Float8E4M3 { return roundAll(src, ToFloat8E4M3) }

// ToFloat8E5M2s returns src rounded to Float8E5M2s, each as ToFloat8E5M2
// does.
func ToFloat8E5M2s(src []float32) []Float8E5M2 { return roundAll(src, ToFloat8E5M2) }
