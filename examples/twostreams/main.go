// Command twostreams runs a producer kernel on one stream and a consumer
// that reads what it wrote on another, ordered by Stream.WaitFor.
//
//	go run ./examples/twostreams
//
// It prints the sum of the consumer's output for a million inputs,
// 1000001000000, and checks every element on the CPU. Without the WaitFor
// the consumer could read before the producer wrote: cuda/cudatest's race
// detector reports that program (see the package's Example_kernelPipeline).
package main

import (
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
)

const src = `
extern "C" __global__ void produce(const float *x, float *y, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] = x[i] + 1;
}
extern "C" __global__ void consume(const float *y, float *z, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) z[i] = 2 * y[i];
}`

func main() {
	const n = 1_000_000
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i)
	}

	s1, err := cuda.OpenStream(0)
	if err != nil {
		log.Fatal(err)
	}
	defer s1.Close()
	s2, err := cuda.NewStream(s1.Context())
	if err != nil {
		log.Fatal(err)
	}
	defer s2.Close()
	res, err := nvrtc.Compile(src)
	if err != nil {
		log.Fatal(err)
	}
	mod, err := cuda.LoadModule(s1.Context(), res.PTX)
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
	x, err := cuda.AllocSliceFrom(s1, in)
	if err != nil {
		log.Fatal(err)
	}
	defer x.Close()
	y, err := cuda.AllocSlice[float32](s1, n)
	if err != nil {
		log.Fatal(err)
	}
	defer y.Close()
	z, err := cuda.AllocSlice[float32](s2, n)
	if err != nil {
		log.Fatal(err)
	}
	defer z.Close()

	if err := produce.Launch(s1, cuda.Linear(n, 256), x, y, uint32(n)); err != nil {
		log.Fatal(err)
	}
	if err := s2.WaitFor(s1); err != nil { // the consumer waits for the producer
		log.Fatal(err)
	}
	if err := consume.Launch(s2, cuda.Linear(n, 256), y, z, uint32(n)); err != nil {
		log.Fatal(err)
	}
	out := make([]float32, n)
	if err := z.CopyToHost(s2, out); err != nil { // in s2's order, returns with out filled
		log.Fatal(err)
	}
	var sum float64
	for i, v := range out {
		if want := 2 * (in[i] + 1); v != want {
			log.Fatalf("element %d is %v, want %v", i, v, want)
		}
		sum += float64(v)
	}
	fmt.Printf("%.0f\n", sum)
}
