package cuda_test

import (
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
)

// scaleSrc is the kernel of Example_pipeline: x[i] *= a.
const scaleSrc = `
extern "C" __global__ void scale(float *x, float a, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] *= a;
}`

// A Go slice in, a kernel compiled from CUDA C at run time, a Go slice
// out, on one stream. The copy out waits for the launch: x was made on s,
// and its copies are in s's order.
func Example_pipeline() {
	data := []float32{1, 2, 3, 4}

	s, err := cuda.OpenStream(0) // device 0's primary context, a stream on it
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	res, err := nvrtc.Compile(scaleSrc)
	if err != nil {
		log.Fatal(err)
	}
	mod, err := cuda.LoadModule(s.Context(), res.PTX)
	if err != nil {
		log.Fatal(err)
	}
	defer mod.Close()
	k, err := mod.Function("scale")
	if err != nil {
		log.Fatal(err)
	}
	x, err := cuda.AllocSliceFrom(s, data) // data may be reused at once
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	if err := k.Launch(s, cuda.Linear(len(data), 256), x, float32(10), uint32(len(data))); err != nil {
		log.Fatal(err)
	}
	if err := x.CopyTo(data); err != nil {
		log.Fatal(err)
	}
	fmt.Println(data)
}

// pipelineSrc has the two kernels of Example_twoStreams.
const pipelineSrc = `
extern "C" __global__ void produce(const float *x, float *y, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = x[i] + 1;
}
extern "C" __global__ void consume(const float *y, float *z, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) z[i] = 2 * y[i];
}`

// twoStreams runs produce on one stream and consume, which reads what
// produce wrote, on another. wait orders the second stream after the
// first (Stream.WaitFor): without it the consumer may read y before the
// producer has written it, a race cuda/cudatest's detector reports.
func twoStreams(in []float32, wait bool) ([]float32, error) {
	s1, err := cuda.OpenStream(0)
	if err != nil {
		return nil, err
	}
	defer s1.Close()
	s2, err := cuda.NewStream(s1.Context())
	if err != nil {
		return nil, err
	}
	defer s2.Close()
	res, err := nvrtc.Compile(pipelineSrc)
	if err != nil {
		return nil, err
	}
	mod, err := cuda.LoadModule(s1.Context(), res.PTX)
	if err != nil {
		return nil, err
	}
	defer mod.Close()
	produce, err := mod.Function("produce")
	if err != nil {
		return nil, err
	}
	consume, err := mod.Function("consume")
	if err != nil {
		return nil, err
	}
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
	if err := produce.Launch(s1, cuda.Linear(n, 256), x, y, uint32(n)); err != nil {
		return nil, err
	}
	if wait {
		if err := s2.WaitFor(s1); err != nil {
			return nil, err
		}
	}
	if err := consume.Launch(s2, cuda.Linear(n, 256), y, z, uint32(n)); err != nil {
		return nil, err
	}
	out := make([]float32, n)
	if err := z.CopyTo(out); err != nil { // waits for s2, z's stream
		return nil, err
	}
	// With the wait, s1's work is done too; without it, the producer may
	// still be queued on s1, and must run before its module is unloaded.
	return out, s1.Synchronize()
}

// Two streams: a producer on one, a consumer on the other, ordered by
// Stream.WaitFor.
func Example_twoStreams() {
	out, err := twoStreams([]float32{1, 2, 3}, true)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
}
