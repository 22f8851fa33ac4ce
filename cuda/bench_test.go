package cuda

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/gocuda/gocuda/generated/cu"
)

// The benchmarks compare each hot call of this layer with the raw binding
// it wraps, in one run: the difference is the layer's cost (target: at most
// 15 ns and no allocation).

// drain keeps the device queue from filling up, which would make the
// enqueue calls wait for the device instead of measuring the host side.
const drainEvery = 1024

func benchSetup(b *testing.B) (*Stream, *Stream, *Event) {
	_, ctx := needGPU(b)
	s, err := NewStream(ctx)
	must(b, err)
	b.Cleanup(func() { s.Close() })
	s2, err := NewStream(ctx)
	must(b, err)
	b.Cleanup(func() { s2.Close() })
	ev, err := NewEvent(ctx)
	must(b, err)
	b.Cleanup(func() { ev.Close() })
	return s, s2, ev
}

func BenchmarkEventRecord(b *testing.B) {
	s, _, ev := benchSetup(b)
	b.Run("raw", func(b *testing.B) {
		rs, re := s.Raw(), ev.Raw()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := cu.EventRecord(re, rs); err != nil {
				b.Fatal(err)
			}
			if i%drainEvery == drainEvery-1 {
				_ = cu.StreamSynchronize(rs)
			}
		}
	})
	b.Run("cuda", func(b *testing.B) {
		rs := s.Raw()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := ev.Record(s); err != nil {
				b.Fatal(err)
			}
			if i%drainEvery == drainEvery-1 {
				_ = cu.StreamSynchronize(rs)
			}
		}
	})
}

func BenchmarkEventQuery(b *testing.B) {
	s, _, ev := benchSetup(b)
	must(b, ev.Record(s))
	must(b, s.Synchronize())
	b.Run("raw", func(b *testing.B) {
		re := ev.Raw()
		b.ReportAllocs()
		for b.Loop() {
			if err := cu.EventQuery(re); err != nil && err != cu.CUDA_ERROR_NOT_READY {
				b.Fatal(err)
			}
		}
	})
	b.Run("cuda", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ev.Query(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkStreamWaitEvent(b *testing.B) {
	s, s2, ev := benchSetup(b)
	must(b, ev.Record(s))
	b.Run("raw", func(b *testing.B) {
		rs, re := s2.Raw(), ev.Raw()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := cu.StreamWaitEvent(rs, re, 0); err != nil {
				b.Fatal(err)
			}
			if i%drainEvery == drainEvery-1 {
				_ = cu.StreamSynchronize(rs)
			}
		}
	})
	b.Run("cuda", func(b *testing.B) {
		rs := s2.Raw()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := s2.WaitEvent(ev); err != nil {
				b.Fatal(err)
			}
			if i%drainEvery == drainEvery-1 {
				_ = cu.StreamSynchronize(rs)
			}
		}
	})
}

// TestHotCallsDoNotAllocate: holding the handles for the call (enter,
// exit) costs no allocation on the hot paths.
func TestHotCallsDoNotAllocate(t *testing.T) {
	_, ctx := needGPU(t)
	s, err := NewStream(ctx)
	must(t, err)
	defer s.Close()
	ev, err := NewEvent(ctx)
	must(t, err)
	defer ev.Close()
	for name, f := range map[string]func(){
		"Event.Record":     func() { must(t, ev.Record(s)) },
		"Event.Query":      func() { _, err := ev.Query(); must(t, err) },
		"Stream.WaitEvent": func() { must(t, s.WaitEvent(ev)) },
		"Stream.Query":     func() { _, err := s.Query(); must(t, err) },
	} {
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", name, n)
		}
		must(t, s.Synchronize())
	}
}

// The lifecycle benchmarks compare a create and destroy (or allocate and
// free, or a synchronous copy) through this package with the raw calls on
// a thread with the context current, as a C program makes them.
func benchLifecycle(b *testing.B, raw, layer func() error) {
	_, ctx := needGPU(b)
	b.Run("raw", func(b *testing.B) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		must(b, cu.CtxPushCurrent(ctx.Raw()))
		defer func() { var c cu.CUcontext; _ = cu.CtxPopCurrent(&c) }()
		b.ReportAllocs()
		for b.Loop() {
			if err := raw(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cuda", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := layer(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkEventCreateDestroy(b *testing.B) {
	_, ctx := needGPU(b)
	benchLifecycle(b, func() error {
		var e cu.CUevent
		if err := cu.EventCreate(&e, uint32(cu.CU_EVENT_DISABLE_TIMING)); err != nil {
			return err
		}
		return cu.EventDestroy(e)
	}, func() error {
		e, err := NewEvent(ctx)
		if err != nil {
			return err
		}
		return e.Close()
	})
}

// BenchmarkEventCreateRecordDestroy is BenchmarkEventCreateDestroy for an
// event that is used: one that a hot call has seen waits for a grace
// period (hot.go) before its destroy.
func BenchmarkEventCreateRecordDestroy(b *testing.B) {
	_, ctx := needGPU(b)
	s, err := NewStream(ctx)
	must(b, err)
	b.Cleanup(func() { s.Close() })
	rs := s.Raw()
	benchLifecycle(b, func() error {
		var e cu.CUevent
		if err := cu.EventCreate(&e, uint32(cu.CU_EVENT_DISABLE_TIMING)); err != nil {
			return err
		}
		if err := cu.EventRecord(e, rs); err != nil {
			return err
		}
		return cu.EventDestroy(e)
	}, func() error {
		e, err := NewEvent(ctx)
		if err != nil {
			return err
		}
		if err := e.Record(s); err != nil {
			return err
		}
		return e.Close()
	})
}

func BenchmarkStreamCreateDestroy(b *testing.B) {
	_, ctx := needGPU(b)
	benchLifecycle(b, func() error {
		var s cu.CUstream
		if err := cu.StreamCreate(&s, uint32(cu.CU_STREAM_NON_BLOCKING)); err != nil {
			return err
		}
		return cu.StreamDestroy(s)
	}, func() error {
		s, err := NewStream(ctx)
		if err != nil {
			return err
		}
		return s.Close()
	})
}

func BenchmarkAllocFree1MiB(b *testing.B) {
	_, ctx := needGPU(b)
	benchLifecycle(b, func() error {
		var p cu.CUdeviceptr
		if err := cu.MemAlloc(&p, 1<<20); err != nil {
			return err
		}
		return cu.MemFree(p)
	}, func() error {
		m, err := Alloc(ctx, 1<<20)
		if err != nil {
			return err
		}
		return m.Close()
	})
}

func BenchmarkCopyToDevice64KiB(b *testing.B) {
	_, ctx := needGPU(b)
	host := make([]byte, 64<<10)
	m, err := Alloc(ctx, len(host))
	must(b, err)
	defer m.Close()
	p := m.Raw()
	benchLifecycle(b, func() error {
		if err := cu.MemcpyHtoD(p, unsafe.Pointer(&host[0]), uint64(len(host))); err != nil {
			return err
		}
		return cu.StreamSynchronize(cu.CUstream(cu.CU_STREAM_LEGACY))
	}, func() error { return CopyToDevice(m, host) })
}
