//go:build linux && (amd64 || arm64)

package fakecurand_test

// What package cuda/rand's tests do not reach: the Philox known answer,
// offsets far enough to take the jump matrices, the status codes of the
// calls cuda/rand checks before cuRAND, the log-normal and Poisson
// distributions, host generators, memory outside the fake driver's
// allocations, and the race detector seeing the numbers' write.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/curand"
	"github.com/gocuda/gocuda/internal/fakecurand"
)

// TestMain runs on the fake driver with its race detector, through
// cudatest.Setup, which sets the fake cuRAND up as users get it.
func TestMain(m *testing.M) {
	os.Exit(cudatest.UseFakeDriver(m, cudatest.WithRaceDetector()))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func stream(t *testing.T) *cuda.Stream {
	t.Helper()
	if !fakecurand.Active() {
		t.Fatalf("generated/curand loaded %q, not the fake cuRAND", curand.LibraryPath())
	}
	d, err := cuda.GetDevice(0)
	must(t, err)
	ctx, err := cuda.PrimaryContext(d)
	must(t, err)
	t.Cleanup(func() { ctx.Close() })
	s, err := cuda.NewStream(ctx)
	must(t, err)
	t.Cleanup(func() { s.Close() })
	// The raw calls below need the context current, as cuRAND's do;
	// package cuda binds it per call, so it is set here once for the
	// test's goroutine, which stays on its thread.
	runtime.LockOSThread()
	must(t, cu.CtxSetCurrent(ctx.Raw()))
	return s
}

func generator(t *testing.T, s *cuda.Stream, typ curand.CurandRngType_t, seed uint64) curand.CurandGenerator_t {
	t.Helper()
	var g curand.CurandGenerator_t
	must(t, curand.CreateGenerator(&g, typ))
	t.Cleanup(func() { must(t, curand.DestroyGenerator(g)) })
	must(t, curand.SetStream(g, s.Raw()))
	must(t, curand.SetPseudoRandomGeneratorSeed(g, seed))
	return g
}

func alloc(t *testing.T, s *cuda.Stream, bytes int) *cuda.DeviceMemory {
	t.Helper()
	m, err := cuda.Alloc(s.Context(), bytes)
	must(t, err)
	t.Cleanup(func() { m.Close() })
	return m
}

func ptr[T any](m *cuda.DeviceMemory) *T {
	p := m.Ptr()
	return (*T)(*(*unsafe.Pointer)(unsafe.Pointer(&p)))
}

func back[T cuda.Element](t *testing.T, s *cuda.Stream, m *cuda.DeviceMemory, n int) []T {
	t.Helper()
	must(t, s.Synchronize())
	v := make([]T, n)
	must(t, cuda.CopyFromDevice(v, m))
	return v
}

// bits makes n 32-bit numbers of typ with seed from offset.
func bits(t *testing.T, s *cuda.Stream, typ curand.CurandRngType_t, seed, offset uint64, n int) []uint32 {
	t.Helper()
	g := generator(t, s, typ, seed)
	if offset != 0 {
		must(t, curand.SetGeneratorOffset(g, offset))
	}
	m := alloc(t, s, 4*n)
	must(t, curand.Generate(g, ptr[uint32](m), uint64(n)))
	return back[uint32](t, s, m, n)
}

// TestPhiloxKnownAnswer: seed 0 is the zero key, and the first block is
// counter 0, whose Philox4x32-10 image Random123's known-answer vectors
// give.
func TestPhiloxKnownAnswer(t *testing.T) {
	s := stream(t)
	got := bits(t, s, curand.CURAND_RNG_PSEUDO_PHILOX4_32_10, 0, 0, 4)
	want := []uint32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}
	if !slices.Equal(got, want) {
		t.Fatalf("Philox4x32-10 of counter 0, key 0 = %08x, want %08x", got, want)
	}
}

// TestOffsetsSkipNumbers: offset k gives the numbers from k on, for
// offsets short and long enough to take the jump matrices, and an odd
// offset inside a Philox block.
func TestOffsetsSkipNumbers(t *testing.T) {
	s := stream(t)
	const n = 3000
	for _, typ := range []curand.CurandRngType_t{curand.CURAND_RNG_PSEUDO_PHILOX4_32_10, curand.CURAND_RNG_PSEUDO_XORWOW, curand.CURAND_RNG_PSEUDO_MRG32K3A} {
		all := bits(t, s, typ, 42, 0, n)
		for _, k := range []uint64{1, 7, 255, 256, 1001, 2047} {
			got := bits(t, s, typ, 42, k, n-int(k))
			if !slices.Equal(got, all[k:]) {
				t.Fatalf("%v: offset %d does not give the numbers from %d on", typ, k, k)
			}
		}
		// A far offset: two generators, k apart, agree from there on.
		const far = 1 << 40
		a := bits(t, s, typ, 42, far, 600)
		b := bits(t, s, typ, 42, far+300, 300)
		if !slices.Equal(a[300:], b) {
			t.Fatalf("%v: offsets 2^40 and 2^40+300 disagree", typ)
		}
	}
}

// TestDefaultIsXORWOW: PSEUDO_DEFAULT is XORWOW, as cuRAND documents.
func TestDefaultIsXORWOW(t *testing.T) {
	s := stream(t)
	a := bits(t, s, curand.CURAND_RNG_PSEUDO_DEFAULT, 9, 0, 100)
	b := bits(t, s, curand.CURAND_RNG_PSEUDO_XORWOW, 9, 0, 100)
	if !slices.Equal(a, b) {
		t.Fatal("PSEUDO_DEFAULT and XORWOW differ")
	}
}

func TestStatusCodes(t *testing.T) {
	s := stream(t)
	g := generator(t, s, curand.CURAND_RNG_PSEUDO_PHILOX4_32_10, 1)
	m := alloc(t, s, 64)
	p := m.Ptr()
	odd := (*float32)(unsafe.Add(*(*unsafe.Pointer)(unsafe.Pointer(&p)), 2))
	var mt curand.CurandGenerator_t
	must(t, curand.CreateGenerator(&mt, curand.CURAND_RNG_PSEUDO_MT19937))
	defer curand.DestroyGenerator(mt)
	var h curand.CurandGenerator_t
	for name, tc := range map[string]struct {
		err  error
		want curand.CurandStatus_t
	}{
		"odd normal":           {curand.GenerateNormal(g, ptr[float32](m), 3, 0, 1), curand.CURAND_STATUS_LENGTH_NOT_MULTIPLE},
		"odd log-normal":       {curand.GenerateLogNormalDouble(g, ptr[float64](m), 5, 0, 1), curand.CURAND_STATUS_LENGTH_NOT_MULTIPLE},
		"misaligned":           {curand.GenerateUniform(g, odd, 2), curand.CURAND_STATUS_LAUNCH_FAILURE},
		"outside memory":       {curand.GenerateUniform(g, ptr[float32](m), 1000), curand.CURAND_STATUS_LAUNCH_FAILURE},
		"zero lambda":          {curand.GeneratePoisson(g, ptr[uint32](m), 4, 0), curand.CURAND_STATUS_OUT_OF_RANGE},
		"long long":            {curand.GenerateLongLong(g, ptr[uint64](m), 4), curand.CURAND_STATUS_TYPE_ERROR},
		"dimensions":           {curand.SetQuasiRandomGeneratorDimensions(g, 2), curand.CURAND_STATUS_TYPE_ERROR},
		"quasi ordering":       {curand.SetGeneratorOrdering(g, curand.CURAND_ORDERING_QUASI_DEFAULT), curand.CURAND_STATUS_OUT_OF_RANGE},
		"MT19937 offset":       {curand.SetGeneratorOffset(mt, 5), curand.CURAND_STATUS_TYPE_ERROR},
		"MTGP32":               {curand.CreateGenerator(&h, curand.CURAND_RNG_PSEUDO_MTGP32), curand.CURAND_STATUS_TYPE_ERROR},
		"Sobol32":              {curand.CreateGenerator(&h, curand.CURAND_RNG_QUASI_SOBOL32), curand.CURAND_STATUS_TYPE_ERROR},
		"destroyed generator":  {destroyed(t), curand.CURAND_STATUS_NOT_INITIALIZED},
		"not a generator":      {curand.GenerateUniform(curand.CurandGenerator_t(12345), ptr[float32](m), 2), curand.CURAND_STATUS_NOT_INITIALIZED},
		"ordering, legacy":     {curand.SetGeneratorOrdering(g, curand.CURAND_ORDERING_PSEUDO_LEGACY), curand.CURAND_STATUS_SUCCESS},
		"no numbers, odd ptr":  {curand.GenerateUniform(g, odd, 0), curand.CURAND_STATUS_SUCCESS},
		"generate seeds":       {curand.GenerateSeeds(g), curand.CURAND_STATUS_SUCCESS},
		"count past memory":    {curand.GenerateUniform(g, ptr[float32](m), 1<<62), curand.CURAND_STATUS_LAUNCH_FAILURE},
		"count that wraps":     {curand.GenerateUniformDouble(g, ptr[float64](m), 1<<61+1), curand.CURAND_STATUS_LAUNCH_FAILURE},
		"normal, even, double": {curand.GenerateNormalDouble(g, ptr[float64](m), 8, 0, 1), curand.CURAND_STATUS_SUCCESS},
	} {
		var got curand.CurandStatus_t
		if tc.err != nil && !errors.As(tc.err, &got) {
			t.Errorf("%s: %v, not a cuRAND status", name, tc.err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s: %v, want %v", name, tc.err, tc.want)
		}
	}
	must(t, s.Synchronize())
}

func destroyed(t *testing.T) error {
	var g curand.CurandGenerator_t
	must(t, curand.CreateGenerator(&g, curand.CURAND_RNG_PSEUDO_XORWOW))
	must(t, curand.DestroyGenerator(g))
	return curand.SetPseudoRandomGeneratorSeed(g, 1)
}

func meanVar[T float32 | float64 | uint32](v []T) (mean, variance float64) {
	for _, x := range v {
		mean += float64(x)
	}
	mean /= float64(len(v))
	for _, x := range v {
		d := float64(x) - mean
		variance += d * d
	}
	return mean, variance / float64(len(v))
}

// TestLogNormalAndPoissonMoments: exp(N(μ, σ²)) has mean e^(μ+σ²/2), and
// a Poisson number of mean λ has variance λ, for λ on both sides of the
// method switch at 30. Bounds: 8 standard errors of 2^18 numbers (of the
// sample variance over λ: √((2 + 1/λ)/n)).
func TestLogNormalAndPoissonMoments(t *testing.T) {
	s := stream(t)
	const n = 1 << 18
	m := alloc(t, s, 8*n)
	for _, typ := range []curand.CurandRngType_t{curand.CURAND_RNG_PSEUDO_PHILOX4_32_10, curand.CURAND_RNG_PSEUDO_MRG32K3A} {
		g := generator(t, s, typ, 3)
		const mu, sigma = 0.5, 0.25
		must(t, curand.GenerateLogNormal(g, ptr[float32](m), n, mu, sigma))
		ln := back[float32](t, s, m, n)
		want := math.Exp(mu + sigma*sigma/2)
		sd := want * math.Sqrt(math.Exp(sigma*sigma)-1)
		if mean, _ := meanVar(ln); math.Abs(mean-want) > 8*sd/math.Sqrt(n) || slices.Min(ln) <= 0 {
			t.Errorf("%v log-normal: mean %.5f, want %.5f; min %v", typ, mean, want, slices.Min(ln))
		}
		for _, lambda := range []float64{0.5, 4, 29.9, 30, 250, 1e5} {
			must(t, curand.GeneratePoisson(g, ptr[uint32](m), n, lambda))
			v := back[uint32](t, s, m, n)
			mean, variance := meanVar(v)
			if math.Abs(mean-lambda) > 8*math.Sqrt(lambda/n) || math.Abs(variance/lambda-1) > 8*math.Sqrt((2+1/lambda)/n) {
				t.Errorf("%v Poisson(%v): mean %.4f, variance %.4f", typ, lambda, mean, variance)
			}
		}
	}
}

// TestHostGenerator: curandCreateGeneratorHost writes to host memory at
// once, the numbers a device generator of the type and seed gives.
func TestHostGenerator(t *testing.T) {
	s := stream(t)
	var g curand.CurandGenerator_t
	must(t, curand.CreateGeneratorHost(&g, curand.CURAND_RNG_PSEUDO_MRG32K3A))
	defer curand.DestroyGenerator(g)
	must(t, curand.SetPseudoRandomGeneratorSeed(g, 77))
	host := make([]float64, 1000)
	must(t, curand.GenerateUniformDouble(g, &host[0], uint64(len(host))))
	dev := generator(t, s, curand.CURAND_RNG_PSEUDO_MRG32K3A, 77)
	m := alloc(t, s, 8*len(host))
	must(t, curand.GenerateUniformDouble(dev, ptr[float64](m), uint64(len(host))))
	if got := back[float64](t, s, m, len(host)); !slices.Equal(got, host) {
		t.Fatal("a host generator's numbers differ from a device generator's")
	}
}

// TestVersion: Setup made curandGetVersion report the bindings' version.
func TestVersion(t *testing.T) {
	var v int32
	must(t, curand.GetVersion(&v))
	var major int32
	must(t, curand.GetProperty(0, &major))
	if v != curand.CURAND_VERSION || major != v/1000 {
		t.Fatalf("version %d, major %d; want %d", v, major, curand.CURAND_VERSION)
	}
}

// TestWriteIsSeenByTheRaceDetector: numbers generated on one stream and
// memory set on another without an event between them race.
func TestWriteIsSeenByTheRaceDetector(t *testing.T) {
	a, b := stream(t), stream(t)
	g := generator(t, a, curand.CURAND_RNG_PSEUDO_XORWOW, 5)
	m := alloc(t, a, 4096)
	must(t, a.Synchronize())
	must(t, curand.GenerateUniform(g, ptr[float32](m), 1024))
	must(t, cu.MemsetD8Async(m.Ptr(), 0, 4096, b.Raw()))
	must(t, a.Synchronize())
	must(t, b.Synchronize())
	races := cudatest.TakeRaces()
	for _, r := range races {
		cp := r.Access
		if r.Previous.Op == "copy" {
			cp = r.Previous
		}
		if fmt.Sprint(r.Access.Op, r.Previous.Op) != "memsetcopy" && fmt.Sprint(r.Access.Op, r.Previous.Op) != "copymemset" {
			continue
		}
		// The stack of the copy goes through the fake cuRAND's frames to
		// the Go code that called it.
		for _, f := range cp.Stack {
			if strings.HasSuffix(f.Function, "TestWriteIsSeenByTheRaceDetector") {
				return
			}
		}
		t.Fatalf("the copy's stack %v does not reach the test", cp.Stack)
	}
	t.Fatalf("races %v, want the copy of the numbers against the memset", races)
}
