package cuda

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/fakecuda"
)

// These tests run against the fake driver, whose functions are made by a
// control (it has no modules): LaunchEx's checks, and what reaches
// cuLaunchKernelEx. The same launches on a GPU, with kernels that use
// clusters, grid-wide barriers and programmatic serialization, are in
// launchex_gpu_test.go.

// fakeDriverKernel returns a kernel of the fake driver's own (see
// fakecuda.Function), in a module handle of ctx made here, and the fake
// driver's controls. It skips t against another driver.
func fakeDriverKernel(t *testing.T, ctx *Context, f fakecuda.Function) (*Kernel, *fakecuda.Lib) {
	t.Helper()
	if !cudatest.Active() {
		t.Skip("needs the fake driver's functions (GOCUDA_TEST_DRIVER=fake); on a GPU, TestLaunchExCluster*, TestLaunchExCooperative* and TestLaunchExProgrammatic* run real kernels")
	}
	lib, err := fakecuda.Open(os.Getenv(cu.LibraryEnv))
	must(t, err)
	raw, err := lib.NewFunction(f)
	must(t, err)
	cc, err := ctx.ref("test")
	must(t, err)
	core := newShared(testKind(&liveModules, func(*moduleState) error { return lib.FreeFunction(raw) }, dropModule))
	core.val.ctx.core = cc
	mod := newModuleHandle(core)
	t.Cleanup(func() { must(t, mod.Close()) })
	k := &Kernel{mod: mod, raw: cu.CUfunction(raw), name: "fakefn"}
	var sizes []uint32
	for _, s := range f.Params {
		sizes = append(sizes, uint32(s))
	}
	k.setParams(naturalLayout(sizes))
	return k, lib
}

func launches(lib *fakecuda.Lib) int {
	_, n := lib.LastLaunch()
	return n
}

// attrValue returns the value of the attribute id the fake received, and
// whether it did.
func attrValue(l fakecuda.Launch, id cu.CUlaunchAttributeID) ([64]byte, bool) {
	for _, a := range l.Attrs {
		if a.ID == int(id) {
			return a.Value, true
		}
	}
	return [64]byte{}, false
}

func u32(b [64]byte, i int) uint32 { return binary.LittleEndian.Uint32(b[4*i:]) }

func TestLaunchExAttributesReachDriver(t *testing.T) {
	_, ctx := needGPU(t)
	k, lib := fakeDriverKernel(t, ctx, fakecuda.Function{Registers: 32, Params: []int{8, 4, 8}})
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()

	var policy cu.CUlaunchAttribute
	policy.Id = cu.CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE
	*policy.Value.ClusterSchedulingPolicyPreference() = cu.CU_CLUSTER_SCHEDULING_POLICY_SPREAD
	cfg := LaunchConfig{Grid: Dim3{X: 4, Y: 2}, Block: Dim3{X: 128}, SharedMemBytes: 1024}
	attrs := LaunchAttributes{
		Cluster:                         Dim3{X: 2, Y: 2},
		Cooperative:                     true,
		ProgrammaticStreamSerialization: true,
		HasPriority:                     true,
		Priority:                        -3,
		Raw:                             []cu.CUlaunchAttribute{{}, policy}, // the IGNORE entry is left out
	}
	must(t, k.LaunchEx(s, cfg, attrs, cu.CUdeviceptr(0x1234), uint32(7), 2.5))
	l, n := lib.LastLaunch()
	if n == 0 {
		t.Fatal("no launch reached the fake driver")
	}
	if l.Function != uint64(k.Raw()) || l.Stream != uint64(s.Raw()) || l.Grid != [3]uint32{4, 2, 1} ||
		l.Block != [3]uint32{128, 1, 1} || l.SharedMemBytes != 1024 {
		t.Errorf("launch %+v, want function %#x, stream %#x, grid 4×2×1, block 128×1×1, 1024 bytes", l, k.Raw(), s.Raw())
	}
	var ids []int
	for _, a := range l.Attrs {
		ids = append(ids, a.ID)
	}
	want := []int{int(cu.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION), int(cu.CU_LAUNCH_ATTRIBUTE_COOPERATIVE),
		int(cu.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION), int(cu.CU_LAUNCH_ATTRIBUTE_PRIORITY),
		int(cu.CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE)}
	if !slices.Equal(ids, want) {
		t.Fatalf("attribute IDs %v, want %v", ids, want)
	}
	v := l.Attrs[0].Value
	if u32(v, 0) != 2 || u32(v, 1) != 2 || u32(v, 2) != 1 {
		t.Errorf("cluster %d×%d×%d, want 2×2×1", u32(v, 0), u32(v, 1), u32(v, 2))
	}
	if c, p, pr, sp := u32(l.Attrs[1].Value, 0), u32(l.Attrs[2].Value, 0), int32(u32(l.Attrs[3].Value, 0)), u32(l.Attrs[4].Value, 0); c != 1 || p != 1 || pr != -3 || sp != uint32(cu.CU_CLUSTER_SCHEDULING_POLICY_SPREAD) {
		t.Errorf("cooperative %d, programmatic %d, priority %d, scheduling policy %d; want 1, 1, -3, %d", c, p, pr, sp, cu.CU_CLUSTER_SCHEDULING_POLICY_SPREAD)
	}
	if !slices.Equal(l.Params, []uint64{0x1234, 7, math.Float64bits(2.5)}) {
		t.Errorf("parameters %#x", l.Params)
	}

	// No attributes: an empty list. Prepared arguments, changed in place.
	args, err := k.NewArgs(cu.CUdeviceptr(0x10), uint32(1), 0.5)
	must(t, err)
	defer args.Close()
	must(t, SetArg(args, 1, uint32(9)))
	must(t, k.LaunchArgsEx(s, LaunchConfig{Grid: Dim3{X: 3}, Block: Dim3{X: 32}}, LaunchAttributes{}, args))
	l, _ = lib.LastLaunch()
	if len(l.Attrs) != 0 || l.Grid != [3]uint32{3, 1, 1} || !slices.Equal(l.Params, []uint64{0x10, 9, math.Float64bits(0.5)}) {
		t.Errorf("LaunchArgsEx without attributes: %+v", l)
	}
	must(t, k.LaunchArgsEx(s, LaunchConfig{Grid: Dim3{X: 8}, Block: Dim3{X: 32}}, LaunchAttributes{Cluster: Dim3{X: 8}}, args))
	l, _ = lib.LastLaunch()
	if v, ok := attrValue(l, cu.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION); !ok || u32(v, 0) != 8 || len(l.Attrs) != 1 {
		t.Errorf("LaunchArgsEx with a cluster of 8: %+v", l)
	}

	// More arguments than Launch keeps on the stack go through C memory.
	sizes := make([]int, 20)
	vals := make([]any, 20)
	want64 := make([]uint64, 20)
	for i := range sizes {
		sizes[i], vals[i], want64[i] = 4, uint32(100+i), uint64(100+i)
	}
	many, _ := fakeDriverKernel(t, ctx, fakecuda.Function{Params: sizes})
	must(t, many.LaunchEx(s, LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 1}}, LaunchAttributes{HasPriority: true}, vals...))
	l, _ = lib.LastLaunch()
	if !slices.Equal(l.Params, want64) {
		t.Errorf("20 arguments reached the driver as %v", l.Params)
	}
	if v, ok := attrValue(l, cu.CU_LAUNCH_ATTRIBUTE_PRIORITY); !ok || u32(v, 0) != 0 {
		t.Errorf("HasPriority with Priority 0: attributes %+v", l.Attrs)
	}
	must(t, s.Synchronize())
}

// refused checks that err is an error of op found before the driver,
// matching result and saying each of says, and that no launch reached the
// fake driver since before.
func refused(t *testing.T, lib *fakecuda.Lib, before int, what string, err error, result cu.CUresult, says ...string) {
	t.Helper()
	var e *Error
	switch {
	case err == nil:
		t.Errorf("%s: no error", what)
		return
	case !errors.As(err, &e) || e.Func != "" || !errors.Is(err, result):
		t.Errorf("%s = %v, want an error matching %v before the driver", what, err, result)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s = %v, want it to say %q", what, err, s)
		}
	}
	if n := launches(lib); n != before {
		t.Errorf("%s reached the driver", what)
	}
}

func TestLaunchExClusterChecks(t *testing.T) {
	_, ctx := needGPU(t)
	k, lib := fakeDriverKernel(t, ctx, fakecuda.Function{Registers: 16})
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	before := launches(lib)
	bad := cu.CUDA_ERROR_INVALID_CLUSTER_SIZE
	cfg := func(x, y uint32) LaunchConfig { return LaunchConfig{Grid: Dim3{X: x, Y: y}, Block: Dim3{X: 64}} }
	refused(t, lib, before, "6 blocks in clusters of 4",
		k.LaunchEx(s, cfg(6, 1), LaunchAttributes{Cluster: Dim3{X: 4}}), bad, "6 blocks in X is not a multiple of 4", "grid of 6×1×1")
	refused(t, lib, before, "4×3 blocks in clusters of 2×2",
		k.LaunchEx(s, cfg(4, 3), LaunchAttributes{Cluster: Dim3{X: 2, Y: 2}}), bad, "3 blocks in Y is not a multiple of 2")
	refused(t, lib, before, "cluster 0×2",
		k.LaunchEx(s, cfg(4, 2), LaunchAttributes{Cluster: Dim3{Y: 2}}), bad, "Cluster.X is 0")
	refused(t, lib, before, "cluster of 16",
		k.LaunchEx(s, cfg(32, 4), LaunchAttributes{Cluster: Dim3{X: 4, Y: 4}}), bad,
		"cluster of 16 blocks (4×4×1)", "portable limit of 8", "AllowNonPortableClusterSize")

	var raw cu.CUlaunchAttribute
	raw.Id = cu.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
	*raw.Value.ClusterDim() = cu.CUlaunchAttributeValue_clusterDim{X: 3, Y: 1, Z: 1}
	refused(t, lib, before, "Raw cluster of 3",
		k.LaunchEx(s, cfg(8, 1), LaunchAttributes{Raw: []cu.CUlaunchAttribute{raw}}), bad, "not a multiple of 3")
	refused(t, lib, before, "cluster twice",
		k.LaunchEx(s, cfg(6, 1), LaunchAttributes{Cluster: Dim3{X: 3}, Raw: []cu.CUlaunchAttribute{raw}}),
		cu.CUDA_ERROR_INVALID_VALUE, "CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION given twice")
	raw.Value.ClusterDim().Y = 0
	refused(t, lib, before, "Raw cluster 3×0×1",
		k.LaunchEx(s, cfg(6, 1), LaunchAttributes{Raw: []cu.CUlaunchAttribute{raw}}), bad, "a dimension is 0")
	many := make([]cu.CUlaunchAttribute, maxLaunchAttrs+1)
	for i := range many {
		many[i].Id = cu.CUlaunchAttributeID(100 + i) // not checked for repeats: unknown to this package
	}
	refused(t, lib, before, "17 attributes",
		k.LaunchEx(s, cfg(1, 1), LaunchAttributes{Raw: many}), cu.CUDA_ERROR_INVALID_VALUE, "more than 16 launch attributes")
	refused(t, lib, before, "priority beyond int32",
		k.LaunchEx(s, cfg(1, 1), LaunchAttributes{HasPriority: true, Priority: math.MaxInt32 + 1}), cu.CUDA_ERROR_INVALID_VALUE, "launch priority")
	if err := k.LaunchEx(s, LaunchConfig{Block: Dim3{X: 1}}, LaunchAttributes{Cluster: Dim3{X: 1}}); err == nil || !strings.Contains(err.Error(), "Grid.X is 0") {
		t.Errorf("a grid of 0 blocks: %v", err)
	}

	// The portable limit itself passes; beyond it, once the kernel opted
	// in, the driver decides (the fake, as an H100, takes 16 and not 32).
	must(t, k.LaunchEx(s, cfg(16, 1), LaunchAttributes{Cluster: Dim3{X: 8}}))
	must(t, k.AllowNonPortableClusterSize(true))
	must(t, k.LaunchEx(s, cfg(32, 4), LaunchAttributes{Cluster: Dim3{X: 4, Y: 4}}))
	l, _ := lib.LastLaunch()
	if v, _ := attrValue(l, cu.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION); u32(v, 0) != 4 || u32(v, 1) != 4 || u32(v, 2) != 1 {
		t.Errorf("cluster of 16 reached the driver as %d×%d×%d", u32(v, 0), u32(v, 1), u32(v, 2))
	}
	err = k.LaunchEx(s, cfg(32, 1), LaunchAttributes{Cluster: Dim3{X: 32}})
	if e := (*Error)(nil); !errors.As(err, &e) || e.Func != "cuLaunchKernelEx" || !errors.Is(err, bad) {
		t.Errorf("a cluster of 32 = %v, want the driver's %v", err, bad)
	}
	// Another Kernel of the same function sees the driver's setting.
	other := &Kernel{mod: k.mod, raw: k.raw, name: k.name}
	must(t, other.LaunchEx(s, cfg(16, 1), LaunchAttributes{Cluster: Dim3{X: 16}}))
	must(t, other.AllowNonPortableClusterSize(false))
	before = launches(lib)
	refused(t, lib, before, "cluster of 16 after forbidding", other.LaunchEx(s, cfg(16, 1), LaunchAttributes{Cluster: Dim3{X: 16}}), bad, "portable limit")
	must(t, s.Synchronize())
}

func TestLaunchExCooperativeLimit(t *testing.T) {
	_, ctx := needGPU(t)
	// 32 registers a thread: 8 blocks of 256 threads per multiprocessor
	// (by threads and by registers alike), 2 of 1024; the fake has 132.
	k, lib := fakeDriverKernel(t, ctx, fakecuda.Function{Registers: 32, Params: []int{4}})
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	if n, err := k.MaxActiveBlocksPerMultiprocessor(256, 0); err != nil || n != 8 {
		t.Fatalf("MaxActiveBlocksPerMultiprocessor(256, 0) = %d, %v; want 8", n, err)
	}
	coop := LaunchAttributes{Cooperative: true}
	cfg := LaunchConfig{Grid: Dim3{X: 8 * 132}, Block: Dim3{X: 256}}
	occ := func() int { return cudatest.Calls("cuOccupancyMaxActiveBlocksPerMultiprocessor") }
	o := occ()
	must(t, k.LaunchEx(s, cfg, coop, uint32(1)))
	must(t, k.LaunchEx(s, LaunchConfig{Grid: Dim3{X: 4, Y: 132, Z: 2}, Block: Dim3{X: 16, Y: 16}}, coop, uint32(1)))
	if d := occ() - o; d != 1 {
		t.Errorf("two cooperative launches of one block shape asked the occupancy %d times, want once", d)
	}
	l, _ := lib.LastLaunch()
	if v, ok := attrValue(l, cu.CU_LAUNCH_ATTRIBUTE_COOPERATIVE); !ok || u32(v, 0) != 1 {
		t.Errorf("cooperative attribute: %+v", l.Attrs)
	}

	before := launches(lib)
	cfg.Grid.X++
	refused(t, lib, before, "1057 cooperative blocks", k.LaunchEx(s, cfg, coop, uint32(1)),
		cu.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
		"cooperative launch of 1057 blocks", "at most 1056 blocks of kernel fakefn", "8 per multiprocessor",
		"blocks of 256 threads with 0 bytes of dynamic shared memory", "on 132 multiprocessors")
	// Blocks of another size, a cooperative launch given as a Raw attribute.
	var raw cu.CUlaunchAttribute
	raw.Id = cu.CU_LAUNCH_ATTRIBUTE_COOPERATIVE
	*raw.Value.Cooperative() = 1
	big := LaunchConfig{Grid: Dim3{X: 2*132 + 1}, Block: Dim3{X: 1024}, SharedMemBytes: 4096}
	refused(t, lib, before, "265 cooperative blocks of 1024", k.LaunchEx(s, big, LaunchAttributes{Raw: []cu.CUlaunchAttribute{raw}}, uint32(1)),
		cu.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "at most 264 blocks", "2 per multiprocessor", "4096 bytes")
	big.Grid.X--
	must(t, k.LaunchEx(s, big, LaunchAttributes{Raw: []cu.CUlaunchAttribute{raw}}, uint32(1)))
	// Without the attribute the size is the driver's business.
	big.Grid.X = 100000
	must(t, k.LaunchEx(s, big, LaunchAttributes{}, uint32(1)))
	must(t, s.Synchronize())
}

func TestLaunchExClosed(t *testing.T) {
	_, ctx := needGPU(t)
	k, lib := fakeDriverKernel(t, ctx, fakecuda.Function{Params: []int{8}})
	s, err := NewStream(ctx)
	must(t, err)
	cfg := LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 1}}
	attrs := LaunchAttributes{Cluster: Dim3{X: 1}, Cooperative: true}
	mem, err := Alloc(ctx, 16)
	must(t, err)
	args, err := k.NewArgs(mem)
	must(t, err)
	must(t, mem.Close())
	before := launches(lib)
	closed := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s = %v, want ErrClosed", what, err)
		}
	}
	closed("LaunchEx with closed memory", k.LaunchEx(s, cfg, attrs, mem))
	closed("LaunchEx on a nil stream", k.LaunchEx(nil, cfg, attrs, cu.CUdeviceptr(0)))
	closed("LaunchEx of a nil kernel", (*Kernel)(nil).LaunchEx(s, cfg, attrs))
	closed("LaunchArgsEx of nil args", k.LaunchArgsEx(s, cfg, attrs, nil))
	must(t, args.Close())
	closed("LaunchArgsEx of closed args", k.LaunchArgsEx(s, cfg, attrs, args))
	must(t, s.Close())
	closed("LaunchEx on a closed stream", k.LaunchEx(s, cfg, attrs, cu.CUdeviceptr(0)))
	s2, err := NewStream(ctx)
	must(t, err)
	defer s2.Close()
	must(t, k.mod.Close())
	closed("LaunchEx of a closed module", k.LaunchEx(s2, cfg, attrs, cu.CUdeviceptr(0)))
	closed("AllowNonPortableClusterSize of a closed module", k.AllowNonPortableClusterSize(true))
	if n := launches(lib); n != before {
		t.Errorf("%d launches of closed handles reached the driver", n-before)
	}
}

// TestLaunchExNoAlloc holds LaunchEx to Launch's promise: attributes,
// a Raw list made on the stack and up to 16 arguments allocate nothing,
// nor does a cooperative launch once its limit is known.
func TestLaunchExNoAlloc(t *testing.T) {
	_, ctx := needGPU(t)
	k, _ := fakeDriverKernel(t, ctx, fakecuda.Function{Registers: 32, Params: []int{8, 4, 8}})
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	mem, err := Alloc(ctx, 64)
	must(t, err)
	defer mem.Close()
	args, err := k.NewArgs(mem, uint32(1), 0.5)
	must(t, err)
	defer args.Close()
	cfg := LaunchConfig{Grid: Dim3{X: 8, Y: 2}, Block: Dim3{X: 256}}
	var n uint32
	allocs := testing.AllocsPerRun(500, func() {
		n++
		var policy cu.CUlaunchAttribute
		policy.Id = cu.CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE
		attrs := LaunchAttributes{Cluster: Dim3{X: 4}, Cooperative: true, ProgrammaticStreamSerialization: true,
			HasPriority: true, Priority: -1, Raw: []cu.CUlaunchAttribute{policy}}
		if err := k.LaunchEx(s, cfg, attrs, mem, n, 0.25); err != nil {
			t.Fatal(err)
		}
		if err := k.LaunchArgsEx(s, cfg, attrs, args); err != nil {
			t.Fatal(err)
		}
	})
	must(t, s.Synchronize())
	if allocs != 0 {
		t.Errorf("LaunchEx + LaunchArgsEx with attributes: %v allocations per iteration, want 0", allocs)
	}
}
