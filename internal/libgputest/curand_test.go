//go:build linux && (amd64 || arm64)

package libgputest

import (
	"math"
	"slices"
	"testing"

	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/curand"
)

// TestCurandPhiloxUniformIsInRangeWithMeanOneHalfAndRepeatsPerSeed fills
// device memory with curandGenerateUniform from a Philox generator on g's
// stream and checks the numbers: every one in (0, 1], mean and variance
// near 1/2 and 1/12, the same seed giving the same numbers from a second
// generator and another seed different ones.
func TestCurandPhiloxUniformIsInRangeWithMeanOneHalfAndRepeatsPerSeed(t *testing.T) {
	g := newGPU(t)
	needLibrary(t, "cuRAND", curand.Load, curand.ErrNoLibrary, curand.LibraryPath)
	var v int32
	check(t, "curandGetVersion", curand.GetVersion(&v))
	t.Logf("cuRAND version %d", v)

	const n = 1 << 20
	const seed = 20260310
	d := alloc[float32](t, n)
	generate := func(seed uint64) []float32 {
		t.Helper()
		var gen curand.CurandGenerator_t
		check(t, "curandCreateGenerator", curand.CreateGenerator(&gen, curand.CURAND_RNG_PSEUDO_PHILOX4_32_10))
		defer func() {
			if err := curand.DestroyGenerator(gen); err != nil {
				t.Errorf("curandDestroyGenerator: %v", err)
			}
		}()
		check(t, "curandSetStream", curand.SetStream(gen, g.stream))
		check(t, "curandSetPseudoRandomGeneratorSeed", curand.SetPseudoRandomGeneratorSeed(gen, seed))
		check(t, "cuMemsetD8", cu.MemsetD8(d, 0xff, n*4)) // NaN: unwritten elements show
		check(t, "curandGenerateUniform", curand.GenerateUniform(gen, devPtr[float32](d), n))
		g.wait(t)
		return download[float32](t, d, n)
	}

	x := generate(seed)
	var sum, sumSq float64
	lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
	for i, v := range x {
		if !(v > 0 && v <= 1) {
			t.Fatalf("curandGenerateUniform: x[%d] = %v, not in (0, 1]", i, v)
		}
		lo, hi = min(lo, v), max(hi, v)
		sum += float64(v)
		sumSq += float64(v) * float64(v)
	}
	mean := sum / n
	variance := sumSq/n - mean*mean
	// The mean's standard deviation is sqrt(1/12/n) ≈ 2.8e-4: 0.005 is
	// about 17 of them.
	if math.Abs(mean-0.5) > 0.005 || math.Abs(variance-1.0/12) > 0.005 {
		t.Fatalf("curandGenerateUniform: %d numbers of mean %.5f, variance %.5f; want 0.5 and %.5f", n, mean, variance, 1.0/12)
	}
	t.Logf("curandGenerateUniform (Philox, seed %d): %d floats in [%.3g, %.7g], mean %.5f, variance %.5f (1/12 = %.5f); x[0..3] = %v",
		seed, n, lo, hi, mean, variance, 1.0/12, x[:4])

	if y := generate(seed); !slices.Equal(x, y) {
		i := 0
		for i < n && x[i] == y[i] {
			i++
		}
		t.Fatalf("a second generator with seed %d differs at element %d: %v, was %v", seed, i, y[i], x[i])
	}
	z := generate(seed + 1)
	same := 0
	for i := range z {
		if z[i] == x[i] {
			same++
		}
	}
	if same > n/1000 {
		t.Fatalf("seed %d gives %d of %d numbers equal to those of seed %d", seed+1, same, n, seed)
	}
	t.Logf("a second generator with seed %d repeats all %d numbers; seed %d shares %d of them (x[0] = %v)", seed, n, seed+1, same, z[0])
}
