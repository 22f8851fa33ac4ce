package ptxsuite_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/cuda/nvrtc"
	raw "github.com/gocuda/gocuda/generated/nvrtc"
	"github.com/gocuda/gocuda/internal/nvrtctest"
)

// TestMain runs on the GPU where there is one, else on the fake driver
// with its race detector.
func TestMain(m *testing.M) {
	nvrtctest.UseCached(raw.HeaderVersion() / 1000)
	fake := cudatest.SetupIfNoDriver(cudatest.WithRaceDetector())
	code := m.Run()
	if fake {
		if n := cudatest.ReportRaces(os.Stderr); n > 0 && code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// archs are the virtual architectures each kernel is compiled for: the
// oldest both NVRTC 12 and 13 take, and the H100's and H200's.
var archs = []string{"compute_75", "compute_90"}

// env is one kernel's test on one architecture.
type env struct {
	t    *testing.T
	s    *cuda.Stream
	arch string
}

// forArchs runs f for each architecture, on a stream of device 0.
func forArchs(t *testing.T, f func(e *env)) {
	t.Helper()
	needNVRTC(t)
	s, err := cuda.OpenStream(0)
	if err != nil {
		t.Skipf("no device: %v", err)
	}
	defer s.Close()
	for _, a := range archs {
		t.Run(a, func(t *testing.T) {
			cudatest.CheckRaces(t)
			f(&env{t: t, s: s, arch: a})
		})
	}
}

// needNVRTC skips a test where no NVRTC library loads, saying why, or
// fails it where one must (GOCUDA_TEST_NVRTC=required).
func needNVRTC(t *testing.T) {
	t.Helper()
	if err := raw.Load(); err != nil {
		if nvrtctest.Required(raw.HeaderVersion() / 1000) {
			t.Fatalf("GOCUDA_TEST_NVRTC=required: %v", err)
		}
		t.Skipf("no NVRTC library (make headers caches one on amd64; or set %s): %v", raw.LibraryEnv, err)
	}
}

// kernel compiles src and returns its entry name (a name expression
// when it has template arguments or is not extern "C").
func (e *env) kernel(src, name string, opts ...nvrtc.Option) *cuda.Kernel {
	e.t.Helper()
	opts = append([]nvrtc.Option{nvrtc.WithArch(e.arch), nvrtc.WithNameExpressions(name)}, opts...)
	res, err := nvrtc.Compile(src, opts...)
	if err != nil {
		e.t.Fatalf("compile: %v", err)
	}
	mod, err := cuda.LoadModule(e.s.Context(), res.PTX)
	if err != nil {
		e.t.Fatalf("load: %v", err)
	}
	e.t.Cleanup(func() { mod.Close() })
	k, err := mod.Function(res.LoweredNames[name])
	if err != nil {
		e.t.Fatalf("function %s: %v", name, err)
	}
	return k
}

// kernels compiles src, loads it as one module and returns the entries
// named, in order.
func (e *env) kernels(src string, names ...string) []*cuda.Kernel {
	e.t.Helper()
	res, err := nvrtc.Compile(src, nvrtc.WithArch(e.arch), nvrtc.WithNameExpressions(names...))
	if err != nil {
		e.t.Fatalf("compile: %v", err)
	}
	mod, err := cuda.LoadModule(e.s.Context(), res.PTX)
	if err != nil {
		e.t.Fatalf("load: %v", err)
	}
	e.t.Cleanup(func() { mod.Close() })
	ks := make([]*cuda.Kernel, len(names))
	for i, name := range names {
		if ks[i], err = mod.Function(res.LoweredNames[name]); err != nil {
			e.t.Fatalf("function %s: %v", name, err)
		}
	}
	return ks
}

func (e *env) launch(k *cuda.Kernel, cfg cuda.LaunchConfig, args ...any) {
	e.t.Helper()
	if err := k.Launch(e.s, cfg, args...); err != nil {
		e.t.Fatalf("launch: %v", err)
	}
}

func up[T cuda.Element](e *env, data []T) *cuda.Slice[T] {
	e.t.Helper()
	x, err := cuda.AllocSliceFrom(e.s, data)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { x.Close() })
	return x
}

func zeros[T cuda.Element](e *env, n int) *cuda.Slice[T] {
	e.t.Helper()
	return up(e, make([]T, n))
}

func down[T cuda.Element](e *env, x *cuda.Slice[T]) []T {
	e.t.Helper()
	out := make([]T, x.Len())
	if err := x.CopyTo(out); err != nil {
		if ke := cudatest.LastKernelError(); ke != nil {
			e.t.Fatalf("copy back: %v (%v)", err, ke)
		}
		e.t.Fatalf("copy back: %v", err)
	}
	return out
}

type number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// same checks got against want element by element, within tol relative
// to max(1, |want|).
func same[T number](e *env, what string, got, want []T, tol float64) {
	e.t.Helper()
	if len(got) != len(want) {
		e.t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		d := g - w
		if d < 0 {
			d = -d
		}
		scale := w
		if scale < 0 {
			scale = -scale
		}
		if scale < 1 {
			scale = 1
		}
		if d > tol*scale || g != g && w == w {
			if bad < 5 {
				e.t.Errorf("%s[%d] = %v, want %v", what, i, got[i], want[i])
			}
			bad++
		}
	}
	if bad > 0 {
		e.t.Errorf("%s: %d of %d elements differ (tolerance %g)", what, bad, len(got), tol)
	}
}

// rng is a small deterministic generator for inputs.
type rng uint64

func (r *rng) next() uint64 {
	*r ^= *r << 13
	*r ^= *r >> 7
	*r ^= *r << 17
	return uint64(*r)
}

func (r *rng) float() float32 { return float32(r.next()>>40) / float32(1<<24) }

func floats(n int, seed uint64) []float32 {
	r := rng(seed | 1)
	out := make([]float32, n)
	for i := range out {
		out[i] = r.float()*2 - 1
	}
	return out
}

func ints(n int, seed uint64, mod uint32) []uint32 {
	r := rng(seed | 1)
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(r.next()) % mod
	}
	return out
}

var _ = fmt.Sprint

// fmadOff keeps a * b + c two roundings, as the Go references compute it.
var fmadOff = nvrtc.WithOptions("--fmad=false")
