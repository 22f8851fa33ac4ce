// Command gridsum sums a vector on the GPU in one kernel launch with a
// grid-wide barrier between its two phases, and checks the sum on the CPU.
// It exits 1 if the sum is wrong or if there is no driver, device, NVRTC
// library or cooperative_groups.h.
//
//	go run ./examples/gridsum [-n elements] [-device ordinal] [-include dir]
//
// A grid-wide barrier (cooperative_groups::this_grid().sync()) needs every
// block of the grid resident at once: the launch is cooperative
// (cuda.LaunchAttributes{Cooperative: true}) and its grid is sized from the
// occupancy, as many blocks as fit on a multiprocessor times the number of
// multiprocessors. A larger grid is refused before the driver, with an
// error naming that limit.
//
// NVRTC compiles the kernel at run time (GOCUDA_LIBNVRTC names the
// library). It does not build in cooperative_groups.h, which comes from a
// CUDA toolkit's headers: those nvrtc.WithToolkitHeaders finds (beside the
// NVRTC library, under $CUDA_HOME or /usr/local/cuda), or the include
// directory -include names.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
	"github.com/gocuda/gocuda/generated/cu"
)

// source is the kernel: each block sums a grid-strided share of in into
// partial[block]; after the grid-wide barrier, block 0 sums the partials.
// Blocks of 256 threads.
const source = `#include <cooperative_groups.h>
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
	return s[0];
}

extern "C" __global__ void grid_sum(const unsigned *in, unsigned long long *partial, unsigned long long *sum, unsigned n)
{
	cg::grid_group grid = cg::this_grid();
	unsigned long long acc = 0;
	for (unsigned long long i = grid.thread_rank(); i < n; i += grid.size())
		acc += in[i];
	acc = block_sum(acc);
	if (threadIdx.x == 0)
		partial[blockIdx.x] = acc;
	grid.sync(); // every block's partial sum is written and visible
	if (blockIdx.x != 0)
		return;
	__syncthreads();
	acc = 0;
	for (unsigned i = threadIdx.x; i < gridDim.x; i += blockDim.x)
		acc += partial[i];
	acc = block_sum(acc);
	if (threadIdx.x == 0)
		*sum = acc;
}
`

const threads = 256

func main() {
	n := flag.Int("n", 1<<26, "number of elements")
	ordinal := flag.Int("device", 0, "device ordinal")
	include := flag.String("include", "", "a CUDA toolkit's include directory, for cooperative_groups.h (default: the toolkit's headers nvrtc finds)")
	flag.Parse()
	if err := run(*ordinal, *n, *include); err != nil {
		fmt.Fprintln(os.Stderr, "gridsum:", err)
		os.Exit(1)
	}
}

func run(ordinal, n int, include string) error {
	if n <= 0 || n > 1<<31 {
		return fmt.Errorf("-n %d: want 1 to %d", n, 1<<31)
	}
	dev, err := cuda.GetDevice(ordinal)
	if err != nil {
		return err
	}
	if ok, err := dev.Attribute(cu.CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH); err != nil || ok == 0 {
		return fmt.Errorf("device %d cannot launch cooperative kernels (%v)", ordinal, err)
	}
	s, err := cuda.OpenStream(ordinal)
	if err != nil {
		return err
	}
	defer s.Close()

	arch, err := nvrtc.ArchOf(dev)
	if err != nil {
		return err
	}
	prog, err := nvrtc.Compile(source, append(headers(include), nvrtc.WithArch(arch))...)
	if err != nil {
		return err // a compile error carries NVRTC's log
	}
	mod, err := cuda.LoadModule(s.Context(), prog.CUBIN)
	if err != nil {
		return err
	}
	defer mod.Close()
	k, err := mod.Function("grid_sum")
	if err != nil {
		return err
	}

	// The largest grid that is resident at once.
	perSM, err := k.MaxActiveBlocksPerMultiprocessor(threads, 0)
	if err != nil {
		return err
	}
	sms, err := dev.MultiprocessorCount()
	if err != nil {
		return err
	}
	blocks := perSM * sms

	host := make([]uint32, n)
	var want uint64
	for i := range host {
		host[i] = uint32(i) % 1000003
		want += uint64(host[i])
	}
	in, err := cuda.AllocSliceFrom(s, host)
	if err != nil {
		return err
	}
	defer in.Close()
	partial, err := cuda.AllocSlice[uint64](s, blocks)
	if err != nil {
		return err
	}
	defer partial.Close()
	sum, err := cuda.AllocSlice[uint64](s, 1)
	if err != nil {
		return err
	}
	defer sum.Close()
	// The upload is in s's order: finish it, so that the time below is
	// the launch's alone.
	if err := s.Synchronize(); err != nil {
		return err
	}

	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: uint32(blocks)}, Block: cuda.Dim3{X: threads}}
	coop := cuda.LaunchAttributes{Cooperative: true}
	start := time.Now()
	if err := k.LaunchEx(s, cfg, coop, in, partial, sum, uint32(n)); err != nil {
		return err
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	elapsed := time.Since(start)
	got := make([]uint64, 1)
	if err := sum.CopyTo(got); err != nil {
		return err
	}
	if got[0] != want {
		return fmt.Errorf("wrong sum %d, want %d", got[0], want)
	}
	fmt.Printf("gridsum: %d elements summed correctly by %d blocks of %d threads (%d per multiprocessor × %d), one cooperative launch and wait %v\n",
		n, blocks, threads, perSM, sms, elapsed)

	// One block more cannot be resident: LaunchEx says so before the driver.
	cfg.Grid.X++
	if err := k.LaunchEx(s, cfg, coop, in, partial, sum, uint32(n)); err != nil {
		fmt.Println("gridsum: one block more is refused:", err)
	} else {
		return fmt.Errorf("a cooperative launch of %d blocks was not refused", blocks+1)
	}
	return nil
}

// headers are the compile options that provide cooperative_groups.h:
// dir and, from CUDA 13, its cccl subdirectory, where the toolkit keeps
// the libcu++ headers (<cuda/std/...>) that cooperative_groups.h includes;
// or, without dir, the toolkit's headers nvrtc finds.
func headers(dir string) []nvrtc.Option {
	if dir == "" {
		return []nvrtc.Option{nvrtc.WithToolkitHeaders()}
	}
	opts := []nvrtc.Option{nvrtc.WithIncludeDir(dir)}
	if st, err := os.Stat(filepath.Join(dir, "cccl")); err == nil && st.IsDir() {
		opts = append(opts, nvrtc.WithIncludeDir(filepath.Join(dir, "cccl")))
	}
	return opts
}
