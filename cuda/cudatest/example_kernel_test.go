package cudatest_test

import (
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
)

// saxpyPTX is the PTX of
//
//	extern "C" __global__ void saxpy(unsigned n, float a, const float *x, float *y)
//	{
//		unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
//		if (i < n)
//			y[i] = a * x[i] + y[i];
//	}
//
// as NVRTC or nvcc would make it, or the code under test embeds it. On a
// GPU the driver compiles and runs it; the fake driver interprets it, or
// runs the Go kernel registered under its entry's name instead.
const saxpyPTX = `
.version 7.0
.target sm_75
.address_size 64

.visible .entry saxpy(
	.param .u32 saxpy_n,
	.param .f32 saxpy_a,
	.param .u64 saxpy_x,
	.param .u64 saxpy_y
)
{
	.reg .pred	%p<2>;
	.reg .b32	%r<6>;
	.reg .f32	%f<5>;
	.reg .b64	%rd<8>;

	ld.param.u32	%r1, [saxpy_n];
	ld.param.f32	%f1, [saxpy_a];
	ld.param.u64	%rd1, [saxpy_x];
	ld.param.u64	%rd2, [saxpy_y];
	mov.u32		%r2, %ctaid.x;
	mov.u32		%r3, %ntid.x;
	mov.u32		%r4, %tid.x;
	mad.lo.u32	%r5, %r2, %r3, %r4;
	setp.ge.u32	%p1, %r5, %r1;
	@%p1 bra	DONE;
	cvta.to.global.u64	%rd3, %rd1;
	cvta.to.global.u64	%rd4, %rd2;
	mul.wide.u32	%rd5, %r5, 4;
	add.s64		%rd6, %rd3, %rd5;
	add.s64		%rd7, %rd4, %rd5;
	ld.global.f32	%f2, [%rd6];
	ld.global.f32	%f3, [%rd7];
	fma.rn.f32	%f4, %f1, %f2, %f3;
	st.global.f32	[%rd7], %f4;
DONE:
	ret;
}
`

// saxpy is the Go version of the kernel: the body of one thread. Its
// parameters are read as the PTX declares them, and its loads and stores
// of device memory are checked against the fake driver's allocations.
func saxpy(t *cudatest.Thread) {
	n, a := t.Param(0).Uint32(), t.Param(1).Float32()
	x, y := t.Param(2).Ptr(), t.Param(3).Ptr()
	if i := t.GlobalX(); i < int(n) {
		cudatest.Store(y, i, a*cudatest.Load[float32](x, i)+cudatest.Load[float32](y, i))
	}
}

// runSaxpy is the code under test: it loads a module, allocates, copies,
// launches on a stream and reads the result back, as it would on a GPU.
func runSaxpy(ctx *cuda.Context, a float32, x, y []float32) ([]float32, error) {
	mod, err := cuda.LoadModule(ctx, []byte(saxpyPTX))
	if err != nil {
		return nil, err
	}
	defer mod.Close()
	k, err := mod.Function("saxpy")
	if err != nil {
		return nil, err
	}
	s, err := cuda.NewStream(ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	dx, err := cuda.Alloc(ctx, 4*len(x))
	if err != nil {
		return nil, err
	}
	defer dx.Close()
	dy, err := cuda.Alloc(ctx, 4*len(y))
	if err != nil {
		return nil, err
	}
	defer dy.Close()
	if err := cuda.CopyToDevice(dx, x); err != nil {
		return nil, err
	}
	if err := cuda.CopyToDevice(dy, y); err != nil {
		return nil, err
	}
	n := len(x)
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: cuda.Blocks(n, 256)}, Block: cuda.Dim3{X: 256}}
	if err := k.Launch(s, cfg, uint32(n), a, dx, dy); err != nil {
		return nil, err
	}
	if err := s.Synchronize(); err != nil {
		return nil, err
	}
	out := make([]float32, n)
	return out, cuda.CopyFromDevice(out, dy)
}

// Code that launches a kernel runs unchanged on the fake driver: module
// load, allocation, copies, and the launch in stream order, which runs
// the kernel's own PTX on the host, each access checked against the
// allocations.
func Example_kernelFromPTX() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	ctx, err := cuda.PrimaryContext(dev)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	y, err := runSaxpy(ctx, 3, []float32{1, 2, 3, 4, 5}, []float32{10, 20, 30, 40, 50})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(y)
	// Output: [13 26 39 52 65]
}

// A kernel the fake cannot run from PTX (a module loaded from a cubin or
// fatbin, which the fake does not execute) is written in Go and
// registered under its entry's name; a registered kernel also replaces
// an entry's PTX, as here.
func ExampleRegisterKernel() {
	cudatest.RegisterKernel("saxpy", cudatest.Kernel{Thread: saxpy})
	defer cudatest.UnregisterKernel("saxpy")

	dev, err := cuda.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	ctx, err := cuda.PrimaryContext(dev)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	y, err := runSaxpy(ctx, 2, []float32{1, 2, 3, 4, 5}, []float32{10, 20, 30, 40, 50})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(y)
	// Output: [12 24 36 48 60]
}
