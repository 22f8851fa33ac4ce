// Command pipeline is the shortest whole program: a Go slice to the GPU, a
// kernel compiled from CUDA C at run time, the slice back.
//
//	go run ./examples/pipeline
//
// It prints [10 20 30 40]. The copy back waits for the launch without a
// Synchronize: x was made on s, and its copies are in s's order.
package main

import (
	"fmt"
	"log"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
)

const src = `
extern "C" __global__ void scale(float *x, float a, unsigned n) {
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) x[i] *= a;
}`

func main() {
	data := []float32{1, 2, 3, 4}

	s, err := cuda.OpenStream(0)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	res, err := nvrtc.Compile(src)
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
	x, err := cuda.AllocSliceFrom(s, data)
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
