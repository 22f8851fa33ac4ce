//go:build linux && (amd64 || arm64)

package fft_test

import (
	"math/cmplx"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/fft"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
)

// TestComplexSlicesRoundTrip: complex64 data goes in and out as Go slices
// of complex64, a forward and inverse C2C transform gives n times the
// input, and a real-to-complex transform takes float32 in, complex64 out.
func TestComplexSlicesRoundTrip(t *testing.T) {
	ctx := libtest.Context(t)
	s, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 64
	p := newPlan(t, s, fft.C2C, 1, n)
	in := make([]complex64, n)
	for i := range in {
		in[i] = complex(float32(i%5), -float32(i%3))
	}
	x, err := cuda.AllocSliceFrom(s, in)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	y, err := cuda.AllocSlice[complex64](s, n)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if err := p.Exec(x, y, fft.Forward); err != nil {
		t.Fatal(err)
	}
	if err := p.Exec(y, y, fft.Inverse); err != nil {
		t.Fatal(err)
	}
	out := make([]complex64, n)
	if err := y.CopyToHost(s, out); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		if d := cmplx.Abs(complex128(out[i] - n*in[i])); d > 1e-3 {
			t.Fatalf("element %d: %v after forward and inverse, want %v", i, out[i], n*in[i])
		}
	}

	r := newPlan(t, s, fft.R2C, 1, n)
	re, err := cuda.AllocSlice[float32](s, n)
	if err != nil {
		t.Fatal(err)
	}
	defer re.Close()
	if err := re.Fill(1); err != nil {
		t.Fatal(err)
	}
	half, err := cuda.AllocSlice[complex64](s, n/2+1)
	if err != nil {
		t.Fatal(err)
	}
	defer half.Close()
	if err := r.Exec(re, half, fft.Forward); err != nil {
		t.Fatal(err)
	}
	coef := make([]complex64, n/2+1)
	if err := half.CopyTo(coef); err != nil {
		t.Fatal(err)
	}
	if coef[0] != n || cmplx.Abs(complex128(coef[1])) > 1e-4 {
		t.Errorf("R2C of %d ones: %v, %v; want %d, 0", n, coef[0], coef[1], n)
	}

	// Slices of the wrong element types are refused before cuFFT.
	for name, err := range map[string]error{
		"C2C from float32": p.Exec(re, y, fft.Forward),
		"R2C into float32": r.Exec(re, re, fft.Forward),
	} {
		if err == nil || !strings.Contains(err.Error(), "*cuda.Slice[float32]") {
			t.Errorf("%s = %v, want an error naming the slice's type", name, err)
		}
	}
}
