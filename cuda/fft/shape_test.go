package fft

import (
	"strings"
	"testing"
)

func TestKindsAndDirections(t *testing.T) {
	for k, want := range map[Kind]string{C2C: "C2C", R2C: "R2C", C2R: "C2R", Z2Z: "Z2Z", D2Z: "D2Z", Z2D: "Z2D", 0: "Kind(0)", 7: "Kind(7)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), got, want)
		}
	}
	for d, want := range map[Direction]string{Forward: "Forward", Inverse: "Inverse", 0: "Direction(0)"} {
		if got := d.String(); got != want {
			t.Errorf("Direction(%d).String() = %q, want %q", int(d), got, want)
		}
	}
	// CUFFT_FORWARD and CUFFT_INVERSE.
	if Forward != -1 || Inverse != 1 {
		t.Fatal("directions differ from cuFFT's")
	}
}

func TestShapeSizes(t *testing.T) {
	for _, tc := range []struct {
		kind            Kind
		dims            []int
		batch           int
		inB, outB       int64
		str             string
		inSide, outSide string
	}{
		{C2C, []int{1024}, 1, 8 * 1024, 8 * 1024, "C2C 1024", "1024 complex64 (8192 bytes)", "1024 complex64 (8192 bytes)"},
		{Z2Z, []int{1000}, 3, 16 * 3000, 16 * 3000, "Z2Z 1000 (batch 3)", "3000 complex128", "3000 complex128"},
		{R2C, []int{1024}, 2, 4 * 2048, 8 * 2 * 513, "R2C 1024 (batch 2)", "2048 float32 (8192 bytes)", "1026 complex64 (8208 bytes)"},
		{C2R, []int{7}, 1, 8 * 4, 4 * 7, "C2R 7", "4 complex64", "7 float32"},
		{D2Z, []int{6, 10}, 1, 8 * 60, 16 * 6 * 6, "D2Z 6×10", "60 float64", "36 complex128"},
		{Z2D, []int{4, 5, 9}, 2, 16 * 2 * 4 * 5 * 5, 8 * 2 * 180, "Z2D 4×5×9 (batch 2)", "200 complex128", "360 float64"},
	} {
		s, err := newShape("test", tc.kind, tc.dims, tc.batch)
		if err != nil {
			t.Fatal(err)
		}
		if s.inBytes() != tc.inB || s.outBytes() != tc.outB || s.String() != tc.str {
			t.Errorf("%v: in %d, out %d bytes; want %q, %d and %d", s, s.inBytes(), s.outBytes(), tc.str, tc.inB, tc.outB)
		}
		if !strings.HasPrefix(s.side(true), tc.inSide) || !strings.HasPrefix(s.side(false), tc.outSide) {
			t.Errorf("%v: input %q, output %q; want %q and %q", s, s.side(true), s.side(false), tc.inSide, tc.outSide)
		}
	}
}

func TestShapesCuFFTCannotTakeAreRefused(t *testing.T) {
	for _, tc := range []struct {
		kind  Kind
		dims  []int
		batch int
		want  string
	}{
		{0, []int{8}, 1, "unknown kind Kind(0)"},
		{C2C, []int{0}, 1, "size 0: each size must be 1 to 2³¹−1"},
		{C2C, []int{4, -2}, 1, "size 4×-2"},
		{C2C, []int{1 << 31}, 1, "size 2147483648"},
		{R2C, []int{8}, 0, "batch 0"},
		{Z2Z, []int{1 << 30, 1 << 30, 1 << 30}, 1, "too large"},
		// Products that wrap int64 to 0 or to a small number.
		{C2C, []int{268435456, 1073741824, 64}, 1, "too large"},
		{C2C, []int{1<<31 - 1, 1<<31 - 1, 4}, 1, "too large"},
		{R2C, []int{1 << 30, 1 << 30}, 1 << 8, "too large"},
		{C2C, []int{1 << 30, 1 << 24}, 1 << 10, "too large"},
	} {
		_, err := newShape("NewPlan", tc.kind, tc.dims, tc.batch)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v batch %d: %v, want an error containing %q", tc.kind, tc.dims, tc.batch, err, tc.want)
		}
	}
}
