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
	"math"
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
	input *cuda.HostBuffer[float32] // page-locked: async copies need it
}

func (d *decoder) decode(frame, bias *cuda.DeviceMemory) error {
	if err := cuda.CopyToDeviceAsync(d.s, frame, d.input); err != nil {
		return err
	}
	return bias.MemsetD32Async(d.s, math.Float32bits(0.5))
}

// renderer adds the bias to the frame on the GPU and downloads the result.
type renderer struct {
	s      *cuda.Stream
	kernel *cuda.Kernel
	output *cuda.HostBuffer[float32]
}

func (r *renderer) render(frame, bias, out *cuda.DeviceMemory) error {
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: cuda.Blocks(n, 256)}, Block: cuda.Dim3{X: 256}}
	if err := r.kernel.Launch(r.s, cfg, frame, bias, out, uint32(n)); err != nil {
		return err
	}
	return cuda.CopyFromDeviceAsync(r.s, r.output, out)
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
	bufs := make([]*cuda.DeviceMemory, 3)
	for i := range bufs {
		if bufs[i], err = cuda.Alloc(ctx, 4*n); err != nil {
			return err
		}
		defer bufs[i].Close()
	}
	frame, bias, out := bufs[0], bufs[1], bufs[2]
	input, err := cuda.AllocHost[float32](ctx, n)
	if err != nil {
		return err
	}
	defer input.Close()
	output, err := cuda.AllocHost[float32](ctx, n)
	if err != nil {
		return err
	}
	defer output.Close()
	in := input.Slice() // valid while input is open
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

	dec := &decoder{s: ds, input: input}
	ren := &renderer{s: rs, kernel: vadd, output: output}
	if err := dec.decode(frame, bias); err != nil {
		return err
	}
	if err := dec.s.Close(); err != nil { // the decoder is done; its work is still queued
		return err
	}
	if err := ren.render(frame, bias, out); err != nil {
		return err
	}
	if err := ren.s.Synchronize(); err != nil {
		return err
	}
	for i, v := range output.Slice() {
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
