//go:build linux && (amd64 || arm64)

package rand_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/internal/libtest"
	"github.com/gocuda/gocuda/cuda/rand"
	"github.com/gocuda/gocuda/generated/curand"
)

// newGenerator makes a generator on s, skipping where there is no cuRAND
// (unless GOCUDA_TEST_LIBS=required).
func newGenerator(t *testing.T, s *cuda.Stream, kind rand.Kind, seed uint64) *rand.Generator {
	t.Helper()
	g, err := rand.New(s, kind, seed)
	if errors.Is(err, curand.ErrNoLibrary) {
		libtest.Unavailable(t, "no cuRAND library: %v", err)
	}
	if err != nil {
		t.Fatalf("New(%v, %d): %v", kind, seed, err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// filled returns device memory holding n NaNs of T: elements left
// unwritten show.
func filled[T float32 | float64](t *testing.T, ctx *cuda.Context, n int) *cuda.DeviceMemory {
	t.Helper()
	v := make([]T, n)
	for i := range v {
		v[i] = T(math.NaN())
	}
	m, err := cuda.AllocFrom(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// download synchronizes s and copies n elements of m back.
func download[T float32 | float64](t *testing.T, s *cuda.Stream, m *cuda.DeviceMemory, n int) []T {
	t.Helper()
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	v := make([]T, n)
	if err := cuda.CopyFromDevice(v, m); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCountsAreCheckedBeforeCuRAND(t *testing.T) {
	ctx := libtest.Context(t)
	m40 := libtest.Alloc(t, ctx, 40) // 10 float32, 5 float64
	m10 := libtest.Alloc(t, ctx, 10)
	closed := libtest.Alloc(t, ctx, 40)
	closed.Close()
	var g *rand.Generator // nil: anything that passes the checks fails with ErrClosed
	for name, tc := range map[string]struct {
		err  error
		want string
	}{
		"too many":              {rand.UniformN[float32](g, m40, 11), "11 float32 need 44 bytes, but the memory has 40"},
		"too many float64":      {rand.UniformN[float64](g, m40, 6), "6 float64 need 48 bytes, but the memory has 40"},
		"negative":              {rand.UniformN[float32](g, m40, -1), "negative count -1"},
		"odd normal":            {rand.NormalN[float32](g, m40, 7, 0, 1), "7 numbers: cuRAND's pseudo-random generators make normally distributed numbers in pairs, so the count must be even"},
		"odd whole normal":      {rand.Normal[float64](g, m40, 0, 1), "5 numbers"},
		"not whole":             {rand.Uniform[float64](g, m10), "the memory's 10 bytes are not a whole number of 8-byte float64: use UniformN"},
		"not whole normal":      {rand.Normal[float32](g, m10, 0, 1), "not a whole number of 4-byte float32: use NormalN"},
		"negative deviation":    {rand.NormalN[float32](g, m40, 2, 0, -1), "standard deviation -1"},
		"NaN mean":              {rand.NormalN(g, m40, 2, math.NaN(), 1.0), "mean NaN"},
		"infinite deviation":    {rand.Normal(g, m40, float32(0), float32(math.Inf(1))), "standard deviation +Inf"},
		"normal after uniform":  {rand.NormalN[float64](g, m40, 6, 0, 1), "6 float64 need 48 bytes"},
		"whole after not whole": {rand.Uniform[float32](g, m10), "not a whole number of 4-byte float32"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", name, tc.err, tc.want)
		}
		if errors.Is(tc.err, cuda.ErrClosed) {
			t.Errorf("%s: %v matches ErrClosed: the check came after the handle's", name, tc.err)
		}
	}
	for name, err := range map[string]error{
		"closed memory":         rand.UniformN[float32](g, closed, 1),
		"closed memory, whole":  rand.Uniform[float32](g, closed),
		"nil memory":            rand.Normal[float32](g, nil, 0, 1),
		"nil generator":         rand.Uniform[float32](g, m40),
		"nil generator, normal": rand.NormalN[float64](g, m40, 4, 0, 1),
		"nil generator, zero":   rand.UniformN[float64](g, m40, 0),
		"SetSeed on nil":        g.SetSeed(1),
		"SetOffset on nil":      g.SetOffset(1),
	} {
		if !errors.Is(err, cuda.ErrClosed) {
			t.Errorf("%s: %v, want ErrClosed", name, err)
		}
	}
	if g.Stream() != nil || g.Kind() != rand.Philox {
		t.Error("Stream or Kind of a nil generator")
	}
	if _, err := rand.New(nil, rand.Kind(9), 1); err == nil || !strings.Contains(err.Error(), "unknown generator kind Kind(9)") {
		t.Errorf("New with an unknown kind = %v", err)
	}
	if _, err := rand.New(nil, rand.Philox, 1); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("New on a nil stream = %v, want ErrClosed", err)
	}
}

// moments are the mean and standard deviation of v; every element must
// be finite.
func moments[T float32 | float64](t *testing.T, what string, v []T) (mean, sd float64) {
	t.Helper()
	var sum, sumSq float64
	for i, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			t.Fatalf("%s: element %d of %d is %v", what, i, len(v), x)
		}
		sum += f
		sumSq += f * f
	}
	n := float64(len(v))
	mean = sum / n
	return mean, math.Sqrt(max(sumSq/n-mean*mean, 0))
}

var kinds = []rand.Kind{rand.Philox, rand.XORWOW, rand.MRG32k3a, rand.MT19937}

func checkUniform[T float32 | float64](t *testing.T, ctx *cuda.Context, s *cuda.Stream, kind rand.Kind) {
	const n = 1 << 20
	const seed = 20260311
	what := fmt.Sprintf("Uniform[%T] %v", T(0), kind)
	g := newGenerator(t, s, kind, seed)
	m := filled[T](t, ctx, n)
	if err := rand.Uniform[T](g, m); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	x := download[T](t, s, m, n)
	for i, v := range x {
		if !(v > 0 && v <= 1) {
			t.Fatalf("%s: x[%d] = %v, not in (0, 1]", what, i, v)
		}
	}
	// The mean's standard deviation is sqrt(1/12/n) ≈ 2.8e-4: 0.003 is
	// about 10 of them.
	mean, sd := moments(t, what, x)
	if math.Abs(mean-0.5) > 0.003 || math.Abs(sd-math.Sqrt(1.0/12)) > 0.003 {
		t.Fatalf("%s: mean %.5f, standard deviation %.5f; want 0.5 and %.5f", what, mean, sd, math.Sqrt(1.0/12))
	}

	// The same seed: the same numbers.
	gen := func(g *rand.Generator, count int) error {
		if count == n {
			return rand.Uniform[T](g, m)
		}
		return rand.UniformN[T](g, m, count)
	}
	same := checkRepeatsPerSeed(t, s, what, kind, seed, g, m, x, true, gen)
	t.Logf("%s: %d numbers in (0, 1], mean %.5f, sd %.5f; seed %d repeats them from SetSeed, a new generator and two calls of n/2; seed %d shares %d", what, n, mean, sd, seed, seed+1, same)
}

// checkRepeatsPerSeed checks that x, the first len(x) numbers gen makes in
// m with g, a generator of kind made with seed, come again with that
// seed: from g after SetSeed, whatever g made in between; from a new
// generator; and, with halves, from two calls of len(x)/2. seed+1 must
// give other numbers: it returns how many of its are equal to x's. gen
// writes count numbers to the start of m.
func checkRepeatsPerSeed[T float32 | float64](t *testing.T, s *cuda.Stream, what string, kind rand.Kind, seed uint64, g *rand.Generator, m *cuda.DeviceMemory, x []T, halves bool, gen func(g *rand.Generator, count int) error) int {
	t.Helper()
	n := len(x)
	if err := gen(g, 1000); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := g.SetSeed(seed); err != nil {
		t.Fatal(err)
	}
	if err := gen(g, n); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	again := download[T](t, s, m, n)
	fresh := newGenerator(t, s, kind, seed)
	if err := gen(fresh, n); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	runs := map[string][]T{"SetSeed": again, "a new generator": download[T](t, s, m, n)}
	if halves {
		if err := g.SetSeed(seed); err != nil {
			t.Fatal(err)
		}
		var h []T
		for range 2 {
			if err := gen(g, n/2); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			h = append(h, download[T](t, s, m, n/2)...)
		}
		runs["two calls of n/2"] = h
	}
	for name, y := range runs {
		if i := firstDiff(x, y); i >= 0 {
			t.Fatalf("%s: %s with seed %d differs at element %d: %v, was %v", what, name, seed, i, y[i], x[i])
		}
	}
	// Another seed: other numbers.
	if err := g.SetSeed(seed + 1); err != nil {
		t.Fatal(err)
	}
	if err := gen(g, n); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	other := download[T](t, s, m, n)
	same := 0
	for i := range other {
		if other[i] == x[i] {
			same++
		}
	}
	if same > n/1000 {
		t.Fatalf("%s: seed %d gives %d of %d numbers equal to those of seed %d", what, seed+1, same, n, seed)
	}
	return same
}

func firstDiff[T comparable](x, y []T) int {
	if slices.Equal(x, y) {
		return -1
	}
	for i := range x {
		if x[i] != y[i] {
			return i
		}
	}
	return len(x)
}

func TestUniformIsInRangeWithMeanOneHalfAndRepeatsPerSeed(t *testing.T) {
	ctx, s := libtest.Stream(t)
	for _, k := range kinds {
		checkUniform[float32](t, ctx, s, k)
		checkUniform[float64](t, ctx, s, k)
	}
}

func checkNormal[T float32 | float64](t *testing.T, ctx *cuda.Context, s *cuda.Stream, kind rand.Kind) {
	const n = 1 << 20
	const mu, sigma = 3.0, 2.0
	const seed = 7
	what := fmt.Sprintf("Normal[%T] %v", T(0), kind)
	g := newGenerator(t, s, kind, seed)
	m := filled[T](t, ctx, n)
	// All but the last 2: those stay NaN.
	if err := rand.NormalN(g, m, n-2, T(mu), T(sigma)); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	x := download[T](t, s, m, n)
	if !math.IsNaN(float64(x[n-1])) || !math.IsNaN(float64(x[n-2])) {
		t.Fatalf("%s: NormalN wrote past its count: %v", what, x[n-2:])
	}
	x = x[:n-2]
	// The mean's standard deviation is sigma/sqrt(n) ≈ 2e-3, the
	// sample deviation's sigma/sqrt(2n) ≈ 1.4e-3.
	mean, sd := moments(t, what, x)
	if math.Abs(mean-mu) > 0.02 || math.Abs(sd-sigma) > 0.015 {
		t.Fatalf("%s: mean %.4f, standard deviation %.4f; want %v and %v", what, mean, sd, mu, sigma)
	}
	within := 0
	for _, v := range x {
		if math.Abs(float64(v)-mu) <= sigma {
			within++
		}
	}
	// 68.27% within one deviation; its sd is about 0.05%.
	if f := float64(within) / float64(len(x)); math.Abs(f-0.6827) > 0.005 {
		t.Fatalf("%s: %.4f of the numbers within one standard deviation, want 0.6827", what, f)
	}

	// The same seed: the same numbers. Not from two calls of half as
	// many: cuRAND makes normal numbers from pairs (Box-Muller), and
	// documents no order that a split keeps.
	gen := func(g *rand.Generator, count int) error { return rand.NormalN(g, m, count, T(mu), T(sigma)) }
	same := checkRepeatsPerSeed(t, s, what, kind, seed, g, m, x, false, gen)
	t.Logf("%s: %d numbers, mean %.4f (want %v), sd %.4f (want %v), %.2f%% within one sd; seed %d repeats them from SetSeed and a new generator; seed %d shares %d",
		what, len(x), mean, mu, sd, sigma, 100*float64(within)/float64(len(x)), seed, seed+1, same)
}

func TestNormalHasItsMeanAndDeviationAndRepeatsPerSeed(t *testing.T) {
	ctx, s := libtest.Stream(t)
	for _, k := range kinds {
		checkNormal[float32](t, ctx, s, k)
		checkNormal[float64](t, ctx, s, k)
	}
}

// TestSetOffsetSkipsAhead: a generator moved to offset k gives the numbers
// a generator at 0 gives from its k-th on, each time.
func TestSetOffsetSkipsAhead(t *testing.T) {
	ctx, s := libtest.Stream(t)
	const n, k = 1 << 16, 1 << 12
	m := libtest.Alloc(t, ctx, 4*n)
	for _, kind := range []rand.Kind{rand.Philox, rand.XORWOW, rand.MRG32k3a} {
		g := newGenerator(t, s, kind, 99)
		if err := rand.Uniform[float32](g, m); err != nil {
			t.Fatal(err)
		}
		base := download[float32](t, s, m, n)
		var runs [2][]float32
		for i := range runs {
			if err := g.SetOffset(k); err != nil {
				t.Fatal(err)
			}
			if err := rand.UniformN[float32](g, m, n-k); err != nil {
				t.Fatal(err)
			}
			runs[i] = download[float32](t, s, m, n-k)
		}
		if i := firstDiff(runs[0], runs[1]); i >= 0 {
			t.Fatalf("%v: offset %d twice differs at %d", kind, k, i)
		}
		if slices.Equal(runs[0][:100], base[:100]) {
			t.Fatalf("%v: offset %d gives the numbers of offset 0", kind, k)
		}
		if i := firstDiff(runs[0], base[k:]); i >= 0 {
			t.Fatalf("%v: offset %d differs from the numbers from %d on at element %d", kind, k, k, i)
		}
		t.Logf("%v: offset %d gives the numbers from %d on, each time", kind, k, k)
	}
}

// TestGenerateFromManyGoroutines shares one generator, and so one stream,
// between goroutines, each with its own clone: run it with -race. The
// calls take turns, so each one's numbers are one of the blocks that the
// same calls made one after the other give.
func TestGenerateFromManyGoroutines(t *testing.T) {
	ctx, s := libtest.Stream(t)
	const workers, calls, n = 8, 10, 4096
	const seed = 5
	g := newGenerator(t, s, rand.Philox, seed)
	mems := make([][]*cuda.DeviceMemory, workers)
	var wg sync.WaitGroup
	for w := range workers {
		mems[w] = make([]*cuda.DeviceMemory, calls)
		for i := range calls {
			mems[w][i] = libtest.Alloc(t, ctx, 4*n)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine, err := g.Clone()
			if err != nil {
				t.Error(err)
				return
			}
			defer mine.Close()
			for i := range calls {
				if err := rand.Uniform[float32](mine, mems[w][i]); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	ref := newGenerator(t, s, rand.Philox, seed)
	m := libtest.Alloc(t, ctx, 4*n)
	blocks := map[string]int{}
	for i := range workers * calls {
		if err := rand.Uniform[float32](ref, m); err != nil {
			t.Fatal(err)
		}
		blocks[fmt.Sprint(download[float32](t, s, m, n))] = i
	}
	seen := map[int]bool{}
	for w := range workers {
		for i := range calls {
			b, ok := blocks[fmt.Sprint(download[float32](t, s, mems[w][i], n))]
			if !ok {
				t.Fatalf("goroutine %d, call %d: numbers of no call in sequence", w, i)
			}
			if seen[b] {
				t.Fatalf("goroutine %d, call %d: the numbers of call %d again", w, i, b)
			}
			seen[b] = true
		}
	}
	t.Logf("%d goroutines × %d calls on one generator: each got one of the %d blocks of the sequence, none twice", workers, calls, len(blocks))
}

func TestClosedGenerator(t *testing.T) {
	ctx, s := libtest.Stream(t)
	g := newGenerator(t, s, rand.XORWOW, 1)
	c, err := g.Clone()
	if err != nil {
		t.Fatal(err)
	}
	if c.Kind() != rand.XORWOW {
		t.Fatalf("clone's kind %v", c.Kind())
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	m := libtest.Alloc(t, ctx, 64)
	if err := rand.Uniform[float32](c, m); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("Uniform after Close = %v, want ErrClosed", err)
	}
	if err := c.SetSeed(3); !errors.Is(err, cuda.ErrClosed) {
		t.Fatalf("SetSeed after Close = %v, want ErrClosed", err)
	}
	if c.Stream() != nil || g.Stream() == nil {
		t.Fatal("Stream of the closed and the open generator")
	}
	// The generator outlives the stream it was made on.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rand.Uniform[float32](g, m); err != nil {
		t.Fatalf("Uniform after the user's stream was closed: %v", err)
	}
	if err := g.Stream().Synchronize(); err != nil {
		t.Fatal(err)
	}
}

// TestNewWithoutCuRAND runs in a child process with GOCUDA_LIBCURAND
// pointing nowhere: New fails with an error matching curand.ErrNoLibrary.
func TestNewWithoutCuRAND(t *testing.T) {
	if os.Getenv("GOCUDA_RAND_CHILD") != "" {
		ctx := libtest.Context(t)
		s, err := cuda.NewStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		before := cuda.LiveObjects()
		_, err = rand.New(s, rand.Philox, 1)
		if !errors.Is(err, curand.ErrNoLibrary) || !strings.Contains(err.Error(), "/nonexistent/libcurand.so") {
			t.Fatalf("New = %v, want curand.ErrNoLibrary naming the path", err)
		}
		if after := cuda.LiveObjects(); after != before {
			t.Fatalf("live objects %+v after, %+v before", after, before)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNewWithoutCuRAND$", "-test.v")
	cmd.Env = append(os.Environ(), "GOCUDA_RAND_CHILD=1", curand.LibraryEnv+"=/nonexistent/libcurand.so")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skipf("child skipped:\n%s", out)
	}
}
