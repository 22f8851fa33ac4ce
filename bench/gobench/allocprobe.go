package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/gocuda/gocuda/cuda"
	"github.com/gocuda/gocuda/generated/cu"
)

// allocBox is the size of a new stream's or event's handle and core (128
// bytes, with pointers), allocated on the raw side of the alloc probe.
type allocBox [16]*byte

// allocSink keeps the last allocBox, so that each is made on the heap.
var allocSink *allocBox

// runAllocProbe measures what one Go allocation, the one a new handle
// needs, adds to a stream's and an event's create+destroy, next to what
// package cuda adds: three variants in rotating order (raw, raw with the
// allocation, cuda), chunks on one thread with the context current, and
// the median of each variant's differences from raw in the same round.
func runAllocProbe() {
	ctx, s, ev := newCudaSetup()
	defer ctx.Close()
	defer s.Close()
	defer ev.Close()
	runtime.LockOSThread()
	must("cuCtxPushCurrent", cu.CtxPushCurrent(ctx.Raw()))
	defer func() {
		var c cu.CUcontext
		must("cuCtxPopCurrent", cu.CtxPopCurrent(&c))
	}()
	probe := func(op string, chunks, per int, variants ...func() error) {
		names := []string{"raw", "raw_alloc", "cuda"}
		t := make([][]float64, len(variants))
		for c := 0; c < chunks; c++ {
			for k := range variants {
				v := (k + c) % len(variants)
				t0 := time.Now()
				for i := 0; i < per; i++ {
					must(op, variants[v]())
				}
				t[v] = append(t[v], float64(time.Since(t0).Nanoseconds())/float64(per))
			}
		}
		for v := range variants {
			d := make([]float64, chunks)
			for c := range d {
				d[c] = t[v][c] - t[0][c]
			}
			fmt.Printf("ALLOCPROBE op=%s variant=%s median=%.1f delta_median=%+.1f delta_p25=%+.1f delta_p75=%+.1f chunks=%d calls_per_chunk=%d\n",
				op, names[v], median(t[v]), median(d), quantile(d, 0.25), quantile(d, 0.75), chunks, per)
		}
	}
	rawStream := func() (cu.CUstream, error) {
		var x cu.CUstream
		return x, cu.StreamCreate(&x, uint32(cu.CU_STREAM_NON_BLOCKING))
	}
	rawEvent := func() (cu.CUevent, error) {
		var e cu.CUevent
		return e, cu.EventCreate(&e, uint32(cu.CU_EVENT_DISABLE_TIMING))
	}
	withAlloc := func(f func() error) func() error {
		return func() error { allocSink = &allocBox{}; return f() }
	}
	stream := cycle(rawStream, nil, cu.StreamDestroy)
	event := cycle(rawEvent, nil, cu.EventDestroy)
	probe("stream_create_destroy", 600, 100, stream, withAlloc(stream),
		cycle(func() (*cuda.Stream, error) { return cuda.NewStream(ctx) }, nil, (*cuda.Stream).Close))
	probe("event_create_destroy", 600, 500, event, withAlloc(event),
		cycle(func() (*cuda.Event, error) { return cuda.NewEvent(ctx) }, nil, (*cuda.Event).Close))
	if allocSink == nil {
		must("alloc probe", fmt.Errorf("no allocation was made"))
	}
}
