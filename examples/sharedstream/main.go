// Command sharedstream shows two subsystems sharing one CUDA stream: each
// holds its own handle (Stream.Clone) and closes it when done, and the
// queue lives until the last handle is closed. Work runs in the order it
// was enqueued, whichever subsystem enqueued it, so the renderer needs no
// event to see the decoder's output. It checks the result and exits 1 if
// it is wrong or if there is no driver or device.
//
//	go run ./examples/sharedstream
package main

import (
	"fmt"
	"os"

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
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sharedstream:", err)
		os.Exit(1)
	}
}

const n = 1 << 20

// decoder fills a frame: it uploads its input and clears a second buffer.
type decoder struct {
	s     *cuda.Stream
	input []float32
}

func (d *decoder) decode(frame, bias *cuda.Slice[float32]) error {
	if err := frame.CopyFromHost(d.s, d.input); err != nil {
		return err
	}
	return bias.FillAsync(d.s, 0.5)
}

// renderer adds the bias to the frame on the GPU and downloads the result.
type renderer struct {
	s      *cuda.Stream
	kernel *cuda.Kernel
	output []float32
}

func (r *renderer) render(frame, bias, out *cuda.Slice[float32]) error {
	if err := r.kernel.Launch(r.s, cuda.Linear(n, 256), frame, bias, out, uint32(n)); err != nil {
		return err
	}
	return out.CopyToHost(r.s, r.output) // returns with r.output filled
}

func run() error {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		return err
	}
	ctx, err := cuda.PrimaryContext(dev)
	if err != nil {
		return err
	}
	defer ctx.Close()
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
	mod, err := cuda.LoadModule(ctx, prog.PTX)
	if err != nil {
		return err
	}
	defer mod.Close()
	vadd, err := mod.Function("vadd")
	if err != nil {
		return err
	}
	// In the context, not on the stream: memory made on a stream holds a
	// handle on its queue, which must go away with the subsystems' own.
	bufs := make([]*cuda.Slice[float32], 3)
	for i := range bufs {
		if bufs[i], err = cuda.AllocSlice[float32](ctx, n); err != nil {
			return err
		}
		defer bufs[i].Close()
	}
	frame, bias, out := bufs[0], bufs[1], bufs[2]
	in := make([]float32, n)
	for i := range in {
		in[i] = float32(i % 1000)
	}

	// One queue, two owners.
	s, err := cuda.NewStream(ctx)
	if err != nil {
		return err
	}
	ds, err := s.Clone()
	if err != nil {
		return err
	}
	rs, err := s.Clone()
	if err != nil {
		return err
	}
	if err := s.Close(); err != nil { // the subsystems own the queue from here on
		return err
	}
	fmt.Println("decoder and renderer share one queue:", ds.IsSameQueue(rs))

	dec := &decoder{s: ds, input: in}
	ren := &renderer{s: rs, kernel: vadd, output: make([]float32, n)}
	if err := dec.decode(frame, bias); err != nil {
		return err
	}
	if err := dec.s.Close(); err != nil { // the decoder is done; its work is still queued
		return err
	}
	if err := ren.render(frame, bias, out); err != nil {
		return err
	}
	for i, v := range ren.output {
		if want := float32(i%1000) + 0.5; v != want {
			return fmt.Errorf("wrong result: element %d is %v, want %v", i, v, want)
		}
	}
	if err := ren.s.Close(); err != nil { // the last handle: the queue is destroyed
		return err
	}
	_, streams, _ := cuda.LiveHandles()
	fmt.Printf("sharedstream: %d elements correct; live streams after both closed: %d\n", n, streams)
	if streams != 0 {
		return fmt.Errorf("%d streams still live after every handle was closed", streams)
	}
	return nil
}
