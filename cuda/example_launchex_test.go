//go:build linux && (amd64 || arm64)

package cuda_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
)

// Launch in thread-block clusters, whose blocks read each other's shared
// memory (compute capability 9.0 and later). The kernel is compiled at run
// time by NVRTC (GOCUDA_LIBNVRTC names the library when it is not found),
// which takes cooperative_groups.h from a CUDA toolkit's include directory
// ($CUDA_HOME/include, else /usr/local/cuda/include).
func ExampleKernel_LaunchEx() {
	ctx := primary()
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	const src = `#include <cooperative_groups.h>
extern "C" __global__ void rotate(const int *in, int *out)
{
	__shared__ int slice[128];
	auto cluster = cooperative_groups::this_cluster();
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	slice[threadIdx.x] = in[i];
	cluster.sync();
	int *next = cluster.map_shared_rank(slice, (cluster.block_rank() + 1) % cluster.num_blocks());
	int v = next[threadIdx.x];
	cluster.sync();
	out[i] = v;
}`
	include := "/usr/local/cuda/include"
	if home := os.Getenv("CUDA_HOME"); home != "" {
		include = filepath.Join(home, "include")
	}
	arch, err := nvrtc.ArchOf(ctx.Device()) // "sm_90" on an H100 or H200
	if err != nil {
		log.Fatal(err)
	}
	// From CUDA 13, cooperative_groups.h includes libcu++ (<cuda/std/...>),
	// which the toolkit keeps in include/cccl; NVRTC ignores a directory
	// that is not there, as older toolkits have none.
	prog, err := nvrtc.Compile(src, nvrtc.WithArch(arch),
		nvrtc.WithOptions("-I"+include, "-I"+filepath.Join(include, "cccl")))
	if err != nil {
		log.Fatal(err) // a compile error carries NVRTC's log
	}
	mod, err := cuda.LoadModule(ctx, prog.CUBIN)
	if err != nil {
		log.Fatal(err)
	}
	defer mod.Close()
	rotate, err := mod.Function("rotate")
	if err != nil {
		log.Fatal(err)
	}
	data := make([]int32, 16*128)
	for i := range data {
		data[i] = int32(i)
	}
	in, err := cuda.AllocFrom(ctx, data)
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	out, err := cuda.Alloc(ctx, 4*len(data))
	if err != nil {
		log.Fatal(err)
	}
	defer out.Close()

	// 16 blocks in clusters of 4: block 0 reads block 1's slice, block 3
	// block 0's. A cluster that does not divide the grid, or of more than
	// cuda.PortableClusterSize blocks, is refused before the driver.
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: 16}, Block: cuda.Dim3{X: 128}}
	if err := rotate.LaunchEx(s, cfg, cuda.LaunchAttributes{Cluster: cuda.Dim3{X: 4}}, in, out); err != nil {
		log.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		log.Fatal(err)
	}
	if err := cuda.CopyFromDevice(data, out); err != nil {
		log.Fatal(err)
	}
	fmt.Println(data[0], data[3*128]) // 128 0
}
