package cuda

import (
	"math"
	"strconv"

	"github.com/x448/float16"
)

// Float16 is an IEEE 754 half-precision number (binary16: a sign, 5
// exponent bits and 10 mantissa bits), laid out as CUDA's __half and
// cuBLAS's CUDA_R_16F. It is an Element: slices of it copy to and from
// device memory like any number.
//
// Go does no arithmetic on it: make one with ToFloat16 (or
// Float16FromBits) and read it with Float32. It is a struct, not a named
// uint16, so that neither integer arithmetic on its bits nor a conversion
// such as Float16(x), which would take x as bits, compiles. The zero value
// is +0; == compares bits (so NaN equals the same NaN, and +0 differs from
// -0).
type Float16 struct{ bits uint16 }

// BFloat16 is a bfloat16 number: float32's sign and 8 exponent bits with 7
// bits of mantissa, laid out as CUDA's __nv_bfloat16 and cuBLAS's
// CUDA_R_16BF. It is an Element, and follows the rules of Float16.
type BFloat16 struct{ bits uint16 }

// ToFloat16 returns f rounded to the nearest Float16, ties to even (IEEE
// 754's default rounding): magnitudes from 65520 up become infinities,
// those below 2⁻²⁵ zeros of f's sign, and a NaN stays a NaN of the same
// sign and payload (as far as 10 bits hold it), made quiet. It uses
// github.com/x448/float16, tested on all 2³² float32 values by its author.
func ToFloat16(f float32) Float16 { return Float16{uint16(float16.Fromfloat32(f))} }

// Float16FromBits returns the Float16 whose IEEE 754 binary16 encoding is b.
func Float16FromBits(b uint16) Float16 { return Float16{b} }

// Bits returns the IEEE 754 binary16 encoding of h.
func (h Float16) Bits() uint16 { return h.bits }

// Float32 returns h as a float32, exactly: every Float16 is a float32.
// A NaN stays a NaN of the same sign and payload, made quiet.
func (h Float16) Float32() float32 { return float16.Frombits(h.bits).Float32() }

// IsNaN reports whether h is a NaN.
func (h Float16) IsNaN() bool { return h.bits&0x7c00 == 0x7c00 && h.bits&0x03ff != 0 }

// String formats h as the shortest decimal that reads back as h.
func (h Float16) String() string {
	return formatShort(h.Float32(), func(f float32) bool { return ToFloat16(f) == h })
}

// ToBFloat16 returns f rounded to the nearest BFloat16, ties to even:
// magnitudes from 2¹²⁸·(1-2⁻⁹) up become infinities, and a NaN stays a NaN
// of the same sign and payload (its top 7 bits), made quiet.
func ToBFloat16(f float32) BFloat16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep sign and payload, set the quiet bit
		return BFloat16{uint16(b>>16) | 0x0040}
	}
	// Add just under half the dropped part's unit, plus one when the kept
	// part is odd: a carry out of the dropped half is nearest-even rounding,
	// and one into the exponent rounds up to the next binade or to infinity.
	b += 0x7fff + (b>>16)&1
	return BFloat16{uint16(b >> 16)}
}

// BFloat16FromBits returns the BFloat16 whose encoding is b: the top half
// of a float32's.
func BFloat16FromBits(b uint16) BFloat16 { return BFloat16{b} }

// Bits returns the encoding of h: the top half of a float32's.
func (h BFloat16) Bits() uint16 { return h.bits }

// Float32 returns h as a float32, exactly: every BFloat16 is a float32.
func (h BFloat16) Float32() float32 { return math.Float32frombits(uint32(h.bits) << 16) }

// IsNaN reports whether h is a NaN.
func (h BFloat16) IsNaN() bool { return h.bits&0x7f80 == 0x7f80 && h.bits&0x007f != 0 }

// String formats h as the shortest decimal that reads back as h.
func (h BFloat16) String() string {
	return formatShort(h.Float32(), func(f float32) bool { return ToBFloat16(f) == h })
}

// formatShort formats f, a value of a narrow type, as the shortest
// decimal that same says converts back to that value (as NumPy prints its
// float16: 65504 as 65500).
func formatShort(f float32, same func(float32) bool) string {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return strconv.FormatFloat(float64(f), 'g', -1, 32)
	}
	for digits := range 9 {
		v, err := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'e', digits, 32), 64)
		if err == nil && same(float32(v)) {
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
	}
	return strconv.FormatFloat(float64(f), 'g', -1, 32)
}

// roundAll returns src rounded element by element by round.
func roundAll[T any](src []float32, round func(float32) T) []T {
	dst := make([]T, len(src))
	for i, f := range src {
		dst[i] = round(f)
	}
	return dst
}

// ToFloat16s returns src rounded to Float16s, each as ToFloat16 does.
func ToFloat16s(src []float32) []Float16 { return roundAll(src, ToFloat16) }

// ToBFloat16s returns src rounded to BFloat16s, each as ToBFloat16 does.
func ToBFloat16s(src []float32) []BFloat16 { return roundAll(src, ToBFloat16) }

// Float32s returns src (Float16s, BFloat16s, Float8E4M3s or Float8E5M2s)
// as float32s, exactly.
func Float32s[T interface {
	Float16 | BFloat16 | Float8E4M3 | Float8E5M2
	Float32() float32
}](src []T) []float32 {
	dst := make([]float32, len(src))
	for i, h := range src {
		dst[i] = h.Float32()
	}
	return dst
}
