package cudatest_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/fakecuda"
)

// kernelsPTX has entries with the parameters the tests' kernels take.
const kernelsPTX = `
.version 8.0
.target sm_90
.address_size 64

.visible .entry shape(.param .u32 a, .param .f32 b, .param .f64 c, .param .s64 d, .param .u64 out) { ret; }
.visible .entry scale(.param .u64 x, .param .u64 y, .param .u32 n, .param .f32 k) { ret; }
.visible .entry bump(.param .u64 y, .param .u32 n) { ret; }
.visible .entry fault(.param .u64 y, .param .u32 n, .param .u32 how) { ret; }
.visible .entry lonely(.param .u64 y) { ret; }
`

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// fixture is a context (created, when isolated: a faulting kernel leaves
// its context unusable), a stream and the kernels' module in it.
type fixture struct {
	ctx *cuda.Context
	s   *cuda.Stream
	mod *cuda.Module
}

func newFixture(t *testing.T, isolated bool) *fixture {
	t.Helper()
	cudatest.CheckNoLeaks(t)
	dev, err := cuda.GetDevice(0)
	must(t, err)
	var ctx *cuda.Context
	if isolated {
		ctx, err = cuda.NewContext(dev)
	} else {
		ctx, err = cuda.PrimaryContext(dev)
	}
	must(t, err)
	t.Cleanup(func() { must(t, ctx.Close()) })
	s, err := cuda.NewStream(ctx)
	must(t, err)
	t.Cleanup(func() { must(t, s.Close()) })
	mod, err := cuda.LoadModule(ctx, []byte(kernelsPTX))
	must(t, err)
	t.Cleanup(func() { must(t, mod.Close()) })
	return &fixture{ctx, s, mod}
}

func (f *fixture) kernel(t *testing.T, name string) *cuda.Kernel {
	t.Helper()
	k, err := f.mod.Function(name)
	must(t, err)
	return k
}

func (f *fixture) floats(t *testing.T, v []float32) *cuda.DeviceMemory {
	t.Helper()
	m, err := cuda.AllocFrom(f.ctx, v)
	must(t, err)
	t.Cleanup(func() { must(t, m.Close()) })
	return m
}

func register(t *testing.T, name string, k cudatest.Kernel) {
	cudatest.RegisterKernel(name, k)
	t.Cleanup(func() { cudatest.UnregisterKernel(name) })
}

// A per-thread kernel runs once per thread of the grid, with its indices,
// the launch's shape and the parameters as the PTX lays them out.
func TestKernelPerThread(t *testing.T) {
	f := newFixture(t, false)
	var mu sync.Mutex // the kernel runs on the stream's thread
	seen := map[[2]cudatest.Dim3]int{}
	var grid, block cudatest.Dim3
	var a uint32
	var b float32
	var c float64
	var d int64
	register(t, "shape", cudatest.Kernel{Thread: func(t *cudatest.Thread) {
		mu.Lock()
		defer mu.Unlock()
		seen[[2]cudatest.Dim3{t.BlockIdx, t.ThreadIdx}]++
		grid, block = t.GridDim, t.BlockDim
		a, b, c, d = t.Param(0).Uint32(), t.Param(1).Float32(), t.Param(2).Float64(), t.Param(3).Int64()
		// Each thread writes its linear index at its place.
		out := t.Param(4).Ptr()
		x, y := t.GlobalX(), t.GlobalY()
		cudatest.Store(out, y*int(t.GridDim.X*t.BlockDim.X)+x, uint32(y*1000+x))
	}})
	k := f.kernel(t, "shape")
	if sizes, known := k.ParamSizes(); known && !slices.Equal(sizes, []int{4, 4, 8, 8, 8}) {
		t.Errorf("shape's parameter sizes %v, want [4 4 8 8 8] (from the PTX)", sizes)
	}
	const gx, gy, bx, by = 3, 2, 4, 5
	out, err := cuda.Alloc(f.ctx, 4*gx*gy*bx*by)
	must(t, err)
	defer out.Close()
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: gx, Y: gy}, Block: cuda.Dim3{X: bx, Y: by}}
	must(t, k.Launch(f.s, cfg, uint32(7), float32(1.5), 2.25, int64(-9), out))
	must(t, f.s.Synchronize())
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != gx*gy*bx*by {
		t.Errorf("%d distinct threads ran, want %d", len(seen), gx*gy*bx*by)
	}
	for id, n := range seen {
		if n != 1 || id[0].X >= gx || id[0].Y >= gy || id[0].Z != 0 || id[1].X >= bx || id[1].Y >= by || id[1].Z != 0 {
			t.Errorf("block %v thread %v ran %d times", id[0], id[1], n)
		}
	}
	if grid != (cudatest.Dim3{X: gx, Y: gy, Z: 1}) || block != (cudatest.Dim3{X: bx, Y: by, Z: 1}) {
		t.Errorf("grid %v block %v", grid, block)
	}
	if a != 7 || b != 1.5 || c != 2.25 || d != -9 {
		t.Errorf("parameters %v %v %v %v, want 7 1.5 2.25 -9", a, b, c, d)
	}
	got := make([]uint32, gx*gy*bx*by)
	must(t, cuda.CopyFromDevice(got, out))
	for y := range gy * by {
		for x := range gx * bx {
			if v := got[y*gx*bx+x]; v != uint32(y*1000+x) {
				t.Fatalf("out[%d][%d] = %d", y, x, v)
			}
		}
	}
}

// A per-launch kernel runs once and loops itself, here through slices of
// device memory.
func TestKernelPerLaunch(t *testing.T) {
	f := newFixture(t, false)
	var mu sync.Mutex
	var runs, threads, nparams, shared int
	register(t, "scale", cudatest.Kernel{Launch: func(l *cudatest.Launch) {
		mu.Lock()
		runs++
		threads, nparams, shared = l.Threads(), l.NumParams(), int(l.SharedMemBytes)
		mu.Unlock()
		n, k := int(l.Param(2).Uint32()), l.Param(3).Float32()
		x := cudatest.ReadSlice[float32](l.Param(0).Ptr(), n)
		y := cudatest.Slice[float32](l.Param(1).Ptr(), n)
		for i := range y {
			y[i] = k * x[i]
		}
	}})
	const n = 1000
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i)
	}
	x, y := f.floats(t, in), f.floats(t, make([]float32, n))
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: 4}, Block: cuda.Dim3{X: 32}, SharedMemBytes: 256}
	must(t, f.kernel(t, "scale").Launch(f.s, cfg, x, y, uint32(n), float32(3)))
	must(t, f.s.Synchronize())
	out := make([]float32, n)
	must(t, cuda.CopyFromDevice(out, y))
	for i, v := range out {
		if v != 3*float32(i) {
			t.Fatalf("y[%d] = %v, want %v", i, v, 3*float32(i))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if runs != 1 || threads != 128 || nparams != 4 || shared != 256 {
		t.Errorf("%d runs of %d threads, %d parameters, %d bytes shared; want 1, 128, 4, 256", runs, threads, nparams, shared)
	}
}

// An entry of PTX without a Go kernel registered resolves to its PTX,
// which a launch runs; a name a module lacks is not found, registered or
// not; and a name of a cubin with no Go kernel is not found, naming it.
func TestKernelUnregisteredRunsPTX(t *testing.T) {
	f := newFixture(t, false)
	k, err := f.mod.Function("lonely")
	must(t, err)
	y := f.floats(t, make([]float32, 4))
	must(t, k.Launch(f.s, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 32}}, y))
	must(t, f.s.Synchronize())
	register(t, "elsewhere", cudatest.Kernel{Thread: func(*cudatest.Thread) {}})
	if _, err := f.mod.Function("elsewhere"); !errors.Is(err, cu.CUDA_ERROR_NOT_FOUND) {
		t.Errorf("Function of a registered name the module lacks = %v, want CUDA_ERROR_NOT_FOUND", err)
	}
	bin, err := cuda.LoadModule(f.s.Context(), fakecuda.MinimalCubin())
	must(t, err)
	defer bin.Close()
	if _, err := bin.Function("lonely_bin"); !errors.Is(err, cu.CUDA_ERROR_NOT_FOUND) || !strings.Contains(err.Error(), "lonely_bin") {
		t.Errorf("Function(lonely_bin) of a cubin with no Go kernel = %v, want CUDA_ERROR_NOT_FOUND naming it", err)
	}
}

// A kernel unregistered after its function was resolved fails its launch.
func TestKernelUnregisteredAfterResolve(t *testing.T) {
	f := newFixture(t, true)
	cudatest.RegisterKernel("lonely", cudatest.Kernel{Thread: func(*cudatest.Thread) {}})
	k := f.kernel(t, "lonely")
	cudatest.UnregisterKernel("lonely")
	y := f.floats(t, make([]float32, 4))
	must(t, k.Launch(f.s, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}, y))
	if err := f.s.Synchronize(); !errors.Is(err, cu.CUDA_ERROR_LAUNCH_FAILED) {
		t.Fatalf("Synchronize after launching an unregistered kernel = %v, want CUDA_ERROR_LAUNCH_FAILED", err)
	}
	var ke *cudatest.KernelError
	if err := cudatest.LastKernelError(); !errors.As(err, &ke) || ke.Kernel != "lonely" || !strings.Contains(ke.Msg, "registered") {
		t.Errorf("LastKernelError = %v", err)
	}
}

// Launches run in stream order: a kernel sees the copy queued before it,
// and a copy queued after it sees the kernel's writes.
func TestKernelStreamOrder(t *testing.T) {
	f := newFixture(t, false)
	register(t, "scale", cudatest.Kernel{Thread: func(t *cudatest.Thread) {
		if i := t.GlobalX(); i < int(t.Param(2).Uint32()) {
			cudatest.Store(t.Param(1).Ptr(), i, t.Param(3).Float32()*cudatest.Load[float32](t.Param(0).Ptr(), i))
		}
	}})
	k := f.kernel(t, "scale")
	const n = 1 << 16
	host, err := cuda.AllocHost[float32](f.ctx, n)
	must(t, err)
	defer host.Close()
	back, err := cuda.AllocHost[float32](f.ctx, n)
	must(t, err)
	defer back.Close()
	for i := range host.Slice() {
		host.Slice()[i] = float32(i % 100)
	}
	x, y := f.floats(t, make([]float32, n)), f.floats(t, make([]float32, n))
	for round := range 3 {
		must(t, cuda.CopyToDeviceAsync(f.s, x, host))
		must(t, k.Launch(f.s, cuda.LaunchConfig{Grid: cuda.Dim3{X: cuda.Blocks(n, 256)}, Block: cuda.Dim3{X: 256}}, x, y, uint32(n), float32(round+2)))
		must(t, cuda.CopyFromDeviceAsync(f.s, back, y))
		must(t, f.s.Synchronize())
		for i, v := range back.Slice() {
			if want := float32(round+2) * float32(i%100); v != want {
				t.Fatalf("round %d: y[%d] = %v, want %v", round, i, v, want)
			}
		}
	}
}

// faultRun launches the fault kernel, registered as k, in a context of its
// own and returns the error of the stream's synchronization.
func faultRun(t *testing.T, k cudatest.Kernel, how uint32) error {
	t.Helper()
	f := newFixture(t, true)
	register(t, "fault", k)
	y := f.floats(t, make([]float32, 100))
	must(t, f.kernel(t, "fault").Launch(f.s, cuda.LaunchConfig{Grid: cuda.Dim3{X: 2}, Block: cuda.Dim3{X: 64}}, y, uint32(100), how))
	err := f.s.Synchronize()
	// The fault is sticky: the context reports it from now on.
	var r cu.CUresult
	if !errors.As(err, &r) {
		t.Fatalf("Synchronize after a kernel's fault = %v, want a CUresult", err)
	}
	if again := f.ctx.Synchronize(); !errors.Is(again, r) {
		t.Errorf("Context.Synchronize after a fault = %v, want %v again", again, r)
	}
	return err
}

var faultKernel = cudatest.Kernel{Thread: func(t *cudatest.Thread) {
	y, how := t.Param(0).Ptr(), t.Param(2).Uint32()
	i := t.GlobalX()
	switch how {
	case 0: // no bounds check: threads 100 to 127 store past the end
		cudatest.Store(y, i, float32(i))
	case 1:
		cudatest.Load[float32](y.Add(2), 0)
	case 2:
		t.Param(1).Float64()
	case 3:
		if i == 70 {
			panic("thread 70 gives up")
		}
	}
}}

func TestKernelOutOfBounds(t *testing.T) {
	err := faultRun(t, faultKernel, 0)
	if !errors.Is(err, cu.CUDA_ERROR_ILLEGAL_ADDRESS) {
		t.Fatalf("Synchronize after a store past the allocation = %v, want CUDA_ERROR_ILLEGAL_ADDRESS", err)
	}
	var ke *cudatest.KernelError
	if err := cudatest.LastKernelError(); !errors.As(err, &ke) || ke.Kernel != "fault" || !ke.PerThread ||
		ke.Block != (cudatest.Dim3{X: 1, Y: 0, Z: 0}) || ke.Thread != (cudatest.Dim3{X: 36, Y: 0, Z: 0}) ||
		!strings.Contains(ke.Msg, "outside every allocation") || !errors.Is(err, cu.CUDA_ERROR_ILLEGAL_ADDRESS) {
		t.Errorf("LastKernelError = %v, want thread 100 (block 1, thread 36)'s store outside every allocation", err)
	}
}

func TestKernelFaults(t *testing.T) {
	for _, c := range []struct {
		how  uint32
		want cu.CUresult
		msg  string
	}{
		{1, cu.CUDA_ERROR_MISALIGNED_ADDRESS, "not aligned to 4 bytes"},
		{2, cu.CUDA_ERROR_LAUNCH_FAILED, "parameter 1 has 4 bytes, read as float64"},
		{3, cu.CUDA_ERROR_LAUNCH_FAILED, "thread 70 gives up"},
	} {
		t.Run(c.msg, func(t *testing.T) {
			if err := faultRun(t, faultKernel, c.how); !errors.Is(err, c.want) {
				t.Fatalf("Synchronize = %v, want %v", err, c.want)
			}
			if err := cudatest.LastKernelError(); err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("LastKernelError = %v, want it to say %q", err, c.msg)
			}
		})
	}
}

// Modules count as live objects until unloaded.
func TestModuleUnload(t *testing.T) {
	cudatest.CheckNoLeaks(t)
	dev, err := cuda.GetDevice(0)
	must(t, err)
	ctx, err := cuda.PrimaryContext(dev)
	must(t, err)
	defer ctx.Close()
	before := cudatest.Live().Modules
	mod, err := cuda.LoadModule(ctx, []byte(kernelsPTX))
	must(t, err)
	if n := cudatest.Live().Modules; n != before+1 {
		t.Errorf("live modules %d after a load, want %d", n, before+1)
	}
	register(t, "bump", cudatest.Kernel{Thread: func(*cudatest.Thread) {}})
	k, err := mod.Function("bump")
	must(t, err)
	must(t, mod.Close())
	if n := cudatest.Live().Modules; n != before {
		t.Errorf("live modules %d after Close, want %d", n, before)
	}
	s, err := cuda.NewStream(ctx)
	must(t, err)
	defer s.Close()
	if err := k.Launch(s, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}, cu.CUdeviceptr(0), uint32(0)); !errors.Is(err, cuda.ErrClosed) {
		t.Errorf("Launch after the module's Close = %v, want ErrClosed", err)
	}
}

// A module loaded from a cubin has no parameter list the fake reads: the
// registration gives the sizes.
func TestKernelBinaryModule(t *testing.T) {
	cudatest.CheckNoLeaks(t)
	dev, _ := cuda.GetDevice(0)
	ctx, err := cuda.PrimaryContext(dev)
	must(t, err)
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	must(t, err)
	defer s.Close()
	mod, err := cuda.LoadModule(ctx, fakecuda.MinimalCubin())
	must(t, err)
	defer mod.Close()
	var mu sync.Mutex
	var got []float64
	register(t, "bin_kernel", cudatest.Kernel{Params: []int{8, 4}, Launch: func(l *cudatest.Launch) {
		mu.Lock()
		got = append(got, l.Param(0).Float64(), float64(l.Param(1).Int32()))
		mu.Unlock()
	}})
	k, err := mod.Function("bin_kernel")
	must(t, err)
	if sizes, known := k.ParamSizes(); cu.HeaderVersion() >= 12040 && (!known || !slices.Equal(sizes, []int{8, 4})) {
		t.Errorf("parameter sizes %v (%v), want [8 4] from the registration", sizes, known)
	}
	must(t, k.Launch(s, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}, math.Pi, int32(-3)))
	must(t, s.Synchronize())
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, []float64{math.Pi, -3}) {
		t.Errorf("parameters %v, want [π -3]", got)
	}
}

// A launch captured into a graph runs its Go kernel at each of the
// graph's launches, with the parameters of the capture.
func TestKernelGraphCapture(t *testing.T) {
	f := newFixture(t, false)
	register(t, "bump", cudatest.Kernel{Thread: func(t *cudatest.Thread) {
		y := t.Param(0).Ptr()
		if i := t.GlobalX(); i < int(t.Param(1).Uint32()) {
			cudatest.Store(y, i, cudatest.Load[float32](y, i)+1)
		}
	}})
	k := f.kernel(t, "bump")
	const n = 500
	y := f.floats(t, make([]float32, n))
	g, err := f.s.Capture(cuda.CaptureThreadLocal, func() error {
		return k.Launch(f.s, cuda.LaunchConfig{Grid: cuda.Dim3{X: cuda.Blocks(n, 128)}, Block: cuda.Dim3{X: 128}}, y, uint32(n))
	})
	must(t, err)
	defer g.Close()
	out := make([]float32, n)
	must(t, cuda.CopyFromDevice(out, y))
	if out[0] != 0 {
		t.Fatalf("the captured launch ran during the capture: y[0] = %v", out[0])
	}
	exec, err := g.Instantiate()
	must(t, err)
	defer exec.Close()
	for range 3 {
		must(t, exec.Launch(f.s))
	}
	must(t, f.s.Synchronize())
	must(t, cuda.CopyFromDevice(out, y))
	for i, v := range out {
		if v != 3 {
			t.Fatalf("y[%d] = %v after 3 graph launches, want 3", i, v)
		}
	}
}

// BenchmarkKernelSaxpy runs saxpy over 1<<20 elements, one Go call per
// thread: the cost of a large grid of a per-thread kernel.
func BenchmarkKernelSaxpy(b *testing.B) {
	cudatest.RegisterKernel("saxpy", cudatest.Kernel{Thread: saxpy})
	defer cudatest.UnregisterKernel("saxpy")
	dev, _ := cuda.GetDevice(0)
	ctx, err := cuda.PrimaryContext(dev)
	must(b, err)
	defer ctx.Close()
	mod, err := cuda.LoadModule(ctx, []byte(saxpyPTX))
	must(b, err)
	defer mod.Close()
	k, err := mod.Function("saxpy")
	must(b, err)
	s, err := cuda.NewStream(ctx)
	must(b, err)
	defer s.Close()
	const n = 1 << 20
	x, err := cuda.AllocFrom(ctx, make([]float32, n))
	must(b, err)
	defer x.Close()
	y, err := cuda.AllocFrom(ctx, make([]float32, n))
	must(b, err)
	defer y.Close()
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: cuda.Blocks(n, 256)}, Block: cuda.Dim3{X: 256}}
	b.ResetTimer()
	for range b.N {
		must(b, k.Launch(s, cfg, uint32(n), float32(2), x, y))
		must(b, s.Synchronize())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/thread")
}

// A run of a kernel that allocates nothing allocates nothing: kernels
// running in the background must not count in the allocation
// measurements of the code under test (testing.AllocsPerRun counts the
// whole process).
func TestKernelRunAllocatesNothing(t *testing.T) {
	f := newFixture(t, false)
	register(t, "bump", cudatest.Kernel{Thread: func(t *cudatest.Thread) {
		y := t.Param(0).Ptr()
		if i := t.GlobalX(); i < int(t.Param(1).Uint32()) {
			cudatest.Store(y, i, cudatest.Load[float32](y, i)+1)
		}
	}})
	k := f.kernel(t, "bump")
	y := f.floats(t, make([]float32, 200))
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: 2}, Block: cuda.Dim3{X: 128}}
	allocs := testing.AllocsPerRun(200, func() {
		must(t, k.Launch(f.s, cfg, y, uint32(200)))
		must(t, f.s.Synchronize())
	})
	if allocs != 0 {
		t.Errorf("launch and run of a per-thread kernel: %v allocations, want 0", allocs)
	}
}

// A free waits for the work queued before it, as the driver's cuMemFree
// does: a kernel still to run when its input is freed reads it whole, and
// the context is left without a sticky error.
func TestFreeWaitsForQueuedKernel(t *testing.T) {
	f := newFixture(t, false)
	register(t, "scale", cudatest.Kernel{Launch: func(l *cudatest.Launch) {
		time.Sleep(20 * time.Millisecond) // still queued when the host frees x
		x, y, n, c := l.Param(0).Ptr(), l.Param(1).Ptr(), int(l.Param(2).Uint32()), l.Param(3).Float32()
		for i := range n {
			cudatest.Store(y, i, c*cudatest.Load[float32](x, i))
		}
	}})
	k := f.kernel(t, "scale")
	const n = 1024
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i)
	}
	x, err := cuda.AllocFrom(f.ctx, in)
	must(t, err)
	y := f.floats(t, make([]float32, n))
	must(t, k.Launch(f.s, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}, x, y, uint32(n), float32(3)))
	must(t, x.Close())
	must(t, f.s.Synchronize())
	out := make([]float32, n)
	must(t, cuda.CopyFromDevice(out, y))
	for i, v := range out {
		if v != 3*float32(i) {
			t.Fatalf("y[%d] = %v, want %v", i, v, 3*float32(i))
		}
	}
}

// A context synchronize waits for the work of a stream destroyed with
// work still queued, as the driver's does (cuStreamDestroy lets the work
// finish).
func TestContextSyncWaitsForDestroyedStream(t *testing.T) {
	f := newFixture(t, false)
	register(t, "scale", cudatest.Kernel{Launch: func(l *cudatest.Launch) {
		time.Sleep(20 * time.Millisecond) // still running when the stream is destroyed
		x, y, n, c := l.Param(0).Ptr(), l.Param(1).Ptr(), int(l.Param(2).Uint32()), l.Param(3).Float32()
		for i := range n {
			cudatest.Store(y, i, c*cudatest.Load[float32](x, i))
		}
	}})
	k := f.kernel(t, "scale")
	const n = 256
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i)
	}
	x, y := f.floats(t, in), f.floats(t, make([]float32, n))
	s, err := cuda.NewStream(f.ctx)
	must(t, err)
	must(t, k.Launch(s, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}, x, y, uint32(n), float32(2)))
	must(t, s.Close())
	must(t, f.ctx.Synchronize())
	out := make([]float32, n)
	must(t, cuda.CopyFromDevice(out, y))
	for i, v := range out {
		if v != 2*float32(i) {
			t.Fatalf("y[%d] = %v after the context synchronized, want %v", i, v, 2*float32(i))
		}
	}
}

// mixedPTX has an entry the interpreter runs and one it does not: a
// module the driver loads for sm_90a.
const mixedPTX = `
.version 8.0
.target sm_90a
.address_size 64

.visible .entry fill(.param .u64 y, .param .u32 v)
{
	.reg .b32 %r<3>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [y];
	ld.param.u32 %r1, [v];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r2, %tid.x;
	mul.wide.u32 %rd3, %r2, 4;
	add.s64 %rd2, %rd2, %rd3;
	st.global.u32 [%rd2], %r1;
	ret;
}

.visible .entry tensor(.param .u64 y)
{
	wgmma.fence.sync.aligned;
	ret;
}
`

// An entry the interpreter cannot run fails each way of launching it
// (Launch, a cooperative LaunchEx, a graph's kernel node) with
// CUDA_ERROR_NOT_SUPPORTED, at once, naming the instruction and its PTX
// line; nothing is left sticky, and the module's other entry runs in the
// same context.
func TestKernelUnsupportedEntryFailsItsLaunch(t *testing.T) {
	f := newFixture(t, true)
	mod, err := cuda.LoadModule(f.ctx, []byte(mixedPTX))
	must(t, err)
	defer mod.Close()
	bad, err := mod.Function("tensor")
	must(t, err)
	fill, err := mod.Function("fill")
	must(t, err)
	line := strings.Count(mixedPTX[:strings.Index(mixedPTX, "wgmma")], "\n") + 1
	y := f.floats(t, make([]float32, 32))
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 32}}
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, cu.CUDA_ERROR_NOT_SUPPORTED) {
			t.Fatalf("%s = %v, want CUDA_ERROR_NOT_SUPPORTED", what, err)
		}
		var ke *cudatest.KernelError
		if !errors.As(cudatest.LastKernelError(), &ke) || ke.Kernel != "tensor" || ke.Line != line ||
			ke.Instruction != "wgmma.fence.sync.aligned" || !strings.Contains(ke.Error(), fmt.Sprintf("PTX line %d", line)) {
			t.Errorf("%s: LastKernelError = %v, want the entry tensor, wgmma.fence.sync.aligned at PTX line %d", what, cudatest.LastKernelError(), line)
		}
	}
	refused("Launch", bad.Launch(f.s, cfg, y))
	refused("LaunchEx, cooperative", bad.LaunchEx(f.s, cfg, cuda.LaunchAttributes{Cooperative: true}, y))
	g, err := cuda.NewGraph(f.ctx)
	must(t, err)
	defer g.Close()
	_, err = g.AddKernel(nil, bad, cfg, y)
	refused("Graph.AddKernel", err)
	must(t, f.s.Synchronize())
	must(t, fill.Launch(f.s, cfg, y, uint32(0x3f800000)))
	must(t, f.s.Synchronize())
	got := make([]float32, 32)
	must(t, cuda.CopyFromDevice(got, y))
	for i, v := range got {
		if v != 1 {
			t.Fatalf("y[%d] = %v after fill, want 1", i, v)
		}
	}
}

// Text that is not PTX fails the load with CUDA_ERROR_INVALID_PTX; valid
// PTX that the interpreter does not read (a texture reference) loads, and
// fails the launches of its entries; debug sections are skipped.
func TestModuleMalformedPTX(t *testing.T) {
	f := newFixture(t, true)
	const head = ".version 8.0\n.target sm_90\n.address_size 64\n"
	if mod, err := cuda.LoadModule(f.ctx, []byte(head+".visible .entry k()\n{\n\tadd.u32 %r1, ;\n\tret;\n}\n")); !errors.Is(err, cu.CUDA_ERROR_INVALID_PTX) {
		if err == nil {
			mod.Close()
		}
		t.Errorf("LoadModule of an instruction missing an operand = %v, want CUDA_ERROR_INVALID_PTX", err)
	}
	mod, err := cuda.LoadModule(f.ctx, []byte(head+".global .texref tex;\n.visible .entry k()\n{\n\tret;\n}\n"))
	must(t, err)
	defer mod.Close()
	k, err := mod.Function("k")
	must(t, err)
	err = k.Launch(f.s, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}})
	if !errors.Is(err, cu.CUDA_ERROR_NOT_SUPPORTED) || !strings.Contains(fmt.Sprint(cudatest.LastKernelError()), ".texref") {
		t.Errorf("Launch of an entry of a module with .texref = %v (%v), want CUDA_ERROR_NOT_SUPPORTED naming .texref", err, cudatest.LastKernelError())
	}
	must(t, f.s.Synchronize())
	dbg, err := cuda.LoadModule(f.ctx, []byte(head+".section .debug_str { .b8 0 }\n.visible .entry k()\n{\n\tret;\n}\n"))
	must(t, err)
	defer dbg.Close()
	k, err = dbg.Function("k")
	must(t, err)
	must(t, k.Launch(f.s, cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}))
	must(t, f.s.Synchronize())
}
