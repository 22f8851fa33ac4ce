package cuda_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
	"github.com/gocuda/gocuda/generated/cu"
)

// Programmatic dependent launch: the second kernel may start while the
// first is still running, and waits inside the kernel for the first's
// results (griddepcontrol.wait), instead of the stream holding it back
// until the first has ended; it also runs at the context's greatest
// priority rather than its stream's. Compute capability 9.0 and later. The
// kernels are compiled at run time by NVRTC (GOCUDA_LIBNVRTC names the
// library when it is not found).
func ExampleLaunchAttributes() {
	ctx := primary()
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	const src = `
extern "C" __global__ void produce(unsigned *a, unsigned n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		a[i] = 3 * i;
	// The dependent launch may start from here on.
	asm volatile("griddepcontrol.launch_dependents;");
}

extern "C" __global__ void consume(const unsigned *a, unsigned *b, unsigned n)
{
	// Work that does not read a could overlap produce's end here. The wait
	// returns once produce has finished and its writes are visible.
	asm volatile("griddepcontrol.wait;" ::: "memory");
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		b[i] = a[i] + 1;
}`
	arch, err := nvrtc.ArchOf(ctx.Device())
	if err != nil {
		log.Fatal(err)
	}
	prog, err := nvrtc.Compile(src, nvrtc.WithArch(arch))
	if err != nil {
		log.Fatal(err) // griddepcontrol needs sm_90 or later
	}
	mod, err := cuda.LoadModule(ctx, prog.CUBIN)
	if err != nil {
		log.Fatal(err)
	}
	defer mod.Close()
	produce, err := mod.Function("produce")
	if err != nil {
		log.Fatal(err)
	}
	consume, err := mod.Function("consume")
	if err != nil {
		log.Fatal(err)
	}

	const n = 1 << 20
	a, err := cuda.AllocSlice[uint32](ctx, n)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	b, err := cuda.AllocSlice[uint32](ctx, n)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	_, greatest, err := ctx.StreamPriorityRange()
	if err != nil {
		log.Fatal(err)
	}

	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: cuda.Blocks(n, 256)}, Block: cuda.Dim3{X: 256}}
	if err := produce.Launch(s, cfg, a, uint32(n)); err != nil {
		log.Fatal(err)
	}
	attrs := cuda.LaunchAttributes{
		ProgrammaticStreamSerialization: true,
		HasPriority:                     true,
		Priority:                        greatest, // the smallest number runs first
	}
	if err := consume.LaunchEx(s, cfg, attrs, a, b, uint32(n)); err != nil {
		log.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		log.Fatal(err)
	}
	out := make([]uint32, n)
	if err := b.CopyTo(out); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out[0], out[n-1]) // 1 3145726
}

// A kernel that asks for more than 48 KiB of dynamic shared memory per
// block must opt in first: until SetMaxDynamicSharedMemory raises its
// limit, which Attributes reports, the driver refuses the launch. Here one
// block reverses 16384 floats (64 KiB) through shared memory. The kernel
// is compiled at run time by NVRTC (GOCUDA_LIBNVRTC names the library when
// it is not found).
func ExampleKernel_SetMaxDynamicSharedMemory() {
	ctx := primary()
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	const src = `
extern "C" __global__ void reverse(float *x, unsigned n)
{
	extern __shared__ float tile[]; // the launch's dynamic shared memory: n floats
	for (unsigned i = threadIdx.x; i < n; i += blockDim.x)
		tile[i] = x[i];
	__syncthreads();
	for (unsigned i = threadIdx.x; i < n; i += blockDim.x)
		x[i] = tile[n - 1 - i];
}`
	arch, err := nvrtc.ArchOf(ctx.Device())
	if err != nil {
		log.Fatal(err)
	}
	prog, err := nvrtc.Compile(src, nvrtc.WithArch(arch))
	if err != nil {
		log.Fatal(err)
	}
	mod, err := cuda.LoadModule(ctx, prog.CUBIN)
	if err != nil {
		log.Fatal(err)
	}
	defer mod.Close()
	reverse, err := mod.Function("reverse")
	if err != nil {
		log.Fatal(err)
	}

	const n = 16384
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i)
	}
	d, err := cuda.AllocSliceFrom(ctx, x)
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1024}, SharedMemBytes: 4 * n}

	attrs, err := reverse.Attributes()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("limit before:", attrs.MaxDynamicSharedBytes) // 49152: 48 KiB
	err = reverse.Launch(s, cfg, d, uint32(n))
	fmt.Println("refused:", errors.Is(err, cu.CUDA_ERROR_INVALID_VALUE)) // true

	// More than the device allows a block is an error naming its limit.
	if err := reverse.SetMaxDynamicSharedMemory(4 * n); err != nil {
		log.Fatal(err)
	}
	if attrs, err = reverse.Attributes(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("limit after:", attrs.MaxDynamicSharedBytes) // 65536
	if err := reverse.Launch(s, cfg, d, uint32(n)); err != nil {
		log.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		log.Fatal(err)
	}
	if err := d.CopyTo(x); err != nil {
		log.Fatal(err)
	}
	fmt.Println(x[0], x[n-1]) // 16383 0
}
