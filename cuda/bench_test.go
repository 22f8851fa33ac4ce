package cuda

import (
	"testing"

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
