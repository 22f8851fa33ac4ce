//go:build linux && (amd64 || arm64)

package libgputest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// requireEnv, set to "required", makes a missing driver, GPU or library a
// failure rather than a skip: for the GPU machine, where a skip would hide
// a broken install.
const requireEnv = "GOCUDA_TEST_LIBS"

func required() bool { return os.Getenv(requireEnv) == "required" }

// unavailable skips the test for a reason outside it (no GPU, no library),
// or fails it when requireEnv says everything must be there.
func unavailable(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if required() {
		t.Fatalf("%s (%s=required)", msg, requireEnv)
	}
	t.Skipf("%s (set %s=required to make this a failure)", msg, requireEnv)
}

// needLibrary loads a library (its package's Load) and skips the test when
// it cannot be found: noLib is the package's ErrNoLibrary. Any other error
// fails the test.
func needLibrary(t *testing.T, name string, load func() error, noLib error, path func() string) {
	t.Helper()
	err := load()
	switch {
	case err == nil:
		t.Logf("%s: loaded %s", name, path())
	case errors.Is(err, noLib):
		unavailable(t, "%s cannot be loaded: %v", name, err)
	default:
		t.Fatalf("%s: Load: %v", name, err)
	}
}

// initDriver is cu.Init, once per process.
var initDriver = sync.OnceValue(func() error { return cu.Init(0) })

// gpu is device 0 with its primary context current on the test's thread,
// and a stream of its own for the libraries' work.
type gpu struct {
	dev          cu.CUdevice
	ctx          cu.CUcontext
	stream       cu.CUstream
	major, minor int32 // compute capability
}

// newGPU makes device 0's primary context current on the test goroutine's
// thread (locked to it until the test's cleanups have run) and creates a
// stream; it skips the test where there is no driver or GPU. The test must
// make its driver and library calls on its own goroutine: the context is
// current on that thread only.
func newGPU(t *testing.T) *gpu {
	t.Helper()
	if err := initDriver(); err != nil {
		if errors.Is(err, cu.ErrNoDriver) {
			unavailable(t, "no CUDA driver: %v", err)
		}
		unavailable(t, "no usable GPU: cuInit: %v", err)
	}
	var n int32
	check(t, "cuDeviceGetCount", cu.DeviceGetCount(&n))
	if n == 0 {
		unavailable(t, "no GPU: cuDeviceGetCount is 0")
	}
	g := &gpu{}
	check(t, "cuDeviceGet", cu.DeviceGet(&g.dev, 0))
	check(t, "cuDeviceGetAttribute", cu.DeviceGetAttribute(&g.major, cu.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, g.dev))
	check(t, "cuDeviceGetAttribute", cu.DeviceGetAttribute(&g.minor, cu.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, g.dev))
	var name [256]byte
	check(t, "cuDeviceGetName", cu.DeviceGetName(&name[0], int32(len(name)), g.dev))
	var drv int32
	check(t, "cuDriverGetVersion", cu.DriverGetVersion(&drv))

	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	check(t, "cuDevicePrimaryCtxRetain", cu.DevicePrimaryCtxRetain(&g.ctx, g.dev))
	t.Cleanup(func() {
		if err := cu.DevicePrimaryCtxRelease(g.dev); err != nil {
			t.Errorf("cuDevicePrimaryCtxRelease: %v", err)
		}
	})
	check(t, "cuCtxSetCurrent", cu.CtxSetCurrent(g.ctx))
	t.Cleanup(func() {
		if err := cu.CtxSetCurrent(0); err != nil {
			t.Errorf("cuCtxSetCurrent(NULL): %v", err)
		}
	})
	check(t, "cuStreamCreate", cu.StreamCreate(&g.stream, 0))
	t.Cleanup(func() {
		if err := cu.StreamDestroy(g.stream); err != nil {
			t.Errorf("cuStreamDestroy: %v", err)
		}
	})
	t.Logf("GPU 0: %s, sm_%d%d, driver %d.%d", cString(name[:]), g.major, g.minor, drv/1000, drv%1000/10)
	return g
}

// wait waits for the stream's work.
func (g *gpu) wait(t *testing.T) {
	t.Helper()
	check(t, "cuStreamSynchronize", cu.StreamSynchronize(g.stream))
}

// check fails the test now if err is not nil.
func check(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// alloc allocates n elements of T in device memory, freed when the test
// ends.
func alloc[T any](t *testing.T, n int) cu.CUdeviceptr {
	t.Helper()
	var zero T
	var d cu.CUdeviceptr
	check(t, "cuMemAlloc", cu.MemAlloc(&d, uint64(max(n, 1))*uint64(unsafe.Sizeof(zero))))
	t.Cleanup(func() {
		if err := cu.MemFree(d); err != nil {
			t.Errorf("cuMemFree: %v", err)
		}
	})
	return d
}

// upload allocates device memory for src and copies src into it. T must be
// pointer-free (numbers), as cgo requires of Go memory passed to C.
func upload[T any](t *testing.T, src []T) cu.CUdeviceptr {
	t.Helper()
	d := alloc[T](t, len(src))
	check(t, "cuMemcpyHtoD", cu.MemcpyHtoD(d, unsafe.Pointer(&src[0]), uint64(len(src))*uint64(unsafe.Sizeof(src[0]))))
	return d
}

// download copies n elements of T from device memory; callers synchronize
// the stream first (the copy is on the legacy default stream, which waits
// for a blocking stream's work anyway).
func download[T any](t *testing.T, d cu.CUdeviceptr, n int) []T {
	t.Helper()
	dst := make([]T, n)
	check(t, "cuMemcpyDtoH", cu.MemcpyDtoH(unsafe.Pointer(&dst[0]), d, uint64(n)*uint64(unsafe.Sizeof(dst[0]))))
	return dst
}

// devPtr is device address d as the typed pointer the library bindings
// take for device memory. It is not Go memory (the driver reserves its
// addresses), so cgo's checks and the garbage collector ignore it; the
// bits are reinterpreted rather than converted from an integer so that
// vet's unsafeptr check has nothing to flag.
func devPtr[T any](d cu.CUdeviceptr) *T {
	return (*T)(*(*unsafe.Pointer)(unsafe.Pointer(&d)))
}

// devUnsafe is d as an unsafe.Pointer, for the bindings that take void*.
func devUnsafe(d cu.CUdeviceptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&d))
}

// cString is the text of a NUL-terminated buffer.
func cString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

// rng is a deterministic source for test data.
func rng() *rand.Rand { return rand.New(rand.NewPCG(10, 2026)) }

// uniform32 is n numbers uniform in [-1, 1).
func uniform32(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(2*r.Float64() - 1)
	}
	return x
}

// gemmCPU is C = alpha*op(A)*op(B) + beta*C in float64, column-major, the
// reference for the GEMM tests; it also returns, per element of C,
// sum_k |op(A)_ik * op(B)_kj| + |beta*C_ij|, the scale of the rounding
// error a GPU result may carry.
func gemmCPU(transA, transB bool, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) (want, scale []float64) {
	at := func(i, l int) float64 {
		if transA {
			return a[l+i*lda]
		}
		return a[i+l*lda]
	}
	bt := func(l, j int) float64 {
		if transB {
			return b[j+l*ldb]
		}
		return b[l+j*ldb]
	}
	want = make([]float64, len(c))
	scale = make([]float64, len(c))
	copy(want, c)
	for j := range n {
		for i := range m {
			var s, abs float64
			for l := range k {
				p := at(i, l) * bt(l, j)
				s += p
				abs += math.Abs(p)
			}
			want[i+j*ldc] = alpha*s + beta*c[i+j*ldc]
			scale[i+j*ldc] = math.Abs(alpha)*abs + math.Abs(beta*c[i+j*ldc])
		}
	}
	return want, scale
}

// maxRelErr compares got with want element by element: the largest
// |got-want|/scale, scale being each element's error scale (at least
// floor, so that an exact zero is not divided by).
func maxRelErr[T float32 | float64](got []T, want, scale []float64, floor float64) (worst float64, at int) {
	for i := range want {
		e := math.Abs(float64(got[i])-want[i]) / max(scale[i], floor)
		if e > worst || math.IsNaN(e) {
			worst, at = e, i
		}
	}
	return worst, at
}

func to64[T float32 | float64](x []T) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}
