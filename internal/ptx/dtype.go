package ptx

import "math"

// dtype is an instruction's type: its kind (b bits, u unsigned, s signed,
// f float, h f16, B bf16, p predicate) and size in bytes; x2 marks the
// packed pairs f16x2 and bf16x2.
type dtype struct {
	kind byte
	size int
	x2   bool
}

var dtypes = map[string]dtype{
	".b8": {'b', 1, false}, ".b16": {'b', 2, false}, ".b32": {'b', 4, false}, ".b64": {'b', 8, false}, ".b128": {'b', 16, false},
	".u8": {'u', 1, false}, ".u16": {'u', 2, false}, ".u32": {'u', 4, false}, ".u64": {'u', 8, false},
	".s8": {'s', 1, false}, ".s16": {'s', 2, false}, ".s32": {'s', 4, false}, ".s64": {'s', 8, false},
	".f16": {'h', 2, false}, ".f16x2": {'h', 4, true}, ".bf16": {'B', 2, false}, ".bf16x2": {'B', 4, true},
	".u16x2": {'u', 4, true}, ".s16x2": {'s', 4, true},
	".f32": {'f', 4, false}, ".f64": {'f', 8, false}, ".pred": {'p', 1, false}, ".tf32": {'f', 4, false},
}

func (t dtype) isFloat() bool { return t.kind == 'f' || t.kind == 'h' || t.kind == 'B' }
func (t dtype) signed() bool  { return t.kind == 's' }

func (t dtype) mask() uint64 {
	if t.size >= 8 {
		return ^uint64(0)
	}
	return 1<<(8*t.size) - 1
}

// sext sign-extends the low n bytes of v.
func sext(v uint64, n int) int64 {
	if n >= 8 {
		return int64(v)
	}
	s := uint(64 - 8*n)
	return int64(v<<s) >> s
}

// ival reads v as an integer of t, extended to 64 bits by t's sign.
func (t dtype) ival(v uint64) uint64 {
	if t.kind == 's' {
		return uint64(sext(v, t.size))
	}
	return v & t.mask()
}

// fval reads v as a float of t (one half of a pair: the low one).
func (t dtype) fval(v uint64) float64 {
	switch t.kind {
	case 'h':
		return float64(f16ToF32(uint16(v)))
	case 'B':
		return float64(bf16ToF32(uint16(v)))
	}
	if t.size == 4 {
		return float64(math.Float32frombits(uint32(v)))
	}
	return math.Float64frombits(v)
}

// fbits rounds x to t (to nearest) and returns its bits.
func (t dtype) fbits(x float64) uint64 {
	switch t.kind {
	case 'h':
		return uint64(f64ToF16(x))
	case 'B':
		return uint64(f64ToBF16(x))
	}
	if t.size == 4 {
		return uint64(math.Float32bits(float32(x)))
	}
	return math.Float64bits(x)
}

// f64ToF16 rounds once: through float32 would round twice.
func f64ToF16(x float64) uint16 {
	f := float32(x)
	if float64(f) != x && !math.IsNaN(x) && !math.IsInf(x, 0) {
		// make the float32 sticky: nudge its last bit towards x, so the
		// second rounding sees that x was above or below it
		b := math.Float32bits(f)
		if b&1 == 0 {
			if (float64(f) < x) == (f > 0) {
				b++
			} else {
				b--
			}
			f = math.Float32frombits(b)
		}
	}
	return f32ToF16(f)
}

func f64ToBF16(x float64) uint16 {
	f := float32(x)
	if float64(f) != x && !math.IsNaN(x) && !math.IsInf(x, 0) {
		b := math.Float32bits(f)
		if b&1 == 0 {
			if (float64(f) < x) == (f > 0) {
				b++
			} else {
				b--
			}
			f = math.Float32frombits(b)
		}
	}
	return f32ToBF16(f)
}
