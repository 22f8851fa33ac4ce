//go:build linux && (amd64 || arm64)

package fakecufft_test

// What package cuda/fft's tests do not reach: the advanced layout of
// cufftPlanMany (strides, distances, embeds) with the gaps left as they
// were, sizes that take Bluestein's algorithm, the 32-bit planners, the
// status codes, memory outside the fake driver's allocations and the race
// detector seeing a transform's read and write.

import (
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cufft"
	"github.com/gocuda/gocuda/internal/fakecufft"
)

// TestMain runs on the fake driver with its race detector, through
// cudatest.Setup, which sets the fake cuFFT up as users get it.
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
	if !fakecufft.Active() {
		t.Fatalf("generated/cufft loaded %q, not the fake cuFFT", cufft.LibraryPath())
	}
	d, err := cuda.GetDevice(0)
	must(t, err)
	ctx, err := cuda.PrimaryContext(d)
	must(t, err)
	t.Cleanup(func() { ctx.Close() })
	s, err := cuda.NewStream(ctx)
	must(t, err)
	t.Cleanup(func() { s.Close() })
	// The raw calls below need the context current, as cuFFT's do.
	runtime.LockOSThread()
	must(t, cu.CtxSetCurrent(ctx.Raw()))
	return s
}

func upload(t *testing.T, s *cuda.Stream, x []complex64) *cuda.DeviceMemory {
	t.Helper()
	m, err := cuda.AllocFrom(s.Context(), x)
	must(t, err)
	t.Cleanup(func() { m.Close() })
	return m
}

func download(t *testing.T, s *cuda.Stream, m *cuda.DeviceMemory, n int) []complex64 {
	t.Helper()
	must(t, s.Synchronize())
	v := make([]complex64, n)
	must(t, cuda.CopyFromDevice(v, m))
	return v
}

func dptr[T any](m *cuda.DeviceMemory) *T {
	p := m.Ptr()
	return (*T)(*(*unsafe.Pointer)(unsafe.Pointer(&p)))
}

// dft1 is the naive transform of x with e^(sign·2πi·jk/n), in float64.
func dft1(x []complex128, sign float64) []complex128 {
	n := len(x)
	out := make([]complex128, n)
	for k := range out {
		for j, v := range x {
			out[k] += v * cmplx.Rect(1, sign*2*math.Pi*float64(j*k%n)/float64(n))
		}
	}
	return out
}

func random(r *rand.Rand, n int) []complex64 {
	x := make([]complex64, n)
	for i := range x {
		x[i] = complex(float32(2*r.Float64()-1), float32(2*r.Float64()-1))
	}
	return x
}

// TestBluesteinSizes: sizes that are not powers of two, primes among
// them, match the naive DFT within float32 rounding.
func TestBluesteinSizes(t *testing.T) {
	s := stream(t)
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1, 2, 3, 17, 97, 360, 1009} {
		x := random(r, n)
		in := upload(t, s, x)
		var p cufft.CufftHandle
		must(t, cufft.Plan1d(&p, int32(n), cufft.CUFFT_C2C, 1))
		must(t, cufft.SetStream(p, s.Raw()))
		must(t, cufft.ExecC2C(p, dptr[cufft.CufftComplex](in), dptr[cufft.CufftComplex](in), cufft.CUFFT_INVERSE))
		got := download(t, s, in, n)
		must(t, cufft.Destroy(p))
		x128 := make([]complex128, n)
		for i, v := range x {
			x128[i] = complex128(v)
		}
		want := dft1(x128, 1)
		for k := range want {
			if d := cmplx.Abs(complex128(got[k]) - want[k]); d > 1e-5*math.Sqrt(float64(n)) {
				t.Fatalf("n %d: X[%d] = %v, want %v", n, k, got[k], want[k])
			}
		}
	}
}

// TestAdvancedLayout: cufftPlanMany with an input of stride 2 inside a
// 2-D embed wider than the transform and an output of stride 3 and its
// own distance transforms each batch member as the packed one would,
// and leaves every element between the outputs as it was.
func TestAdvancedLayout(t *testing.T) {
	s := stream(t)
	r := rand.New(rand.NewPCG(2, 2))
	const nx, ny, batch = 6, 5, 3
	n := []int32{nx, ny}
	inembed, onembed := []int32{nx, ny + 2}, []int32{nx, ny}
	const istride, ostride = 2, 3
	idist, odist := int32(nx*(ny+2)*istride+1), int32(nx*ny*ostride+4)
	inLen, outLen := int(idist)*batch, int(odist)*batch
	x := random(r, inLen)
	const sentinel = complex64(complex(1234, -5678))
	fill := make([]complex64, outLen)
	for i := range fill {
		fill[i] = sentinel
	}
	in, out := upload(t, s, x), upload(t, s, fill)
	var p cufft.CufftHandle
	must(t, cufft.PlanMany(&p, 2, &n[0], &inembed[0], istride, idist, &onembed[0], ostride, odist, cufft.CUFFT_C2C, batch))
	defer cufft.Destroy(p)
	must(t, cufft.SetStream(p, s.Raw()))
	must(t, cufft.ExecC2C(p, dptr[cufft.CufftComplex](in), dptr[cufft.CufftComplex](out), cufft.CUFFT_FORWARD))
	got := download(t, s, out, outLen)
	written := make([]bool, outLen)
	for b := range batch {
		// The 2-D DFT of the batch member, axis by axis.
		a := make([][]complex128, nx)
		for i := range nx {
			row := make([]complex128, ny)
			for j := range ny {
				row[j] = complex128(x[b*int(idist)+(i*int(inembed[1])+j)*istride])
			}
			a[i] = dft1(row, -1)
		}
		for j := range ny {
			col := make([]complex128, nx)
			for i := range nx {
				col[i] = a[i][j]
			}
			col = dft1(col, -1)
			for i := range nx {
				o := b*int(odist) + (i*int(onembed[1])+j)*ostride
				written[o] = true
				if d := cmplx.Abs(complex128(got[o]) - col[i]); d > 1e-4 {
					t.Fatalf("batch %d, X[%d][%d] at %d = %v, want %v", b, i, j, o, got[o], col[i])
				}
			}
		}
	}
	for i, w := range written {
		if !w && got[i] != sentinel {
			t.Fatalf("element %d, between the outputs, is %v, was %v", i, got[i], sentinel)
		}
	}
}

func status(t *testing.T, err error) cufft.CufftResult {
	t.Helper()
	if err == nil {
		return cufft.CUFFT_SUCCESS
	}
	var r cufft.CufftResult
	if !errors.As(err, &r) {
		t.Fatalf("%v is not a cuFFT result", err)
	}
	return r
}

func TestStatusCodes(t *testing.T) {
	s := stream(t)
	m := upload(t, s, make([]complex64, 64))
	var p cufft.CufftHandle
	must(t, cufft.Plan1d(&p, 64, cufft.CUFFT_C2C, 1))
	defer cufft.Destroy(p)
	must(t, cufft.SetStream(p, s.Raw()))
	var made cufft.CufftHandle
	must(t, cufft.Create(&made))
	defer cufft.Destroy(made)
	var work uint64 = 99
	must(t, cufft.MakePlan2d(made, 4, 4, cufft.CUFFT_Z2Z, &work))
	if work != 0 {
		t.Errorf("work area %d bytes, want 0", work)
	}
	var gone cufft.CufftHandle
	must(t, cufft.Create(&gone))
	must(t, cufft.Destroy(gone))
	var h cufft.CufftHandle
	big := upload(t, s, make([]complex64, 4))
	c := dptr[cufft.CufftComplex](m)
	for name, tc := range map[string]struct {
		err  error
		want cufft.CufftResult
	}{
		"zero size":          {cufft.Plan1d(&h, 0, cufft.CUFFT_C2C, 1), cufft.CUFFT_INVALID_SIZE},
		"bad type":           {cufft.Plan1d(&h, 8, cufft.CufftType(7), 1), cufft.CUFFT_INVALID_TYPE},
		"zero batch":         {cufft.Plan1d(&h, 8, cufft.CUFFT_C2C, 0), cufft.CUFFT_INVALID_VALUE},
		"rank 4":             {cufft.PlanMany(&h, 4, &[]int32{2, 2, 2, 2}[0], nil, 1, 0, nil, 1, 0, cufft.CUFFT_C2C, 1), cufft.CUFFT_INVALID_VALUE},
		"made twice":         {cufft.MakePlan1d(made, 8, cufft.CUFFT_C2C, 1, &work), cufft.CUFFT_INVALID_PLAN},
		"destroyed":          {cufft.ExecC2C(gone, c, c, cufft.CUFFT_FORWARD), cufft.CUFFT_INVALID_PLAN},
		"not made":           {cufft.ExecC2C(gone+1000, c, c, cufft.CUFFT_FORWARD), cufft.CUFFT_INVALID_PLAN},
		"other type":         {cufft.ExecZ2Z(p, (*cufft.CufftDoubleComplex)(unsafe.Pointer(c)), (*cufft.CufftDoubleComplex)(unsafe.Pointer(c)), cufft.CUFFT_FORWARD), cufft.CUFFT_INVALID_TYPE},
		"bad direction":      {cufft.ExecC2C(p, c, c, 0), cufft.CUFFT_INVALID_VALUE},
		"nil input":          {cufft.ExecC2C(p, nil, c, cufft.CUFFT_FORWARD), cufft.CUFFT_INVALID_VALUE},
		"input too short":    {cufft.ExecC2C(p, dptr[cufft.CufftComplex](big), c, cufft.CUFFT_FORWARD), cufft.CUFFT_EXEC_FAILED},
		"output too short":   {cufft.ExecC2C(p, c, dptr[cufft.CufftComplex](big), cufft.CUFFT_FORWARD), cufft.CUFFT_EXEC_FAILED},
		"work size":          {cufft.GetSize(p, &work), cufft.CUFFT_SUCCESS},
		"auto allocation":    {cufft.SetAutoAllocation(p, 0), cufft.CUFFT_SUCCESS},
		"in place, forward":  {cufft.ExecC2C(p, c, c, cufft.CUFFT_FORWARD), cufft.CUFFT_SUCCESS},
		"stream of the dead": {cufft.SetStream(gone, s.Raw()), cufft.CUFFT_INVALID_PLAN},
	} {
		if got := status(t, tc.err); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
	must(t, s.Synchronize())
	var v int32
	must(t, cufft.GetVersion(&v))
	if v != cufft.CUFFT_VERSION {
		t.Errorf("version %d, want the bindings' %d", v, cufft.CUFFT_VERSION)
	}
}

// TestTransformIsSeenByTheRaceDetector: a transform on one stream reads
// memory another stream writes, with no event between them: a race.
func TestTransformIsSeenByTheRaceDetector(t *testing.T) {
	a, b := stream(t), stream(t)
	m := upload(t, a, make([]complex64, 256))
	out := upload(t, a, make([]complex64, 256))
	var p cufft.CufftHandle
	must(t, cufft.Plan1d(&p, 256, cufft.CUFFT_C2C, 1))
	defer cufft.Destroy(p)
	must(t, cufft.SetStream(p, a.Raw()))
	must(t, cu.MemsetD8Async(m.Ptr(), 0, 256*8, b.Raw()))
	must(t, cufft.ExecC2C(p, dptr[cufft.CufftComplex](m), dptr[cufft.CufftComplex](out), cufft.CUFFT_FORWARD))
	must(t, a.Synchronize())
	must(t, b.Synchronize())
	races := cudatest.TakeRaces()
	for _, r := range races {
		if (r.Access.Op == "copy" && r.Previous.Op == "memset") || (r.Access.Op == "memset" && r.Previous.Op == "copy") {
			return
		}
	}
	t.Fatalf("races %v, want the transform's read of the input against the memset", races)
}

// TestHugeLayoutsAreRefused: embeds, strides and distances whose extent
// overflows are CUFFT_INVALID_SIZE, not a small buffer overrun.
func TestHugeLayoutsAreRefused(t *testing.T) {
	stream(t)
	n := []int64{4, 4}
	emb := []int64{4, 1 << 50}
	for name, args := range map[string][3]int64{
		"embed":    {1, 16, 16},
		"stride":   {1 << 62, 16, 16},
		"distance": {1, 1 << 62, 16},
	} {
		var h cufft.CufftHandle
		must(t, cufft.Create(&h))
		in := []int64{4, 4}
		if name == "embed" {
			in = emb
		}
		err := cufft.MakePlanMany64(h, 2, &n[0], &in[0], args[0], args[1], &n[0], 1, args[2], cufft.CUFFT_C2C, 1<<20, nil)
		if got := status(t, err); got != cufft.CUFFT_INVALID_SIZE {
			t.Errorf("%s: %v, want CUFFT_INVALID_SIZE", name, got)
		}
		must(t, cufft.Destroy(h))
	}
}
