package cuda

import (
	"math"
	"slices"
	"testing"
)

// fp8 describes Float8E4M3 or Float8E5M2 to the tests, from its fields.
type fp8 struct {
	name     string
	manBits  int // mantissa bits; the exponent has 7-manBits
	bias     int
	ieee     bool  // an all-ones exponent is Inf or NaN; otherwise only S.1111.111 is NaN
	maxEnc   uint8 // the encoding of the largest number
	round    func(float32) uint8
	float32  func(uint8) float32
	isNaN    func(uint8) bool
	toString func(uint8) string
}

var fp8s = []fp8{
	{"Float8E4M3", 3, 7, false, 0x7e,
		func(f float32) uint8 { return ToFloat8E4M3(f).Bits() },
		func(b uint8) float32 { return Float8E4M3FromBits(b).Float32() },
		func(b uint8) bool { return Float8E4M3FromBits(b).IsNaN() },
		func(b uint8) string { return Float8E4M3FromBits(b).String() }},
	{"Float8E5M2", 2, 15, true, 0x7b,
		func(f float32) uint8 { return ToFloat8E5M2(f).Bits() },
		func(b uint8) float32 { return Float8E5M2FromBits(b).Float32() },
		func(b uint8) bool { return Float8E5M2FromBits(b).IsNaN() },
		func(b uint8) string { return Float8E5M2FromBits(b).String() }},
}

// value decodes b from its sign, exponent and mantissa fields; infinities
// are ±Inf, NaNs NaN.
func (n fp8) value(b uint8) float64 {
	sign := 1.0
	if b&0x80 != 0 {
		sign = -1
	}
	allOnes := 1<<(7-n.manBits) - 1
	exp := int(b&0x7f) >> n.manBits
	man := int(b) & (1<<n.manBits - 1)
	switch {
	case n.ieee && exp == allOnes && man == 0:
		return math.Inf(int(sign))
	case n.ieee && exp == allOnes, !n.ieee && exp == allOnes && man == 1<<n.manBits-1:
		return math.NaN()
	case exp == 0: // subnormal or zero
		return sign * math.Ldexp(float64(man), 1-n.bias-n.manBits)
	}
	return sign * math.Ldexp(1+float64(man)/float64(int(1)<<n.manBits), exp-n.bias)
}

// values is value of every encoding, by encoding.
func (n fp8) values() *[256]float64 {
	var v [256]float64
	for i := range v {
		v[i] = n.value(uint8(i))
	}
	return &v
}

// nearest rounds x (not NaN) to n by trying every encoding of x's sign
// (vals: n.values()): the nearest number, on a tie the one of even
// encoding (even mantissa); beyond the largest number, infinities
// included, that number (CUDA's __NV_SATFINITE).
func (n fp8) nearest(x float32, vals *[256]float64) uint8 {
	var sign uint8
	if math.Signbit(float64(x)) {
		sign = 0x80
	}
	a := float64(x)
	if math.Abs(a) > vals[n.maxEnc] {
		return sign | n.maxEnc
	}
	best, bestDist := -1, math.Inf(1)
	for i := range 128 {
		b := sign | uint8(i)
		v := vals[b]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		// Exact where it matters: a and the numbers either side of it have
		// at most 24 significant bits each and exponents close enough.
		d := math.Abs(v - a)
		if d < bestDist || d == bestDist && b&1 == 0 {
			best, bestDist = int(b), d
		}
	}
	return uint8(best)
}

// TestFloat8DecodeExactly decodes all 256 encodings of each type and
// compares them with the value of their fields (signs of zeros and NaNs
// included), and IsNaN with that value.
func TestFloat8DecodeExactly(t *testing.T) {
	for _, n := range fp8s {
		nans, infs := 0, 0
		for i := range 256 {
			b := uint8(i)
			got, want := float64(n.float32(b)), n.value(b)
			isNaN := math.IsNaN(want)
			if isNaN != math.IsNaN(got) || !isNaN && (got != want || math.Signbit(got) != math.Signbit(want)) {
				t.Fatalf("%s %#02x: Float32 = %v, want %v", n.name, b, got, want)
			}
			if isNaN && math.Signbit(got) != (b&0x80 != 0) {
				t.Fatalf("%s %#02x: NaN lost its sign", n.name, b)
			}
			if n.isNaN(b) != isNaN {
				t.Fatalf("%s %#02x: IsNaN = %v, want %v", n.name, b, n.isNaN(b), isNaN)
			}
			if isNaN {
				nans++
			}
			if math.IsInf(want, 0) {
				infs++
			}
		}
		t.Logf("%s: 256 encodings decode (%d NaNs, %d infinities)", n.name, nans, infs)
	}
}

// TestFloat8RoundTrip converts every finite encoding to float32 and back,
// bit for bit; infinities come back as the largest number of their sign
// and NaNs as the NaN 0x7f.
func TestFloat8RoundTrip(t *testing.T) {
	for _, n := range fp8s {
		for i := range 256 {
			b := uint8(i)
			want := b
			switch v := n.value(b); {
			case math.IsNaN(v):
				want = 0x7f
			case math.IsInf(v, 0):
				want = b&0x80 | n.maxEnc
			}
			if got := n.round(n.float32(b)); got != want {
				t.Fatalf("%s %#02x: round trip gives %#02x, want %#02x", n.name, b, got, want)
			}
		}
	}
}

// TestFloat8RoundToNearestEven checks ToFloat8E4M3 and ToFloat8E5M2
// against a search of all encodings: at every midpoint between neighbours
// (ties, to even), the float32s either side of it, every 4093rd float32
// bit pattern, and zeros, infinities, the extremes of float32 and NaNs.
func TestFloat8RoundToNearestEven(t *testing.T) {
	for _, n := range fp8s {
		vals := n.values()
		var xs []float32
		for p := uint8(0); p < n.maxEnc; p++ {
			lo, hi := n.value(p), n.value(p+1)
			mid := float32((lo + hi) / 2)
			if float64(mid) != (lo+hi)/2 {
				t.Fatalf("%s: midpoint after %#02x is not a float32", n.name, p)
			}
			xs = append(xs, mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, float32(math.Inf(1))))
		}
		// Around the largest number: the midpoint above it, where a rounding
		// without saturation would leave it.
		top := n.value(n.maxEnc)
		ulp := top - n.value(n.maxEnc-1)
		for _, v := range []float64{top, top + ulp/2, top + ulp, 2 * top} {
			xs = append(xs, float32(v), math.Nextafter32(float32(v), 0), math.Nextafter32(float32(v), float32(math.Inf(1))))
		}
		for b := uint64(0); b < 1<<32; b += 4093 {
			xs = append(xs, math.Float32frombits(uint32(b)))
		}
		xs = append(xs, 0, float32(math.Inf(1)), math.MaxFloat32, math.SmallestNonzeroFloat32,
			float32(math.NaN()), math.Float32frombits(0x7f800001), math.Float32frombits(0x7fffffff))
		checked := 0
		for _, x := range xs {
			for _, x := range []float32{x, -x} {
				if math.IsNaN(float64(x)) {
					if got := n.round(x); got != 0x7f {
						t.Fatalf("%s: NaN %#08x rounds to %#02x, want 0x7f", n.name, math.Float32bits(x), got)
					}
					continue
				}
				if got, want := n.round(x), n.nearest(x, vals); got != want {
					t.Fatalf("%s: %v (%#08x) rounds to %#02x (%v), want %#02x (%v)", n.name, x, math.Float32bits(x), got, n.value(got), want, n.value(want))
				}
				checked++
			}
		}
		t.Logf("%s: %d float32s round to nearest, ties to even, saturating", n.name, checked)
	}
}

func TestFloat8KnownCases(t *testing.T) {
	f32 := math.Float32frombits
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, c := range []struct {
		in   float32
		want uint8
	}{
		{1, 0x38},
		{-2, 0xc0},
		{float32(math.Copysign(0, -1)), 0x80},
		{448, 0x7e},        // the largest
		{-448, 0xfe},       //
		{464, 0x7e},        // the tie above it: to the even 448 (0x7f is NaN)
		{480, 0x7e},        // saturated, where PyTorch gives NaN
		{1e6, 0x7e},        //
		{inf, 0x7e},        // saturated: E4M3 has no infinity
		{-inf, 0xfe},       //
		{nan, 0x7f},        //
		{-nan, 0x7f},       // the sign of a NaN is not kept, as in CUDA
		{1 + 0x1p-4, 0x38}, // a tie, to the even 1
		{1 + 3*0x1p-4, 0x3a},
		{0x1p-9, 0x01},           // the smallest subnormal
		{0x1p-10, 0x00},          // the tie with zero
		{f32(0x3a800001), 0x01},  // just above it
		{-0x1p-10, 0x80},         // a negative tie: to -0
		{3 * 0x1p-10, 0x02},      // a subnormal tie, to the even 2
		{0x1p-6, 0x08},           // the smallest normal
		{0x1p-6 - 0x1p-10, 0x08}, // rounds up out of the subnormals
		{math.SmallestNonzeroFloat32, 0x00},
	} {
		if got := ToFloat8E4M3(c.in).Bits(); got != c.want {
			t.Errorf("ToFloat8E4M3(%v) = %#02x, want %#02x", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		in   float32
		want uint8
	}{
		{1, 0x3c},
		{-2, 0xc0},
		{57344, 0x7b},        // the largest
		{61440, 0x7b},        // the tie above it: saturated, not infinity
		{65536, 0x7b},        // saturated, where PyTorch gives infinity
		{inf, 0x7b},          // saturated, as CUDA's __NV_SATFINITE does
		{-inf, 0xfb},         //
		{nan, 0x7f},          //
		{-nan, 0x7f},         //
		{1 + 0x1p-3, 0x3c},   // a tie, to the even 1
		{1 + 3*0x1p-3, 0x3e}, // a tie, to the even 1.5
		{0x1p-16, 0x01},      // the smallest subnormal
		{0x1p-17, 0x00},      // the tie with zero
		{0x1p-14, 0x04},      // the smallest normal
		{0x1p-14 - 0x1p-17, 0x04},
	} {
		if got := ToFloat8E5M2(c.in).Bits(); got != c.want {
			t.Errorf("ToFloat8E5M2(%v) = %#02x, want %#02x", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		b    uint8
		want float32
	}{{0x7e, 448}, {0xfe, -448}, {0x01, 0x1p-9}, {0x08, 0x1p-6}, {0x38, 1}} {
		if got := Float8E4M3FromBits(c.b).Float32(); got != c.want {
			t.Errorf("Float8E4M3FromBits(%#02x).Float32() = %v, want %v", c.b, got, c.want)
		}
	}
	for _, c := range []struct {
		b    uint8
		want float32
	}{{0x7b, 57344}, {0x7c, inf}, {0xfc, -inf}, {0x01, 0x1p-16}, {0x3c, 1}} {
		if got := Float8E5M2FromBits(c.b).Float32(); got != c.want {
			t.Errorf("Float8E5M2FromBits(%#02x).Float32() = %v, want %v", c.b, got, c.want)
		}
	}
	if !Float8E4M3FromBits(0x7f).IsNaN() || !Float8E4M3FromBits(0xff).IsNaN() || Float8E4M3FromBits(0x7e).IsNaN() {
		t.Error("Float8E4M3: IsNaN wrong about 0x7f, 0xff or 0x7e")
	}
	if Float8E5M2FromBits(0x7c).IsNaN() || !Float8E5M2FromBits(0x7d).IsNaN() || !Float8E5M2FromBits(0xff).IsNaN() {
		t.Error("Float8E5M2: IsNaN wrong about 0x7c, 0x7d or 0xff")
	}
	for _, c := range []struct{ got, want string }{
		{ToFloat8E4M3(448).String(), "448"},
		{ToFloat8E4M3(-448).String(), "-448"},
		{ToFloat8E4M3(0.1).String(), "0.1"},
		{ToFloat8E4M3(0x1p-9).String(), "0.002"},
		{Float8E4M3FromBits(0xff).String(), "NaN"},
		{Float8E4M3{}.String(), "0"},
		{ToFloat8E5M2(57344).String(), "57000"},
		{ToFloat8E5M2(3).String(), "3"},
		{Float8E5M2FromBits(0xfc).String(), "-Inf"},
		{Float8E5M2{}.String(), "0"},
	} {
		if c.got != c.want {
			t.Errorf("String = %q, want %q", c.got, c.want)
		}
	}
	v := []float32{1, -2.5, 1e-3, 300, 1e9}
	if got := Float32s(ToFloat8E4M3s(v)); !slices.Equal(got, []float32{1, -2.5, ToFloat8E4M3(1e-3).Float32(), 288, 448}) {
		t.Errorf("Float32s(ToFloat8E4M3s(%v)) = %v", v, got)
	}
	if got := Float32s(ToFloat8E5M2s(v)); !slices.Equal(got, []float32{1, -2.5, ToFloat8E5M2(1e-3).Float32(), 320, 57344}) {
		t.Errorf("Float32s(ToFloat8E5M2s(%v)) = %v", v, got)
	}
}

// TestFloat8Copies copies Float8E4M3 and Float8E5M2 slices through the
// typed copies, synchronous and through pinned host buffers, and fills a
// Slice of each.
func TestFloat8Copies(t *testing.T) {
	if sizeOf[Float8E4M3]() != 1 || sizeOf[Float8E5M2]() != 1 {
		t.Fatalf("sizes %d and %d, want 1", sizeOf[Float8E4M3](), sizeOf[Float8E5M2]())
	}
	_, ctx := needGPU(t)
	const n = 4099
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)/7 - 100
	}
	e4, e5 := ToFloat8E4M3s(v), ToFloat8E5M2s(v)
	roundTrip(t, ctx, e4)
	roundTrip(t, ctx, e5)

	// The device holds the encodings, as bytes.
	m, err := AllocFrom(ctx, e4)
	must(t, err)
	defer m.Close()
	raw := make([]uint8, n)
	must(t, CopyFromDevice(raw, m))
	for i, b := range raw {
		if b != e4[i].Bits() {
			t.Fatalf("element %d on the device is %#02x, want %#02x", i, b, e4[i].Bits())
		}
	}

	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	in, err := AllocHost[Float8E5M2](ctx, n)
	must(t, err)
	defer in.Close()
	out, err := AllocHost[Float8E5M2](ctx, n)
	must(t, err)
	defer out.Close()
	copy(in.Slice(), e5)
	dm, err := Alloc(ctx, n)
	must(t, err)
	defer dm.Close()
	must(t, CopyToDeviceAsync(s, dm, in))
	must(t, CopyFromDeviceAsync(s, out, dm))
	must(t, s.Synchronize())
	if !slices.Equal(out.Slice(), e5) {
		t.Fatal("Float8E5M2 through pinned buffers differs")
	}

	// Fill sets bytes (cuMemsetD8).
	sl, err := AllocSliceFrom(ctx, e4)
	must(t, err)
	defer sl.Close()
	must(t, sl.Fill(ToFloat8E4M3(-1.5)))
	got := make([]Float8E4M3, n)
	must(t, sl.CopyTo(got))
	for i, h := range got {
		if h.Float32() != -1.5 {
			t.Fatalf("Float8E4M3 Fill: [%d] = %v, want -1.5", i, h)
		}
	}
	sl5, err := AllocSlice[Float8E5M2](ctx, 5)
	must(t, err)
	defer sl5.Close()
	must(t, sl5.FillAsync(s, Float8E5M2FromBits(0x7c)))
	must(t, s.Synchronize())
	got5 := make([]Float8E5M2, 5)
	must(t, sl5.CopyTo(got5))
	for i, h := range got5 {
		if !math.IsInf(float64(h.Float32()), 1) {
			t.Fatalf("Float8E5M2 FillAsync: [%d] = %v, want +Inf", i, h)
		}
	}
}
