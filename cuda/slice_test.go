package cuda

import (
	"errors"
	"math"
	"slices"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

func TestSliceRoundTripAndSub(t *testing.T) {
	_, ctx := needGPU(t)
	before := LiveObjects()
	data := make([]int32, 1000)
	for i := range data {
		data[i] = int32(i * 3)
	}
	s, err := AllocSliceFrom(ctx, data)
	must(t, err)
	if s.Len() != len(data) || s.Ptr() == 0 {
		t.Fatalf("Len %d Ptr %#x", s.Len(), s.Ptr())
	}
	got := make([]int32, len(data))
	must(t, s.CopyTo(got))
	if !slices.Equal(got, data) {
		t.Fatal("round trip differs")
	}

	sub, err := s.Sub(100, 250)
	must(t, err)
	if sub.Len() != 150 || sub.Ptr() != s.Ptr()+100*4 {
		t.Fatalf("Sub(100, 250): Len %d, Ptr %#x (base %#x)", sub.Len(), sub.Ptr(), s.Ptr())
	}
	subsub, err := sub.Sub(10, 20)
	must(t, err)
	if subsub.Len() != 10 || subsub.Ptr() != s.Ptr()+110*4 {
		t.Fatalf("Sub of Sub: Len %d, Ptr %#x", subsub.Len(), subsub.Ptr())
	}
	for _, r := range [][2]int{{-1, 2}, {3, 2}, {0, 151}, {151, 151}} {
		if _, err := sub.Sub(r[0], r[1]); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
			t.Errorf("Sub(%d, %d) of length 150 = %v, want an invalid value", r[0], r[1], err)
		}
	}
	empty, err := sub.Sub(150, 150)
	must(t, err)
	if empty.Len() != 0 {
		t.Errorf("empty Sub has Len %d", empty.Len())
	}
	must(t, empty.CopyFrom(nil))
	must(t, empty.Fill(7))
	must(t, empty.Close())

	// The views keep the allocation alive after the first handle's Close.
	must(t, s.Close())
	if s.Len() != 0 || s.Ptr() != 0 {
		t.Errorf("closed Slice: Len %d, Ptr %#x", s.Len(), s.Ptr())
	}
	if err := s.CopyFrom(data); !errors.Is(err, ErrClosed) {
		t.Errorf("CopyFrom on a closed Slice = %v, want ErrClosed", err)
	}
	if _, err := s.Sub(0, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Sub of a closed Slice = %v, want ErrClosed", err)
	}
	must(t, subsub.CopyFrom([]int32{-1, -2, -3}))
	if err := subsub.CopyFrom(make([]int32, 11)); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("CopyFrom of 11 into 10 = %v", err)
	}
	if err := subsub.CopyTo(make([]int32, 11)); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("CopyTo of 11 from 10 = %v", err)
	}
	part := make([]int32, 15)
	must(t, sub.CopyTo(part))
	want := []int32{300, 303, 306, 309, 312, 315, 318, 321, 324, 327, -1, -2, -3, 339, 342}
	if !slices.Equal(part, want) {
		t.Errorf("after a write through a sub-slice: %v, want %v", part, want)
	}
	if LiveObjects().DeviceMemory != before.DeviceMemory+1 {
		t.Errorf("live device memory %d, want %d", LiveObjects().DeviceMemory, before.DeviceMemory+1)
	}
	c, err := subsub.Clone()
	must(t, err)
	if c.Len() != 10 || c.Ptr() != subsub.Ptr() || c.Context() == nil {
		t.Errorf("Clone: Len %d Ptr %#x", c.Len(), c.Ptr())
	}
	must(t, sub.Close())
	must(t, subsub.Close())
	must(t, subsub.Close()) // again: nil
	if LiveObjects().DeviceMemory != before.DeviceMemory+1 {
		t.Error("memory freed while a clone is open")
	}
	must(t, c.Close())
	if LiveObjects().DeviceMemory != before.DeviceMemory {
		t.Errorf("live device memory %d after the last Close, want %d", LiveObjects().DeviceMemory, before.DeviceMemory)
	}
}

func TestSliceOfAndAllocChecks(t *testing.T) {
	_, ctx := needGPU(t)
	m, err := Alloc(ctx, 10)
	must(t, err)
	defer m.Close()
	if _, err := SliceOf[float32](m); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("SliceOf[float32] of 10 bytes = %v, want an invalid value", err)
	}
	h, err := SliceOf[Float16](m)
	must(t, err)
	defer h.Close()
	if h.Len() != 5 || h.Ptr() != m.Raw() {
		t.Errorf("SliceOf[Float16] of 10 bytes: Len %d", h.Len())
	}
	must(t, m.MemsetD8(0))
	must(t, h.CopyFrom([]Float16{ToFloat16(1), ToFloat16(2)}))
	raw := make([]uint16, 5)
	must(t, CopyFromDevice(raw, m))
	if raw[0] != ToFloat16(1).Bits() || raw[1] != ToFloat16(2).Bits() || raw[2] != 0 {
		t.Errorf("typed copy seen through DeviceMemory: %#x", raw)
	}

	for _, n := range []int{-1, math.MaxInt/8 + 1} {
		if _, err := AllocSlice[float64](ctx, n); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
			t.Errorf("AllocSlice[float64](%d) = %v, want an invalid value", n, err)
		}
	}
}

func TestSliceFillAndDeviceCopies(t *testing.T) {
	_, ctx := needGPU(t)
	st, err := NewStream(ctx)
	must(t, err)
	defer st.Close()

	b, err := AllocSlice[int8](ctx, 9)
	must(t, err)
	defer b.Close()
	must(t, b.Fill(-3))
	b2, err := b.Sub(2, 5)
	must(t, err)
	defer b2.Close()
	must(t, b2.Fill(4))
	gb := make([]int8, 9)
	must(t, b.CopyTo(gb))
	if !slices.Equal(gb, []int8{-3, -3, 4, 4, 4, -3, -3, -3, -3}) {
		t.Errorf("int8 Fill: %v", gb)
	}

	h, err := AllocSlice[BFloat16](ctx, 6)
	must(t, err)
	defer h.Close()
	must(t, h.Fill(ToBFloat16(1.5)))
	hs, err := h.Sub(4, 6)
	must(t, err)
	defer hs.Close()
	must(t, hs.FillAsync(st, ToBFloat16(-2)))
	must(t, st.Synchronize())
	gh := make([]BFloat16, 6)
	must(t, h.CopyTo(gh))
	for i, v := range gh {
		want := float32(1.5)
		if i >= 4 {
			want = -2
		}
		if v.Float32() != want {
			t.Errorf("bfloat16 Fill: [%d] = %v, want %v", i, v.Float32(), want)
		}
	}

	f, err := AllocSlice[float32](ctx, 8)
	must(t, err)
	defer f.Close()
	must(t, f.Fill(0.25))
	lo, err := f.Sub(0, 4)
	must(t, err)
	defer lo.Close()
	hi, err := f.Sub(4, 8)
	must(t, err)
	defer hi.Close()
	must(t, lo.CopyFrom([]float32{1, 2, 3, 4}))
	must(t, CopySlice(hi, lo))
	mid, err := f.Sub(2, 6)
	must(t, err)
	defer mid.Close()
	if err := CopySlice(mid, lo); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("overlapping CopySlice = %v, want an invalid value", err)
	}
	if err := CopySliceAsync(st, lo, f); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("CopySliceAsync of 8 into 4 = %v, want an invalid value", err)
	}
	gf := make([]float32, 8)
	must(t, f.CopyTo(gf))
	if !slices.Equal(gf, []float32{1, 2, 3, 4, 1, 2, 3, 4}) {
		t.Errorf("CopySlice between halves: %v", gf)
	}

	// Host buffer → f[2:6] → g → host buffer, in the stream's order.
	in, err := AllocHost[float32](ctx, 4)
	must(t, err)
	defer in.Close()
	out, err := AllocHost[float32](ctx, 4)
	must(t, err)
	defer out.Close()
	copy(in.Slice(), []float32{9, 8, 7, 6})
	g, err := AllocSlice[float32](ctx, 4)
	must(t, err)
	defer g.Close()
	must(t, mid.CopyFromAsync(st, in))
	must(t, CopySliceAsync(st, g, mid))
	must(t, g.CopyToAsync(st, out))
	must(t, st.Synchronize())
	if !slices.Equal(out.Slice(), []float32{9, 8, 7, 6}) {
		t.Errorf("async copies: %v", out.Slice())
	}
	small, err := g.Sub(0, 3)
	must(t, err)
	defer small.Close()
	if err := small.CopyFromAsync(st, in); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("CopyFromAsync of 4 into 3 = %v", err)
	}
	if err := small.CopyToAsync(st, out); !errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE) {
		t.Errorf("CopyToAsync of 4 from 3 = %v", err)
	}
	must(t, f.CopyTo(gf))
	if !slices.Equal(gf, []float32{1, 2, 9, 8, 7, 6, 3, 4}) {
		t.Errorf("after CopyFromAsync into f[2:6]: %v", gf)
	}
}

// TestSliceKernelArg launches the vector add on sub-slices: each is passed
// as the address of its first element, without allocating.
// TestSliceFill8Byte fills slices of 8-byte elements with values of each
// kind the driver's memsets take (one repeated byte, two equal halves,
// two different ones, NaN and -0 included), with Fill and FillAsync, the
// whole slice and a Sub-slice at an odd element offset, and checks every
// element's bits.
func TestSliceFill8Byte(t *testing.T) {
	_, ctx := needGPU(t)
	st, err := NewStream(ctx)
	must(t, err)
	defer st.Close()
	checkFill8(t, ctx, st, []float64{1.5, math.Copysign(0, -1), math.Float64frombits(0x7FF8000000000001),
		math.Float64frombits(0x4040404040404040), 0, math.Inf(-1)})
	checkFill8(t, ctx, st, []int64{-1, 0x0102030405060708, 0x1234567812345678, math.MinInt64, 0})
	checkFill8(t, ctx, st, []uint64{0xDEADBEEFCAFEF00D, 0xABABABABABABABAB, 0x0000000100000001, 1 << 63, math.MaxUint64})
}

func bits8[T int64 | uint64 | float64](v T) uint64 { return *(*uint64)(unsafe.Pointer(&v)) }

// checkFill8 fills a slice of 13 elements with one value and elements
// [3, 10) with another, for every pair of vals: Fill of the whole and
// FillAsync of the Sub-slice, then FillAsync of the whole and Fill of the
// Sub-slice.
func checkFill8[T int64 | uint64 | float64](t *testing.T, ctx *Context, st *Stream, vals []T) {
	t.Helper()
	const n, lo, hi = 13, 3, 10
	s, err := AllocSlice[T](ctx, n)
	must(t, err)
	defer s.Close()
	sub, err := s.Sub(lo, hi)
	must(t, err)
	defer sub.Close()
	check := func(how string, a, b T) {
		t.Helper()
		got := make([]T, n)
		must(t, s.CopyTo(got))
		for i, g := range got {
			want := a
			if i >= lo && i < hi {
				want = b
			}
			if bits8(g) != bits8(want) {
				t.Errorf("%T %s with %#x, elements [%d:%d] with %#x: [%d] = %#x, want %#x",
					a, how, bits8(a), lo, hi, bits8(b), i, bits8(g), bits8(want))
			}
		}
	}
	for _, a := range vals {
		for _, b := range vals {
			must(t, s.Fill(a))
			must(t, sub.FillAsync(st, b))
			must(t, st.Synchronize())
			check("Fill, then FillAsync of the Sub-slice", a, b)
			must(t, s.FillAsync(st, a))
			must(t, st.Synchronize())
			must(t, sub.Fill(b))
			check("FillAsync, then Fill of the Sub-slice", a, b)
		}
	}
}

// TestFillPlan: the memset Fill picks for an 8-byte value.
func TestFillPlan(t *testing.T) {
	for _, c := range []struct {
		v    uint64
		want fillPattern
	}{
		{0, fillPattern{width: 1, bits: 0, count: 40}},
		{0xABABABABABABABAB, fillPattern{width: 1, bits: 0xAB, count: 40}},
		{0x1234567812345678, fillPattern{width: 4, bits: 0x12345678, count: 10}},
		{0x0102030405060708, fillPattern{width: 8, bits: 0x05060708, hi: 0x01020304, count: 5}},
		{0x8000000000000000, fillPattern{width: 8, bits: 0, hi: 0x80000000, count: 5}},
	} {
		if got := fillPlan(c.v, 5); got != c.want {
			t.Errorf("fillPlan(%#x, 5) = %+v, want %+v", c.v, got, c.want)
		}
	}
	if got := fillPlan(float32(1.5), 5); got != (fillPattern{width: 4, bits: math.Float32bits(1.5), count: 5}) {
		t.Errorf("fillPlan(float32(1.5), 5) = %+v", got)
	}
}

func TestSliceKernelArg(t *testing.T) {
	_, ctx := needGPU(t)
	_, k := vectorAdd(t, ctx)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	const n = 300
	ma, mb, mc := vectorInputs(t, ctx, n)
	a, err := SliceOf[float32](ma)
	must(t, err)
	defer a.Close()
	b, err := SliceOf[float32](mb)
	must(t, err)
	defer b.Close()
	c, err := SliceOf[float32](mc)
	must(t, err)
	defer c.Close()

	cfg := LaunchConfig{Grid: Dim3{X: Blocks(n, 128)}, Block: Dim3{X: 128}}
	count := uint32(n)
	allocs := testing.AllocsPerRun(200, func() {
		if err := k.Launch(s, cfg, a, b, c, count); err != nil {
			t.Fatal(err)
		}
	})
	must(t, s.Synchronize())
	if allocs != 0 {
		t.Errorf("Launch with *Slice arguments: %v allocations, want 0", allocs)
	}
	checkSum(t, "Launch with *Slice", mc, n)

	// The second half only, through sub-slices: c[i] = a[i] + b[i] for i
	// from 150, so the result is the same sum.
	must(t, mc.MemsetD32(0xbf800000))
	a2, err := a.Sub(150, n)
	must(t, err)
	defer a2.Close()
	b2, err := b.Sub(150, n)
	must(t, err)
	defer b2.Close()
	c2, err := c.Sub(150, n)
	must(t, err)
	defer c2.Close()
	args, err := k.NewArgs(a2, b2, c2, uint32(a2.Len()))
	must(t, err)
	defer args.Close()
	must(t, k.LaunchArgs(s, cfg, args))
	must(t, s.Synchronize())
	got := make([]float32, n)
	must(t, c.CopyTo(got))
	for i, v := range got {
		want := float32(3 * i)
		if i < 150 {
			want = -1
		}
		if v != want {
			t.Fatalf("c[%d] = %v after a launch on c[150:], want %v", i, v, want)
		}
	}

	must(t, a2.Close())
	if err := k.Launch(s, cfg, a2, b2, c2, uint32(1)); !errors.Is(err, ErrClosed) {
		t.Errorf("Launch with a closed *Slice = %v, want ErrClosed", err)
	}
	if err := k.Launch(s, cfg, (*Slice[float32])(nil), b2, c2, uint32(1)); !errors.Is(err, ErrClosed) {
		t.Errorf("Launch with a nil *Slice = %v, want ErrClosed", err)
	}
}

// TestSliceArgWithoutDriver: a *Slice[T] encodes as the address of its
// first element, a closed or nil one as closed memory, and neither it nor
// the concrete types cost an allocation to encode.
func TestSliceArgWithoutDriver(t *testing.T) {
	_, ctx := needGPU(t)
	f, err := AllocSlice[float32](ctx, 64)
	must(t, err)
	defer f.Close()
	sub, err := f.Sub(3, 10)
	must(t, err)
	defer sub.Close()
	h, err := AllocSlice[Float16](ctx, 8)
	must(t, err)
	defer h.Close()
	hs, err := h.Sub(5, 8)
	must(t, err)
	defer hs.Close()
	if bits, size, why := encodeArg(sub); why != argOK || size != 8 || bits != uint64(f.Ptr())+12 {
		t.Errorf("encodeArg(sub) = %#x, %d, %d; want %#x, 8, ok", bits, size, why, uint64(f.Ptr())+12)
	}
	if bits, _, why := encodeArg(hs); why != argOK || bits != uint64(h.Ptr())+10 {
		t.Errorf("encodeArg(Float16 sub) = %#x, %d", bits, why)
	}
	if _, _, why := encodeArg((*Slice[int8])(nil)); why != argClosedMemory {
		t.Errorf("encodeArg(nil *Slice) = %d, want closed memory", why)
	}
	if _, _, why := encodeArg(new(Slice[int8])); why != argClosedMemory {
		t.Errorf("encodeArg(zero Slice) = %d, want closed memory", why)
	}

	vals := []any{sub, hs, f, cu.CUdeviceptr(1), float32(1), uint32(1), int64(1), ToFloat16(1), true}
	if n := testing.AllocsPerRun(1000, func() {
		for _, v := range vals {
			if _, _, why := encodeArg(v); why != argOK {
				t.Fatalf("encodeArg(%T) = %d", v, why)
			}
		}
	}); n != 0 {
		t.Errorf("encodeArg: %v allocations, want 0", n)
	}

	k, _ := fakeKernel(t, true)
	args, err := k.NewArgs(f, sub, hs, uint32(7))
	must(t, err)
	defer args.Close()
	if *(*uint64)(args.slot(0)) != uint64(f.Ptr()) || *(*uint64)(args.slot(1)) != uint64(sub.Ptr()) ||
		*(*uint64)(args.slot(2)) != uint64(hs.Ptr()) {
		t.Error("NewArgs with *Slice arguments: slots do not hold their addresses")
	}
	if n := testing.AllocsPerRun(1000, func() { must(t, args.Set(0, sub)) }); n != 0 {
		t.Errorf("Args.Set with a *Slice: %v allocations, want 0", n)
	}
	if *(*uint64)(args.slot(0)) != uint64(sub.Ptr()) {
		t.Error("Args.Set did not write the Slice's address")
	}
	must(t, sub.Close())
	if err := args.Set(0, sub); !errors.Is(err, ErrClosed) {
		t.Errorf("Args.Set with a closed *Slice = %v, want ErrClosed", err)
	}
}
