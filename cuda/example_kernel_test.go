package cuda_test

import (
	"errors"
	"fmt"
	"log"
	"math"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
	"github.com/gocuda/gocuda/internal/testkernels"
)

// Device memory round trip with the typed copies.
func ExampleAlloc() {
	ctx := primary()
	defer ctx.Close()
	m, err := cuda.Alloc(ctx, 1024*4)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	if err := m.MemsetD32(math.Float32bits(0.5)); err != nil {
		log.Fatal(err)
	}
	if err := cuda.CopyToDevice(m, []float32{1, 2, 3}); err != nil { // the first three elements
		log.Fatal(err)
	}
	out := make([]float32, 1024)
	if err := cuda.CopyFromDevice(out, m); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out[:5])
	// Output: [1 2 3 0.5 0.5]
}

// Asynchronous copies go through page-locked host memory.
func ExampleAllocHost() {
	ctx := primary()
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	pinned, err := cuda.AllocHost[int32](ctx, 1<<20)
	if err != nil {
		log.Fatal(err)
	}
	defer pinned.Close()
	data := pinned.Slice() // valid while pinned is open
	for i := range data {
		data[i] = int32(i)
	}
	dev, err := cuda.Alloc(ctx, 4<<20)
	if err != nil {
		log.Fatal(err)
	}
	defer dev.Close()
	if err := cuda.CopyToDeviceAsync(s, dev, pinned); err != nil {
		log.Fatal(err)
	}
	if err := dev.MemsetD8Async(s, 0); err != nil { // runs after the copy: one queue
		log.Fatal(err)
	}
	if err := cuda.CopyFromDeviceAsync(s, pinned, dev); err != nil {
		log.Fatal(err)
	}
	if err := s.Synchronize(); err != nil { // only now may data be read
		log.Fatal(err)
	}
	fmt.Println(data[0], data[len(data)-1])
	// Output: 0 0
}

// Load PTX and launch a kernel with Go values as arguments.
func ExampleKernel_Launch() {
	ctx := primary()
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	mod, err := cuda.LoadModule(ctx, []byte(testkernels.VectorAdd))
	if err != nil {
		log.Fatal(err) // for bad PTX, the error carries the JIT compiler's log
	}
	defer mod.Close()
	vadd, err := mod.Function("vadd")
	if err != nil {
		log.Fatal(err)
	}

	const n = 1000
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i), 1
	}
	a, _ := cuda.AllocFrom(ctx, x)
	defer a.Close()
	b, _ := cuda.AllocFrom(ctx, y)
	defer b.Close()
	c, err := cuda.Alloc(ctx, 4*n)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: cuda.Blocks(n, 256)}, Block: cuda.Dim3{X: 256}}
	if err := vadd.Launch(s, cfg, a, b, c, uint32(n)); err != nil {
		log.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		log.Fatal(err)
	}
	out := make([]float32, n)
	if err := cuda.CopyFromDevice(out, c); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out[0], out[n-1])

	// An int has the platform's size, which need not be the kernel's: it is
	// refused before the driver. Where the driver reports vadd's parameters
	// (CUDA 12.4 and later: Kernel.ParamSizes), so is a missing argument or
	// one of the wrong size; elsewhere arguments pass unchecked, as in C.
	err = vadd.Launch(s, cfg, a, b, c, n)
	fmt.Println(errors.Is(err, cuda.ErrKernelArgs))
	fmt.Println(err)
	// Output:
	// 1 1000
	// true
	// cuda: Kernel.Launch: argument 3 is a int, whose size is the platform's: use int32, int64, uint32 or uint64 (kernel arguments do not match the kernel's parameters)
}

// Prepared arguments launch without allocating; SetArg changes one in place.
func ExampleKernel_NewArgs() {
	ctx := primary()
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	mod, err := cuda.LoadModule(ctx, []byte(testkernels.VectorAdd))
	if err != nil {
		log.Fatal(err)
	}
	defer mod.Close()
	vadd, err := mod.Function("vadd")
	if err != nil {
		log.Fatal(err)
	}
	const n = 1 << 16
	a, err := cuda.Alloc(ctx, 4*n)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	if err := a.MemsetD32(math.Float32bits(1)); err != nil {
		log.Fatal(err)
	}
	acc, err := cuda.Alloc(ctx, 4*n)
	if err != nil {
		log.Fatal(err)
	}
	defer acc.Close()
	if err := acc.MemsetD32(0); err != nil {
		log.Fatal(err)
	}

	args, err := vadd.NewArgs(a, acc, acc, uint32(0)) // acc += a
	if err != nil {
		log.Fatal(err)
	}
	defer args.Close()
	cfg := cuda.LaunchConfig{Grid: cuda.Dim3{X: cuda.Blocks(n, 256)}, Block: cuda.Dim3{X: 256}}
	for i := 1; i <= 100; i++ {
		// Grow the range each time: element j is added 100-j/(n/100) times.
		if err := cuda.SetArg(args, 3, uint32(i*n/100)); err != nil {
			log.Fatal(err)
		}
		if err := vadd.LaunchArgs(s, cfg, args); err != nil {
			log.Fatal(err)
		}
	}
	if err := s.Synchronize(); err != nil {
		log.Fatal(err)
	}
	out := make([]float32, n)
	if err := cuda.CopyFromDevice(out, acc); err != nil {
		log.Fatal(err)
	}
	fmt.Println(out[0], out[n-1])
	// Output: 100 1
}

// Capture work into a graph once, launch it many times.
func ExampleStream_Capture() {
	ctx := primary()
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	src, err := cuda.Alloc(ctx, 1<<20)
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	dst, err := cuda.Alloc(ctx, 1<<20)
	if err != nil {
		log.Fatal(err)
	}
	defer dst.Close()

	g, err := s.Capture(cuda.CaptureThreadLocal, func() error {
		if err := src.MemsetD32Async(s, 7); err != nil {
			return err
		}
		return cuda.CopyDeviceAsync(s, dst, src)
	})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	n, _ := g.NodeCount()
	fmt.Println("nodes:", n)
	exec, err := g.Instantiate()
	if err != nil {
		log.Fatal(err)
	}
	defer exec.Close()
	for range 10 {
		if err := exec.Launch(s); err != nil {
			log.Fatal(err)
		}
	}
	if err := s.Synchronize(); err != nil {
		log.Fatal(err)
	}
	// Output: nodes: 2
}

// Any device attribute by its enum, or the common ones by name. The values
// differ between devices (an H200: compute capability 9.0, 132
// multiprocessors, 50 MiB of L2 cache), so this prints only what holds on
// every device.
func ExampleDevice_Attribute() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	sms, err := dev.MultiprocessorCount()
	if err != nil {
		log.Fatal(err)
	}
	bySMs, err := dev.Attribute(cu.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
	if err != nil {
		log.Fatal(err)
	}
	major, minor, err := dev.ComputeCapability()
	if err != nil {
		log.Fatal(err)
	}
	l2, err := dev.Attribute(cu.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("multiprocessors by name and by enum agree:", sms == bySMs && sms > 0)
	fmt.Println("compute capability 3.5 or later:", major > 3 || major == 3 && minor >= 5)
	fmt.Println("L2 cache:", l2 > 0)
	// Output:
	// multiprocessors by name and by enum agree: true
	// compute capability 3.5 or later: true
	// L2 cache: true
}
