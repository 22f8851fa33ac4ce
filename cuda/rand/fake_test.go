//go:build linux && (amd64 || arm64)

package rand_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/rand"
	"github.com/gocuda/gocuda/generated/curand"
	"github.com/gocuda/gocuda/internal/fakecurand"
)

// fakeChildEnv names the file where TestFakeMatchesCuRAND's child, which
// runs on the fake driver and the fake cuRAND, writes its statistics.
const fakeChildEnv = "GOCUDA_RAND_FAKE_CHILD"

// sample is what one generator kind's numbers are compared by.
type sample struct {
	UniformMean, UniformSD float64
	UniformDeciles         []float64 // the fraction below 0.1, 0.2, …, 0.9
	NormalMean, NormalSD   float64
	NormalWithin1          float64  // the fraction within one deviation
	First                  []uint32 // the first uniform numbers' bits, for the log
}

// sampleAll generates, for every kind, 2^20 uniform float32 and 2^20
// normal float64 numbers (mean 3, deviation 2) with one seed.
func sampleAll(t *testing.T) map[string]sample {
	ctx, s := libtest.Stream(t)
	const n = 1 << 20
	const mu, sigma = 3.0, 2.0
	out := map[string]sample{}
	for _, kind := range kinds {
		g := newGenerator(t, s, kind, 1234)
		mu32 := filled[float32](t, ctx, n)
		if err := rand.Uniform[float32](g, mu32); err != nil {
			t.Fatal(err)
		}
		u := download[float32](t, s, mu32, n)
		var smp sample
		smp.UniformMean, smp.UniformSD = moments(t, "uniform", u)
		sorted := slices.Clone(u)
		slices.Sort(sorted)
		for d := 1; d <= 9; d++ {
			i, _ := slices.BinarySearch(sorted, float32(d)/10)
			smp.UniformDeciles = append(smp.UniformDeciles, float64(i)/n)
		}
		for _, v := range u[:8] {
			smp.First = append(smp.First, math.Float32bits(v))
		}
		mn := filled[float64](t, ctx, n)
		if err := rand.Normal(g, mn, mu, sigma); err != nil {
			t.Fatal(err)
		}
		x := download[float64](t, s, mn, n)
		smp.NormalMean, smp.NormalSD = moments(t, "normal", x)
		within := 0
		for _, v := range x {
			if math.Abs(v-mu) <= sigma {
				within++
			}
		}
		smp.NormalWithin1 = float64(within) / n
		out[kind.String()] = smp
	}
	return out
}

// TestFakeMatchesCuRAND compares the fake cuRAND with the real one on a
// GPU: it generates with cuRAND, then runs the same generation in a child
// process of this test binary on the fake driver and the fake cuRAND, and
// compares the two by their statistics, not number by number: the fake
// has cuRAND's algorithms but not its order of the numbers (see
// internal/fakecurand). The bounds are about 8 standard errors of the
// difference of two samples of 2^20; the log says whether the first
// numbers of a kind are the same bits all the same.
func TestFakeMatchesCuRAND(t *testing.T) {
	real, fake, ok := libtest.RealAndFake(t, "cuRAND", fakeChildEnv, curand.LibraryEnv, fakecurand.Active, sampleAll)
	if !ok {
		return
	}
	for _, kind := range kinds {
		r, f := real[kind.String()], fake[kind.String()]
		check := func(what string, got, want, tol float64) {
			if math.Abs(got-want) > tol {
				t.Errorf("%v %s: fake %.5f, cuRAND %.5f (bound %g)", kind, what, got, want, tol)
			}
		}
		check("uniform mean", f.UniformMean, r.UniformMean, 0.0035)
		check("uniform sd", f.UniformSD, r.UniformSD, 0.0025)
		for d := range r.UniformDeciles {
			check(fmt.Sprintf("fraction below 0.%d", d+1), f.UniformDeciles[d], r.UniformDeciles[d], 0.0055)
		}
		check("normal mean", f.NormalMean, r.NormalMean, 0.025)
		check("normal sd", f.NormalSD, r.NormalSD, 0.02)
		check("fraction within one sd", f.NormalWithin1, r.NormalWithin1, 0.006)
		t.Logf("%v: fake uniform mean %.5f sd %.5f, cuRAND %.5f %.5f; normal mean %.4f sd %.4f within 1 sd %.4f, cuRAND %.4f %.4f %.4f; first uniform float32 bits the same: %v (fake %08x, cuRAND %08x)",
			kind, f.UniformMean, f.UniformSD, r.UniformMean, r.UniformSD, f.NormalMean, f.NormalSD, f.NormalWithin1, r.NormalMean, r.NormalSD, r.NormalWithin1, slices.Equal(f.First, r.First), f.First, r.First)
	}
}
