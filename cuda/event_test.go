package cuda

import (
	"errors"
	"testing"
	"time"

	"github.com/gocuda/gocuda/generated/cu"
)

// Test 8: Elapsed around known work is positive and plausible; Query goes
// from not ready to ready without an error.
func TestEventTimingAndQuery(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	start, err := NewEvent(ctx, WithTiming())
	must(t, err)
	defer start.Close()
	end, err := NewEvent(ctx, WithTiming(), WithBlockingSync())
	must(t, err)
	defer end.Close()
	if !start.Timing() || !end.Timing() {
		t.Fatal("WithTiming events report no timing")
	}

	const bytes = 256 << 20
	const rounds = 100 // 25 GiB of writes
	d := deviceBuffer(t, ctx, bytes)
	wall := time.Now()
	must(t, start.Record(s))
	must(t, ctx.Do(func() error {
		for i := range rounds {
			if err := cu.MemsetD8Async(d, uint8(i), bytes, s.Raw()); err != nil {
				return err
			}
		}
		return nil
	}))
	must(t, end.Record(s))
	done, err := end.Query()
	must(t, err)
	if done {
		t.Error("Query reported 25 GiB of memsets done as soon as they were enqueued")
	}
	if _, err := Elapsed(start, end); !errors.Is(err, cu.CUDA_ERROR_NOT_READY) {
		t.Errorf("Elapsed before the end completed = %v, want CUDA_ERROR_NOT_READY", err)
	}
	must(t, end.Synchronize())
	wallTime := time.Since(wall)
	done, err = end.Query()
	if err != nil || !done {
		t.Fatalf("Query after Synchronize = %v, %v; want true, nil", done, err)
	}
	el, err := Elapsed(start, end)
	must(t, err)
	// No memory writes faster than 20 TB/s (an H200 does about 4).
	bytesWritten := float64(bytes) * rounds
	minimum := time.Duration(bytesWritten / 20e12 * float64(time.Second))
	t.Logf("elapsed %v (%.0f GB/s), wall %v", el, bytesWritten/el.Seconds()/1e9, wallTime)
	if el < minimum || el > wallTime {
		t.Fatalf("elapsed %v, want between %v and the wall time %v", el, minimum, wallTime)
	}
}

func TestEventWithoutTiming(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	a, err := NewEvent(ctx)
	must(t, err)
	defer a.Close()
	b, err := a.Clone()
	must(t, err)
	defer b.Close()
	if a.Timing() || a.Raw() != b.Raw() {
		t.Fatal("default event has timing, or a clone differs")
	}
	if done, err := a.Query(); err != nil || !done {
		t.Fatalf("Query of an unrecorded event = %v, %v; want true, nil", done, err)
	}
	must(t, a.Record(s))
	must(t, b.Synchronize())
	if _, err := Elapsed(a, b); !errors.Is(err, cu.CUDA_ERROR_INVALID_HANDLE) {
		t.Fatalf("Elapsed without timing = %v, want CUDA_ERROR_INVALID_HANDLE", err)
	}
	ipc, err := NewEvent(ctx, WithInterprocess())
	must(t, err)
	must(t, ipc.Close())
}
