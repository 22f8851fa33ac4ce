package main

import (
	"github.com/gocuda/gocuda/cuda"
)

// runCuda measures the operations package cuda covers; the others are
// reported by -impl raw alone.
func runCuda(ptx []byte) {
	_ = ptx // kernels: package cuda has no module or launch API yet
	devs, err := cuda.Devices()
	must("cuda.Devices", err)
	ctx, err := cuda.PrimaryContext(devs[0])
	must("cuda.PrimaryContext", err)
	defer ctx.Close()
	s, err := cuda.NewStream(ctx)
	must("cuda.NewStream", err)
	defer s.Close()
	ev, err := cuda.NewEvent(ctx)
	must("cuda.NewEvent", err)
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
	timed("stream_create_destroy", 20000, func(n int) {
		for i := 0; i < n; i++ {
			x, err := cuda.NewStream(ctx)
			must("cuda.NewStream", err)
			must("Stream.Close", x.Close())
		}
	})
}
