package cuda

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// narrow describes Float16 or BFloat16 to the tests, from first principles.
type narrow struct {
	name      string
	manBits   int // mantissa bits; the exponent has 15-manBits
	bias      int
	inf       uint16 // the encoding of +Inf
	quiet     uint16 // the quiet bit of a NaN
	round     func(float32) uint16
	toFloat32 func(uint16) float32
}

var narrows = []narrow{
	{"Float16", 10, 15, 0x7c00, 0x0200,
		func(f float32) uint16 { return ToFloat16(f).Bits() },
		func(b uint16) float32 { return Float16FromBits(b).Float32() }},
	{"BFloat16", 7, 127, 0x7f80, 0x0040,
		func(f float32) uint16 { return ToBFloat16(f).Bits() },
		func(b uint16) float32 { return BFloat16FromBits(b).Float32() }},
}

// value decodes b by the IEEE 754 formula; Inf is +Inf, NaN is NaN.
func (n narrow) value(b uint16) float64 {
	sign := 1.0
	if b&0x8000 != 0 {
		sign = -1
	}
	exp := int(b&0x7fff) >> n.manBits
	man := float64(int(b) & (1<<n.manBits - 1))
	switch {
	case b&0x7fff == n.inf:
		return math.Inf(int(sign))
	case b&0x7fff > n.inf:
		return math.NaN()
	case exp == 0: // subnormal or zero
		return sign * math.Ldexp(man, 1-n.bias-n.manBits)
	}
	return sign * math.Ldexp(1+man/float64(int(1)<<n.manBits), exp-n.bias)
}

// magnitude is value, but the encoding of +Inf counts as the next number
// after the largest finite one, 2^(emax+1): what rounding compares with.
func (n narrow) magnitude(b uint16) float64 {
	if b == n.inf {
		return math.Ldexp(1, int(n.inf>>n.manBits)-n.bias)
	}
	return n.value(b)
}

// nearest rounds x (not NaN) to n by search: the encodings of positive
// numbers are in the order of their values.
func (n narrow) nearest(x float32) uint16 {
	var sign uint16
	if math.Signbit(float64(x)) {
		sign = 0x8000
	}
	a := math.Abs(float64(x))
	// p: the largest encoding not above a.
	p := uint16(sort.Search(int(n.inf)+1, func(i int) bool { return n.magnitude(uint16(i)) > a }) - 1)
	if p == n.inf {
		return sign | n.inf
	}
	below, above := a-n.magnitude(p), n.magnitude(p+1)-a
	if above < below || above == below && p&1 == 1 {
		p++
	}
	return sign | p
}

func TestNarrowFloatsDecodeExactly(t *testing.T) {
	for _, n := range narrows {
		for i := range 1 << 16 {
			b := uint16(i)
			got, want := float64(n.toFloat32(b)), n.value(b)
			isNaN := math.IsNaN(want)
			if isNaN != math.IsNaN(got) || !isNaN && (got != want || math.Signbit(got) != math.Signbit(want)) {
				t.Fatalf("%s %#04x: Float32 = %v, want %v", n.name, b, got, want)
			}
			if isNaN && math.Signbit(got) != (b&0x8000 != 0) {
				t.Fatalf("%s %#04x: NaN lost its sign", n.name, b)
			}
		}
	}
	for i := range 1 << 16 {
		h, bf := Float16FromBits(uint16(i)), BFloat16FromBits(uint16(i))
		if h.IsNaN() != math.IsNaN(float64(h.Float32())) || bf.IsNaN() != math.IsNaN(float64(bf.Float32())) {
			t.Fatalf("%#04x: IsNaN disagrees with Float32", i)
		}
	}
}

// TestNarrowFloatsRoundTrip converts every encoding to float32 and back:
// numbers and infinities come back bit for bit, NaNs as NaNs of the same
// sign and payload, made quiet.
func TestNarrowFloatsRoundTrip(t *testing.T) {
	for _, n := range narrows {
		nans := 0
		for i := range 1 << 16 {
			b := uint16(i)
			want := b
			if b&0x7fff > n.inf {
				want |= n.quiet
				nans++
			}
			if got := n.round(n.toFloat32(b)); got != want {
				t.Fatalf("%s %#04x: round trip gives %#04x, want %#04x", n.name, b, got, want)
			}
		}
		t.Logf("%s: 65536 encodings round-trip (%d NaNs, made quiet)", n.name, nans)
	}
}

// TestNarrowFloatsRoundToNearestEven checks rounding against a search of
// every encoding: at each midpoint between neighbours (ties, to even),
// either side of it, and at random float32s.
func TestNarrowFloatsRoundToNearestEven(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range narrows {
		var xs []float32
		for p := range n.inf {
			mid := float32((n.magnitude(p) + n.magnitude(p+1)) / 2)
			if float64(mid) != (n.magnitude(p)+n.magnitude(p+1))/2 {
				t.Fatalf("%s: midpoint after %#04x is not a float32", n.name, p)
			}
			xs = append(xs, mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, float32(math.Inf(1))))
		}
		for range 200000 {
			xs = append(xs, math.Float32frombits(r.Uint32()))
		}
		xs = append(xs, 0, float32(math.Inf(1)), math.MaxFloat32, math.SmallestNonzeroFloat32)
		checked := 0
		for _, x := range xs {
			for _, x := range []float32{x, -x} {
				if math.IsNaN(float64(x)) {
					if got := n.round(x); got&0x7fff <= n.inf || got&0x8000 != uint16(math.Float32bits(x)>>16)&0x8000 {
						t.Fatalf("%s: NaN %#08x rounds to %#04x", n.name, math.Float32bits(x), got)
					}
					continue
				}
				if got, want := n.round(x), n.nearest(x); got != want {
					t.Fatalf("%s: %v (%#08x) rounds to %#04x (%v), want %#04x (%v)", n.name, x, math.Float32bits(x), got, n.value(got), want, n.value(want))
				}
				checked++
			}
		}
		t.Logf("%s: %d float32s round to nearest, ties to even", n.name, checked)
	}
}

func TestNarrowFloatsKnownCases(t *testing.T) {
	f32 := math.Float32frombits
	for _, c := range []struct {
		in   float32
		want uint16
	}{
		{1, 0x3c00},
		{-2, 0xc000},
		{float32(math.Copysign(0, -1)), 0x8000},
		{65504, 0x7bff},                        // the largest
		{f32(0x477fefff), 0x7bff},              // just below 65520
		{65520, 0x7c00},                        // the tie above the largest: to even, infinity
		{1 + 0x1p-11, 0x3c00},                  // a tie, to the even 1
		{1 + 3*0x1p-11, 0x3c02},                // a tie, to the even 1+2⁻⁹
		{0x1p-24, 0x0001},                      // the smallest subnormal
		{0x1p-25, 0x0000},                      // the tie with zero
		{f32(0x33000001), 0x0001},              // just above it
		{0x1p-14 - 0x1p-25, 0x0400},            // rounds up out of the subnormals
		{float32(math.Inf(-1)), 0xfc00},        //
		{f32(0x7f800001), 0x7e00},              // a signalling NaN, made quiet
		{f32(0xffc00000), 0xfe00},              // -NaN
		{f32(0x7fffe000), 0x7fff},              // the payload's top bits are kept
		{math.MaxFloat32, 0x7c00},              //
		{math.SmallestNonzeroFloat32, 0x0000},  //
		{-math.SmallestNonzeroFloat32, 0x8000}, //
	} {
		if got := ToFloat16(c.in).Bits(); got != c.want {
			t.Errorf("ToFloat16(%v) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		in   float32
		want uint16
	}{
		{1, 0x3f80},
		{1 + 0x1p-8, 0x3f80},           // a tie, to the even 1
		{1 + 3*0x1p-8, 0x3f82},         // a tie, to the even 1+2⁻⁶
		{f32(0x3f808001), 0x3f81},      // just above a tie
		{f32(0x7f7f7fff), 0x7f7f},      // just below the tie above the largest
		{f32(0x7f7f8000), 0x7f80},      // that tie: to even, infinity
		{math.MaxFloat32, 0x7f80},      //
		{f32(0x00008000), 0x0000},      // a subnormal tie, to the even zero
		{f32(0x00018000), 0x0002},      // a subnormal tie, to the even 2
		{f32(0x007fffff), 0x0080},      // rounds up out of the subnormals
		{float32(math.Inf(1)), 0x7f80}, //
		{f32(0x7f800001), 0x7fc0},      // a NaN whose payload is all dropped stays a NaN
		{f32(0xff810000), 0xffc1},      // -sNaN: sign and payload kept, made quiet
	} {
		if got := ToBFloat16(c.in).Bits(); got != c.want {
			t.Errorf("ToBFloat16(%v) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ got, want string }{
		{ToFloat16(0.1).String(), "0.1"},
		{ToFloat16(65504).String(), "65500"},
		{ToFloat16(-1.5).String(), "-1.5"},
		{ToFloat16(0x1p-24).String(), "6e-08"},
		{ToBFloat16(3.14159).String(), "3.14"},
		{ToBFloat16(1e10).String(), "1e+10"},
		{ToFloat16(float32(math.NaN())).String(), "NaN"},
		{ToBFloat16(float32(math.Inf(-1))).String(), "-Inf"},
		{Float16{}.String(), "0"},
	} {
		if c.got != c.want {
			t.Errorf("String = %q, want %q", c.got, c.want)
		}
	}
	v := []float32{1, -2.5, 1e-3, 300}
	if got := Float32s(ToFloat16s(v)); !slices.Equal(got, []float32{1, -2.5, ToFloat16(1e-3).Float32(), 300}) {
		t.Errorf("Float32s(ToFloat16s(%v)) = %v", v, got)
	}
	if got := Float32s(ToBFloat16s(v)); !slices.Equal(got, []float32{1, -2.5, ToBFloat16(1e-3).Float32(), 300}) {
		t.Errorf("Float32s(ToBFloat16s(%v)) = %v", v, got)
	}
}

// TestNarrowFloatCopies copies Float16 and BFloat16 slices through the
// typed copies, synchronous and through pinned host buffers.
func TestNarrowFloatCopies(t *testing.T) {
	if sizeOf[Float16]() != 2 || sizeOf[BFloat16]() != 2 {
		t.Fatalf("sizes %d and %d, want 2", sizeOf[Float16](), sizeOf[BFloat16]())
	}
	_, ctx := needGPU(t)
	const n = 4099
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)/7 - 100
	}
	h, bf := ToFloat16s(v), ToBFloat16s(v)
	roundTrip(t, ctx, h)
	roundTrip(t, ctx, bf)

	// The device holds the encodings, as uint16s.
	m, err := AllocFrom(ctx, bf)
	must(t, err)
	defer m.Close()
	raw := make([]uint16, n)
	must(t, CopyFromDevice(raw, m))
	for i, b := range raw {
		if b != bf[i].Bits() {
			t.Fatalf("element %d on the device is %#04x, want %#04x", i, b, bf[i].Bits())
		}
	}

	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	in, err := AllocHost[Float16](ctx, n)
	must(t, err)
	defer in.Close()
	out, err := AllocHost[Float16](ctx, n)
	must(t, err)
	defer out.Close()
	copy(in.Slice(), h)
	dm, err := Alloc(ctx, 2*n)
	must(t, err)
	defer dm.Close()
	must(t, CopyToDeviceAsync(s, dm, in))
	must(t, CopyFromDeviceAsync(s, out, dm))
	must(t, s.Synchronize())
	if !slices.Equal(out.Slice(), h) {
		t.Fatal("Float16 through pinned buffers differs")
	}
}
