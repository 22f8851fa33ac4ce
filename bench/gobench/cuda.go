package main

import (
	"time"

	"github.com/gocuda/gocuda/cuda"
)

// runCuda measures the operations package cuda covers; ctx_get_current has
// no counterpart there and is reported by -impl raw alone.
func runCuda(ptx []byte) {
	ctx, s, ev := newCudaSetup()
	defer ctx.Close()
	defer s.Close()
	defer ev.Close()

	timed("event_record", 200000, func(n int) {
		for i := 0; i < n; i++ {
			must("Event.Record", ev.Record(s))
		}
	})
	must("Stream.Synchronize", s.Synchronize())
	timed("event_query", 200000, func(n int) {
		for i := 0; i < n; i++ {
			done, err := ev.Query()
			must("Event.Query", err)
			if !done {
				must("Event.Query", errNotDone)
			}
		}
	})
	mod, err := cuda.LoadModule(ctx, ptx)
	must("cuda.LoadModule", err)
	defer mod.Close()
	k1, err := mod.Function("empty1")
	must("Module.Function", err)
	k16, err := mod.Function("empty16")
	must("Module.Function", err)
	zeros := make([]any, 16)
	for i := range zeros {
		zeros[i] = uint64(0)
	}
	a1, err := k1.NewArgs(zeros[:1]...)
	must("Kernel.NewArgs", err)
	defer a1.Close()
	a16, err := k16.NewArgs(zeros...)
	must("Kernel.NewArgs", err)
	defer a16.Close()
	one := cuda.LaunchConfig{Grid: cuda.Dim3{X: 1}, Block: cuda.Dim3{X: 1}}
	launch := func(k *cuda.Kernel, a *cuda.Args) func(int) {
		return func(n int) {
			for i := 0; i < n; i++ {
				must("Kernel.LaunchArgs", k.LaunchArgs(s, one, a))
			}
			must("Stream.Synchronize", s.Synchronize())
		}
	}
	timed("launch_1arg", 100000, launch(k1, a1))
	timed("launch_16arg", 100000, launch(k16, a16))
	timed("launch_sync", 20000, func(n int) {
		for i := 0; i < n; i++ {
			must("Kernel.LaunchArgs", k1.LaunchArgs(s, one, a1))
			must("Stream.Synchronize", s.Synchronize())
		}
	})
	timed("stream_create_destroy", 20000, func(n int) {
		for i := 0; i < n; i++ {
			x, err := cuda.NewStream(ctx)
			must("cuda.NewStream", err)
			must("Stream.Close", x.Close())
		}
	})
	timed("alloc_free_1mib", 2000, func(n int) {
		for i := 0; i < n; i++ {
			b, err := cuda.Alloc(ctx, 1<<20)
			must("cuda.Alloc", err)
			must("DeviceMemory.Close", b.Close())
		}
	})
	const size = 64 << 20
	host, err := cuda.AllocHost[byte](ctx, size)
	must("cuda.AllocHost", err)
	defer host.Close()
	dev, err := cuda.Alloc(ctx, size)
	must("cuda.Alloc", err)
	defer dev.Close()
	copies := func(op string, copy func() error) {
		const n = 50
		must(op, copy())
		must("Stream.Synchronize", s.Synchronize())
		t := time.Now()
		for i := 0; i < n; i++ {
			must(op, copy())
		}
		must("Stream.Synchronize", s.Synchronize())
		report(op, float64(size*n)/float64(time.Since(t).Nanoseconds()), "GB/s")
	}
	copies("h2d_64mib", func() error { return cuda.CopyToDeviceAsync(s, dev, host) })
	copies("d2h_64mib", func() error { return cuda.CopyFromDeviceAsync(s, host, dev) })
}

// newCudaSetup makes the primary context of device 0, a stream and an event
// (without timing) through package cuda.
func newCudaSetup() (*cuda.Context, *cuda.Stream, *cuda.Event) {
	devs, err := cuda.Devices()
	must("cuda.Devices", err)
	ctx, err := cuda.PrimaryContext(devs[0])
	must("cuda.PrimaryContext", err)
	s, err := cuda.NewStream(ctx)
	must("cuda.NewStream", err)
	ev, err := cuda.NewEvent(ctx)
	must("cuda.NewEvent", err)
	return ctx, s, ev
}
