package cudatest_test

import (
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
)

// pipelinePTX has a producer and a consumer kernel, as NVRTC compiles
//
//	extern "C" __global__ void produce(const float *x, float *y, unsigned n)
//	{ unsigned i = blockIdx.x*blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1; }
//	extern "C" __global__ void consume(const float *y, float *z, unsigned n)
//	{ unsigned i = blockIdx.x*blockDim.x + threadIdx.x; if (i < n) z[i] = 2 * y[i]; }
//
// for compute_75. On a GPU the driver compiles and runs it; the fake
// driver interprets it.
const pipelinePTX = `
.version 8.4
.target sm_75
.address_size 64
.visible .entry produce(
	.param .u64 produce_param_0,
	.param .u64 produce_param_1,
	.param .u32 produce_param_2
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<3>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<8>;
	ld.param.u64 	%rd1, [produce_param_0];
	ld.param.u64 	%rd2, [produce_param_1];
	ld.param.u32 	%r2, [produce_param_2];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.u32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd3, %rd1;
	mul.wide.u32 	%rd4, %r1, 4;
	add.s64 	%rd5, %rd3, %rd4;
	ld.global.f32 	%f1, [%rd5];
	add.f32 	%f2, %f1, 0f3F800000;
	cvta.to.global.u64 	%rd6, %rd2;
	add.s64 	%rd7, %rd6, %rd4;
	st.global.f32 	[%rd7], %f2;
$L__BB0_2:
	ret;
}
.visible .entry consume(
	.param .u64 consume_param_0,
	.param .u64 consume_param_1,
	.param .u32 consume_param_2
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<3>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<8>;
	ld.param.u64 	%rd1, [consume_param_0];
	ld.param.u64 	%rd2, [consume_param_1];
	ld.param.u32 	%r2, [consume_param_2];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.u32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB1_2;
	cvta.to.global.u64 	%rd3, %rd1;
	mul.wide.u32 	%rd4, %r1, 4;
	add.s64 	%rd5, %rd3, %rd4;
	ld.global.f32 	%f1, [%rd5];
	add.f32 	%f2, %f1, %f1;
	cvta.to.global.u64 	%rd6, %rd2;
	add.s64 	%rd7, %rd6, %rd4;
	st.global.f32 	[%rd7], %f2;
$L__BB1_2:
	ret;
}
`

// pipeline is the code under test: it loads a module, copies its input to
// the device on one stream, runs the producer there and the consumer on
// another, and copies the result back. wait says whether the consumer's
// stream waits for the producer's (Stream.WaitFor): the synchronization
// that is easy to forget, and that a GPU forgives most of the time.
func pipeline(ctx *cuda.Context, in []float32, wait bool) ([]float32, error) {
	mod, err := cuda.LoadModule(ctx, []byte(pipelinePTX))
	if err != nil {
		return nil, err
	}
	defer mod.Close()
	prod, err := mod.Function("produce")
	if err != nil {
		return nil, err
	}
	cons, err := mod.Function("consume")
	if err != nil {
		return nil, err
	}
	s1, err := cuda.NewStream(ctx)
	if err != nil {
		return nil, err
	}
	defer s1.Close()
	s2, err := cuda.NewStream(ctx)
	if err != nil {
		return nil, err
	}
	defer s2.Close()
	n := len(in)
	x, err := cuda.AllocSliceFrom(s1, in)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	y, err := cuda.AllocSlice[float32](s1, n)
	if err != nil {
		return nil, err
	}
	defer y.Close()
	z, err := cuda.AllocSlice[float32](s2, n)
	if err != nil {
		return nil, err
	}
	defer z.Close()

	cfg := cuda.Linear(n, 128)
	if err := prod.Launch(s1, cfg, x, y, uint32(n)); err != nil {
		return nil, err
	}
	if wait {
		if err := s2.WaitFor(s1); err != nil {
			return nil, err
		}
	}
	if err := cons.Launch(s2, cfg, y, z, uint32(n)); err != nil {
		return nil, err
	}
	out := make([]float32, n)
	if err := z.CopyTo(out); err != nil { // waits for z's stream, s2
		return nil, err
	}
	// Without the wait, the producer may still be queued on s1: it must
	// run before its module is unloaded.
	return out, s1.Synchronize()
}

// Code that launches kernels on two streams runs unchanged on the fake
// driver, which runs the kernels' PTX: the consumer that does not
// wait for the producer's stream is reported (a test would call
// cudatest.CheckRaces(t) first, and fail with the report: both launches
// and where in the code each was queued), and once it waits, the code is
// clean and its results are right.
func Example_kernelPipeline() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	ctx, err := cuda.PrimaryContext(dev)
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()

	in := make([]float32, 1000)
	for i := range in {
		in[i] = float32(i)
	}
	for _, wait := range []bool{false, true} {
		out, err := pipeline(ctx, in, wait)
		if err != nil {
			log.Fatal(err)
		}
		if races := cudatest.TakeRaces(); len(races) > 0 {
			fmt.Printf("WaitFor %v: %s\n", wait, races[0].Summary())
			continue
		}
		fmt.Printf("WaitFor %v: no race; out[0:3] = %v, out[999] = %v\n", wait, out[:3], out[999])
	}
	// Output:
	// WaitFor false: CUDA data race: write by kernel (cuLaunchKernel) and read by kernel (cuLaunchKernel), unordered, on 4000 bytes of device memory
	// WaitFor true: no race; out[0:3] = [2 4 6], out[999] = 2000
}
