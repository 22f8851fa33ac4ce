//go:build linux && (amd64 || arm64)

package cuda_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
	"github.com/gocuda/gocuda/cuda/nvrtc"
	"github.com/gocuda/gocuda/generated/cu"
	rawnvrtc "github.com/gocuda/gocuda/generated/nvrtc"
	"github.com/gocuda/gocuda/internal/nvrtctest"
)

// The launch attributes on a GPU: kernels in CUDA C compiled by NVRTC for
// the device, which use thread-block clusters with distributed shared
// memory, a grid-wide barrier, and programmatic dependent launch, checked
// on their data. The checks before the driver and what reaches it are
// tested against the fake driver in launchex_test.go.

// exGPU returns device 0 and its primary context, or skips t without a
// real GPU (the fake driver's Go kernels have no clusters, grid-wide
// barriers or programmatic launches to test) or when the device is older
// than compute capability major.minor.
func exGPU(t *testing.T, major, minor int) (cuda.Device, *cuda.Context) {
	t.Helper()
	if cudatest.Active() {
		t.Skip("these kernels need a GPU: the fake driver's Go kernels model no clusters, grid-wide barriers or programmatic launches (the fake covers LaunchEx's checks in launchex_test.go)")
	}
	dev := exampleDevice(t, major, minor)
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

// needAttribute skips t unless the device has attr.
func needAttribute(t *testing.T, dev cuda.Device, attr cu.CUdevice_attribute) {
	t.Helper()
	v, err := dev.Attribute(attr)
	if err != nil {
		t.Fatal(err)
	}
	if v == 0 {
		t.Skipf("device 0 lacks %v", attr)
	}
}

// cudaInclude returns a CUDA toolkit's include directory, for the headers
// NVRTC does not build in (cooperative_groups.h): $CUDA_HOME/include or
// /usr/local/cuda/include, where cooperative_groups.h is; "" if none.
func cudaInclude() string {
	var dirs []string
	if h := os.Getenv("CUDA_HOME"); h != "" {
		dirs = append(dirs, filepath.Join(h, "include"))
	}
	for _, d := range append(dirs, "/usr/local/cuda/include") {
		if _, err := os.Stat(filepath.Join(d, "cooperative_groups.h")); err == nil {
			return d
		}
	}
	return ""
}

// headersVersion returns CUDA_VERSION of the cuda.h in dir (13000), or 0.
func headersVersion(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "cuda.h"))
	if err != nil {
		return 0
	}
	m := regexp.MustCompile(`(?m)^#define CUDA_VERSION (\d+)`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	v, _ := strconv.Atoi(string(m[1]))
	return v
}

// compileKernels compiles src with NVRTC for arch (with a toolkit's
// include directory where src includes cooperative_groups.h) and returns
// the CUBIN. It skips t without an NVRTC library, or without the headers
// src needs, unless NVRTC is required (GOCUDA_TEST_NVRTC=required, see
// nvrtctest.Required): then a missing library fails t, as do missing or
// mismatched headers where there is a GPU, whose runs point CUDA_HOME at
// their toolkit, so that they cannot pass by skipping. CI, which requires
// NVRTC too, has no GPU and no toolkit to take cooperative_groups.h from.
func compileKernels(t *testing.T, arch, src string) []byte {
	t.Helper()
	major := rawnvrtc.HeaderVersion() / 1000
	nvrtctest.UseCached(major)
	required := nvrtctest.Required(major)
	if err := rawnvrtc.Load(); err != nil {
		if required {
			t.Fatalf("GOCUDA_TEST_NVRTC=required: no NVRTC library: %v", err)
		}
		t.Skipf("no NVRTC library (set %s to libnvrtc's path, e.g. /usr/local/cuda/lib64/libnvrtc.so.13): %v", rawnvrtc.LibraryEnv, err)
	}
	noHeaders := t.Skipf
	if required && !cudatest.Active() && cu.Init(0) == nil {
		noHeaders = func(format string, args ...any) {
			t.Helper()
			t.Fatalf("GOCUDA_TEST_NVRTC=required on a GPU: "+format, args...)
		}
	}
	opts := []nvrtc.Option{nvrtc.WithArch(arch)}
	inc := ""
	if strings.Contains(src, "<cooperative_groups.h>") {
		inc = cudaInclude()
		if inc != "" {
			opts = append(opts, nvrtc.WithOptions(includeFlags(inc)...))
		}
	}
	res, err := nvrtc.Compile(src, opts...)
	if err != nil {
		var ce *nvrtc.CompileError
		nvMajor, minor, _ := nvrtc.Version()
		switch {
		case !errors.As(err, &ce):
		case inc == "" && strings.Contains(ce.Log, "cooperative_groups.h"):
			noHeaders("NVRTC %d.%d has no cooperative_groups.h built in, and no CUDA toolkit's include directory was found (set CUDA_HOME): %v", nvMajor, minor, err)
		case inc != "" && headersVersion(inc)/1000 != nvMajor:
			noHeaders("the headers in %s (CUDA %d) do not compile with NVRTC %d.%d; point CUDA_HOME at a toolkit of NVRTC's version: %v",
				inc, headersVersion(inc), nvMajor, minor, err)
		}
		t.Fatalf("compiling for %s (include directory %q): %v", arch, inc, err)
	}
	return res.CUBIN
}

// loadKernels compiles src for dev's architecture (see compileKernels) and
// loads it into ctx.
func loadKernels(t *testing.T, dev cuda.Device, ctx *cuda.Context, src string) *cuda.Module {
	t.Helper()
	arch, err := nvrtc.ArchOf(dev)
	if err != nil {
		t.Fatal(err)
	}
	mod, err := cuda.LoadModule(ctx, compileKernels(t, arch, src))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := mod.Close(); err != nil {
			t.Error(err)
		}
	})
	return mod
}

// TestLaunchExKernelsCompile compiles the kernels of the tests below for
// sm_90 without a GPU: NVRTC runs on the CPU. The cluster and grid kernels
// need cooperative_groups.h from a toolkit (CUDA_HOME) where NVRTC does not
// build it in.
func TestLaunchExKernelsCompile(t *testing.T) {
	for name, src := range map[string]string{"cluster": clusterSource, "gridsum": gridSumSource, "pdl": pdlSource} {
		t.Run(name, func(t *testing.T) {
			if cubin := compileKernels(t, "sm_90", src); len(cubin) == 0 {
				t.Fatal("no CUBIN")
			}
		})
	}
}

func function(t *testing.T, mod *cuda.Module, name string) *cuda.Kernel {
	t.Helper()
	k, err := mod.Function(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// refusedBefore checks that err was found before the driver, matches
// result and names limit.
func refusedBefore(t *testing.T, what string, err error, result cu.CUresult, limit string) {
	t.Helper()
	var e *cuda.Error
	if !errors.As(err, &e) || e.Func != "" || !errors.Is(err, result) || !strings.Contains(err.Error(), limit) {
		t.Errorf("%s = %v, want an error matching %v before the driver, naming %q", what, err, result, limit)
	}
}

const clusterSource = `
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// Each block (of 256 threads) puts its slice of in into its shared memory;
// after the cluster's barrier it reads the slice of the next block of its
// cluster, by rank and wrapping around, through distributed shared memory,
// and writes it to out. shape[block] = rank | cluster size << 16.
extern "C" __global__ void cluster_rotate(const int *in, int *out, unsigned *shape)
{
	__shared__ int slice[256];
	cg::cluster_group cluster = cg::this_cluster();
	unsigned rank = cluster.block_rank(), n = cluster.num_blocks();
	unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
	unsigned i = block * blockDim.x + threadIdx.x;
	slice[threadIdx.x] = in[i];
	cluster.sync();
	const int *next = cluster.map_shared_rank(slice, (rank + 1) % n);
	int v = next[threadIdx.x];
	cluster.sync(); // every block's shared memory stays until all have read it
	out[i] = v;
	if (threadIdx.x == 0)
		shape[block] = rank | n << 16;
}
`

// TestLaunchExClusterDistributedSharedMemory launches a kernel in clusters
// of several shapes and checks that each block read its neighbour's shared
// memory, which only a cluster of the asked shape gives.
func TestLaunchExClusterDistributedSharedMemory(t *testing.T) {
	dev, ctx := exGPU(t, 9, 0)
	needAttribute(t, dev, cu.CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH)
	mod := loadKernels(t, dev, ctx, clusterSource)
	k := function(t, mod, "cluster_rotate")
	s, err := cuda.NewStream(ctx)
	check(t, err)
	defer s.Close()

	const threads = 256
	const maxBlocks = 64
	in := make([]int32, maxBlocks*threads)
	for i := range in {
		in[i] = int32(7*i + 3)
	}
	din, err := cuda.AllocFrom(ctx, in)
	check(t, err)
	defer din.Close()
	dout, err := cuda.Alloc(ctx, 4*len(in))
	check(t, err)
	defer dout.Close()
	dshape, err := cuda.Alloc(ctx, 4*maxBlocks)
	check(t, err)
	defer dshape.Close()

	run := func(t *testing.T, grid, cluster cuda.Dim3) error {
		t.Helper()
		check(t, dout.MemsetD32(0xffffffff))
		check(t, dshape.MemsetD32(0xffffffff))
		cfg := cuda.LaunchConfig{Grid: grid, Block: cuda.Dim3{X: threads}}
		if err := k.LaunchEx(s, cfg, cuda.LaunchAttributes{Cluster: cluster}, din, dout, dshape); err != nil {
			return err
		}
		check(t, s.Synchronize())
		out := make([]int32, len(in))
		shape := make([]uint32, maxBlocks)
		check(t, cuda.CopyFromDevice(out, dout))
		check(t, cuda.CopyFromDevice(shape, dshape))
		g := cuda.Dim3{X: grid.X, Y: max(grid.Y, 1), Z: max(grid.Z, 1)}
		c := cuda.Dim3{X: cluster.X, Y: max(cluster.Y, 1), Z: max(cluster.Z, 1)}
		n := c.X * c.Y * c.Z
		for bz := range g.Z {
			for by := range g.Y {
				for bx := range g.X {
					block := bx + g.X*(by+g.Y*bz)
					rank := bx%c.X + c.X*(by%c.Y+c.Y*(bz%c.Z))
					if got := shape[block]; got != rank|n<<16 {
						t.Fatalf("block (%d, %d, %d): rank %d of a cluster of %d, want rank %d of %d", bx, by, bz, got&0xffff, got>>16, rank, n)
					}
					next := (rank + 1) % n
					nx := bx - bx%c.X + next%c.X
					ny := by - by%c.Y + next/c.X%c.Y
					nz := bz - bz%c.Z + next/(c.X*c.Y)
					from := nx + g.X*(ny+g.Y*nz)
					for th := range uint32(threads) {
						if got, want := out[block*threads+th], in[from*threads+th]; got != want {
							t.Fatalf("block (%d, %d, %d) thread %d read %d from its neighbour's shared memory, want %d (block %d's)",
								bx, by, bz, th, got, want, from)
						}
					}
				}
			}
		}
		return nil
	}
	for _, c := range []struct{ grid, cluster cuda.Dim3 }{
		{cuda.Dim3{X: 16, Y: 2}, cuda.Dim3{X: 4}},
		{cuda.Dim3{X: 8, Y: 4, Z: 2}, cuda.Dim3{X: 2, Y: 2, Z: 2}},
		{cuda.Dim3{X: 16, Y: 4}, cuda.Dim3{X: 8}}, // the portable limit
		{cuda.Dim3{X: 6, Y: 4}, cuda.Dim3{X: 3, Y: 2}},
	} {
		t.Run(fmt.Sprintf("grid%dx%dx%d/cluster%dx%dx%d", c.grid.X, c.grid.Y, c.grid.Z, c.cluster.X, c.cluster.Y, c.cluster.Z), func(t *testing.T) {
			check(t, run(t, c.grid, c.cluster))
		})
	}

	// Refused before the driver: a cluster that does not divide the grid,
	// and one beyond the portable limit before the kernel opts in.
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: 16}, Block: cuda.Dim3{X: threads}}
	refusedBefore(t, "a cluster of 3 in a grid of 16", k.LaunchEx(s, cfg, cuda.LaunchAttributes{Cluster: cuda.Dim3{X: 3}}, din, dout, dshape),
		cu.CUDA_ERROR_INVALID_CLUSTER_SIZE, "16 blocks in X is not a multiple of 3")
	refusedBefore(t, "a cluster of 16", k.LaunchEx(s, cfg, cuda.LaunchAttributes{Cluster: cuda.Dim3{X: 16}}, din, dout, dshape),
		cu.CUDA_ERROR_INVALID_CLUSTER_SIZE, "portable limit of 8")

	t.Run("non-portable16", func(t *testing.T) {
		check(t, k.AllowNonPortableClusterSize(true))
		defer func() { check(t, k.AllowNonPortableClusterSize(false)) }()
		err := run(t, cuda.Dim3{X: 32, Y: 2}, cuda.Dim3{X: 16})
		var e *cuda.Error
		if errors.As(err, &e) && e.Func == "cuLaunchKernelEx" && errors.Is(err, cu.CUDA_ERROR_INVALID_CLUSTER_SIZE) {
			t.Skipf("the device runs no cluster of 16 blocks of this kernel: %v", err)
		}
		check(t, err)
	})
}

const gridSumSource = `
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__device__ unsigned long long block_sum(unsigned long long v)
{
	__shared__ unsigned long long s[256];
	s[threadIdx.x] = v;
	__syncthreads();
	for (unsigned w = blockDim.x / 2; w > 0; w >>= 1) {
		if (threadIdx.x < w)
			s[threadIdx.x] += s[threadIdx.x + w];
		__syncthreads();
	}
	v = s[0];
	__syncthreads();
	return v;
}

// A two-phase sum of in[0..n) with a grid-wide barrier between the phases:
// each block sums a grid-strided share into partial[block]; after the
// barrier, every block sums all the partials into out[block]. Blocks of
// 256 threads.
extern "C" __global__ void grid_sum(const unsigned *in, unsigned long long *partial, unsigned long long *out, unsigned n)
{
	cg::grid_group grid = cg::this_grid();
	unsigned long long acc = 0;
	for (unsigned long long i = grid.thread_rank(); i < n; i += grid.size())
		acc += in[i];
	acc = block_sum(acc);
	if (threadIdx.x == 0)
		partial[blockIdx.x] = acc;
	grid.sync();
	acc = 0;
	for (unsigned i = threadIdx.x; i < gridDim.x; i += blockDim.x)
		acc += partial[i];
	acc = block_sum(acc);
	if (threadIdx.x == 0)
		out[blockIdx.x] = acc;
}
`

// TestLaunchExCooperativeGridSync sums with a grid-wide barrier on the
// largest grid that can be resident at once, sized from the occupancy, and
// checks that every block saw every other's partial sum; one block more is
// refused before the driver, naming the limit.
func TestLaunchExCooperativeGridSync(t *testing.T) {
	dev, ctx := exGPU(t, 6, 0)
	needAttribute(t, dev, cu.CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)
	mod := loadKernels(t, dev, ctx, gridSumSource)
	k := function(t, mod, "grid_sum")
	s, err := cuda.NewStream(ctx)
	check(t, err)
	defer s.Close()

	const threads = 256
	perSM, err := k.MaxActiveBlocksPerMultiprocessor(threads, 0)
	check(t, err)
	sms, err := dev.MultiprocessorCount()
	check(t, err)
	limit := perSM * sms
	if limit == 0 {
		t.Fatalf("no block of %d threads of grid_sum fits on a multiprocessor", threads)
	}
	t.Logf("%d blocks of %d threads resident at once (%d per multiprocessor, %d multiprocessors)", limit, threads, perSM, sms)

	const n = 1<<24 + 12345
	in := make([]uint32, n)
	var want uint64
	for i := range in {
		in[i] = uint32(i*2654435761) >> 12
		want += uint64(in[i])
	}
	din, err := cuda.AllocFrom(ctx, in)
	check(t, err)
	defer din.Close()
	partial, err := cuda.Alloc(ctx, 8*limit)
	check(t, err)
	defer partial.Close()
	out, err := cuda.Alloc(ctx, 8*limit)
	check(t, err)
	defer out.Close()

	verify := func(what string, blocks int) {
		t.Helper()
		got := make([]uint64, limit)
		check(t, cuda.CopyFromDevice(got, out))
		for b, v := range got[:blocks] {
			if v != want {
				t.Fatalf("%s: block %d of %d summed %d after the grid barrier, want %d", what, b, blocks, v, want)
			}
		}
	}
	coop := cuda.LaunchAttributes{Cooperative: true}
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(limit)}, Block: cuda.Dim3{X: threads}}
	check(t, out.MemsetD8(0))
	check(t, k.LaunchEx(s, cfg, coop, din, partial, out, uint32(n)))
	check(t, s.Synchronize())
	verify("LaunchEx", limit)

	// Prepared arguments, a smaller grid, again.
	args, err := k.NewArgs(din, partial, out, uint32(n))
	check(t, err)
	defer args.Close()
	check(t, out.MemsetD8(0))
	small := cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(sms)}, Block: cuda.Dim3{X: threads}}
	for range 3 {
		check(t, k.LaunchArgsEx(s, small, coop, args))
	}
	check(t, s.Synchronize())
	verify("LaunchArgsEx", sms)

	cfg.Grid.X++
	refusedBefore(t, "one block more than can be resident", k.LaunchEx(s, cfg, coop, din, partial, out, uint32(n)),
		cu.CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, fmt.Sprintf("at most %d blocks of kernel grid_sum, %d per multiprocessor", limit, perSM))
	check(t, s.Synchronize())
}

const pdlSource = `
// first writes a[i] = 3i + seed after a delay, then lets the launch that
// depends on it start; second waits for first's results with
// griddepcontrol.wait (cudaGridDependencySynchronize) and doubles them.
extern "C" __global__ void first(unsigned *a, unsigned n, unsigned seed)
{
	long long t0 = clock64();
	while (clock64() - t0 < 20000)
		;
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		a[i] = 3 * i + seed;
	asm volatile("griddepcontrol.launch_dependents;");
}

extern "C" __global__ void second(const unsigned *a, unsigned *b, unsigned n)
{
	asm volatile("griddepcontrol.wait;" ::: "memory");
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		b[i] = 2 * a[i];
}
`

// TestLaunchExProgrammaticAndPriority runs pairs of kernels with
// programmatic dependent launch, the second at the context's greatest
// priority (typed, then as a Raw attribute), and checks the second saw
// the first's results.
func TestLaunchExProgrammaticAndPriority(t *testing.T) {
	dev, ctx := exGPU(t, 9, 0)
	mod := loadKernels(t, dev, ctx, pdlSource)
	first, second := function(t, mod, "first"), function(t, mod, "second")
	s, err := cuda.NewStream(ctx)
	check(t, err)
	defer s.Close()
	_, greatest, err := ctx.StreamPriorityRange()
	check(t, err)

	const n = 1 << 20
	a, err := cuda.Alloc(ctx, 4*n)
	check(t, err)
	defer a.Close()
	b, err := cuda.Alloc(ctx, 4*n)
	check(t, err)
	defer b.Close()
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: cuda.Blocks(n, 256)}, Block: cuda.Dim3{X: 256}}
	var prio cu.CUlaunchAttribute
	prio.Id = cu.CU_LAUNCH_ATTRIBUTE_PRIORITY
	*prio.Value.Priority() = int32(greatest)
	for seed := range uint32(20) {
		attrs := cuda.LaunchAttributes{ProgrammaticStreamSerialization: true, HasPriority: true, Priority: greatest}
		if seed%2 == 1 {
			attrs = cuda.LaunchAttributes{ProgrammaticStreamSerialization: true, Raw: []cu.CUlaunchAttribute{prio}}
		}
		check(t, first.LaunchEx(s, cfg, cuda.LaunchAttributes{}, a, uint32(n), seed))
		check(t, second.LaunchEx(s, cfg, attrs, a, b, uint32(n)))
		check(t, s.Synchronize())
		got := make([]uint32, n)
		check(t, cuda.CopyFromDevice(got, b))
		for i, v := range got {
			if want := 2 * (3*uint32(i) + seed); v != want {
				t.Fatalf("seed %d: b[%d] = %d, want %d: the dependent launch did not see its predecessor's results", seed, i, v, want)
			}
		}
	}
}

// includeFlags are NVRTC's -I options for a toolkit's include directory:
// from CUDA 13, cooperative_groups.h includes libcu++ (<cuda/std/...>),
// which the toolkit keeps in include/cccl.
func includeFlags(dir string) []string {
	flags := []string{"-I" + dir}
	if st, err := os.Stat(filepath.Join(dir, "cccl")); err == nil && st.IsDir() {
		flags = append(flags, "-I"+filepath.Join(dir, "cccl"))
	}
	return flags
}
