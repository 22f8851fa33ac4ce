package ptxsuite_test

import (
	"strings"
	"testing"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
)

// cgKernel compiles a source that includes cooperative_groups.h, from
// the toolkit's headers; it skips where they lack it: the module's header
// cache does not pin it, since it includes libcu++ headers that the
// generator's include checks would have to admit.
func (e *env) cgKernel(src, name string) *cuda.Kernel {
	e.t.Helper()
	res, err := nvrtc.Compile(src, nvrtc.WithArch(e.arch), nvrtc.WithNameExpressions(name), nvrtc.WithToolkitHeaders(), nvrtc.WithOptions("-std=c++17"))
	if err != nil {
		if strings.Contains(err.Error(), "cooperative_groups") && strings.Contains(err.Error(), "cannot open") {
			e.t.Skipf("the toolkit headers NVRTC finds have no cooperative_groups.h: %v", err)
		}
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

const tilesSrc = `
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void tiles(const int *x, int *sums16, int *max8, int *count) {
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(block);
	cg::thread_block_tile<8> t8 = cg::tiled_partition<8>(block);
	unsigned r = block.thread_rank();
	int v = x[blockIdx.x * blockDim.x + r];
	int s = v;
	for (int o = t16.size() / 2; o > 0; o /= 2) s += t16.shfl_down(s, o);
	if (t16.thread_rank() == 0) sums16[(blockIdx.x * blockDim.x + r) / 16] = s;
	int m = cg::reduce(t8, v, cg::greater<int>());
	if (t8.thread_rank() == 0) max8[(blockIdx.x * blockDim.x + r) / 8] = m;
	block.sync();
	cg::coalesced_group active = cg::coalesced_threads();
	if (v % 2 == 0) {
		cg::coalesced_group even = cg::coalesced_threads();
		if (even.thread_rank() == 0) atomicAdd(count, (int)even.size());
	}
	(void)active;
}`

// Cooperative groups' tiles: shuffles within 16-thread tiles, cg::reduce
// over 8-thread tiles, and a coalesced group inside a branch.
func TestCooperativeGroupsTiles(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 512
		x := make([]int32, n)
		r := rng(67)
		for i := range x {
			x[i] = int32(r.next()%1000) - 500
		}
		sums, maxes := make([]int32, n/16), make([]int32, n/8)
		var even int32
		for i, v := range x {
			sums[i/16] += v
			if i%8 == 0 || v > maxes[i/8] {
				maxes[i/8] = v
			}
			if v%2 == 0 {
				even++
			}
		}
		k := e.cgKernel(tilesSrc, "tiles")
		dx, ds, dm, dc := up(e, x), zeros[int32](e, n/16), zeros[int32](e, n/8), zeros[int32](e, 1)
		e.launch(k, cuda.LaunchConfig{Grid: cuda.Dim3{X: 4}, Block: cuda.Dim3{X: 128}}, dx, ds, dm, dc)
		same(e, "tile sums", down(e, ds), sums, 0)
		same(e, "tile maxima", down(e, dm), maxes, 0)
		same(e, "even threads", down(e, dc), []int32{even}, 0)
	})
}

const gridSyncSrc = `
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void rotate_twice(int *x, int *y, int n) {
	cg::grid_group g = cg::this_grid();
	for (int i = g.thread_rank(); i < n; i += g.size()) y[i] = x[(i + 1) % n];
	g.sync();
	for (int i = g.thread_rank(); i < n; i += g.size()) x[i] = y[(i + 1) % n];
}`

// A grid-wide barrier of cooperative groups in a cooperative launch:
// every block's writes before it are seen by every block after it.
func TestCooperativeGridSync(t *testing.T) {
	forArchs(t, func(e *env) {
		n := 5000
		x := make([]int32, n)
		for i := range x {
			x[i] = int32(i * 3)
		}
		want := make([]int32, n)
		for i := range want {
			want[i] = x[(i+2)%n]
		}
		k := e.cgKernel(gridSyncSrc, "rotate_twice")
		dx, dy := up(e, x), zeros[int32](e, n)
		cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: 8}, Block: cuda.Dim3{X: 128}}
		if err := k.LaunchEx(e.s, cfg, cuda.LaunchAttributes{Cooperative: true}, dx, dy, int32(n)); err != nil {
			e.t.Fatal(err)
		}
		same(e, "rotated", down(e, dx), want, 0)
	})
}
