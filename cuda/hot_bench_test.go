package cuda

import (
	"github.com/gocuda/gocuda/internal/standin"
	"sync/atomic"
	"testing"
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

	nop1, nop2 := standin.Nop1(), standin.Nop2()
	useEntries(b, func(e *entries) {
		e.eventQuery, e.streamQuery = nop1, nop1
		e.eventRecord, e.graphLaunch, e.streamWaitEvent = nop2, nop2, standin.Nop3()
	})
	re, rs := uintptr(e.Raw()), uintptr(s.Raw())

	// The one-handle calls are compared with raw1, the others with raw2.
	const raw1, raw2 = 0, 1
	runChunks(b, []chunkCall{
		{"raw1", raw1, func() error { standin.RawCall1(nop1, rs); return nil }},
		{"raw2", raw2, func() error { standin.RawCall2(nop2, re, rs); return nil }},
		{"record", raw2, func() error { return e.Record(s) }},
		{"wait", raw2, func() error { return s.WaitEvent(e) }},
		{"graph", raw2, func() error { return g.Launch(s) }},
		{"equery", raw1, func() error { _, err := e.Query(); return err }},
		{"squery", raw1, func() error { _, err := s.Query(); return err }},
	}, nil)
}
