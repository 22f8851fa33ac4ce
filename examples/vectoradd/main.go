// Command vectoradd adds two float32 vectors on the GPU with a kernel
// written in CUDA C, checks every element of the result, and exits 1 if one
// is wrong or if there is no driver, device or NVRTC library.
//
//	go run ./examples/vectoradd [-n elements] [-device ordinal]
//
// The kernel's source is a Go string, compiled at run time by NVRTC
// (package cuda/nvrtc) for the device's architecture; the driver loads the
// PTX. A program that ships PTX or a cubin instead loads it with
// cuda.LoadModule the same way.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/cuda/nvrtc"
)

// vaddSource is the kernel, in CUDA C: c[i] = a[i] + b[i], one thread per
// element.
const vaddSource = `extern "C" __global__ void vadd(const float *a, const float *b, float *c, unsigned n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		c[i] = a[i] + b[i];
}
`

func main() {
	n := flag.Int("n", 1<<20, "number of elements")
	ordinal := flag.Int("device", 0, "device ordinal")
	flag.Parse()
	if err := run(*ordinal, *n); err != nil {
		fmt.Fprintln(os.Stderr, "vectoradd:", err)
		os.Exit(1)
	}
}

func run(ordinal, n int) error {
	if n <= 0 || n > 1<<24 {
		return fmt.Errorf("-n %d: want 1 to %d (the sums must stay exact in float32)", n, 1<<24/3)
	}
	s, err := cuda.OpenStream(ordinal)
	if err != nil {
		return err
	}
	defer s.Close()
	dev := s.Context().Device()
	name, err := dev.Name()
	if err != nil {
		return err
	}

	// NVRTC compiles the kernel at run time: no CUDA toolkit, only its
	// library (libnvrtc; GOCUDA_LIBNVRTC names its path). The driver
	// loads the PTX for the device.
	arch, err := nvrtc.ArchOf(dev)
	if err != nil {
		return err
	}
	prog, err := nvrtc.Compile(vaddSource, nvrtc.WithArch(arch))
	if err != nil {
		return err // a compile error carries NVRTC's log
	}
	mod, err := cuda.LoadModule(s.Context(), prog.PTX)
	if err != nil {
		return err
	}
	defer mod.Close()
	vadd, err := mod.Function("vadd")
	if err != nil {
		return err
	}

	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i), float32(2*i)
	}
	a, err := cuda.AllocSliceFrom(s, x)
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := cuda.AllocSliceFrom(s, y)
	if err != nil {
		return err
	}
	defer b.Close()
	c, err := cuda.AllocSlice[float32](s, n)
	if err != nil {
		return err
	}
	defer c.Close()
	// NaN: every element must be written. Fill also waits for the uploads
	// queued on s before it, so the time below is the kernel's alone.
	if err := c.Fill(float32(math.NaN())); err != nil {
		return err
	}

	// The block size that keeps the most threads of this kernel resident.
	block, _, err := vadd.SuggestedBlockSize(0)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := vadd.Launch(s, cuda.Linear(n, block), a, b, c, uint32(n)); err != nil {
		return err
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	elapsed := time.Since(start)

	z := make([]float32, n)
	if err := c.CopyTo(z); err != nil {
		return err
	}
	for i, v := range z {
		if want := x[i] + y[i]; v != want {
			return fmt.Errorf("wrong result: c[%d] = %v, want %v", i, v, want)
		}
	}
	fmt.Printf("vectoradd: %d elements correct on device %d (%s), launch and wait %v\n", n, ordinal, name, elapsed)
	return nil
}
