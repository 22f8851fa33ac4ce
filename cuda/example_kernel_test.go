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

	// The driver knows vadd's parameters: a missing argument never launches.
	err = vadd.Launch(s, cfg, a, b, c)
	fmt.Println(errors.Is(err, cuda.ErrKernelArgs), err)
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
	const n = 1 << 20
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
}

// Any device attribute by its enum, or the common ones by name.
func ExampleDevice_Attribute() {
	dev, err := cuda.GetDevice(0)
	if err != nil {
		log.Fatal(err)
	}
	sms, _ := dev.MultiprocessorCount()
	major, minor, _ := dev.ComputeCapability()
	l2, err := dev.Attribute(cu.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("sm_%d%d, %d SMs, %d MiB L2\n", major, minor, sms, l2>>20)
}
