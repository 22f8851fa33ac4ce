//go:build linux && (amd64 || arm64)

package fft_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/fft"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/generated/cufft"
	"github.com/gocuda/gocuda/internal/fakecufft"
)

// fakeChildEnv names the file where TestFakeMatchesCuFFT's child, which
// runs on the fake driver and the fake cuFFT, writes its outputs.
const fakeChildEnv = "GOCUDA_FFT_FAKE_CHILD"

// fakeCase is one transform of the comparison: its name and output.
type fakeCase struct {
	Name string
	Re   []float64 // the output's numbers as float64: complex ones re, im
}

// transformAll runs every kind over shapes (batch 2) forward, and the
// complex kinds inverse too, on inputs drawn from one seed: the same
// inputs in every process.
func transformAll(t *testing.T) []fakeCase {
	ctx, s := libtest.Stream(t)
	r := rand.New(rand.NewPCG(7, 8))
	var out []fakeCase
	for _, kind := range []fft.Kind{fft.C2C, fft.Z2Z, fft.R2C, fft.D2Z, fft.C2R, fft.Z2D} {
		double := kind == fft.Z2Z || kind == fft.D2Z || kind == fft.Z2D
		for _, dims := range append(shapes, []int{17}, []int{3, 7}) {
			const batch = 2
			p := newPlan(t, s, kind, batch, dims...)
			dirs := []fft.Direction{fft.Forward, fft.Inverse}
			switch kind {
			case fft.R2C, fft.D2Z:
				dirs = dirs[:1]
			case fft.C2R, fft.Z2D:
				dirs = dirs[1:]
			}
			for _, dir := range dirs {
				var in *cuda.DeviceMemory
				realIn := kind == fft.R2C || kind == fft.D2Z
				if realIn {
					x := make([]float64, p.InBytes()/map[bool]int{false: 4, true: 8}[double])
					for i := range x {
						x[i] = 2*r.Float64() - 1
					}
					in = uploadReal(t, ctx, x, double, p.InBytes())
				} else {
					x := randomComplex(r, p.InBytes()/map[bool]int{false: 8, true: 16}[double])
					if kind == fft.C2R || kind == fft.Z2D {
						x = hermitianHalf(r, dims, batch)
					}
					in = upload(t, ctx, x, double)
				}
				o, err := cuda.Alloc(ctx, p.OutBytes())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { o.Close() })
				if err := p.Exec(in, o, dir); err != nil {
					t.Fatal(err)
				}
				elem := map[bool]int{false: 4, true: 8}[double]
				out = append(out, fakeCase{
					Name: fmt.Sprint(kind, " ", dims, " ", dir),
					Re:   downloadReal(t, s, o, p.OutBytes()/elem, double),
				})
			}
		}
	}
	return out
}

// hermitianHalf is the input of a complex-to-real transform: the half
// of the transform of real arrays of batch random numbers, Hermitian
// along every axis as a real array's is, so that cuFFT and the fake, which
// may treat the rest differently, have one answer.
func hermitianHalf(r *rand.Rand, dims []int, batch int) []complex128 {
	n := prod(dims)
	var out []complex128
	for range batch {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(2*r.Float64()-1, 0)
		}
		out = append(out, half(dft(x, dims, -1), dims)...)
	}
	return out
}

// TestFakeMatchesCuFFT compares the fake cuFFT with the real one on a GPU:
// it transforms with cuFFT, then runs the same transforms of the same
// inputs in a child process of this test binary on the fake driver and
// the fake cuFFT, and compares the outputs within the tolerances of the
// DFT tests (relative to the largest output: 1e-5 for float32, 1e-12 for
// float64).
func TestFakeMatchesCuFFT(t *testing.T) {
	real, fake, ok := libtest.RealAndFake(t, "cuFFT", fakeChildEnv, cufft.LibraryEnv, fakecufft.Active, transformAll)
	if !ok {
		return
	}
	if len(fake) != len(real) {
		t.Fatalf("the child made %d transforms, this process %d", len(fake), len(real))
	}
	worst := map[bool]float64{}
	for i, r := range real {
		f := fake[i]
		if f.Name != r.Name || len(f.Re) != len(r.Re) {
			t.Fatalf("transform %d: the child's is %s of %d numbers, this one %s of %d", i, f.Name, len(f.Re), r.Name, len(r.Re))
		}
		double := r.Name[0] == 'Z' || r.Name[0] == 'D'
		tol, _ := tols(double)
		e, at := relErr(toComplex(f.Re), toComplex(r.Re))
		if e > tol {
			t.Errorf("%s: number %d is %v in the fake, %v in cuFFT (relative error %.3g > %g)", r.Name, at, f.Re[at], r.Re[at], e, tol)
		}
		worst[double] = max(worst[double], e)
	}
	t.Logf("%d transforms: the fake's outputs are within %.3g (float32) and %.3g (float64) of cuFFT's, relative to the largest", len(real), worst[false], worst[true])
}
