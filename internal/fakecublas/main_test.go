//go:build linux && (amd64 || arm64)

package fakecublas_test

import (
	"math"
	"os"
	"runtime"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/generated/cublas"
	"github.com/gocuda/gocuda/internal/fakecublas"
)

// TestMain runs every test on the fake driver with its race detector on
// and the fake cuBLAS that cudatest.Setup gives it.
func TestMain(m *testing.M) {
	os.Exit(cudatest.UseFakeDriver(m, cudatest.WithRaceDetector()))
}

// env is a test's context, made current on its locked thread, a stream
// and a cuBLAS handle on it.
type env struct {
	t *testing.T
	s cu.CUstream
	h cublas.CublasHandle_t
}

func setup(t *testing.T) *env {
	t.Helper()
	if !fakecublas.Active() {
		t.Fatalf("cuBLAS is %q, not the fake", cublas.LibraryPath())
	}
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	var dev cu.CUdevice
	var ctx cu.CUcontext
	if err := cu.Init(0); err != nil {
		t.Fatal(err)
	}
	if err := cu.DeviceGet(&dev, 0); err != nil {
		t.Fatal(err)
	}
	if err := cu.DevicePrimaryCtxRetain(&ctx, dev); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cu.DevicePrimaryCtxRelease(dev) })
	if err := cu.CtxSetCurrent(ctx); err != nil {
		t.Fatal(err)
	}
	var h cublas.CublasHandle_t // a local: cgo refuses a pointer into e, which holds t
	if err := cublas.Create(&h); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, s: newStream(t), h: h}
	t.Cleanup(func() {
		if err := cublas.Destroy(e.h); err != nil {
			t.Error(err)
		}
	})
	if err := cublas.SetStream(e.h, e.s); err != nil {
		t.Fatal(err)
	}
	return e
}

func newStream(t *testing.T) cu.CUstream {
	var s cu.CUstream
	if err := cu.StreamCreate(&s, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cu.StreamDestroy(s) })
	return s
}

// upload copies data to new device memory, freed when the test ends.
func upload[T any](t *testing.T, data []T) cu.CUdeviceptr {
	t.Helper()
	var p cu.CUdeviceptr
	n := uint64(len(data)) * uint64(unsafe.Sizeof(data[0]))
	if err := cu.MemAlloc(&p, n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cu.MemFree(p) })
	if err := cu.MemcpyHtoD(p, unsafe.Pointer(&data[0]), n); err != nil {
		t.Fatal(err)
	}
	return p
}

// download waits for the stream and copies n elements from p.
func download[T any](e *env, p cu.CUdeviceptr, n int) []T {
	e.t.Helper()
	if err := cu.StreamSynchronize(e.s); err != nil {
		e.t.Fatal(err)
	}
	out := make([]T, n)
	if err := cu.MemcpyDtoH(unsafe.Pointer(&out[0]), p, uint64(n)*uint64(unsafe.Sizeof(out[0]))); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// dev is a device address as the pointer types of the bindings take it.
func dev[T any](p cu.CUdeviceptr) *T { return (*T)(*(*unsafe.Pointer)(unsafe.Pointer(&p))) }

func raw(p cu.CUdeviceptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// colMajor is a rows×cols matrix in column-major order with leading
// dimension ld, for the CPU reference.
type colMajor struct {
	rows, cols, ld int
	v              []float64
}

func (m colMajor) at(i, j int) float64 { return m.v[i+j*m.ld] }

// op is element (i, j) of op(m) for a cuBLAS operation.
func (m colMajor) op(o cublas.CublasOperation_t, i, j int) float64 {
	if o == cublas.CUBLAS_OP_N {
		return m.at(i, j)
	}
	return m.at(j, i)
}

// small fills a matrix with integers in [-3, 3], deterministic in seed:
// every product and sum of the tests is exact in every type.
func small(rows, cols, ld, seed int) colMajor {
	m := colMajor{rows, cols, ld, make([]float64, ld*cols)}
	for j := 0; j < cols; j++ {
		for i := 0; i < rows; i++ {
			m.v[i+j*ld] = float64((i*7+j*3+seed*5)%7 - 3)
		}
	}
	return m
}

// cpuGemm is alpha·op(A)·op(B) + beta·C, column-major with C's leading
// dimension.
func cpuGemm(opA, opB cublas.CublasOperation_t, m, n, k int, alpha float64, a, b colMajor, beta float64, c colMajor) []float64 {
	out := append([]float64(nil), c.v...)
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			s := 0.0
			for l := 0; l < k; l++ {
				s += a.op(opA, i, l) * b.op(opB, l, j)
			}
			out[i+j*c.ld] = alpha*s + beta*c.at(i, j)
		}
	}
	return out
}

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}
