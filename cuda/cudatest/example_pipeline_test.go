package cudatest_test

import (
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/cudatest"
)

// pipelinePTX has a producer and a consumer kernel:
//
//	extern "C" __global__ void produce(const float *x, float *y, unsigned n)
//	{ unsigned i = blockIdx.x*blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] + 1; }
//	extern "C" __global__ void consume(const float *y, float *z, unsigned n)
//	{ unsigned i = blockIdx.x*blockDim.x + threadIdx.x; if (i < n) z[i] = 2 * y[i]; }
//
// Their bodies are left out here: the fake driver reads only the entries
// and their parameters, and runs the Go kernels registered under their
// names instead.
const pipelinePTX = `
.version 8.0
.target sm_90
.address_size 64

.visible .entry produce(.param .u64 x, .param .u64 y, .param .u32 n) { ret; }
.visible .entry consume(.param .u64 y, .param .u64 z, .param .u32 n) { ret; }
`

func produce(t *cudatest.Thread) {
	x, y, n := t.Param(0).Ptr(), t.Param(1).Ptr(), t.Param(2).Uint32()
	if i := t.GlobalX(); i < int(n) {
		cudatest.Store(y, i, cudatest.Load[float32](x, i)+1)
	}
}

func consume(t *cudatest.Thread) {
	y, z, n := t.Param(0).Ptr(), t.Param(1).Ptr(), t.Param(2).Uint32()
	if i := t.GlobalX(); i < int(n) {
		cudatest.Store(z, i, 2*cudatest.Load[float32](y, i))
	}
}

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
// driver, with Go versions of its kernels: the consumer that does not
// wait for the producer's stream is reported (a test would call
// cudatest.CheckRaces(t) first, and fail with the report: both launches
// and where in the code each was queued), and once it waits, the code is
// clean and its results are right.
func Example_kernelPipeline() {
	cudatest.RegisterKernel("produce", cudatest.Kernel{Thread: produce})
	defer cudatest.UnregisterKernel("produce")
	cudatest.RegisterKernel("consume", cudatest.Kernel{Thread: consume})
	defer cudatest.UnregisterKernel("consume")

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
