package ptx

import (
	"math"
	"math/big"
)

// Floating-point arithmetic of PTX's float types with its modifiers:
// rounding (.rn, the default, and .rz, .rm, .rp, done exactly with
// math/big), .ftz (subnormal inputs and results of f32 flushed to zero)
// and .sat (results clamped to [0, 1], NaN to 0).

type fop int

const (
	fAdd fop = iota
	fSub
	fMul
	fDiv
	fFma
	fSqrt
	fRcp
	fRsqrt
	fMin
	fMax
	fNeg
	fAbs
	fSin
	fCos
	fLg2
	fEx2
	fTanh
	fCopysign
	fMinNaN
	fMaxNaN
)

type fmods struct {
	mode byte // 'n', 'z', 'm', 'p'
	ftz  bool
	sat  bool
	relu bool
}

func flush32(x float64) float64 {
	if x != 0 && math.Abs(x) < 0x1p-126 {
		return math.Copysign(0, x)
	}
	return x
}

// fcalc computes one lane's f of type t (not a pair) on operand bits.
func fcalc(f fop, t dtype, md fmods, a, b, c uint64) uint64 {
	x, y, z := t.fval(a), t.fval(b), t.fval(c)
	if md.ftz && t.kind == 'f' && t.size == 4 {
		x, y, z = flush32(x), flush32(y), flush32(z)
	}
	var r float64
	exact := md.mode != 'n' && t.kind == 'f'
	switch f {
	case fAdd, fSub, fMul, fDiv, fFma, fSqrt, fRcp:
		if exact {
			r = directed(f, t, md.mode, x, y, z)
			break
		}
		if t.kind == 'f' && t.size == 4 {
			fx, fy := float32(x), float32(y)
			var fr float32
			switch f {
			case fAdd:
				fr = fx + fy
			case fSub:
				fr = fx - fy
			case fMul:
				fr = fx * fy
			case fDiv:
				fr = fx / fy
			case fFma:
				fr = float32(roundOdd(x, y, z))
			case fSqrt:
				fr = float32(math.Sqrt(x))
			case fRcp:
				fr = 1 / fx
			}
			r = float64(fr)
			break
		}
		switch f {
		case fAdd:
			r = x + y
		case fSub:
			r = x - y
		case fMul:
			r = x * y
		case fDiv:
			r = x / y
		case fFma:
			if t.size == 8 {
				r = math.FMA(x, y, z)
			} else {
				r = roundOdd(x, y, z)
			}
		case fSqrt:
			r = math.Sqrt(x)
		case fRcp:
			r = 1 / x
		}
	case fRsqrt:
		r = 1 / math.Sqrt(x)
	case fMin, fMinNaN:
		r = fminmax(x, y, true, f == fMinNaN)
	case fMax, fMaxNaN:
		r = fminmax(x, y, false, f == fMaxNaN)
	case fNeg:
		r = -x
	case fAbs:
		r = math.Abs(x)
	case fSin:
		r = math.Sin(x)
	case fCos:
		r = math.Cos(x)
	case fLg2:
		r = math.Log2(x)
	case fEx2:
		r = math.Exp2(x)
	case fTanh:
		r = math.Tanh(x)
	case fCopysign:
		// copysign d, a, b: b's magnitude, a's sign
		r = math.Copysign(y, x)
	}
	if md.relu && (r < 0 || math.IsNaN(r)) {
		r = 0
	}
	if md.sat {
		if math.IsNaN(r) || r < 0 {
			r = 0
		} else if r > 1 {
			r = 1
		}
	}
	if md.ftz && t.kind == 'f' && t.size == 4 {
		r = flush32(float64(float32(r)))
	}
	if f == fNeg || f == fAbs {
		// sign operations keep NaN payloads and work on the bits
		sb := uint64(1) << (8*t.size - 1)
		if t.size == 8 {
			sb = 1 << 63
		}
		if f == fNeg {
			return (a ^ sb) & t.mask()
		}
		return a &^ sb & t.mask()
	}
	return t.fbits(r)
}

func fminmax(x, y float64, isMin, propagate bool) float64 {
	if math.IsNaN(x) || math.IsNaN(y) {
		if propagate || (math.IsNaN(x) && math.IsNaN(y)) {
			return math.NaN()
		}
		if math.IsNaN(x) {
			return y
		}
		return x
	}
	if x == y && x == 0 {
		// -0 is less than +0 for min and max
		if isMin == math.Signbit(x) {
			return x
		}
		return y
	}
	if (x < y) == isMin {
		return x
	}
	return y
}

// roundOdd returns x*y+z for operands of at most 26 significant bits
// (f32, f16, bf16), rounded to float64 by rounding to odd, so that the
// second rounding to the narrower type is the correctly rounded fma: the
// product is exact in float64, and the sum's error is found exactly
// (Knuth's two-sum).
func roundOdd(x, y, z float64) float64 {
	p := x * y
	s := p + z
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return s
	}
	bb := s - p
	e := (p - (s - bb)) + (z - bb)
	if e != 0 {
		b := math.Float64bits(s)
		if b&1 == 0 {
			if (e > 0) == (s > 0) {
				b++
			} else {
				b--
			}
			s = math.Float64frombits(b)
		}
	}
	return s
}

// directed computes f exactly and rounds it to t with mode.
func directed(f fop, t dtype, mode byte, x, y, z float64) float64 {
	if math.IsNaN(x) || math.IsNaN(y) || math.IsNaN(z) || math.IsInf(x, 0) || math.IsInf(y, 0) || math.IsInf(z, 0) || (f == fDiv && y == 0) || (f == fRcp && x == 0) || (f == fSqrt && x <= 0) {
		switch f {
		case fAdd:
			return x + y
		case fSub:
			return x - y
		case fMul:
			return x * y
		case fDiv:
			return x / y
		case fFma:
			return math.FMA(x, y, z)
		case fSqrt:
			return math.Sqrt(x)
		case fRcp:
			return 1 / x
		}
	}
	prec := uint(24)
	if t.size == 8 {
		prec = 53
	}
	m := map[byte]big.RoundingMode{'z': big.ToZero, 'm': big.ToNegativeInf, 'p': big.ToPositiveInf}[mode]
	bx, by, bz := new(big.Float).SetFloat64(x), new(big.Float).SetFloat64(y), new(big.Float).SetFloat64(z)
	r := new(big.Float).SetPrec(prec).SetMode(m)
	switch f {
	case fAdd:
		r.Add(bx, by)
	case fSub:
		r.Sub(bx, by)
	case fMul:
		r.Mul(bx, by)
	case fDiv:
		r.Quo(bx, by)
	case fRcp:
		r.Quo(big.NewFloat(1), bx)
	case fSqrt:
		r.Sqrt(bx)
	case fFma:
		p := new(big.Float).SetPrec(200).Mul(bx, by)
		r.Add(p, bz)
	}
	v, _ := r.Float64()
	if t.size == 4 {
		v32, _ := r.Float32()
		return float64(v32)
	}
	return v
}

// roundInt rounds x to an integer by mode: 'n' nearest even, 'z', 'm', 'p'.
func roundInt(x float64, mode byte) float64 {
	switch mode {
	case 'z':
		return math.Trunc(x)
	case 'm':
		return math.Floor(x)
	case 'p':
		return math.Ceil(x)
	}
	return math.RoundToEven(x)
}

// format is a floating-point type's shape: significand bits (the
// implicit one included) and the exponents of its smallest and largest
// normal numbers.
func (t dtype) format() (prec uint, emin, emax int) {
	switch {
	case t.kind == 'h':
		return 11, -14, 15
	case t.kind == 'B':
		return 8, -126, 127
	case t.size == 4:
		return 24, -126, 127
	}
	return 53, -1022, 1023
}

// roundBits rounds the exact value x to t by mode ('n', 'z', 'm', 'p'),
// subnormals and overflow included, and returns its bits.
func roundBits(t dtype, mode byte, x *big.Float) uint64 {
	if x.Sign() == 0 {
		if x.Signbit() {
			return t.fbits(math.Copysign(0, -1))
		}
		return 0
	}
	bm := map[byte]big.RoundingMode{'n': big.ToNearestEven, 'z': big.ToZero, 'm': big.ToNegativeInf, 'p': big.ToPositiveInf}[mode]
	prec, emin, emax := t.format()
	neg := x.Signbit()
	var r *big.Float
	if e := x.MantExp(nil) - 1; e < emin {
		// a subnormal: round to a multiple of the smallest one, as an
		// integer of that unit with as many bits as it needs
		shift := emin - int(prec) + 1
		q := new(big.Float).SetMantExp(x, -shift)
		var qi *big.Float
		if bits := q.MantExp(nil); bits >= 1 {
			qi = new(big.Float).SetMode(bm).SetPrec(uint(bits)).Set(q)
		} else {
			qi = roundTiny(q, mode, neg)
		}
		r = new(big.Float).SetMantExp(qi, shift)
	} else {
		r = new(big.Float).SetMode(bm).SetPrec(prec).Set(x)
	}
	if r.MantExp(nil)-1 > emax {
		inf := mode == 'n' || mode == 'p' && !neg || mode == 'm' && neg
		v := math.Inf(1)
		if !inf {
			v = math.Ldexp(2-math.Ldexp(1, 1-int(prec)), emax)
		}
		if neg {
			v = -v
		}
		return t.fbits(v)
	}
	v, _ := r.Float64()
	return t.fbits(v)
}

// roundTiny rounds q, of a magnitude below one unit, to 0 or 1 unit
// (ties to even: to 0).
func roundTiny(q *big.Float, mode byte, neg bool) *big.Float {
	a := new(big.Float).Abs(q)
	one := false
	switch mode {
	case 'n':
		one = a.Cmp(big.NewFloat(0.5)) > 0
	case 'p':
		one = !neg
	case 'm':
		one = neg
	}
	if !one {
		if neg {
			return new(big.Float).Neg(new(big.Float))
		}
		return new(big.Float)
	}
	if neg {
		return big.NewFloat(-1)
	}
	return big.NewFloat(1)
}
