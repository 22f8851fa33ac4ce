//go:build linux && (amd64 || arm64)

package fakecusolver_test

// What package cuda/solver's tests do not reach, since that package
// refuses bad input before the library: the fake's illegal-argument
// reports (status and info), memory outside the fake driver's
// allocations, dead handles, the version, and the race detector seeing a
// factorization's accesses.

import (
	"errors"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/generated/cusolver"
	"github.com/gocuda/gocuda/generated/libtypes"
	"github.com/gocuda/gocuda/internal/fakecusolver"
)

// TestMain runs on the fake driver with its race detector, through
// cudatest.Setup, which sets the fake cuSOLVER up as users get it.
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
	if !fakecusolver.Active() {
		t.Fatalf("generated/cusolver loaded %q, not the fake cuSOLVER", cusolver.LibraryPath())
	}
	d, err := cuda.GetDevice(0)
	must(t, err)
	ctx, err := cuda.PrimaryContext(d)
	must(t, err)
	t.Cleanup(func() { ctx.Close() })
	s, err := cuda.NewStream(ctx)
	must(t, err)
	t.Cleanup(func() { s.Close() })
	// The raw calls below need the context current; package cuda binds
	// it per call, so it is set here once for the test's goroutine,
	// which stays on its thread.
	runtime.LockOSThread()
	must(t, cu.CtxSetCurrent(ctx.Raw()))
	return s
}

func handle(t *testing.T, s *cuda.Stream) cusolver.CusolverDnHandle_t {
	t.Helper()
	var h cusolver.CusolverDnHandle_t
	must(t, cusolver.DnCreate(&h))
	t.Cleanup(func() { must(t, cusolver.DnDestroy(h)) })
	must(t, cusolver.DnSetStream(h, s.Raw()))
	return h
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

func info(t *testing.T, s *cuda.Stream, m *cuda.DeviceMemory) int32 {
	t.Helper()
	must(t, s.Synchronize())
	v := make([]int32, 1)
	must(t, cuda.CopyFromDevice(v, m))
	return v[0]
}

// TestIllegalArgumentsAreReportedAsLAPACKDoes: a call with an illegal
// argument returns CUSOLVER_STATUS_INVALID_VALUE and sets info to minus
// the argument's position after the handle.
func TestIllegalArgumentsAreReportedAsLAPACKDoes(t *testing.T) {
	s := stream(t)
	h := handle(t, s)
	a := alloc(t, s, 8*16)
	w := alloc(t, s, 8*64)
	ipiv := alloc(t, s, 4*4)
	dinfo := alloc(t, s, 4)
	cases := []struct {
		name string
		call func() error
		arg  int32
	}{
		{"getrf lda < m", func() error {
			return cusolver.DnDgetrf(h, 4, 4, ptr[float64](a), 3, ptr[float64](w), ptr[int32](ipiv), ptr[int32](dinfo))
		}, 4},
		{"getrs unknown trans", func() error {
			return cusolver.DnSgetrs(h, cublas.CublasOperation_t(9), 4, 1, ptr[float32](a), 4, ptr[int32](ipiv), ptr[float32](w), 4, ptr[int32](dinfo))
		}, 1},
		{"potrf lwork too small", func() error {
			return cusolver.DnDpotrf(h, cublas.CUBLAS_FILL_MODE_LOWER, 4, ptr[float64](a), 4, ptr[float64](w), 0, ptr[int32](dinfo))
		}, 6},
		{"ormqr k > m", func() error {
			return cusolver.DnDormqr(h, cublas.CUBLAS_SIDE_LEFT, cublas.CUBLAS_OP_N, 2, 2, 3, ptr[float64](a), 4, ptr[float64](w), ptr[float64](w), 2, ptr[float64](w), 64, ptr[int32](dinfo))
		}, 5},
		{"syevd negative n", func() error {
			return cusolver.DnSsyevd(h, cusolver.CUSOLVER_EIG_MODE_VECTOR, cublas.CUBLAS_FILL_MODE_UPPER, -1, ptr[float32](a), 4, ptr[float32](w), ptr[float32](w), 64, ptr[int32](dinfo))
		}, 3},
		{"gesvd m < n", func() error {
			return cusolver.DnDgesvd(h, 'N', 'N', 2, 4, ptr[float64](a), 4, ptr[float64](w), nil, 1, nil, 1, ptr[float64](w), 64, nil, ptr[int32](dinfo))
		}, 4},
	}
	for _, c := range cases {
		err := c.call()
		if !errors.Is(err, cusolver.CUSOLVER_STATUS_INVALID_VALUE) {
			t.Errorf("%s: %v, want CUSOLVER_STATUS_INVALID_VALUE", c.name, err)
		}
		if got := info(t, s, dinfo); got != -c.arg {
			t.Errorf("%s: info %d, want %d", c.name, got, -c.arg)
		}
	}
}

// TestMemoryOutsideAllocationsAndDeadHandlesAreRefused: a matrix that
// runs past its allocation is refused before any work, and a destroyed
// handle is not followed.
func TestMemoryOutsideAllocationsAndDeadHandlesAreRefused(t *testing.T) {
	s := stream(t)
	h := handle(t, s)
	a := alloc(t, s, 8*15) // one element short of 4×4
	w := alloc(t, s, 8*64)
	dinfo := alloc(t, s, 4)
	err := cusolver.DnDpotrf(h, cublas.CUBLAS_FILL_MODE_LOWER, 4, ptr[float64](a), 4, ptr[float64](w), 64, ptr[int32](dinfo))
	if !errors.Is(err, cusolver.CUSOLVER_STATUS_INVALID_VALUE) {
		t.Fatalf("potrf of a matrix past its allocation: %v, want CUSOLVER_STATUS_INVALID_VALUE", err)
	}
	var dead cusolver.CusolverDnHandle_t
	must(t, cusolver.DnCreate(&dead))
	must(t, cusolver.DnDestroy(dead))
	var lwork int32
	if err := cusolver.DnSpotrf_bufferSize(dead, cublas.CUBLAS_FILL_MODE_LOWER, 4, nil, 4, &lwork); !errors.Is(err, cusolver.CUSOLVER_STATUS_NOT_INITIALIZED) {
		t.Fatalf("a destroyed handle: %v, want CUSOLVER_STATUS_NOT_INITIALIZED", err)
	}
}

// TestVersionIsTheBindings: Setup makes the fake report the
// CUSOLVER_VERSION of the bindings, and its major number through
// cusolverGetProperty.
func TestVersionIsTheBindings(t *testing.T) {
	var v, major int32
	must(t, cusolver.GetVersion(&v))
	must(t, cusolver.GetProperty(libtypes.MAJOR_VERSION, &major))
	if v != cusolver.CUSOLVER_VERSION || major != v/1000 {
		t.Fatalf("version %d, major %d; want %d", v, major, cusolver.CUSOLVER_VERSION)
	}
}

// TestWorkIsSeenByTheRaceDetector: a factorization on one stream and a
// memset of its matrix on another, with no event between them, race.
func TestWorkIsSeenByTheRaceDetector(t *testing.T) {
	a, b := stream(t), stream(t)
	h := handle(t, a)
	m := alloc(t, a, 8*16)
	w := alloc(t, a, 8*64)
	dinfo := alloc(t, a, 4)
	must(t, cu.MemsetD8Async(m.Ptr(), 0, 8*16, a.Raw()))
	must(t, a.Synchronize())
	must(t, cusolver.DnDpotrf(h, cublas.CUBLAS_FILL_MODE_LOWER, 4, ptr[float64](m), 4, ptr[float64](w), 64, ptr[int32](dinfo)))
	must(t, cu.MemsetD8Async(m.Ptr(), 0, 8*16, b.Raw()))
	must(t, a.Synchronize())
	must(t, b.Synchronize())
	races := cudatest.TakeRaces()
	for _, r := range races {
		if r.Access.Op == "memset" || r.Previous.Op == "memset" {
			t.Logf("%v against %v", r.Access.Op, r.Previous.Op)
			return
		}
	}
	t.Fatalf("races %v, want the factorization against the memset", races)
}
