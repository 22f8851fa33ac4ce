package cuda_test

import (
	"errors"
	"fmt"
	"log"
	"slices"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/cuda/nvrtc"
	"github.com/gocuda/gocuda/generated/cu"
	nvrtcraw "github.com/gocuda/gocuda/generated/nvrtc"
	"github.com/gocuda/gocuda/internal/nvrtctest"
)

// affineSource is the kernel of the managed-memory test and example:
// x = a*x + b, element by element.
const affineSource = `
extern "C" __global__ void affine(float *x, unsigned n, float a, float b) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] = a * x[i] + b;
}
`

// Managed memory: the host writes it, a kernel updates it on the device
// after a prefetch, and the host reads the result in place once the stream
// is synchronized, with no copies. The kernel is compiled at run time by
// NVRTC (GOCUDA_LIBNVRTC names the library when it is not found).
func ExampleAllocManaged() {
	ctx := primary()
	defer ctx.Close()
	dev := ctx.Device()
	s, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	arch, err := nvrtc.ArchOf(dev)
	if err != nil {
		log.Fatal(err)
	}
	prog, err := nvrtc.Compile(affineSource, nvrtc.WithArch(arch))
	if err != nil {
		log.Fatal(err)
	}
	mod, err := cuda.LoadModule(ctx, prog.CUBIN)
	if err != nil {
		log.Fatal(err)
	}
	defer mod.Close()
	affine, err := mod.Function("affine")
	if err != nil {
		log.Fatal(err)
	}

	const n = 1 << 20
	m, err := cuda.AllocManagedOf[float32](ctx, n, cuda.AttachGlobal)
	if err != nil {
		log.Fatal(err) // more than the device has free is refused: cuda.ErrExceedsFreeMemory
	}
	defer m.Close() // runs after the last use of x below
	// x is a view of the managed memory, valid while m is open.
	x, err := cuda.ManagedSlice[float32](m)
	if err != nil {
		log.Fatal(err)
	}
	for i := range x {
		x[i] = float32(i)
	}
	// The device reads x often: keep it there, and move it before the kernel runs.
	if err := m.Advise(cuda.AdvisePreferredLocation, cuda.DeviceLocation(dev)); err != nil {
		log.Fatal(err)
	}
	if err := m.Prefetch(s, cuda.DeviceLocation(dev)); err != nil {
		log.Fatal(err)
	}
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: cuda.Blocks(n, 256)}, Block: cuda.Dim3{X: 256}}
	if err := affine.Launch(s, cfg, m.Raw(), uint32(n), float32(2), float32(1)); err != nil {
		log.Fatal(err)
	}
	// Back to the host, in stream order after the kernel.
	if err := m.Prefetch(s, cuda.HostLocation()); err != nil {
		log.Fatal(err)
	}
	if err := s.Synchronize(); err != nil { // only now may the host read x
		log.Fatal(err)
	}
	fmt.Println(x[0], x[1], x[n-1]) // 1 3 2.097151e+06
}

// managedGPU returns the primary context of device 0, closed when t ends,
// or skips t without a driver, a device, managed memory or concurrent
// managed access (prefetching needs it).
func managedGPU(t *testing.T) (cuda.Device, *cuda.Context) {
	t.Helper()
	dev, err := cuda.GetDevice(0)
	if errors.Is(err, cuda.ErrNoDriver) || errors.Is(err, cu.CUDA_ERROR_NO_DEVICE) {
		t.Skipf("no CUDA driver or device: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := dev.SupportsManagedMemory(); err != nil || !ok {
		t.Skipf("device without managed memory (%v)", err)
	}
	if v, err := dev.Attribute(cu.CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS); err != nil || v == 0 {
		t.Skipf("device without concurrent managed access (%v)", err)
	}
	ctx, err := cuda.PrimaryContext(dev)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ctx.Close(); err != nil {
			t.Error(err)
		}
	})
	return dev, ctx
}

// affineGo is affineSource in Go, for the fake driver. The module is a
// cubin, whose parameter list the fake does not read: the registration
// gives it.
var affineGo = cudatest.Kernel{Params: []int{8, 4, 4, 4}, Thread: func(t *cudatest.Thread) {
	x, n, a, b := t.Param(0).Ptr(), t.Param(1).Uint32(), t.Param(2).Float32(), t.Param(3).Float32()
	if i := t.GlobalX(); i < int(n) {
		cudatest.Store(x, i, a*cudatest.Load[float32](x, i)+b)
	}
}}

// loadAffine compiles affineSource with NVRTC for dev and loads it, or
// skips t where NVRTC or modules are missing. On the fake driver, the
// kernel that runs is affineGo.
func loadAffine(t *testing.T, dev cuda.Device, ctx *cuda.Context) *cuda.Kernel {
	t.Helper()
	if cudatest.Active() {
		cudatest.RegisterKernel("affine", affineGo)
	}
	major := nvrtcraw.HeaderVersion() / 1000
	nvrtctest.UseCached(major)
	if err := nvrtcraw.Load(); err != nil {
		if nvrtctest.Required(major) {
			t.Fatalf("GOCUDA_TEST_NVRTC=required: %v", err)
		}
		t.Skipf("no NVRTC library to compile the test kernel (set %s): %v", nvrtcraw.LibraryEnv, err)
	}
	arch, err := nvrtc.ArchOf(dev)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := nvrtc.Compile(affineSource, nvrtc.WithArch(arch))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := cuda.LoadModule(ctx, prog.CUBIN)
	if errors.Is(err, cuda.ErrMissingFunction) {
		t.Skipf("the driver cannot load modules: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := mod.Close(); err != nil {
			t.Error(err)
		}
	})
	k, err := mod.Function("affine")
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestManagedKernel: the host writes managed memory, a prefetch moves it
// to the device, a kernel updates it there, and the host reads the result
// through the typed slice after Synchronize; with advice given, a second
// kernel takes the memory as a *DeviceMemory argument, and after a
// prefetch to the host the host reads it again.
func TestManagedKernel(t *testing.T) {
	dev, ctx := managedGPU(t)
	affine := loadAffine(t, dev, ctx)
	s, err := cuda.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 1<<20 + 3 // not a whole number of blocks
	m, err := cuda.AllocManagedOf[float32](ctx, n, cuda.AttachGlobal)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	x, err := cuda.ManagedSlice[float32](m)
	if err != nil {
		t.Fatal(err)
	}
	for i := range x {
		x[i] = float32(i % 1000)
	}
	here := cuda.DeviceLocation(dev)
	if err := m.Prefetch(s, here); err != nil {
		t.Fatal(err)
	}
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: cuda.Blocks(n, 256)}, Block: cuda.Dim3{X: 256}}
	if err := affine.Launch(s, cfg, m.Raw(), uint32(n), float32(2), float32(1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	for i, v := range x {
		if want := 2*float32(i%1000) + 1; v != want {
			t.Fatalf("after the kernel x[%d] = %v, want %v", i, v, want)
		}
	}
	if loc, err := m.LastPrefetchLocation(); err != nil || loc != here {
		t.Errorf("last prefetch location %v (%v), want %v", loc, err, here)
	}

	for _, a := range []struct {
		advice cuda.Advice
		loc    cuda.Location
	}{
		{cuda.AdviseReadMostly, cuda.Location{}},
		{cuda.AdvisePreferredLocation, here},
		{cuda.AdviseAccessedBy, here},
		{cuda.AdviseAccessedBy, cuda.HostLocation()},
	} {
		if err := m.Advise(a.advice, a.loc); err != nil {
			t.Fatalf("%v for %v: %v", a.advice, a.loc, err)
		}
	}
	if rm, err := m.ReadMostly(); err != nil || !rm {
		t.Errorf("ReadMostly = %v, %v after AdviseReadMostly", rm, err)
	}
	if loc, err := m.PreferredLocation(); err != nil || loc != here {
		t.Errorf("preferred location %v (%v), want %v", loc, err, here)
	}
	if locs, err := m.AccessedBy(); err != nil || !slices.Contains(locs, here) {
		t.Errorf("accessed by %v (%v), want %v among them", locs, err, here)
	} else {
		t.Logf("accessed by %v after advising %v and the host", locs, here)
	}
	if err := m.Advise(cuda.AdviseUnsetReadMostly, cuda.Location{}); err != nil {
		t.Fatal(err)
	}
	d, err := m.DeviceMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := m.Prefetch(s, here); err != nil {
		t.Fatal(err)
	}
	if err := affine.Launch(s, cfg, d, uint32(n), float32(1), float32(-1)); err != nil { // x - 1
		t.Fatal(err)
	}
	if err := m.Prefetch(s, cuda.HostLocation()); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	if loc, err := m.LastPrefetchLocation(); err != nil || !loc.IsHost() {
		t.Errorf("last prefetch location %v (%v), want the host", loc, err)
	}
	err = cuda.AccessManaged(m, func(v []float32) error {
		for i, got := range v {
			if want := 2 * float32(i%1000); got != want {
				return fmt.Errorf("after the second kernel and a prefetch to the host x[%d] = %v, want %v", i, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct {
		advice cuda.Advice
		loc    cuda.Location
	}{
		{cuda.AdviseUnsetPreferredLocation, cuda.Location{}},
		{cuda.AdviseUnsetAccessedBy, here},
		{cuda.AdviseUnsetAccessedBy, cuda.HostLocation()},
	} {
		if err := m.Advise(a.advice, a.loc); err != nil {
			t.Fatalf("%v for %v: %v", a.advice, a.loc, err)
		}
	}
	if loc, err := m.PreferredLocation(); err != nil || !loc.IsZero() {
		t.Errorf("preferred location %v (%v) after unsetting it", loc, err)
	}
	if locs, err := m.AccessedBy(); err != nil || slices.Contains(locs, here) || slices.ContainsFunc(locs, cuda.Location.IsHost) {
		t.Errorf("accessed by %v (%v) after unsetting %v and the host", locs, err, here)
	}
}
