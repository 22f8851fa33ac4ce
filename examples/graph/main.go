// Command graph captures GPU work into a CUDA graph once and launches it
// many times: each launch adds a to an accumulator and copies the
// accumulator out, so after N launches out = N·a. It checks that and
// exits 1 if it is wrong or if there is no driver or device.
//
//	go run ./examples/graph [-launches N]
package main

import (
	"flag"
	"fmt"
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
	launches := flag.Int("launches", 100, "number of graph launches")
	flag.Parse()
	if err := run(*launches); err != nil {
		fmt.Fprintln(os.Stderr, "graph:", err)
		os.Exit(1)
	}
}

const n = 1 << 16

func run(launches int) error {
	if launches < 1 || launches > 1<<16 {
		return fmt.Errorf("-launches %d: want 1 to %d", launches, 1<<16)
	}
	s, err := cuda.OpenStream(0)
	if err != nil {
		return err
	}
	defer s.Close()
	// NVRTC compiles the kernel at run time: no CUDA toolkit, only its
	// library (libnvrtc; GOCUDA_LIBNVRTC names its path). The driver
	// loads the PTX for the device.
	arch, err := nvrtc.ArchOf(s.Context().Device())
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

	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i % 17)
	}
	a, err := cuda.AllocSliceFrom(s, x)
	if err != nil {
		return err
	}
	defer a.Close()
	acc, err := cuda.AllocSlice[float32](s, n)
	if err != nil {
		return err
	}
	defer acc.Close()
	out, err := cuda.AllocSlice[float32](s, n)
	if err != nil {
		return err
	}
	defer out.Close()
	// Fill also waits for a's upload, queued on s before it: the time
	// below is the graph launches' alone.
	if err := acc.Fill(0); err != nil {
		return err
	}

	// Capture: nothing runs yet.
	g, err := s.Capture(cuda.CaptureThreadLocal, func() error {
		if err := vadd.Launch(s, cuda.Linear(n, 256), a, acc, acc, uint32(n)); err != nil { // acc += a
			return err
		}
		return cuda.CopySliceAsync(s, out, acc)
	})
	if err != nil {
		return err
	}
	defer g.Close()
	nodes, err := g.NodeCount()
	if err != nil {
		return err
	}
	edges, err := g.Edges()
	if err != nil {
		return err
	}
	exec, err := g.Instantiate()
	if err != nil {
		return err
	}
	defer exec.Close()

	start := time.Now()
	for range launches {
		if err := exec.Launch(s); err != nil {
			return err
		}
	}
	if err := s.Synchronize(); err != nil {
		return err
	}
	elapsed := time.Since(start)

	got := make([]float32, n)
	if err := out.CopyTo(got); err != nil {
		return err
	}
	for i, v := range got {
		if want := float32(launches) * x[i]; v != want {
			return fmt.Errorf("wrong result after %d launches: out[%d] = %v, want %v", launches, i, v, want)
		}
	}
	fmt.Printf("graph: %d nodes, %d edges; %d launches correct in %v (%v per launch)\n",
		nodes, len(edges), launches, elapsed, elapsed/time.Duration(launches))
	return nil
}
