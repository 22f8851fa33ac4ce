package cuda

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkHotGoSide measures this package's part of the hot calls
// (Event.Record and Query, Stream.Query and WaitEvent, GraphExec.Launch)
// with the driver's entry points replaced by a C function that does
// nothing, against the same function called as the raw bindings call the
// driver: one cgo call through the entry point. Chunks of each alternate
// and the medians of the paired differences are reported (name-raw-ns),
// as BenchmarkLaunchGoSide does for the launches.
//
//	GOCUDA_TEST_DRIVER=fake go test -run '^$' -bench HotGoSide ./cuda
func BenchmarkHotGoSide(b *testing.B) {
	_, ctx := needGPU(b)
	s, err := NewStream(ctx)
	must(b, err)
	b.Cleanup(func() { s.Close() })
	e, err := NewEvent(ctx)
	must(b, err)
	b.Cleanup(func() { e.Close() })
	var live atomic.Int64
	g := newGraphExecHandle(nopCore(&live, func(st *graphExecState) { st.raw = 0x1 }))
	b.Cleanup(func() { g.Close() })

	real, err := procs("bench", "cuEventRecord")
	must(b, err)
	nop := hotNopFn()
	stubs := *real
	stubs.eventRecord, stubs.eventQuery, stubs.streamQuery, stubs.streamWaitEvent, stubs.graphLaunch = nop, nop, nop, nop, nop
	boundFnsP.Store(&stubs)
	b.Cleanup(func() { boundFnsP.Store(real) })
	re, rs := uintptr(e.Raw()), uintptr(s.Raw())

	const chunk = 64
	calls := []struct {
		name string
		f    func() error
	}{
		{"raw1", func() error { rawCall1(nop, rs); return nil }},
		{"raw2", func() error { rawCall2(nop, re, rs); return nil }},
		{"record", func() error { return e.Record(s) }},
		{"wait", func() error { return s.WaitEvent(e) }},
		{"graph", func() error { return g.Launch(s) }},
		{"equery", func() error { _, err := e.Query(); return err }},
		{"squery", func() error { _, err := s.Query(); return err }},
	}
	// The one-handle calls are compared with raw1, the others with raw2.
	rawOf := func(j int) int {
		if j >= 5 {
			return 0
		}
		return 1
	}
	per := make([][]float64, len(calls))
	diff := make([][]float64, len(calls))
	round := make([]float64, len(calls))
	b.ReportAllocs()
	for b.Loop() {
		for j, c := range calls {
			t0 := time.Now()
			for range chunk {
				if err := c.f(); err != nil {
					b.Fatal(err)
				}
			}
			round[j] = float64(time.Since(t0).Nanoseconds()) / chunk
		}
		for j := range calls {
			per[j] = append(per[j], round[j])
			diff[j] = append(diff[j], round[j]-round[rawOf(j)])
		}
	}
	med := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	for j, c := range calls {
		b.ReportMetric(med(per[j]), c.name+"-ns")
		if j >= 2 {
			b.ReportMetric(med(diff[j]), c.name+"-raw-ns")
		}
	}
	b.ReportMetric(0, "ns/op")
}
